// Batched SQLite writer thread; see history_writer.h.
#include "launcher/history/history_writer.h"

#include <QCoreApplication>
#include <QSysInfo>

#include "launcher/history/history_database.h"
#include "launcher/history/step_blocks.h"

#include <QHash>
#include <QSqlDriver>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>
#include <QElapsedTimer>
#include <QFile>

#include <sqlite3.h>
#include <pthread.h>
#include <sys/stat.h>

namespace trellis::launcher {
namespace {

QString iso(const QDateTime &t) { return t.isValid() ? t.toString(Qt::ISODateWithMs) : QString(); }

// The two rows that come at the telemetry rate (a step and a collective per rank per step) go
// through SQLite's own prepared statements, prepared once per connection: QSqlQuery's per-row
// prepare and binding conversions cost several times the insert itself at 1024 ranks.
class FastRows {
public:
    explicit FastRows(QSqlDatabase &db)
    {
        const QVariant v = db.driver()->handle();
        if (v.isValid() && qstrcmp(v.typeName(), "sqlite3*") == 0)
            m_db = *static_cast<sqlite3 *const *>(v.constData());
        if (!m_db)
            return;
        sqlite3_prepare_v2(m_db,
                           "INSERT INTO step_blocks(run, rank, first_step, last_step, last_loss, n, rows, encoding)"
                           " VALUES(?,?,?,?,?,?,?,2)",
                           -1, &m_step, nullptr);
        sqlite3_prepare_v2(m_db,
                           "INSERT INTO collective_stats(run, rank, step, grp, op, bytes, ms, bus_gbps, count)"
                           " VALUES(?,?,?,?,?,?,?,?,?)",
                           -1, &m_collective, nullptr);
    }
    ~FastRows()
    {
        sqlite3_finalize(m_step);
        sqlite3_finalize(m_collective);
    }
    FastRows(const FastRows &) = delete;
    FastRows &operator=(const FastRows &) = delete;
    bool ready() const { return m_step && m_collective; }

    // Step reports are packed (launcher/history/step_blocks.h): step() adds a report to its rank's block,
    // writeSteps() stores the blocks before the transaction commits, begin() forgets blocks of a
    // transaction that was rolled back.
    // A rank's block keeps its buffer from one transaction to the next (emptied, not freed): at a
    // high rate a block holds hundreds of kilobytes, and allocating them afresh every transaction
    // cost page faults.
    void begin()
    {
        for (auto &[key, b] : m_blocks)
            b.rows.clear();
    }
    void step(qint64 run, const StepRow &s)
    {
        Block &b = m_blocks[{run, s.rank}];
        if (b.rows.count() == 0) {
            b.first = b.last = s.step;
            b.lastLoss = s.loss;
        }
        b.first = std::min(b.first, s.step);
        if (s.step >= b.last) {
            b.last = s.step;
            b.lastLoss = s.loss;
        }
        b.rows.add(s);
    }
    bool writeSteps(QString &error)
    {
        for (auto &[key, b] : m_blocks) {
            if (b.rows.count() == 0) {
                ++b.idle;
                continue;
            }
            b.idle = 0;
            sqlite3_stmt *q = m_step;
            sqlite3_reset(q);
            sqlite3_bind_int64(q, 1, key.first);
            sqlite3_bind_int64(q, 2, key.second);
            sqlite3_bind_int64(q, 3, b.first);
            sqlite3_bind_int64(q, 4, b.last);
            sqlite3_bind_double(q, 5, b.lastLoss);
            sqlite3_bind_int64(q, 6, b.rows.count());
            sqlite3_bind_blob(q, 7, b.rows.bytes().constData(), static_cast<int>(b.rows.bytes().size()), SQLITE_STATIC);
            if (!done(q, error))
                return false;
            b.rows.clear();
        }
        // Ranks that sent nothing for a while give their buffers back.
        std::erase_if(m_blocks, [](const auto &entry) { return entry.second.idle > 50; });
        return true;
    }

    bool collective(qint64 run, const CollectiveRow &c, QString &error)
    {
        sqlite3_stmt *q = m_collective;
        sqlite3_reset(q);
        const QByteArray group = c.group.toUtf8(), op = c.op.toUtf8();
        sqlite3_bind_int64(q, 1, run);
        sqlite3_bind_int64(q, 2, c.rank);
        sqlite3_bind_int64(q, 3, c.step);
        sqlite3_bind_text(q, 4, group.constData(), static_cast<int>(group.size()), SQLITE_TRANSIENT);
        sqlite3_bind_text(q, 5, op.constData(), static_cast<int>(op.size()), SQLITE_TRANSIENT);
        sqlite3_bind_int64(q, 6, c.bytes);
        sqlite3_bind_double(q, 7, c.ms);
        sqlite3_bind_double(q, 8, c.busGBps);
        sqlite3_bind_int64(q, 9, c.count);
        return done(q, error);
    }

private:
    bool done(sqlite3_stmt *q, QString &error)
    {
        const int rc = sqlite3_step(q);
        if (rc == SQLITE_DONE)
            return true;
        error = QString::fromUtf8(sqlite3_errmsg(m_db));
        if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
            error += QStringLiteral(" (database is locked)");
        return false;
    }

    struct Block {
        qint64 first = 0, last = 0;
        double lastLoss = 0;
        StepBlockEncoder rows;
        int idle = 0; // transactions in a row without a report of this rank
    };
    std::map<std::pair<qint64, int>, Block> m_blocks; // (run row id, rank)
    sqlite3 *m_db = nullptr;
    sqlite3_stmt *m_step = nullptr;
    sqlite3_stmt *m_collective = nullptr;
};

// What applying one operation needs: the connection, the run row ids known so far (filled by
// NewRunOp), SQLite's own statements (null: none), the query whose error is reported, and where
// an error of the operation's own goes.
struct ApplyContext {
    QSqlDatabase &db;
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
    const bool ok = q.exec();
    if (ok)
        c.runIds.insert(o.runId, q.lastInsertId().toLongLong());
    return ok;
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
    return q.exec();
}

bool applyOp(ApplyContext &c, const LaunchCommandOp &o)
{
    QSqlQuery &q = c.q;
    q.prepare(QStringLiteral("UPDATE runs SET launch_command = coalesce(launch_command || char(10), '') || ? WHERE run_id = ?"));
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
        "INSERT INTO ranks(run, rank, host, pid, device, dp, tp, pp, cp, exit_code, dropped, goodbye_seq)"
        " VALUES(?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(run, rank) DO UPDATE SET"
        " goodbye_seq = coalesce(excluded.goodbye_seq, goodbye_seq),"
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
    q.addBindValue(r.goodbyeSeq < 0 ? QVariant() : QVariant(r.goodbyeSeq));
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
    if (c.fast && c.fast->ready())
        return c.fast->collective(id, o.row, c.error);
    const CollectiveRow &r = o.row;
    QSqlQuery &q = c.q;
    q.prepare(QStringLiteral("INSERT INTO collective_stats(run, rank, step, grp, op, bytes, ms, bus_gbps,"
                             " count) VALUES(?,?,?,?,?,?,?,?,?)"));
    for (const QVariant &v : {QVariant(id), QVariant(r.rank), QVariant(r.step), QVariant(r.group),
                              QVariant(r.op), QVariant(r.bytes), QVariant(r.ms), QVariant(r.busGBps),
                              QVariant(r.count)})
        q.addBindValue(v);
    return q.exec();
}

bool applyOp(ApplyContext &c, const ExpertLoadOp &o)
{
    const qint64 id = runRowId(c, o.runId);
    if (id < 0)
        return false;
    const ExpertLoadRow &r = o.row;
    QSqlQuery &q = c.q;
    q.prepare(QStringLiteral("INSERT OR REPLACE INTO expert_load(run, rank, step, layers, experts, tokens, dropped,"
                             " aux_loss) VALUES(?,?,?,?,?,?,?,?)"));
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
                             " lost = max(coalesce(lost, 0), excluded.lost)"));
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

// Applies one operation; runIds maps user-facing run ids to row ids (filled by NewRunOp).
bool apply(QSqlDatabase &db, QHash<QString, qint64> &runIds, const WriteOp &op, QString &error, FastRows *fast)
{
    QSqlQuery q(db);
    ApplyContext c{db, runIds, fast, q, error};
    const bool ok = std::visit([&](const auto &o) { return applyOp(c, o); }, op);
    if (!ok && error.isEmpty())
        error = q.lastError().text();
    return ok;
}

// The operations of a batch in the order they are written. Acknowledgement cursors come with
// every drained batch: only the furthest of each run is written, once, after the rest (a reset —
// a new launch attempt — first writes what came before it). Merged cursors live in `merged`.
std::vector<const WriteOp *> inWriteOrder(const std::deque<WriteOp> &batch, std::deque<WriteOp> &merged)
{
    std::vector<const WriteOp *> order;
    order.reserve(batch.size());
    std::map<QString, CursorOp> cursors;
    for (const auto &op : batch) {
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

} // namespace

HistoryWriter::HistoryWriter(QString path, int flushIntervalMs) : m_path(std::move(path)), m_flushIntervalMs(flushIntervalMs) {}

HistoryWriter::~HistoryWriter() { stop(); }

QString HistoryWriter::start()
{
    if (m_thread.joinable())
        return {};
    std::promise<QString> opened;
    auto result = opened.get_future();
    m_thread = std::thread([this, p = std::move(opened)]() mutable {
        pthread_setname_np(pthread_self(), "trellis-history");
        run(std::move(p));
    });
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

bool HistoryWriter::flush(int timeoutMs)
{
    std::unique_lock lock(m_mutex);
    if (!m_thread.joinable())
        return true;
    const quint64 target = m_enqueued;
    m_flushRequested = true;
    m_wake.notify_all();
    return m_flushed.wait_for(lock, std::chrono::milliseconds(timeoutMs),
                              [&] { return m_committed >= target || !m_thread.joinable() || m_stop; });
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

quint64 HistoryWriter::backlog() const
{
    std::lock_guard lock(m_mutex);
    return m_enqueued - std::min(m_enqueued, m_committed);
}

QString HistoryWriter::lastError() const
{
    std::lock_guard lock(m_mutex);
    return m_lastError;
}

namespace {

struct FileIdentity {
    bool exists = false;
    dev_t device = 0;
    ino_t inode = 0;
    bool operator==(const FileIdentity &) const = default;
};

FileIdentity identityOf(const QString &path)
{
    struct stat st {};
    if (::stat(QFile::encodeName(path).constData(), &st) != 0)
        return {};
    return {true, st.st_dev, st.st_ino};
}

bool isBusy(const QSqlError &e)
{
    // SQLITE_BUSY (5) and SQLITE_LOCKED (6): another connection holds the lock.
    const QString code = e.nativeErrorCode();
    return code == QLatin1String("5") || code == QLatin1String("6") || e.text().contains(QLatin1String("locked"));
}

struct TransactionOutcome {
    bool busy = false; // the database is locked: roll back and keep the batch
    QString firstError;
    qint64 rows = 0;
};

// Begins a transaction on `c`, applies `batch` in write order and commits it.
TransactionOutcome writeTransaction(QSqlDatabase &c, QHash<QString, qint64> &runIds, FastRows &fast,
                                    const std::deque<WriteOp> &batch)
{
    TransactionOutcome out;
    out.busy = !c.transaction() && isBusy(c.lastError());
    if (fast.ready())
        fast.begin();
    std::deque<WriteOp> coalesced;
    const std::vector<const WriteOp *> order = inWriteOrder(batch, coalesced);
    for (const WriteOp *op : order) {
        if (out.busy)
            break;
        QString e;
        if (apply(c, runIds, *op, e, &fast)) {
            out.rows += std::holds_alternative<StepOp>(*op) ? static_cast<qint64>(std::get<StepOp>(*op).rows.size()) : 1;
        } else {
            const QSqlError last = c.lastError();
            if (e.contains(QLatin1String("locked")) || isBusy(last)) {
                out.busy = true;
                break;
            }
            if (out.firstError.isEmpty())
                out.firstError = e;
        }
    }
    if (QString e; !out.busy && fast.ready() && !fast.writeSteps(e)) {
        if (e.contains(QLatin1String("locked")))
            out.busy = true;
        else if (out.firstError.isEmpty())
            out.firstError = e;
    }
    if (!out.busy && !c.commit()) {
        out.busy = isBusy(c.lastError());
        out.firstError = c.lastError().text();
    }
    return out;
}

} // namespace

// The writer thread's connection and what it keeps between transactions; on that thread only.
struct HistoryWriter::WriterState {
    std::unique_ptr<HistoryDatabase> db;
    FileIdentity identity;
    std::unique_ptr<FastRows> fast;
    QHash<QString, qint64> runIds;
    std::map<QString, NewRunOp> newRuns;       // every run this writer created, to recreate a removed file
    std::map<QString, RunStatusOp> lastStatus; // and the status it last wrote for each
    std::deque<WriteOp> kept;                  // a batch the locked database refused, retried first
    QElapsedTimer lockedFor;
    QElapsedTimer stoppingFor;
    std::chrono::milliseconds interval{0};
    std::chrono::steady_clock::time_point nextStart;
};

void HistoryWriter::run(std::promise<QString> opened)
{
    WriterState st;
    st.db = std::make_unique<HistoryDatabase>();
    const QString error = st.db->open(m_path);
    opened.set_value(error);
    if (!error.isEmpty())
        return;
    st.identity = identityOf(m_path);
    st.fast = std::make_unique<FastRows>(st.db->connection());
    // Transactions start at most every m_flushIntervalMs, counted from the start of the previous
    // one: a writer whose transaction took longer than that (it is behind) starts the next at once
    // instead of sleeping with a full queue.
    st.interval = std::chrono::milliseconds(m_flushIntervalMs);
    st.nextStart = std::chrono::steady_clock::now() + st.interval;
    for (;;) {
        bool stopping = false;
        std::deque<WriteOp> batch = takeBatch(st, stopping);
        if (!reopenIfReplaced(st, batch)) {
            st.kept = std::move(batch);
            if (stopping)
                break;
            continue;
        }
        if (!batch.empty())
            writeBatch(st, batch);
        {
            std::lock_guard lock(m_mutex);
            if (st.kept.empty())
                m_committed = m_enqueued - m_queue.size();
        }
        m_flushed.notify_all();
        if (stopping && doneStopping(st))
            break;
    }
    st.fast.reset(); // before the connection closes
    m_flushed.notify_all();
}

void HistoryWriter::sendNotice(const QString &kind, const QString &message)
{
    if (m_notice)
        m_notice(kind, message);
}

// Waits for the next transaction's time (or a flush or stop) and takes the queue, after what
// was kept from before; `stopping` says whether stop() was called.
std::deque<WriteOp> HistoryWriter::takeBatch(WriterState &st, bool &stopping)
{
    std::deque<WriteOp> batch;
    {
        std::unique_lock lock(m_mutex);
        m_wake.wait_until(lock, st.nextStart, [&] { return m_stop || m_flushRequested; });
        st.nextStart = std::chrono::steady_clock::now() + st.interval;
        batch.swap(m_queue);
        stopping = m_stop;
        m_flushRequested = false;
    }
    if (!st.kept.empty()) {
        batch.insert(batch.begin(), std::make_move_iterator(st.kept.begin()), std::make_move_iterator(st.kept.end()));
        st.kept.clear();
    }
    return batch;
}

// The file was removed or replaced under us: SQLite would go on writing into the unlinked
// inode and lose everything at the end. Write a new database at the path instead, the runs this
// writer created put first in `batch`. False when that database cannot be created.
bool HistoryWriter::reopenIfReplaced(WriterState &st, std::deque<WriteOp> &batch)
{
    if (const FileIdentity now = identityOf(m_path); now == st.identity)
        return true;
    auto fresh = std::make_unique<HistoryDatabase>();
    const QString e = fresh->open(m_path);
    if (!e.isEmpty()) {
        sendNotice(QStringLiteral("failing"), QStringLiteral("the history database %1 is gone and cannot be created "
                                                             "again (%2); the run goes on, rows are kept in memory")
                                                  .arg(m_path, e));
        return false;
    }
    st.fast.reset(); // its statements belong to the old connection
    st.db = std::move(fresh);
    st.fast = std::make_unique<FastRows>(st.db->connection());
    st.identity = identityOf(m_path);
    st.runIds.clear();
    std::deque<WriteOp> replay;
    for (const auto &[runId, op] : st.newRuns)
        replay.emplace_back(op);
    for (const auto &[runId, op] : st.lastStatus)
        replay.emplace_back(op);
    batch.insert(batch.begin(), std::make_move_iterator(replay.begin()), std::make_move_iterator(replay.end()));
    sendNotice(QStringLiteral("recreated"),
               QStringLiteral("the history database %1 was removed or replaced while the run was going; a new one "
                              "was created there and the run goes on writing to it (the rows written before are "
                              "gone with the old file)")
                   .arg(m_path));
    return true;
}

// Writes `batch` in one transaction; a locked database keeps it for the next.
void HistoryWriter::writeBatch(WriterState &st, std::deque<WriteOp> &batch)
{
    QSqlDatabase &c = st.db->connection();
    QElapsedTimer attempt; // a locked database is found only after SQLite's busy timeout
    attempt.start();
    const TransactionOutcome outcome = writeTransaction(c, st.runIds, *st.fast, batch);
    if (outcome.busy)
        keepLockedBatch(st, batch, attempt);
    else
        finishCommittedBatch(st, batch, outcome.rows, outcome.firstError);
}

void HistoryWriter::keepLockedBatch(WriterState &st, std::deque<WriteOp> &batch, const QElapsedTimer &attempt)
{
    st.nextStart = std::chrono::steady_clock::now() + st.interval; // a locked file: wait a whole interval
    st.db->connection().rollback();
    st.runIds.clear(); // ids inserted in the rolled-back transaction are gone
    if (!st.lockedFor.isValid()) {
        st.lockedFor = attempt;
        sendNotice(QStringLiteral("locked"), QStringLiteral("the history database %1 is locked by another process; "
                                                            "the run goes on and its rows wait in memory")
                                                 .arg(m_path));
    }
    // Keep the batch (bounded: the oldest rows go first when memory would run away).
    while (batch.size() > kMaxKeptOps)
        batch.pop_front();
    st.kept = std::move(batch);
}

void HistoryWriter::finishCommittedBatch(WriterState &st, const std::deque<WriteOp> &batch, qint64 rows,
                                         const QString &firstError)
{
    if (st.lockedFor.isValid()) {
        sendNotice(QStringLiteral("unlocked"),
                   QStringLiteral("the history database %1 is writable again after %2 s; nothing was lost")
                       .arg(m_path)
                       .arg(st.lockedFor.elapsed() / 1000.0, 0, 'f', 1));
        st.lockedFor.invalidate();
    }
    m_rowsWritten += rows;
    for (const auto &op : batch) {
        if (const auto *n = std::get_if<NewRunOp>(&op))
            st.newRuns[n->runId] = *n;
        else if (const auto *status = std::get_if<RunStatusOp>(&op))
            st.lastStatus[status->runId] = *status;
        else if (const auto *cursor = std::get_if<CursorOp>(&op); cursor && cursor->afterCommit)
            cursor->afterCommit();
    }
    std::lock_guard lock(m_mutex);
    if (!firstError.isEmpty())
        m_lastError = firstError;
}

// After stop(): true once everything is written, or what is kept is given up.
bool HistoryWriter::doneStopping(WriterState &st)
{
    // A locked database gets 10 s more at the end; then what is kept is given up, said so.
    if (!st.stoppingFor.isValid())
        st.stoppingFor.start();
    std::lock_guard lock(m_mutex);
    if (m_queue.empty() && (st.kept.empty() || st.stoppingFor.elapsed() > 10000)) {
        if (!st.kept.empty())
            m_lastError = QStringLiteral("the history database %1 stayed locked; %2 rows were not written")
                              .arg(m_path)
                              .arg(st.kept.size());
        return true;
    }
    return false;
}

} // namespace trellis::launcher
