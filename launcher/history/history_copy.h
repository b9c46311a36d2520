// Copying runs from one history to another (`trellis-cli history copy`), either way between an
// SQLite file and a PostgreSQL database: a user's local runs joining the team's, or a team's run
// kept offline. Each run goes in one transaction of the destination with every row it has
// (record, ranks, step and collective reports as stored, events, spans, routing, stalls, tags);
// a run the destination already holds (by run id) is left as it is, so copying again copies
// nothing twice, and a run still going is not copied (its rows are still coming).
#pragma once

#include <QString>
#include <QStringList>

namespace trellis::launcher {

class HistoryDatabase;

struct HistoryCopyOutcome {
    QStringList copied;  // run ids
    QStringList present; // already in the destination, left as they are
    QStringList refused; // "RUN: why" — still going, or not found, or a row refused
};

// Copies the runs named (ids, row numbers or "last"; none: every run) from `from` to `to`.
HistoryCopyOutcome copyRuns(HistoryDatabase &from, HistoryDatabase &to, const QStringList &runs);

} // namespace trellis::launcher
