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

} // namespace trellis::launcher
