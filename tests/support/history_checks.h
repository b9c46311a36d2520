// What the run-ownership and supervision tests check in a run's history: how many step rows it
// holds, waiting for them, and whether a run is complete (every step of every rank, every
// telemetry message in sequence, nothing dropped or lost, SQLite intact).
#pragma once

#include "launcher/history/history_database.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QSet>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTest>

namespace trellis::test {

using launcher::HistoryDatabase;
using launcher::RankRow;

inline qint64 stepRows(const QString &database)
{
    qint64 rows = -1;
    {
        QSqlDatabase c = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("count"));
        c.setDatabaseName(database);
        c.setConnectOptions(QStringLiteral("QSQLITE_OPEN_READONLY"));
        if (QFileInfo::exists(database) && c.open()) {
            QSqlQuery q(c);
            // Step reports: packed in step_blocks (schema 5), rows in step_metrics before.
            if (q.exec(QStringLiteral("SELECT (SELECT count(*) FROM step_metrics) + (SELECT coalesce(sum(n), 0) FROM step_blocks)")) &&
                q.next())
                rows = q.value(0).toLongLong();
        }
    }
    QSqlDatabase::removeDatabase(QStringLiteral("count"));
    return rows;
}

// The step reports a history holds for a run as written: the packed blocks' report counts added
// up, so a block written twice counts twice (reads keep one copy).
inline qint64 storedReports(HistoryDatabase &h, qint64 runRow)
{
    QSqlQuery q(h.connection());
    if (!q.exec(QStringLiteral("SELECT coalesce(sum(n), 0) FROM step_blocks WHERE run = %1").arg(runRow)) || !q.next())
        return -1;
    return q.value(0).toLongLong();
}

inline bool waitForSteps(const QString &database, qint64 rows, int timeoutMs)
{
    QElapsedTimer waited;
    waited.start();
    while (waited.elapsed() < timeoutMs) {
        if (stepRows(database) >= rows)
            return true;
        QTest::qWait(100);
    }
    return false;
}

// The run is complete in the history: completed, every rank's every step, every rank's
// telemetry received in sequence up to its Goodbye with nothing dropped, SQLite intact.
inline bool historyIsComplete(const QString &database, const QString &runId, int steps)
{
    HistoryDatabase h;
    if (!h.open(database, false).isEmpty())
        return false;
    const auto summary = h.findRun(runId);
    if (!summary)
        return false;
    const auto data = h.loadRun(summary->id);
    if (!data || data->run.status != QLatin1String("completed") || data->ranks.size() != 4) {
        qWarning() << "run" << runId << "is" << (data ? data->run.status : QStringLiteral("missing"));
        return false;
    }
    QSet<QPair<int, qint64>> seen;
    for (const auto &s : data->steps)
        seen.insert({s.rank, s.step});
    if (seen.size() != 4 * steps) {
        qWarning() << "steps in the history:" << seen.size() << "of" << 4 * steps;
        return false;
    }
    for (const RankRow &r : data->ranks)
        if (r.goodbyeSeq < 0 || r.receivedSeq != r.goodbyeSeq + 1 || r.dropped != 0 || r.lost != 0) {
            qWarning() << "rank" << r.rank << "received" << r.receivedSeq << "goodbye seq" << r.goodbyeSeq << "dropped" << r.dropped
                       << "lost" << r.lost;
            return false;
        }
    bool ok = false;
    {
        QSqlDatabase check = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("integrity"));
        check.setDatabaseName(database);
        if (check.open()) {
            QSqlQuery q(check);
            ok = q.exec(QStringLiteral("PRAGMA integrity_check")) && q.next() && q.value(0).toString() == QLatin1String("ok");
        }
    }
    QSqlDatabase::removeDatabase(QStringLiteral("integrity"));
    return ok;
}

} // namespace trellis::test
