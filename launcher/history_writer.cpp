// Batched SQLite writer thread; see history_writer.h.
#include "launcher/history_writer.h"

#include <QCoreApplication>
#include <QSysInfo>

#include "launcher/history_database.h"

#include <QHash>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

namespace trellis::launcher {
namespace {

QString iso(const QDateTime &t) { return t.isValid() ? t.toString(Qt::ISODateWithMs) : QString(); }

// Applies one operation; runIds maps user-facing run ids to row ids (filled by NewRunOp).
bool apply(QSqlDatabase &db, QHash<QString, qint64> &runIds, const WriteOp &op, QString &error)
{
    QSqlQuery q(db);
    auto rowId = [&](const QString &runId) -> qint64 {
        if (auto it = runIds.find(runId); it != runIds.end())
            return *it;
        QSqlQuery find(db);
        find.prepare(QStringLiteral("SELECT id FROM runs WHERE run_id = ?"));
        find.addBindValue(runId);
        if (find.exec() && find.next()) {
            runIds.insert(runId, find.value(0).toLongLong());
            return find.value(0).toLongLong();
        }
        return -1;
    };
    auto run = [&](qint64 id, const QString &runId) {
        if (id < 0)
            error = QStringLiteral("unknown run %1").arg(runId);
        return id >= 0;
    };
    bool ok = true;
    std::visit(
        [&](const auto &o) {
            using T = std::decay_t<decltype(o)>;
            if constexpr (std::is_same_v<T, NewRunOp>) {
                q.prepare(QStringLiteral("INSERT INTO runs(run_id, name, plan_json, target, status, world_size,"
                                         " total_steps, started_at, launcher_host, launcher_pid) VALUES(?,?,?,?,?,?,?,?,?,?)"));
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
                ok = q.exec();
                if (ok)
                    runIds.insert(o.runId, q.lastInsertId().toLongLong());
            } else if constexpr (std::is_same_v<T, RunStatusOp>) {
                q.prepare(QStringLiteral("UPDATE runs SET status = ?, ended_at = ?, exit_code = ?, error = ?"
                                         " WHERE run_id = ?"));
                q.addBindValue(o.status);
                q.addBindValue(o.endedAt.isValid() ? QVariant(iso(o.endedAt)) : QVariant());
                q.addBindValue(o.exitCode);
                q.addBindValue(o.error);
                q.addBindValue(o.runId);
                ok = q.exec();
            } else if constexpr (std::is_same_v<T, RankOp>) {
                const qint64 id = rowId(o.runId);
                if (!(ok = run(id, o.runId)))
                    return;
                const RankRow &r = o.row;
                q.prepare(QStringLiteral(
                    "INSERT INTO ranks(run, rank, host, pid, device, dp, tp, pp, cp, exit_code, dropped)"
                    " VALUES(?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(run, rank) DO UPDATE SET"
                    " host = coalesce(nullif(excluded.host, ''), host), pid = coalesce(nullif(excluded.pid, 0), pid),"
                    " device = coalesce(nullif(excluded.device, ''), device),"
                    // Coordinates come with Hello (which carries a host); Goodbye updates leave them.
                    " dp = iif(coalesce(excluded.host, '') = '', dp, excluded.dp), tp = iif(coalesce(excluded.host, '') = '', tp, excluded.tp),"
                    " pp = iif(coalesce(excluded.host, '') = '', pp, excluded.pp), cp = iif(coalesce(excluded.host, '') = '', cp, excluded.cp),"
                    " exit_code = coalesce(excluded.exit_code, exit_code),"
                    " dropped = max(dropped, excluded.dropped)"));
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
                ok = q.exec();
            } else if constexpr (std::is_same_v<T, StepOp>) {
                const qint64 id = rowId(o.runId);
                if (!(ok = run(id, o.runId)))
                    return;
                const StepRow &s = o.row;
                q.prepare(QStringLiteral(
                    "INSERT OR REPLACE INTO step_metrics(run, rank, step, step_ms, compute_ms, comm_ms, comm_exposed_ms,"
                    " bubble_ms, idle_ms, tokens, tokens_per_s, loss, grad_norm, lr, mem_parameters, mem_gradients,"
                    " mem_optimizer, mem_activations, mem_comm, peak_rss) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
                for (const QVariant &v : {QVariant(id), QVariant(s.rank), QVariant(s.step), QVariant(s.stepMs),
                                          QVariant(s.computeMs), QVariant(s.commMs), QVariant(s.commExposedMs),
                                          QVariant(s.bubbleMs), QVariant(s.idleMs), QVariant(s.tokens),
                                          QVariant(s.tokensPerS), QVariant(s.loss), QVariant(s.gradNorm), QVariant(s.lr),
                                          QVariant(s.memParameters), QVariant(s.memGradients), QVariant(s.memOptimizer),
                                          QVariant(s.memActivations), QVariant(s.memComm), QVariant(s.peakRss)})
                    q.addBindValue(v);
                ok = q.exec();
            } else if constexpr (std::is_same_v<T, CollectiveOp>) {
                const qint64 id = rowId(o.runId);
                if (!(ok = run(id, o.runId)))
                    return;
                const CollectiveRow &c = o.row;
                q.prepare(QStringLiteral("INSERT INTO collective_stats(run, rank, step, grp, op, bytes, ms, bus_gbps,"
                                         " count) VALUES(?,?,?,?,?,?,?,?,?)"));
                for (const QVariant &v : {QVariant(id), QVariant(c.rank), QVariant(c.step), QVariant(c.group),
                                          QVariant(c.op), QVariant(c.bytes), QVariant(c.ms), QVariant(c.busGBps),
                                          QVariant(c.count)})
                    q.addBindValue(v);
                ok = q.exec();
            } else if constexpr (std::is_same_v<T, SpansOp>) {
                const qint64 id = rowId(o.runId);
                if (!(ok = run(id, o.runId)))
                    return;
                q.prepare(QStringLiteral("INSERT INTO spans(run, rank, step, name, start_ns, end_ns, micro_batch, stage)"
                                         " VALUES(?,?,?,?,?,?,?,?)"));
                for (const SpanRow &r : o.rows) {
                    int at = 0;
                    for (const QVariant &v : {QVariant(id), QVariant(r.rank), QVariant(r.step), QVariant(r.name),
                                              QVariant(r.startNs), QVariant(r.endNs), QVariant(r.microBatch),
                                              QVariant(r.stage)})
                        q.bindValue(at++, v);
                    if (!(ok = q.exec()))
                        break;
                }
            } else if constexpr (std::is_same_v<T, EventOp>) {
                const qint64 id = rowId(o.runId);
                if (!(ok = run(id, o.runId)))
                    return;
                q.prepare(QStringLiteral("INSERT INTO events(run, rank, step, kind, message, at) VALUES(?,?,?,?,?,?)"));
                q.addBindValue(id);
                q.addBindValue(o.row.rank);
                q.addBindValue(o.row.step);
                q.addBindValue(o.row.kind);
                q.addBindValue(o.row.message);
                q.addBindValue(iso(o.row.at.isValid() ? o.row.at : QDateTime::currentDateTimeUtc()));
                ok = q.exec();
            }
        },
        op);
    if (!ok && error.isEmpty())
        error = q.lastError().text();
    return ok;
}

} // namespace

HistoryWriter::HistoryWriter(QString path, int flushIntervalMs) : m_path(std::move(path)), m_flushIntervalMs(flushIntervalMs) {}

HistoryWriter::~HistoryWriter() { stop(); }

QString HistoryWriter::start()
{
    if (m_thread.joinable())
        return {};
    std::promise<QString> opened;
    auto result = opened.get_future();
    m_thread = std::thread([this, p = std::move(opened)]() mutable { run(std::move(p)); });
    const QString error = result.get();
    if (!error.isEmpty()) {
        m_thread.join();
        std::lock_guard lock(m_mutex);
        m_lastError = error;
    }
    return error;
}

void HistoryWriter::enqueue(WriteOp op)
{
    {
        std::lock_guard lock(m_mutex);
        m_queue.push_back(std::move(op));
        ++m_enqueued;
    }
}

void HistoryWriter::flush()
{
    std::unique_lock lock(m_mutex);
    if (!m_thread.joinable())
        return;
    const quint64 target = m_enqueued;
    m_flushRequested = true;
    m_wake.notify_all();
    m_flushed.wait(lock, [&] { return m_committed >= target || !m_thread.joinable() || m_stop; });
}

void HistoryWriter::stop()
{
    {
        std::lock_guard lock(m_mutex);
        if (!m_thread.joinable())
            return;
        m_stop = true;
    }
    m_wake.notify_all();
    m_thread.join();
}

QString HistoryWriter::lastError() const
{
    std::lock_guard lock(m_mutex);
    return m_lastError;
}

void HistoryWriter::run(std::promise<QString> opened)
{
    HistoryDatabase db;
    const QString error = db.open(m_path);
    opened.set_value(error);
    if (!error.isEmpty())
        return;
    QHash<QString, qint64> runIds;
    for (;;) {
        std::deque<WriteOp> batch;
        bool stopping = false;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait_for(lock, std::chrono::milliseconds(m_flushIntervalMs),
                            [&] { return m_stop || m_flushRequested; });
            batch.swap(m_queue);
            stopping = m_stop;
            m_flushRequested = false;
        }
        if (!batch.empty()) {
            QSqlDatabase &c = db.connection();
            c.transaction();
            QString firstError;
            qint64 rows = 0;
            for (const auto &op : batch) {
                QString e;
                if (apply(c, runIds, op, e))
                    ++rows;
                else if (firstError.isEmpty())
                    firstError = e;
            }
            if (!c.commit()) {
                firstError = c.lastError().text();
                c.rollback();
                rows = 0;
            }
            m_rowsWritten += rows;
            std::lock_guard lock(m_mutex);
            if (!firstError.isEmpty())
                m_lastError = firstError;
            m_committed += batch.size();
        }
        m_flushed.notify_all();
        if (stopping) {
            std::lock_guard lock(m_mutex);
            if (m_queue.empty())
                break;
        }
    }
    m_flushed.notify_all();
}

} // namespace trellis::launcher
