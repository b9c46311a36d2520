// The local spool of a team's history (docs/history.md, "When the server goes away"). While a
// supervisor's PostgreSQL server cannot be reached, its writer commits each batch into an SQLite
// file of the same schema on this machine — ~/.local/share/trellis/spool/<server>-<pid>-<id>.sqlite — and
// acknowledges it from there, so neither the ranks nor the supervisor hold what was received. Once
// the server is back (or when the next writer for that server starts, if it never came back in
// this one's life) the spool is merged into it, a run per transaction, and what was merged leaves
// the spool. Internal to launcher/history/: the writer thread only.
#pragma once

#include <QString>
#include <QStringList>

namespace trellis::launcher {

class HistoryDatabase;

// The spool file of this process for a server history (its connection string); "" for a file
// history. Each supervisor spools to a file of its own (the server's and its pid's).
QString spoolPathFor(const QString &server);
// The spool files of a server history left by processes that are gone: merged by the next writer.
QStringList leftoverSpools(const QString &server);

// Makes sure the spool holds a row for each run (placeholder rows, status 'spooled', for runs the
// server holds); "" or why not.
QString spoolRuns(HistoryDatabase &spool, const QStringList &runIds);

// Merges every run of `spool` into `server`: the run's status when it changed while spooled, its
// launch commands, each rank's newest fields and telemetry cursor, and every report, event, span,
// routing row and stall. A run per transaction; a merged run leaves the spool. Sets *rows to the
// rows merged. "" when the spool is empty afterwards, else why not (what was not merged stays).
// Each run's transaction records (spool name, run) in the server's spool_merges: a run found there
// is not merged again, only removed from the spool.
QString mergeSpool(HistoryDatabase &spool, HistoryDatabase &server, qint64 *rows = nullptr);

} // namespace trellis::launcher
