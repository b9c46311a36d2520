// Where a run history lives and the SQL that differs between its two engines (docs/history.md).
// A history is either an SQLite file (the default; one user, nothing to set up) or a PostgreSQL
// database a team shares, named by a connection string (launcher/history_location.h).
// The schema is written once, in the portable SQL both engines read (history_database.cpp);
// postgresDdl() maps its SQLite type names to PostgreSQL's, and the few expressions that differ
// are the functions below, each given the engine.
#pragma once

#include "launcher/history_location.h"

#include <QString>
#include <QStringList>

namespace trellis::launcher {

enum class HistoryEngine { Sqlite, Postgres };
HistoryEngine historyEngineOf(const QString &database);

// What a PostgreSQL connection string asks for, read by libpq's own parser (so every key libpq
// knows is understood: host, hostaddr, port, dbname, user, sslmode, sslrootcert, service,
// options, connect_timeout…). A password is refused: it belongs in ~/.pgpass, PGPASSWORD or a
// service file, never in a command line, a plan or a log.
struct ServerConnection {
    QString host, port, dbname, user;
    QStringList options; // the other keys as key=value, for Qt's QPSQL connect options
};
// "" and *out filled, or why the string is refused.
QString parseServerConnection(const QString &url, ServerConnection *out);
// The connection string with any password in it replaced by ***, for messages.
QString withoutPassword(const QString &url);

// SQLite's portable DDL as PostgreSQL's: INTEGER PRIMARY KEY AUTOINCREMENT → BIGSERIAL PRIMARY
// KEY, INTEGER → BIGINT (steps, bytes and nanoseconds pass 2^31), REAL → DOUBLE PRECISION, BLOB →
// BYTEA; a table made without a row id of its own gets `rowid BIGSERIAL`, so that "in the order
// written" (ORDER BY rowid) reads the same on both engines.
QString postgresDdl(const QString &sqliteStatement);

// Expressions that differ: the larger of two values; the text of a new line; the tags of run r,
// one a line; a case-insensitive LIKE.
QString sqlGreatest(HistoryEngine engine, const QString &a, const QString &b);
QString sqlNewline(HistoryEngine engine);
QString sqlTagLines(HistoryEngine engine);
QString sqlLikeInsensitive(HistoryEngine engine);
// Who records a run into the history (runs.owner, schema 16), as an SQL expression: PostgreSQL's
// current_user (the database role, what row-level security policies compare with); for SQLite
// this process's user name, quoted.
QString sqlOwner(HistoryEngine engine);

// The plan fields the runs list shows, read from a JSON text column or expression: the plan's
// name, precision and layout ("dp2 tp2 pp1", cp and ep when above 1).
QString planNameSql(HistoryEngine engine, const QString &json);
QString planPrecisionSql(HistoryEngine engine, const QString &json);
QString planLayoutSql(HistoryEngine engine, const QString &json);
// A field of the plan by a JSON path ("$.parallel.tp") bound as a parameter, and a value to
// compare it with bound after it, the comparison typed as SQLite's json_extract types it
// (numbers as numbers, text as text).
QString planFieldSql(HistoryEngine engine, const QString &json);
QString planValueSql(HistoryEngine engine, int metaType);

} // namespace trellis::launcher
