// What a run leaves on disk beside its rows in a history: its folder runs/RUN_ID beside the
// database, and the plan and log its supervisor kept (runs/supervisors|simulated|commands/RUN_ID.*).
// Deleting a run (HistoryDatabase::deleteRun) removes them; the workbench and `trellis-cli runs
// delete` say which before they go. Plain file-system reads: no database, no Qt Sql.
#pragma once

#include <QString>
#include <QStringList>

namespace trellis::launcher {

// Those that exist, for a run of the history at `databasePath`; none for a run id that is not
// letters, digits, '.', '_' and '-' (the registry's rule), so no id can name a path elsewhere.
QStringList runFilesFor(const QString &databasePath, const QString &runId);

} // namespace trellis::launcher
