// See history_rows.h.
#include "launcher/history/history_rows.h"
#include "launcher/history/history_database.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QSqlError>
#include <QSqlQuery>
#include <QSysInfo>

namespace trellis::launcher {
namespace {

QString iso(const QDateTime &t) { return t.isValid() ? t.toString(Qt::ISODateWithMs) : QString(); }


// What applying one operation needs: the connection, the run row ids known so far (filled by
// NewRunOp), SQLite's own statements (null: none), the query whose error is reported, and where
// an error of the operation's own goes.
struct ApplyContext {
    QSqlDatabase &db;
    HistoryEngine engine;
    QHash<QString, qint64> &runIds;
    FastRows *fast;
    QSqlQuery &q;
    QString &error;
};

// The row id of a run; -1 (and `error` says so) when there is none.
qint64 runRowId(ApplyContext &c, const QString &runId)
{
    qint64 id = -1;
    if (auto it = c.runIds.find(runId); it != c.runIds.end()) {
        id = *it;
    } else {
        QSqlQuery find(c.db);
        find.prepare(QStringLiteral("SELECT id FROM runs WHERE run_id = ?"));
        find.addBindValue(runId);
        if (find.exec() && find.next()) {
            c.runIds.insert(runId, find.value(0).toLongLong());
            id = find.value(0).toLongLong();
        }
    }
    if (id < 0)
        c.error = QStringLiteral("unknown run %1").arg(runId);
    return id;
}

bool applyOp(ApplyContext &c, const NewRunOp &o)
{
    QSqlQuery &q = c.q;
    q.prepare(QStringLiteral("INSERT INTO runs(run_id, name, plan_json, target, status, world_size,"
                             " total_steps, started_at, launcher_host, launcher_pid, files_at, kind, owner) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,%1) RETURNING id")
                  .arg(sqlOwner(c.engine)));
    q.addBindValue(o.runId);
    q.addBindValue(o.name);
    q.addBindValue(o.planJson);
    q.addBindValue(o.target);
    q.addBindValue(toString(RunState::Launching));
    q.addBindValue(o.worldSize);
    q.addBindValue(o.totalSteps);
    q.addBindValue(iso(o.startedAt));
    q.addBindValue(QSysInfo::machineHostName());
    q.addBindValue(QCoreApplication::applicationPid());
    q.addBindValue(o.filesAt.isEmpty() ? QVariant() : QVariant(o.filesAt));
    q.addBindValue(toString(o.kind));
    if (!q.exec() || !q.next())
        return false;
    const qint64 id = q.value(0).toLongLong();
    c.runIds.insert(o.runId, id);
    // The plan fields the runs list shows, kept beside the plan (history_database.h).
    q.prepare(QStringLiteral("UPDATE runs SET plan_name = %1, plan_precision = %2, plan_layout = %3 WHERE id = ?")
                  .arg(planNameSql(c.engine, QStringLiteral("plan_json")), planPrecisionSql(c.engine, QStringLiteral("plan_json")),
                       planLayoutSql(c.engine, QStringLiteral("plan_json"))));
    q.addBindValue(id);
    return q.exec();
}

bool applyOp(ApplyContext &c, const RunStatusOp &o)
{
    QSqlQuery &q = c.q;
    q.prepare(QStringLiteral("UPDATE runs SET status = ?, ended_at = ?, exit_code = ?, error = ?"
                             " WHERE run_id = ?"));
    q.addBindValue(o.status);
    q.addBindValue(o.endedAt.isValid() ? QVariant(iso(o.endedAt)) : QVariant());
    q.addBindValue(o.exitCode);
    q.addBindValue(o.error);
    q.addBindValue(o.runId);
    if (!q.exec())
        return false;
    if (o.takeOver) {
        // A launched run taken over by another supervisor is adopted; a collected one taken up
        // again by a collector stays collected.
        q.prepare(QStringLiteral("UPDATE runs SET launcher_host = ?, launcher_pid = ?,"
                                 " kind = CASE WHEN kind = 'launched' THEN 'adopted' ELSE kind END WHERE run_id = ?"));
        q.addBindValue(QSysInfo::machineHostName());
        q.addBindValue(QCoreApplication::applicationPid());
        q.addBindValue(o.runId);
        if (!q.exec())
            return false;
    }
    if (o.totalSteps < 0)
        return true;
    q.prepare(QStringLiteral("UPDATE runs SET total_steps = ? WHERE run_id = ?"));
    q.addBindValue(o.totalSteps);
    q.addBindValue(o.runId);
    return q.exec();
}

bool applyOp(ApplyContext &c, const LaunchCommandOp &o)
{
    QSqlQuery &q = c.q;
    q.prepare(QStringLiteral("UPDATE runs SET launch_command = coalesce(launch_command || %1, '') || ? WHERE run_id = ?")
                  .arg(sqlNewline(c.engine)));
    q.addBindValue(QString(o.commandLine).replace(QLatin1Char('\n'), QLatin1Char(' ')));
    q.addBindValue(o.runId);
    return q.exec();
}

bool applyOp(ApplyContext &c, const RankOp &o)
{
    const qint64 id = runRowId(c, o.runId);
    if (id < 0)
        return false;
    const RankRow &r = o.row;
    QSqlQuery &q = c.q;
    q.prepare(QStringLiteral(
        "INSERT INTO ranks(run, rank, host, pid, device, dp, tp, pp, cp, exit_code, dropped, goodbye_seq, precision, kernels, threads)"
        " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(run, rank) DO UPDATE SET"
        " goodbye_seq = coalesce(excluded.goodbye_seq, ranks.goodbye_seq),"
        " host = coalesce(nullif(excluded.host, ''), ranks.host), pid = coalesce(nullif(excluded.pid, 0), ranks.pid),"
        " device = coalesce(nullif(excluded.device, ''), ranks.device),"
        " precision = coalesce(nullif(excluded.precision, ''), ranks.precision),"
        " kernels = coalesce(nullif(excluded.kernels, ''), ranks.kernels),"
        " threads = coalesce(nullif(excluded.threads, 0), ranks.threads),"
        // Coordinates come with Hello (which carries a host); Goodbye updates leave them.
        " dp = CASE WHEN coalesce(excluded.host, '') = '' THEN ranks.dp ELSE excluded.dp END,"
        " tp = CASE WHEN coalesce(excluded.host, '') = '' THEN ranks.tp ELSE excluded.tp END,"
        " pp = CASE WHEN coalesce(excluded.host, '') = '' THEN ranks.pp ELSE excluded.pp END,"
        " cp = CASE WHEN coalesce(excluded.host, '') = '' THEN ranks.cp ELSE excluded.cp END,"
        " exit_code = coalesce(excluded.exit_code, ranks.exit_code),"
        " dropped = %1").arg(sqlGreatest(c.engine, QStringLiteral("coalesce(ranks.dropped, 0)"), QStringLiteral("excluded.dropped"))));
    q.addBindValue(id);
    q.addBindValue(r.rank);
    q.addBindValue(r.host);
    q.addBindValue(r.pid);
    q.addBindValue(r.device);
    q.addBindValue(r.dp);
    q.addBindValue(r.tp);
    q.addBindValue(r.pp);
    q.addBindValue(r.cp);
    q.addBindValue(r.exitCode < 0 ? QVariant() : QVariant(r.exitCode));
    q.addBindValue(r.dropped);
    q.addBindValue(r.goodbyeSeq < 0 ? QVariant() : QVariant(r.goodbyeSeq));
    q.addBindValue(r.precision);
    q.addBindValue(r.kernels);
    q.addBindValue(r.threads);
    return q.exec();
}

bool applyOp(ApplyContext &c, const StepOp &o)
{
    const qint64 id = runRowId(c, o.runId);
    if (id < 0)
        return false;
    if (c.fast && c.fast->ready()) {
        for (const StepRow &row : o.rows)
            c.fast->step(id, row);
        return true;
    }
    c.error = QStringLiteral("step reports cannot be stored: SQLite's statement for step_blocks could not be prepared");
    return false;
}

bool applyOp(ApplyContext &c, const CollectiveOp &o)
{
    const qint64 id = runRowId(c, o.runId);
    if (id < 0)
        return false;
    if (c.fast && c.fast->ready()) {
        c.fast->collective(id, o.row);
        return true;
    }
    c.error = QStringLiteral("collective reports cannot be stored: SQLite's statement for collective_blocks could not be prepared");
    return false;
}

bool applyOp(ApplyContext &c, const ExpertLoadOp &o)
{
    const qint64 id = runRowId(c, o.runId);
    if (id < 0)
        return false;
    const ExpertLoadRow &r = o.row;
    QSqlQuery &q = c.q;
    q.prepare(QStringLiteral("INSERT INTO expert_load(run, rank, step, layers, experts, tokens, dropped, aux_loss)"
                             " VALUES(?,?,?,?,?,?,?,?) ON CONFLICT(run, step, rank) DO UPDATE SET layers = excluded.layers,"
                             " experts = excluded.experts, tokens = excluded.tokens, dropped = excluded.dropped,"
                             " aux_loss = excluded.aux_loss"));
    for (const QVariant &v : {QVariant(id), QVariant(r.rank), QVariant(r.step), QVariant(r.layers),
                              QVariant(r.experts), QVariant(packCounts(r.tokens)), QVariant(r.dropped),
                              QVariant(r.auxLoss)})
        q.addBindValue(v);
    return q.exec();
}

bool applyOp(ApplyContext &c, const SpansOp &o)
{
    const qint64 id = runRowId(c, o.runId);
    if (id < 0)
        return false;
    QSqlQuery &q = c.q;
    q.prepare(QStringLiteral("INSERT INTO spans(run, rank, step, name, start_ns, end_ns, micro_batch, stage)"
                             " VALUES(?,?,?,?,?,?,?,?)"));
    for (const SpanRow &r : o.rows) {
        int at = 0;
        for (const QVariant &v : {QVariant(id), QVariant(r.rank), QVariant(r.step), QVariant(r.name),
                                  QVariant(r.startNs), QVariant(r.endNs), QVariant(r.microBatch),
                                  QVariant(r.stage)})
            q.bindValue(at++, v);
        if (!q.exec())
            return false;
    }
    return true;
}

bool applyOp(ApplyContext &c, const EventOp &o)
{
    const qint64 id = runRowId(c, o.runId);
    if (id < 0)
        return false;
    QSqlQuery &q = c.q;
    q.prepare(QStringLiteral("INSERT INTO events(run, rank, step, kind, message, at) VALUES(?,?,?,?,?,?)"));
    q.addBindValue(id);
    q.addBindValue(o.row.rank);
    q.addBindValue(o.row.step);
    q.addBindValue(o.row.kind);
    q.addBindValue(o.row.message);
    q.addBindValue(iso(o.row.at.isValid() ? o.row.at : QDateTime::currentDateTimeUtc()));
    return q.exec();
}

bool applyOp(ApplyContext &c, const StallOp &o)
{
    const qint64 id = runRowId(c, o.runId);
    if (id < 0)
        return false;
    const StallRow &s = o.row;
    // An empty list is empty text, never NULL: the columns are NOT NULL, and both drivers bind a
    // null QString (what join() gives for no parts) as NULL — a stall that held up nobody (every
    // rank silent at once) was refused, and the run's rows after it waited behind it.
    auto ranks = [](const QList<int> &list) {
        QStringList parts;
        for (int r : list)
            parts << QString::number(r);
        const QString text = parts.join(QLatin1Char(','));
        return text.isNull() ? QStringLiteral("") : text;
    };
    QSqlQuery &q = c.q;
    q.prepare(QStringLiteral("INSERT INTO stalls(run, number, attempt, holders, waiting, silent, step, started_at, ended_at,"
                             " duration_ms, outcome, what) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)"));
    for (const QVariant &v : {QVariant(id), QVariant(s.number), QVariant(s.attempt), QVariant(ranks(s.holders)),
                              QVariant(ranks(s.waiting)), QVariant(s.silent ? 1 : 0), QVariant(s.step), QVariant(iso(s.startedAt)),
                              QVariant(iso(s.endedAt)), QVariant(s.durationMs), QVariant(s.outcome.isNull() ? QStringLiteral("") : s.outcome),
                              QVariant(s.what)})
        q.addBindValue(v);
    return q.exec();
}

bool applyOp(ApplyContext &c, const CursorOp &o)
{
    const qint64 id = runRowId(c, o.runId);
    if (id < 0)
        return false;
    QSqlQuery &q = c.q;
    if (o.reset) {
        q.prepare(QStringLiteral("UPDATE ranks SET received_seq = 0, goodbye_seq = NULL, lost = 0 WHERE run = ?"));
        q.addBindValue(id);
        return q.exec();
    }
    q.prepare(QStringLiteral("INSERT INTO ranks(run, rank, received_seq, lost) VALUES(?,?,?,?) ON CONFLICT(run, rank)"
                             " DO UPDATE SET received_seq = excluded.received_seq,"
                             " lost = %1").arg(sqlGreatest(c.engine, QStringLiteral("coalesce(ranks.lost, 0)"), QStringLiteral("excluded.lost"))));
    for (const auto &[rank, next] : o.nextSeq) {
        q.bindValue(0, id);
        q.bindValue(1, rank);
        q.bindValue(2, static_cast<qint64>(next));
        const auto lost = o.lost.find(rank);
        q.bindValue(3, static_cast<qint64>(lost == o.lost.end() ? 0 : lost->second));
        if (!q.exec())
            return false;
    }
    return true;
}

} // namespace

// Applies one operation; runIds maps user-facing run ids to row ids (filled by NewRunOp).
bool applyWriteOp(QSqlDatabase &db, QHash<QString, qint64> &runIds, const WriteOp &op, QString &error, QString &code, FastRows *fast)
{
    QSqlQuery q(db);
    ApplyContext c{db, db.driverName() == QLatin1String("QPSQL") ? HistoryEngine::Postgres : HistoryEngine::Sqlite, runIds, fast, q,
                   error};
    const bool ok = std::visit([&](const auto &o) { return applyOp(c, o); }, op);
    if (!ok && error.isEmpty()) {
        error = q.lastError().text();
        code = q.lastError().nativeErrorCode();
    }
    return ok;
}

// The operations of a batch in the order they are written. Acknowledgement cursors come with
// every drained batch: only the furthest of each run is written, once, after the rest (a reset —
// a new launch attempt — first writes what came before it). Merged cursors live in `merged`.
std::vector<const WriteOp *> inWriteOrder(const std::vector<const WriteOp *> &batch, std::deque<WriteOp> &merged)
{
    std::vector<const WriteOp *> order;
    order.reserve(batch.size());
    std::map<QString, CursorOp> cursors;
    for (const WriteOp *each : batch) {
        const WriteOp &op = *each;
        const auto *cursor = std::get_if<CursorOp>(&op);
        if (cursor && !cursor->reset) {
            CursorOp &m = cursors.try_emplace(cursor->runId, CursorOp{cursor->runId, {}, {}, false, {}}).first->second;
            for (const auto &[rank, next] : cursor->nextSeq)
                m.nextSeq[rank] = std::max(m.nextSeq[rank], next);
            for (const auto &[rank, lost] : cursor->lost)
                m.lost[rank] = std::max(m.lost[rank], lost);
            continue;
        }
        if (cursor)
            if (const auto before = cursors.find(cursor->runId); before != cursors.end()) {
                order.push_back(&merged.emplace_back(std::move(before->second)));
                cursors.erase(before);
            }
        order.push_back(&op);
    }
    for (auto &[runId, m] : cursors)
        order.push_back(&merged.emplace_back(std::move(m)));
    return order;
}

} // namespace trellis::launcher
