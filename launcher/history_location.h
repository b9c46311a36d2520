// Where a run history lives (docs/history.md): an SQLite file (the default; one user, nothing to
// set up) or a PostgreSQL database a team shares, named by a connection string
// (postgresql://user@host/dbname, or postgres://…). A value with that scheme is never taken for a
// file name; anything else is a path. Plain string and path helpers: no database, no Qt Sql.
#pragma once

#include <QString>

namespace trellis::launcher {

// True for a PostgreSQL connection string (postgresql:// or postgres://, any case).
bool isServerHistory(const QString &database);
// How a history is named to other processes and in run records: a file's absolute path, or the
// connection string as given.
QString historyIdentity(const QString &database);
// The folder of what a history's runs keep on this machine (run folders, logs, collector keys,
// calibration): beside the file for SQLite; for a server, this user's data folder (the default
// history's folder), as a server holds no files.
QString historyLocalFolder(const QString &database);
// ~/.local/share/trellis/history.sqlite (Qt's AppDataLocation).
QString defaultHistoryFile();
// The history used when none is given (--db): $TRELLIS_HISTORY when set (a file or a connection
// string), else defaultHistoryFile().
QString defaultHistory();
// The history a plan names (telemetry.history) as a --db value: a connection string as it is, a
// file relative to the plan's folder made absolute. Empty when the plan names none.
QString planHistory(const QString &named, const QString &planPath);
// The history a plan's run is recorded in: `database` (--db's value, else defaultHistory()) when
// --db was given, it comes first; else the plan's; else `database` ($TRELLIS_HISTORY or the file).
// A plan is more particular than a user's environment: its history comes before TRELLIS_HISTORY.
QString historyForPlan(const QString &named, const QString &planPath, bool given, const QString &database);

} // namespace trellis::launcher
