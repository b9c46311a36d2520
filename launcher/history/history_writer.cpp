// Batched SQLite writer thread; see history_writer.h.
#include "launcher/history/history_writer.h"
#include "launcher/history/history_rows.h"

#include <QCoreApplication>
#include <QSysInfo>

#include "launcher/history/history_database.h"
#include "launcher/history/history_spool.h"
#include "launcher/history_location.h"
#include "launcher/history/step_blocks.h"

#include <QHash>
#include <QSqlDriver>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>
#include <QElapsedTimer>
#include <QFile>

#include <sqlite3.h>

#include <set>
#include <pthread.h>
#include <sys/stat.h>

namespace trellis::launcher {

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
    bool unreachable = false; // the server went away: keep the batch, connect again
    QString firstError;
    qint64 rows = 0;
};

// PostgreSQL: tells whoever LISTENs on the channel (HistoryReader: another user's workbench) which
// runs this transaction wrote to, once a run; delivered when it commits, never if it rolls back.
void notifyReaders(QSqlDatabase &c, const std::vector<const WriteOp *> &order, const std::set<const WriteOp *> &skipped)
{
    std::set<QString> runs;
    for (const WriteOp *op : order)
        if (!skipped.count(op))
            runs.insert(std::visit([](const auto &o) { return o.runId; }, *op));
    QSqlQuery notify(c);
    notify.prepare(QStringLiteral("SELECT pg_notify('%1', ?)").arg(QLatin1String(kHistoryChannel)));
    for (const QString &runId : runs) {
        notify.bindValue(0, runId);
        notify.exec(); // a notice not sent costs a reader its refresh, never a row
    }
}

// Begins a transaction on `c`, applies `batch` in write order and commits it. A failing
// operation is reported and the rest written: SQLite goes on after a failed statement, while
// PostgreSQL aborts the whole transaction, so there the batch is written again without it.
TransactionOutcome writeTransaction(HistoryDatabase &db, QHash<QString, qint64> &runIds, FastRows &fast,
                                    const std::deque<WriteOp> &batch)
{
    QSqlDatabase &c = db.connection();
    const bool abortsOnError = c.driverName() == QLatin1String("QPSQL");
    std::deque<WriteOp> coalesced;
    const std::vector<const WriteOp *> order = inWriteOrder(batch, coalesced);
    std::set<const WriteOp *> skipped;
    QString firstFailure; // of an operation left out of the batch written again
    for (;;) {
        TransactionOutcome out;
        out.busy = !c.transaction() && isBusy(c.lastError());
        if (fast.ready())
            fast.begin();
        const WriteOp *failed = nullptr;
        for (const WriteOp *op : order) {
            if (out.busy || failed)
                break;
            if (skipped.count(op))
                continue;
            QString e;
            if (applyWriteOp(c, runIds, *op, e, &fast)) {
                out.rows += std::holds_alternative<StepOp>(*op) ? static_cast<qint64>(std::get<StepOp>(*op).rows.size()) : 1;
                continue;
            }
            if (e.contains(QLatin1String("locked")) || isBusy(c.lastError())) {
                out.busy = true;
                break;
            }
            if (db.connectionLost()) {
                out.unreachable = true;
                out.firstError = e;
                return out;
            }
            if (out.firstError.isEmpty())
                out.firstError = e;
            if (abortsOnError)
                failed = op;
        }
        if (failed) {
            if (firstFailure.isEmpty())
                firstFailure = out.firstError;
            c.rollback();
            runIds.clear(); // ids inserted in the rolled-back transaction are gone
            skipped.insert(failed);
            continue;
        }
        if (abortsOnError && !out.busy)
            notifyReaders(c, order, skipped);
        if (QString e; !out.busy && fast.ready() && !fast.writeBlocks(e)) {
            if (e.contains(QLatin1String("locked")))
                out.busy = true;
            else if (out.firstError.isEmpty())
                out.firstError = e;
        }
        if (!out.busy && !c.commit()) {
            out.busy = isBusy(c.lastError());
            out.unreachable = db.connectionLost();
            out.firstError = c.lastError().text();
        }
        if (!out.unreachable && db.connectionLost()) {
            out.unreachable = true;
            out.firstError = QStringLiteral("the connection to the server was lost");
        }
        if (!firstFailure.isEmpty())
            out.firstError = firstFailure;
        return out;
    }
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
    QElapsedTimer unreachableFor; // valid while the server is gone
    // A server history's local spool while the server is gone (history_spool.h), its statements
    // and row ids; said once when it cannot be made or merged.
    std::unique_ptr<HistoryDatabase> spool;
    std::unique_ptr<FastRows> spoolFast;
    QHash<QString, qint64> spoolRunIds;
    bool spoolTrouble = false;
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
    // What earlier supervisors of this server spooled and could not merge before they ended.
    for (const QString &left : leftoverSpools(m_path))
        mergeSpooled(st, left);
    // Transactions start at most every m_flushIntervalMs, counted from the start of the previous
    // one: a writer whose transaction took longer than that (it is behind) starts the next at once
    // instead of sleeping with a full queue.
    st.interval = std::chrono::milliseconds(m_flushIntervalMs);
    st.nextStart = std::chrono::steady_clock::now() + st.interval;
    for (;;) {
        bool stopping = false;
        std::deque<WriteOp> batch = takeBatch(st, stopping);
        if (!reconnectIfLost(st)) {
            spoolOrKeep(st, batch); // the server is still away
        } else if (!reopenIfReplaced(st, batch)) {
            st.kept = std::move(batch);
            if (stopping)
                break;
            continue;
        } else {
            if (st.spool)
                mergeSpooled(st, st.spool->path());
            if (!batch.empty())
                writeBatch(st, batch);
        }
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
    st.spoolFast.reset();
    if (st.spool)
        sendNotice(QStringLiteral("spooled"), QStringLiteral("the history server %1 did not come back before the run ended; what "
                                                             "it missed is kept in %2 and is written to it by the next supervisor "
                                                             "of that server started on this machine")
                                                  .arg(m_path, st.spool->path()));
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
    QElapsedTimer attempt; // a locked database is found only after SQLite's busy timeout
    attempt.start();
    const TransactionOutcome outcome = writeTransaction(*st.db, st.runIds, *st.fast, batch);
    if (outcome.unreachable)
        keepUnreachableBatch(st, batch, outcome.firstError);
    else if (outcome.busy)
        keepLockedBatch(st, batch, attempt);
    else
        finishCommittedBatch(st, batch, outcome.rows, outcome.firstError);
}

// The history's server went away (PostgreSQL: stopped, restarted, the network gone): nothing of
// the batch was committed, so nothing is acknowledged and the ranks keep their telemetry; the batch
// waits in memory, and each interval the writer connects again. Said once when it goes, once when
// it is back.
void HistoryWriter::keepUnreachableBatch(WriterState &st, std::deque<WriteOp> &batch, const QString &why)
{
    st.nextStart = std::chrono::steady_clock::now() + std::max(st.interval, std::chrono::milliseconds(1000));
    st.runIds.clear();
    if (!st.unreachableFor.isValid()) {
        st.unreachableFor.start();
        sendNotice(QStringLiteral("unreachable"),
                   QStringLiteral("the history server %1 cannot be reached (%2); the run goes on, and its rows are kept on this "
                                  "machine until it is back")
                       .arg(m_path, why.trimmed()));
    }
    spoolOrKeep(st, batch);
}

// While the server is away: the batch goes to the local spool and is acknowledged from there; when
// the spool cannot take it, it waits in memory (bounded: the oldest rows go first).
void HistoryWriter::spoolOrKeep(WriterState &st, std::deque<WriteOp> &batch)
{
    if (batch.empty() || spoolBatch(st, batch))
        return;
    while (batch.size() > kMaxKeptOps)
        batch.pop_front();
    st.kept = std::move(batch);
}

bool HistoryWriter::spoolBatch(WriterState &st, std::deque<WriteOp> &batch)
{
    if (!isServerHistory(m_path))
        return false;
    if (!st.spool) {
        auto spool = std::make_unique<HistoryDatabase>();
        if (const QString e = spool->open(spoolPathFor(m_path)); !e.isEmpty()) {
            if (!std::exchange(st.spoolTrouble, true))
                sendNotice(QStringLiteral("failing"), QStringLiteral("cannot spool the run's rows on this machine (%1); they wait in memory").arg(e));
            return false;
        }
        st.spool = std::move(spool);
        st.spoolFast = std::make_unique<FastRows>(st.spool->connection());
        st.spoolRunIds.clear();
        sendNotice(QStringLiteral("spooling"), QStringLiteral("until the history server is back, the run's rows are committed to %1 on "
                                                              "this machine and acknowledged from there")
                                                   .arg(st.spool->path()));
    }
    // The spool holds a row for each run the batch writes to (the server has the run itself).
    std::set<QString> created, touched;
    for (const WriteOp &op : batch) {
        const QString runId = std::visit([](const auto &o) { return o.runId; }, op);
        (std::holds_alternative<NewRunOp>(op) ? created : touched).insert(runId);
    }
    QStringList placeholders;
    for (const QString &runId : touched)
        if (!created.count(runId))
            placeholders << runId;
    if (!spoolRuns(*st.spool, placeholders).isEmpty())
        return false;
    const TransactionOutcome outcome = writeTransaction(*st.spool, st.spoolRunIds, *st.spoolFast, batch);
    if (outcome.busy || outcome.unreachable) {
        st.spool->connection().rollback();
        st.spoolRunIds.clear();
        return false;
    }
    finishCommittedBatch(st, batch, outcome.rows, outcome.firstError);
    return true;
}

// Writes a spool into the server (this writer's own once the server is back, or one an ended
// supervisor left) and removes it; false (said once) when it cannot, and it is tried again.
bool HistoryWriter::mergeSpooled(WriterState &st, const QString &path)
{
    const bool own = st.spool && st.spool->path() == path;
    std::unique_ptr<HistoryDatabase> other;
    if (!own) {
        other = std::make_unique<HistoryDatabase>();
        if (!other->open(path, false).isEmpty())
            return false;
    }
    HistoryDatabase &spool = own ? *st.spool : *other;
    qint64 rows = 0;
    if (const QString e = mergeSpool(spool, *st.db, &rows); !e.isEmpty()) {
        if (!std::exchange(st.spoolTrouble, true))
            sendNotice(QStringLiteral("failing"),
                       QStringLiteral("the rows spooled to %1 cannot be written to the history server yet (%2); tried again").arg(path, e));
        return false;
    }
    st.runIds.clear(); // the merge may have made runs
    if (own) {
        st.spoolFast.reset();
        st.spool.reset();
        st.spoolRunIds.clear();
    }
    other.reset();
    for (const QString &suffix : {QString(), QStringLiteral("-wal"), QStringLiteral("-shm")})
        QFile::remove(path + suffix);
    st.spoolTrouble = false;
    sendNotice(QStringLiteral("merged"), QStringLiteral("the %1 rows spooled to %2 while the history server was away are in it now")
                                              .arg(rows)
                                              .arg(path));
    return true;
}

// Connects again to a server that went away; true when connected (the kept batch is then written).
bool HistoryWriter::reconnectIfLost(WriterState &st)
{
    if (!st.unreachableFor.isValid())
        return true;
    auto fresh = std::make_unique<HistoryDatabase>();
    if (!fresh->open(m_path).isEmpty())
        return false;
    st.fast.reset(); // before the connection it belongs to
    st.db = std::move(fresh);
    st.fast = std::make_unique<FastRows>(st.db->connection());
    st.runIds.clear();
    sendNotice(QStringLiteral("reachable"), QStringLiteral("the history server %1 is reachable again after %2 s; the rows "
                                                           "kept meanwhile are written to it")
                                                .arg(m_path)
                                                .arg(st.unreachableFor.elapsed() / 1000.0, 0, 'f', 1));
    st.unreachableFor.invalidate();
    return true;
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
            m_lastError = QStringLiteral("the history database %1 stayed locked or unreachable; %2 rows were not written")
                              .arg(m_path)
                              .arg(st.kept.size());
        return true;
    }
    return false;
}

} // namespace trellis::launcher
