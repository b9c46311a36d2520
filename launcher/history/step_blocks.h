// How the history stores step reports (schema 5, records encoded since schema 7, 22 fields since
// schema 8, 25 since schema 10, 28 since schema 18): packed, one
// `step_blocks` row per rank and writer transaction, holding every step report of that rank the
// transaction commits. A row per report (`step_metrics`, schema 1–4) cost SQLite an index insert
// per message, which capped the ingest at ~220k messages/s on two cores; a block costs one insert
// per rank per transaction. Databases from before keep their `step_metrics` rows and are read
// together with the blocks.
//
// A block's `rows` blob holds `n` records of the fields of StepRow in its order (step, the six
// times in ms, tokens, tokens/s, loss, grad norm, lr, the six memory categories; since encoding 2
// also the master weights' bytes, the loss scale, the skipped updates so far and whether this one
// was skipped; since encoding 3 the outer steps, dp bytes and every-step dp bytes so far; since
// encoding 5 the step boundary's checkpoint time, whether a shard was written behind the step and
// the write time of the save put in place),
// integers as int64 and the rest as IEEE doubles, in the block's `encoding`:
//  - 0 (fixed, schema 5–6): each of the first 18 fields as 8 little-endian bytes, 144 bytes a record;
//  - 1 (delta, schema 7), 2 (delta, 22 fields, schema 8), 3 (delta, 25 fields, schema 10) and 4
//    (the same with ranks, schema 11: a block holds up to kRanksPerBlock consecutive ranks, its
//    `rank` and `last_rank` the smallest and largest, and each record starts with its rank as the
//    zigzag varint of its difference from the record before's, the first's from 0), 5 (ranked, 28
//    fields, schema 18):
//    each record against the one before it in the block (the first against all zeros): a mask of
//    3 bytes (4 in encodings 3 and 4), little-endian, with bit k set when field k's 64 bits differ, then for
//    each such field in order an integer's difference (two's complement, wrapping) zigzag-encoded
//    as a LEB128 varint, or a double's bits XOR the previous bits as one byte (leading zero bytes
//    << 4 | trailing zero bytes) and the bytes between them, least significant first. Fields that
//    do not change from step to step (tokens, memory, often lr) cost nothing; the history file
//    and what SQLite writes, twice (WAL, then the database), shrink to about half for a trainer's
//    reports — the writer was the ingest's bottleneck.
// `first_step`/`last_step` are the smallest and largest step in it and `last_loss` the loss at
// `last_step` (the run list's "steps done" and "last loss" without unpacking). A report repeated (a
// rank resending what a crashed supervisor never acknowledged) is stored again; readers keep the
// newest copy, as the former INSERT OR REPLACE did.
#pragma once

#include "launcher/run_types.h"

#include <QByteArray>
#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <array>
#include <functional>
#include <limits>
#include <optional>

namespace trellis::launcher {

inline constexpr int kStepRecordFields = 28;   // encoding 5
inline constexpr int kStepRecordFields25 = 25; // encodings 3 and 4
inline constexpr int kStepRecordFields22 = 22; // encoding 2
inline constexpr int kStepRecordFields7 = 18;  // encodings 0 and 1
inline constexpr int kStepRecordBytes = kStepRecordFields7 * 8; // a fixed record

enum class StepEncoding : int { Fixed = 0, Delta = 1, Delta22 = 2, Delta25 = 3, Ranked25 = 4, Ranked28 = 5 };

// Since schema 11 a block holds the reports of up to this many consecutive ranks (encoding 4):
// at a few steps a second a rank has one report per transaction, and a block a rank cost SQLite
// an insert and two index updates per report (16,384 ranks × 2 Hz: 32,768 a second).
inline constexpr int kRanksPerBlock = 64;

// Appends one fixed record (18 fields: schema 5–6, for tests of old databases) to `blob`.
void packStepRecord(const StepRow &row, QByteArray &blob);

// One block's blob in the delta encoding of all 25 fields with each record's rank (encoding 4),
// record by record; the older delta encodings (one rank, no rank in the records; a 3-byte mask
// before encoding 3, rows whose later fields are 0) for tests of old histories.
class StepBlockEncoder {
public:
    explicit StepBlockEncoder(StepEncoding encoding = StepEncoding::Ranked28)
        : m_maskBytes(encoding >= StepEncoding::Delta25 ? 4 : 3), m_ranked(encoding >= StepEncoding::Ranked25)
    {
    }
    void add(const StepRow &row);
    void clear(); // an empty block again; the buffer keeps its capacity
    const QByteArray &bytes() const { return m_bytes; }
    qint64 count() const { return m_count; }

private:
    std::array<quint64, kStepRecordFields> m_previous{};
    int m_maskBytes;
    bool m_ranked;
    qint64 m_rank = 0; // the record before's (ranked blocks)
    QByteArray m_bytes;
    qint64 m_count = 0;
};

// Decodes a block of `rank` (encoding 4: whose first rank is `rank`; each record names its own)
// in `encoding`; false (and `error` naming the problem) when the blob does not hold exactly
// `count` well-formed records. The rows decoded before a problem are kept. `only`: keep the rows
// of that rank alone (every record is still read: each is encoded against the one before).
bool unpackStepBlock(int rank, const QByteArray &blob, qint64 count, StepEncoding encoding, QList<StepRow> &out,
                     QString *error, std::optional<int> only = {});

// A run's step reports from the legacy table and the blocks, the newest copy of each (rank, step),
// ordered by step then rank. `rank` (when set) narrows it to one rank, [fromStep, toStep] to a
// window of steps.
// Returns false with `error` set when a query fails or a block is corrupt (the others still read).
bool readStepRows(QSqlDatabase &db, qint64 run, QList<StepRow> &out, QString *error, std::optional<int> rank = {},
                  qint64 fromStep = 0, qint64 toStep = std::numeric_limits<qint64>::max());

// The same from `fromStep` on, in windows of steps of about `rowsPerChunk` rows, each handed to
// `consume` in step order: what a reader holds at once is one window, not the run (a 10-minute
// run of 1024 ranks at 20 Hz has 12 million rows).
bool forEachStepChunk(QSqlDatabase &db, qint64 run, qint64 fromStep, qint64 rowsPerChunk,
                      const std::function<void(const QList<StepRow> &)> &consume, QString *error);

} // namespace trellis::launcher
