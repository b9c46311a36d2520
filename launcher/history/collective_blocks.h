// How the history stores collective reports (schema 11): packed like step reports
// (step_blocks.h), one `collective_blocks` row per group of kRanksPerBlock consecutive ranks and
// writer transaction, holding every collective report of those ranks the transaction commits;
// `rank` and `last_rank` are the smallest and largest rank in it. A row each
// (`collective_stats`, schema 1–10) cost SQLite an insert and an index update per report — at
// 16,384 ranks × 2 Hz, 32,768 a second. Databases from before keep their `collective_stats`
// rows, read together with the blocks.
//
// A block's `rows` blob holds `n` records, each:
//  - the rank and the step: zigzag LEB128 varints of their differences from the record before
//    (the first's from 0);
//  - the group, then the operation: one byte k < 255, the block's k-th name so far; or 255, then
//    the name's UTF-8 length as a varint and its bytes, which becomes the next name (a block keeps
//    at most 254; past that a name is written out each time);
//  - bytes and calls: zigzag varints of their differences from the record before;
//  - ms and bus GB/s: 8-byte little-endian IEEE doubles.
// A rank's collectives repeat the same few names and sizes every step: a record takes about 20
// bytes. `first_step`/`last_step` are the smallest and largest step in it.
#pragma once

#include "launcher/run_types.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

namespace trellis::launcher {

class CollectiveBlockEncoder {
public:
    void add(const CollectiveRow &row);
    void clear(); // an empty block again; the buffer keeps its capacity
    const QByteArray &bytes() const { return m_bytes; }
    qint64 count() const { return m_count; }

private:
    void putName(const QString &name);

    QByteArray m_bytes;
    QStringList m_names;
    qint64 m_count = 0, m_rank = 0, m_step = 0, m_size = 0, m_calls = 0;
};

// Decodes a block whose first rank is `rank` (each record names its own); false (and `error`
// naming the problem) when the blob does not hold exactly `count` well-formed records. The rows
// decoded before a problem are kept.
bool unpackCollectiveBlock(int rank, const QByteArray &blob, qint64 count, QList<CollectiveRow> &out, QString *error);

} // namespace trellis::launcher
