// A run's report digest (launcher/report/run_digest.h) read from the history a window of steps at
// a time, so that reports and comparisons of long, wide runs hold their steps' figures, not their rows.
#pragma once

#include "launcher/history/history_database.h"
#include "launcher/report/run_digest.h"

#include <optional>

namespace trellis::launcher {

// meta: the run without its steps (loadRun(id, false)); rowsPerChunk: about as many step rows a
// window. nullopt with `error` when a read fails.
std::optional<RunDigest> digestFromHistory(HistoryDatabase &db, qint64 id, const RunData &meta, QString *error,
                                           qint64 rowsPerChunk = HistoryDatabase::kRowsPerChunk);

} // namespace trellis::launcher
