// Rows written to PostgreSQL with COPY … FROM STDIN (text format) through libpq's
// PQputCopyData: the history writer's bulk rows (step and collective blocks), which Qt's QPSQL
// driver can only insert one statement a row. Internal to launcher/history/; used on the writer's
// own connection, inside its open transaction.
#pragma once

#include <QByteArray>
#include <QString>

typedef struct pg_conn PGconn;
class QSqlDatabase;

namespace trellis::launcher {

// The libpq connection under a QPSQL connection; null for any other driver.
PGconn *postgresConnection(const QSqlDatabase &db);

class PostgresCopy {
public:
    // `target`: the table and its columns, "step_blocks(run, rank, …)".
    explicit PostgresCopy(QByteArray target) : m_target(std::move(target)) {}
    void integer(qint64 value);
    void real(double value);
    void bytes(const QByteArray &value); // bytea, hex
    void endRow();
    qsizetype rows() const { return m_rows; }
    // Sends the rows (none: nothing to do); false with `error` saying why (the transaction is then
    // aborted, as after any failed statement).
    bool send(PGconn *connection, QString &error);

private:
    void separate();
    QByteArray m_target;
    QByteArray m_data;
    qsizetype m_rows = 0;
    bool m_rowStarted = false;
};

} // namespace trellis::launcher
