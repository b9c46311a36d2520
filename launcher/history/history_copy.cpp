// See history_copy.h.
#include "launcher/history/history_copy.h"
#include "launcher/history/history_database.h"

#include <QSqlError>
#include <QSqlField>
#include <QSqlQuery>
#include <QSqlRecord>

#include <algorithm>
#include <limits>

namespace trellis::launcher {
namespace {

// The tables that hold a run's rows (column `run`), in an order their rows can be inserted in.
const char *const kRunTables[] = {"ranks", "step_metrics", "step_blocks", "collective_stats", "collective_blocks",
                                  "events", "spans", "expert_load", "stalls", "run_tags"};

// The columns both histories have, but the row ids each gives its own rows.
QStringList sharedColumns(QSqlDatabase &from, QSqlDatabase &to, const QString &table)
{
    const QSqlRecord source = from.record(table);
    const QSqlRecord target = to.record(table);
    QStringList columns;
    for (int i = 0; i < source.count(); ++i) {
        const QString name = source.fieldName(i);
        if (name != QLatin1String("id") && name != QLatin1String("rowid") && target.contains(name))
            columns << name;
    }
    return columns;
}

} // namespace

QString copyTableRows(QSqlDatabase &from, QSqlDatabase &to, const QString &table, qint64 sourceId, qint64 targetId,
                      bool skipConflicts, qint64 *rows)
{
    const QStringList columns = sharedColumns(from, to, table);
    if (columns.isEmpty())
        return {};
    QSqlQuery read(from);
    read.setForwardOnly(true);
    const QString order = table == QLatin1String("events") ? QStringLiteral("id") : QStringLiteral("rowid");
    if (!read.exec(QStringLiteral("SELECT %1 FROM %2 WHERE run = %3 ORDER BY %4").arg(columns.join(QLatin1String(", ")), table).arg(sourceId).arg(order)))
        return QStringLiteral("reading %1: %2").arg(table, read.lastError().text().trimmed());
    QStringList marks;
    for (qsizetype i = 0; i < columns.size(); ++i)
        marks << QStringLiteral("?");
    QSqlQuery write(to);
    if (!write.prepare(QStringLiteral("INSERT INTO %1(%2) VALUES(%3)%4")
                           .arg(table, columns.join(QLatin1String(", ")), marks.join(QLatin1Char(',')),
                                skipConflicts ? QStringLiteral(" ON CONFLICT DO NOTHING") : QString())))
        return QStringLiteral("writing %1: %2").arg(table, write.lastError().text().trimmed());
    const int runColumn = static_cast<int>(columns.indexOf(QStringLiteral("run")));
    while (read.next()) {
        for (int i = 0; i < columns.size(); ++i)
            write.bindValue(i, i == runColumn ? QVariant(targetId) : read.value(i));
        if (!write.exec())
            return QStringLiteral("writing %1: %2").arg(table, write.lastError().text().trimmed());
        if (rows)
            ++*rows;
    }
    return {};
}

QString copyRunTo(QSqlDatabase &from, QSqlDatabase &to, qint64 sourceId)
{
    // The owner is whoever copies the run into this history (a server's row-level security checks
    // it against current_user), not whoever recorded it into the other.
    QStringList columns = sharedColumns(from, to, QStringLiteral("runs"));
    columns.removeAll(QStringLiteral("owner"));
    QSqlQuery read(from);
    if (!read.exec(QStringLiteral("SELECT %1 FROM runs WHERE id = %2").arg(columns.join(QLatin1String(", "))).arg(sourceId)) || !read.next())
        return QStringLiteral("reading the run: %1").arg(read.lastError().text().trimmed());
    QStringList marks;
    for (qsizetype i = 0; i < columns.size(); ++i)
        marks << QStringLiteral("?");
    QSqlQuery write(to);
    const HistoryEngine engine = to.driverName() == QLatin1String("QPSQL") ? HistoryEngine::Postgres : HistoryEngine::Sqlite;
    write.prepare(QStringLiteral("INSERT INTO runs(%1, owner) VALUES(%2, %3) RETURNING id")
                      .arg(columns.join(QLatin1String(", ")), marks.join(QLatin1Char(',')), sqlOwner(engine)));
    for (int i = 0; i < columns.size(); ++i)
        write.bindValue(i, read.value(i));
    QString why;
    if (!write.exec() || !write.next())
        why = QStringLiteral("writing the run: %1").arg(write.lastError().text().trimmed());
    const qint64 targetId = why.isEmpty() ? write.value(0).toLongLong() : -1;
    write.finish();
    for (const char *table : kRunTables)
        if (why.isEmpty())
            why = copyTableRows(from, to, QLatin1String(table), sourceId, targetId);
    return why;
}

namespace {

// Copies one run in one transaction of the destination; "" or why not.
QString copyRun(QSqlDatabase &from, QSqlDatabase &to, qint64 sourceId)
{
    if (!to.transaction())
        return QStringLiteral("cannot start a transaction: %1").arg(to.lastError().text().trimmed());
    if (const QString why = copyRunTo(from, to, sourceId); !why.isEmpty()) {
        to.rollback();
        return why;
    }
    if (!to.commit())
        return QStringLiteral("commit: %1").arg(to.lastError().text().trimmed());
    return {};
}

} // namespace

HistoryCopyOutcome copyRuns(HistoryDatabase &from, HistoryDatabase &to, const QStringList &runs)
{
    HistoryCopyOutcome out;
    QList<RunSummary> chosen;
    if (runs.isEmpty()) {
        chosen = from.listRuns(std::numeric_limits<int>::max());
        std::reverse(chosen.begin(), chosen.end()); // oldest first: the destination keeps their order
    }
    for (const QString &reference : runs) {
        if (const std::optional<RunSummary> run = from.findRun(reference))
            chosen.append(*run);
        else
            out.refused << QStringLiteral("%1: %2").arg(reference, from.lastError());
    }
    for (const RunSummary &run : chosen) {
        if (run.status == QLatin1String("launching") || run.status == QLatin1String("running")) {
            out.refused << QStringLiteral("%1: still %2; copy it once it ended").arg(run.runId, run.status);
            continue;
        }
        QSqlQuery there(to.connection());
        there.prepare(QStringLiteral("SELECT count(*) FROM runs WHERE run_id = ?"));
        there.addBindValue(run.runId);
        if (!there.exec() || !there.next()) {
            out.refused << QStringLiteral("%1: %2").arg(run.runId, there.lastError().text().trimmed());
            continue;
        }
        if (there.value(0).toInt() > 0) {
            out.present << run.runId;
            continue;
        }
        if (const QString why = copyRun(from.connection(), to.connection(), run.id); why.isEmpty())
            out.copied << run.runId;
        else
            out.refused << QStringLiteral("%1: %2").arg(run.runId, why);
    }
    return out;
}

} // namespace trellis::launcher
