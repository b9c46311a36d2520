// Copying runs from one history to another (`trellis-cli history copy`), either way between an
// SQLite file and a PostgreSQL database: a user's local runs joining the team's, or a team's run
// kept offline. Each run goes in one transaction of the destination with every row it has
// (record, ranks, step and collective reports as stored, events, spans, routing, stalls, tags);
// a run the destination already holds (by run id) is left as it is, so copying again copies
// nothing twice, and a run still going is not copied (its rows are still coming).
#pragma once

#include <QSqlDatabase>
#include <QString>
#include <QStringList>

namespace trellis::launcher {

class HistoryDatabase;

// Used inside a transaction of the caller's (the spool's merge, history_spool.h): the rows of
// `table` of run `sourceId` as rows of `targetId` in the order they were written, leaving out rows
// whose key the destination holds when `skipConflicts`; adds to *rows. "" or why not.
QString copyTableRows(QSqlDatabase &from, QSqlDatabase &to, const QString &table, qint64 sourceId, qint64 targetId,
                      bool skipConflicts = false, qint64 *rows = nullptr);
// A whole run (its record and every row) into `to`, inside the caller's transaction; "" or why not.
QString copyRunTo(QSqlDatabase &from, QSqlDatabase &to, qint64 sourceId);

struct HistoryCopyOutcome {
    QStringList copied;  // run ids
    QStringList present; // already in the destination, left as they are
    QStringList refused; // "RUN: why" — still going, or not found, or a row refused
};

// Copies the runs named (ids, row numbers or "last"; none: every run) from `from` to `to`.
HistoryCopyOutcome copyRuns(HistoryDatabase &from, HistoryDatabase &to, const QStringList &runs);

} // namespace trellis::launcher
