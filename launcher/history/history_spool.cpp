// See history_spool.h.
#include "launcher/history/history_spool.h"
#include "launcher/history/history_copy.h"
#include "launcher/history/history_database.h"
#include "launcher/history_location.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QSqlError>
#include <QSqlQuery>
#include <QUuid>

#include <cerrno>
#include <signal.h>

namespace trellis::launcher {
namespace {

// The rows merged as they are: reports, events, spans, stalls (a block written twice is read once,
// its newest copy); routing rows keep the server's copy of a (step, rank) it already holds.
const char *const kMergedTables[] = {"step_metrics", "step_blocks", "collective_stats", "collective_blocks", "events", "spans", "stalls"};

QString mergeRanks(QSqlDatabase &from, QSqlDatabase &to, qint64 spoolId, qint64 serverId)
{
    QSqlQuery read(from);
    if (!read.exec(QStringLiteral("SELECT rank, host, pid, device, dp, tp, pp, cp, exit_code, dropped, received_seq, goodbye_seq, lost,"
                                  " precision, kernels, threads FROM ranks WHERE run = %1")
                       .arg(spoolId)))
        return read.lastError().text();
    QSqlQuery write(to);
    // The spool's fields are the newer: they replace the server's where the spool has them; its
    // telemetry cursor only moves forward (a spool merged after the server heard more — another
    // supervisor's merge, the run gone on there — never takes a rank's cursor back).
    write.prepare(QStringLiteral(
        "INSERT INTO ranks(run, rank, host, pid, device, dp, tp, pp, cp, exit_code, dropped, received_seq, goodbye_seq, lost,"
        " precision, kernels, threads) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(run, rank) DO UPDATE SET"
        " host = coalesce(nullif(excluded.host, ''), ranks.host), pid = coalesce(nullif(excluded.pid, 0), ranks.pid),"
        " device = coalesce(nullif(excluded.device, ''), ranks.device),"
        " dp = coalesce(excluded.dp, ranks.dp), tp = coalesce(excluded.tp, ranks.tp), pp = coalesce(excluded.pp, ranks.pp),"
        " cp = coalesce(excluded.cp, ranks.cp), exit_code = coalesce(excluded.exit_code, ranks.exit_code),"
        " dropped = greatest(excluded.dropped, ranks.dropped),"
        " received_seq = greatest(coalesce(excluded.received_seq, 0), coalesce(ranks.received_seq, 0)),"
        " goodbye_seq = coalesce(excluded.goodbye_seq, ranks.goodbye_seq), lost = greatest(excluded.lost, ranks.lost),"
        " precision = coalesce(nullif(excluded.precision, ''), ranks.precision),"
        " kernels = coalesce(nullif(excluded.kernels, ''), ranks.kernels), threads = coalesce(nullif(excluded.threads, 0), ranks.threads)"));
    while (read.next()) {
        write.bindValue(0, serverId);
        for (int i = 0; i < 16; ++i)
            write.bindValue(i + 1, read.value(i));
        if (!write.exec())
            return write.lastError().text();
    }
    return {};
}

// Whether a spooled status moves the server's record of a run forward: a run that ended there keeps
// its end unless the spool's is later, or the server's end was only another Trellis's guess that
// the run was abandoned (its supervisor gone, the spool not merged yet) and the spool has the end
// the supervisor itself recorded; one still going takes the spool's status unless that is behind
// (launching behind running behind an end).
bool movesForward(const QString &spooled, const QString &spooledEnd, const QString &server, const QString &serverEnd,
                  const QString &serverError)
{
    const auto order = [](const QString &status) {
        const RunState s = runStateFromString(status);
        return s == RunState::Completed || s == RunState::Failed || s == RunState::Stopped ? 2 : s == RunState::Running ? 1 : 0;
    };
    if (!serverEnd.isEmpty()) {
        if (spooledEnd.isEmpty())
            return false;
        return serverError.startsWith(QLatin1String(HistoryDatabase::kAbandonedPrefix)) ||
               QDateTime::fromString(spooledEnd, Qt::ISODateWithMs) > QDateTime::fromString(serverEnd, Qt::ISODateWithMs);
    }
    return !spooledEnd.isEmpty() || order(spooled) >= order(server);
}

QString mergeRun(QSqlDatabase &from, QSqlDatabase &to, qint64 spoolId, const QString &runId, qint64 *rows)
{
    QSqlQuery q(to);
    q.prepare(QStringLiteral("SELECT id, status, ended_at, error FROM runs WHERE run_id = ?"));
    q.addBindValue(runId);
    if (!q.exec())
        return q.lastError().text();
    if (!q.next()) // created while the server was away: the spool holds all of it
        return copyRunTo(from, to, spoolId);
    const qint64 serverId = q.value(0).toLongLong();
    const QString serverStatus = q.value(1).toString(), serverEnd = q.value(2).toString(), serverError = q.value(3).toString();
    q.finish();
    QSqlQuery run(from);
    if (!run.exec(QStringLiteral("SELECT status, ended_at, exit_code, error, launch_command FROM runs WHERE id = %1").arg(spoolId)) || !run.next())
        return run.lastError().text();
    if (run.value(0).toString() != QLatin1String("spooled") &&
        movesForward(run.value(0).toString(), run.value(1).toString(), serverStatus, serverEnd, serverError)) {
        q.prepare(QStringLiteral("UPDATE runs SET status = ?, ended_at = ?, exit_code = ?, error = ? WHERE id = ?"));
        for (int i = 0; i < 4; ++i)
            q.addBindValue(run.value(i));
        q.addBindValue(serverId);
        if (!q.exec())
            return q.lastError().text();
    }
    if (const QString commands = run.value(4).toString(); !commands.isEmpty()) {
        q.prepare(QStringLiteral("UPDATE runs SET launch_command = coalesce(launch_command || chr(10), '') || ? WHERE id = ?"));
        q.addBindValue(commands);
        q.addBindValue(serverId);
        if (!q.exec())
            return q.lastError().text();
    }
    if (const QString e = mergeRanks(from, to, spoolId, serverId); !e.isEmpty())
        return e;
    for (const char *table : kMergedTables)
        if (const QString e = copyTableRows(from, to, QLatin1String(table), spoolId, serverId, false, rows); !e.isEmpty())
            return e;
    return copyTableRows(from, to, QStringLiteral("expert_load"), spoolId, serverId, true, rows);
}

} // namespace

namespace {
QString spoolStem(const QString &server)
{
    return QString::fromLatin1(QCryptographicHash::hash(historyIdentity(server).toUtf8(), QCryptographicHash::Sha256).toHex().left(16));
}
} // namespace

QString spoolPathFor(const QString &server)
{
    if (!isServerHistory(server))
        return {};
    // The random part names this spool alone (a second outage in the same process gets another):
    // the server records each run merged from it by that name (spool_merges).
    return historyLocalFolder(server) + QStringLiteral("/spool/%1-%2-%3.sqlite")
                                            .arg(spoolStem(server))
                                            .arg(QCoreApplication::applicationPid())
                                            .arg(QUuid::createUuid().toString(QUuid::Id128));
}

QStringList leftoverSpools(const QString &server)
{
    if (!isServerHistory(server))
        return {};
    QStringList out;
    const QDir dir(historyLocalFolder(server) + QStringLiteral("/spool"));
    for (const QFileInfo &f : dir.entryInfoList({spoolStem(server) + QStringLiteral("-*.sqlite")}, QDir::Files)) {
        const qint64 pid = f.completeBaseName().section(QLatin1Char('-'), 1, 1).toLongLong();
        if (pid > 0 && pid != QCoreApplication::applicationPid() && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
            out << f.absoluteFilePath();
    }
    return out;
}

QString spoolRuns(HistoryDatabase &spool, const QStringList &runIds)
{
    QSqlQuery q(spool.connection());
    q.prepare(QStringLiteral("INSERT INTO runs(run_id, plan_json, status) VALUES(?, '{}', 'spooled') ON CONFLICT(run_id) DO NOTHING"));
    for (const QString &runId : runIds) {
        q.bindValue(0, runId);
        if (!q.exec())
            return q.lastError().text();
    }
    return {};
}

QString mergeSpool(HistoryDatabase &spool, HistoryDatabase &server, qint64 *rows)
{
    QSqlDatabase &from = spool.connection();
    QSqlDatabase &to = server.connection();
    QSqlQuery runs(from);
    if (!runs.exec(QStringLiteral("SELECT id, run_id FROM runs ORDER BY id")))
        return runs.lastError().text();
    QList<std::pair<qint64, QString>> spooled;
    while (runs.next())
        spooled.append({runs.value(0).toLongLong(), runs.value(1).toString()});
    runs.finish();
    const QString name = QFileInfo(spool.path()).completeBaseName(); // unique to this spool (spoolPathFor)
    for (const auto &[spoolId, runId] : spooled) {
        if (!to.transaction())
            return to.lastError().text();
        // The run is claimed first: another supervisor merging the same spool at the same moment
        // waits on this row until this transaction ends, then finds it (its claim inserts nothing)
        // and merges nothing; one whose merge rolled back leaves the claim to the next.
        QSqlQuery q(to);
        q.prepare(QStringLiteral("INSERT INTO spool_merges(spool, run_id, merged_at) VALUES(?, ?, ?) ON CONFLICT(spool, run_id) DO NOTHING"));
        q.addBindValue(name);
        q.addBindValue(runId);
        q.addBindValue(QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs));
        if (!q.exec()) {
            const QString e = q.lastError().text();
            to.rollback();
            return QStringLiteral("run %1: %2").arg(runId, e);
        }
        const bool already = q.numRowsAffected() == 0; // merged before (or by another just now)
        q.finish();
        QString e;
        if (!already)
            e = mergeRun(from, to, spoolId, runId, rows);
        if (!e.isEmpty()) {
            to.rollback();
            return QStringLiteral("run %1: %2").arg(runId, e);
        }
        if (!to.commit())
            return QStringLiteral("run %1: %2").arg(runId, to.lastError().text());
        QSqlQuery done(from);
        if (!done.exec(QStringLiteral("DELETE FROM runs WHERE id = %1").arg(spoolId)))
            return done.lastError().text(); // merged but still spooled: the next merge finds it in spool_merges
    }
    return {};
}

} // namespace trellis::launcher
