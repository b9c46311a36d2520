// How the history stores step reports (schema 5): packed, one `step_blocks` row per rank and
// writer transaction, holding every step report of that rank the transaction commits. A row per
// report (`step_metrics`, schema 1–4) cost SQLite an index insert per message, which capped the
// ingest at ~220k messages/s on two cores; a block costs one insert per rank per transaction.
// Databases from before keep their `step_metrics` rows and are read together with the blocks.
//
// A block's `rows` blob: `n` records of kStepRecordFields little-endian 8-byte fields in StepRow's
// order (step, the six times in ms, tokens, tokens/s, loss, grad norm, lr, the six memory
// categories), integers as int64 and the rest as IEEE doubles. `first_step`/`last_step` are the
// smallest and largest step in it and `last_loss` the loss at `last_step` (the run list's "steps
// done" and "last loss" without unpacking). A report repeated (a rank resending what a crashed
// supervisor never acknowledged) is stored again; readers keep the newest copy, as the former
// INSERT OR REPLACE did.
#pragma once

#include "launcher/run_types.h"

#include <QByteArray>
#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <limits>
#include <optional>

namespace trellis::launcher {

inline constexpr int kStepRecordFields = 18;
inline constexpr int kStepRecordBytes = kStepRecordFields * 8;

// Appends one record to `blob`.
void packStepRecord(const StepRow &row, QByteArray &blob);
// Decodes a block of `rank`; false (and `error` naming the problem) when the blob is not a whole
// number of records or disagrees with `count`.
bool unpackStepBlock(int rank, const QByteArray &blob, qint64 count, QList<StepRow> &out, QString *error);

// A run's step reports from the legacy table and the blocks, the newest copy of each (rank, step),
// ordered by step then rank. `rank` (when set) and [fromStep, toStep] narrow it to one rank's range.
// Returns false with `error` set when a query fails or a block is corrupt (the others still read).
bool readStepRows(QSqlDatabase &db, qint64 run, QList<StepRow> &out, QString *error, std::optional<int> rank = {},
                  qint64 fromStep = 0, qint64 toStep = std::numeric_limits<qint64>::max());

} // namespace trellis::launcher
