// See postgres_copy.h.
#include "launcher/history/postgres_copy.h"

#include <QSqlDatabase>
#include <QSqlDriver>
#include <QVariant>

#include <cmath>

#include <libpq-fe.h>

namespace trellis::launcher {

PGconn *postgresConnection(const QSqlDatabase &db)
{
    if (!db.isValid() || !db.driver())
        return nullptr;
    const QVariant v = db.driver()->handle();
    if (!v.isValid() || (qstrcmp(v.typeName(), "PGconn*") != 0 && qstrcmp(v.typeName(), "pg_conn*") != 0))
        return nullptr;
    return *static_cast<PGconn *const *>(v.constData());
}

void PostgresCopy::separate()
{
    if (m_rowStarted)
        m_data.append('\t');
    m_rowStarted = true;
}

void PostgresCopy::integer(qint64 value)
{
    separate();
    m_data.append(QByteArray::number(value));
}

void PostgresCopy::real(double value)
{
    separate();
    if (std::isnan(value))
        m_data.append("NaN");
    else if (std::isinf(value))
        m_data.append(value > 0 ? "Infinity" : "-Infinity");
    else
        m_data.append(QByteArray::number(value, 'g', 17));
}

void PostgresCopy::bytes(const QByteArray &value)
{
    separate();
    // bytea's hex form, \x…, with COPY's own backslash escaped.
    m_data.append("\\\\x");
    m_data.append(value.toHex());
}

void PostgresCopy::endRow()
{
    m_data.append('\n');
    m_rowStarted = false;
    ++m_rows;
}

bool PostgresCopy::send(PGconn *connection, QString &error)
{
    if (m_rows == 0)
        return true;
    const auto failed = [&](const char *what) {
        error = QStringLiteral("COPY %1: %2 (%3)")
                    .arg(QString::fromUtf8(m_target), QLatin1String(what), QString::fromUtf8(PQerrorMessage(connection)).trimmed());
        return false;
    };
    PGresult *start = PQexec(connection, ("COPY " + m_target + " FROM STDIN").constData());
    const bool copying = PQresultStatus(start) == PGRES_COPY_IN;
    PQclear(start);
    if (!copying)
        return failed("the server did not start the copy");
    bool ok = PQputCopyData(connection, m_data.constData(), static_cast<int>(m_data.size())) == 1;
    ok = PQputCopyEnd(connection, ok ? nullptr : "the rows could not be sent") == 1 && ok;
    bool done = ok;
    while (PGresult *result = PQgetResult(connection)) {
        if (PQresultStatus(result) != PGRES_COMMAND_OK && done) {
            done = false;
            error = QStringLiteral("COPY %1: %2").arg(QString::fromUtf8(m_target), QString::fromUtf8(PQresultErrorMessage(result)).trimmed());
        }
        PQclear(result);
    }
    if (!ok && error.isEmpty())
        return failed("the rows could not be sent");
    m_data.clear();
    m_rows = 0;
    return done;
}

} // namespace trellis::launcher
