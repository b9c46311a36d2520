// Batched SQLite writer thread; see history_writer.h.
#include "launcher/history/history_writer.h"
#include "launcher/history/history_rows.h"

#include <QCoreApplication>
#include <QSysInfo>

#include "launcher/history/history_database.h"
#include "launcher/history/history_spool.h"
#include "launcher/history/history_transaction.h"
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

HistoryWriter::HistoryWriter(QString path, int flushIntervalMs) : m_path(std::move(path)), m_flushIntervalMs(flushIntervalMs)
{
    // The bound on what waits in memory while the history cannot be written (docs/history.md):
    // TRELLIS_HISTORY_MAX_KEPT_OPS lowers it (tests, small machines).
    bool ok = false;
    const qulonglong bound = qEnvironmentVariable("TRELLIS_HISTORY_MAX_KEPT_OPS").toULongLong(&ok);
    if (ok && bound > 0)
        m_maxKeptOps = static_cast<std::size_t>(bound);
}

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

// A first write at start: a history that cannot take one (a full or read-only disk) is refused
// before any rank starts, rather than found out by the first batch. SQLite only: rewriting the
// header's user_version is a real page written and committed.
QString probeWrite(HistoryDatabase &db)
{
    QSqlDatabase &c = db.connection();
    if (c.driverName() != QLatin1String("QSQLITE"))
        return {};
    QSqlQuery q(c);
    if (!q.exec(QStringLiteral("PRAGMA user_version")) || !q.next())
        return q.lastError().text();
    const int version = q.value(0).toInt();
    q.finish();
    // A lock held by another process is not a refusal: the writer waits it out as it would later.
    const auto refused = [&](const QSqlError &e) {
        c.rollback();
        return classifyWriteFailure(e.nativeErrorCode(), e.text(), false, false) == WriteFailure::Locked ? QString() : e.text();
    };
    if (!c.transaction())
        return refused(c.lastError());
    if (!q.exec(QStringLiteral("PRAGMA user_version=%1").arg(version)))
        return refused(q.lastError());
    if (!c.commit())
        return refused(c.lastError());
    return {};
}

QString kindName(const WriteOp &op)
{
    static const char *const names[] = {"run", "run status", "rank", "launch command", "step reports", "collective report",
                                        "expert load", "spans", "event", "stall", "telemetry cursor"};
    return QLatin1String(names[op.index()]);
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
    std::deque<WriteOp> kept;                  // what was not committed yet (locked, failing, held out), retried first
    QElapsedTimer lockedFor;
    QElapsedTimer failingFor; // valid while transactions fail as a whole (a full disk, a failed COPY)
    // Operations refused for their own data: how often each (run, kind, error) was refused in a
    // row; given up at kGiveUpAfter. And what was given up, per run and rank (history_transaction.h).
    std::map<QString, int> refusals;
    GivenUp givenUp;
    quint64 givenUpToBound = 0; // reports given up to the memory bound since the trouble began
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
    QString error = st.db->open(m_path);
    if (error.isEmpty())
        if (const QString e = probeWrite(*st.db); !e.isEmpty())
            error = QStringLiteral("the history %1 cannot be written: %2").arg(m_path, fileSystemTrouble(m_path).isEmpty() ? e : fileSystemTrouble(m_path) + QStringLiteral(" (") + e + QLatin1Char(')'));
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
            keep(st, batch);
            if (stopping)
                break;
            continue;
        } else if (st.spool && !mergeSpooled(st, st.spool->path())) {
            spoolOrKeep(st, batch); // the spool first, in order: until it is merged, new rows go after it
        } else if (!batch.empty()) {
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

// Writes `batch` in one transaction. Nothing of a batch that was not committed is acknowledged:
// it is kept for the next transaction (spooled when the server is away).
void HistoryWriter::writeBatch(WriterState &st, std::deque<WriteOp> &batch)
{
    QElapsedTimer attempt; // a locked database is found only after SQLite's busy timeout
    attempt.start();
    const TransactionOutcome outcome = writeTransaction(*st.db, st.runIds, *st.fast, batch, st.givenUp);
    if (outcome.committed)
        finishCommittedBatch(st, batch, outcome);
    else if (outcome.failure == WriteFailure::Unreachable)
        keepUnreachableBatch(st, batch, outcome.error);
    else if (outcome.failure == WriteFailure::Locked)
        keepLockedBatch(st, batch, attempt);
    else
        keepFailingBatch(st, batch, outcome.error);
}

// The database refused the transaction as a whole (a full or read-only disk, an I/O error, a COPY,
// statement or commit that failed for a reason of the server's): nothing was committed, nothing is
// acknowledged; the batch is kept and written again every second, said once when it begins.
void HistoryWriter::keepFailingBatch(WriterState &st, std::deque<WriteOp> &batch, const QString &why)
{
    st.nextStart = std::chrono::steady_clock::now() + std::max(st.interval, std::chrono::milliseconds(1000));
    if (!st.failingFor.isValid()) {
        st.failingFor.start();
        sendNotice(QStringLiteral("failing"),
                   QStringLiteral("the history %1 cannot be written (%2); nothing is acknowledged as stored until it can: the run "
                                  "goes on, its rows wait in memory and at the ranks and are written then")
                       .arg(m_path, why.trimmed()));
    }
    {
        std::lock_guard lock(m_mutex);
        m_lastError = why;
    }
    keep(st, batch);
}

// Keeps what was not committed for the next transaction, within the memory bound.
void HistoryWriter::keep(WriterState &st, std::deque<WriteOp> &batch)
{
    trimToBound(st, batch);
    st.kept = std::move(batch);
}

// The memory bound (m_maxKeptOps operations): the cursors of a run waiting one behind the other
// are merged first (the newest acknowledges everything the older ones would); then the oldest
// telemetry (step, collective, span and expert reports) is given up, counted per rank as lost
// (written by the run's next cursor) and said. Runs, statuses, ranks, events and cursors are kept.
void HistoryWriter::trimToBound(WriterState &st, std::deque<WriteOp> &batch)
{
    if (batch.size() <= m_maxKeptOps)
        return;
    std::vector<bool> drop(batch.size(), false);
    std::set<QString> newerCursor; // walking back: runs with a newer cursor of the same attempt
    for (std::size_t i = batch.size(); i-- > 0;)
        if (const auto *cursor = std::get_if<CursorOp>(&batch[i])) {
            if (cursor->reset)
                newerCursor.erase(cursor->runId);
            else if (!newerCursor.insert(cursor->runId).second)
                drop[i] = true;
        }
    std::size_t size = batch.size() - static_cast<std::size_t>(std::count(drop.begin(), drop.end(), true));
    quint64 reports = 0;
    for (std::size_t i = 0; i < batch.size() && size > m_maxKeptOps; ++i) {
        const WriteOp &op = batch[i];
        if (drop[i] || !(std::holds_alternative<StepOp>(op) || std::holds_alternative<CollectiveOp>(op) ||
                         std::holds_alternative<SpansOp>(op) || std::holds_alternative<ExpertLoadOp>(op)))
            continue;
        for (const auto &[rank, n] : reportsByRank(op)) {
            st.givenUp[std::visit([](const auto &o) { return o.runId; }, op)][rank] += n;
            reports += n;
        }
        drop[i] = true;
        --size;
    }
    std::deque<WriteOp> trimmed;
    for (std::size_t i = 0; i < batch.size(); ++i)
        if (!drop[i])
            trimmed.push_back(std::move(batch[i]));
    batch = std::move(trimmed);
    if (reports == 0)
        return;
    if (st.givenUpToBound == 0)
        sendNotice(QStringLiteral("gave-up"),
                   QStringLiteral("the history %1 could not be written for so long that the rows waiting for it reached the "
                                  "memory bound (%2 operations); the oldest telemetry is given up and counted as lost at its "
                                  "ranks, never acknowledged as stored")
                       .arg(m_path)
                       .arg(m_maxKeptOps));
    st.givenUpToBound += reports;
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
    keep(st, batch);
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
    if (const QString e = spoolRuns(*st.spool, placeholders); !e.isEmpty()) {
        if (!std::exchange(st.spoolTrouble, true))
            sendNotice(QStringLiteral("failing"), QStringLiteral("cannot spool the run's rows to %1 (%2); they wait in memory").arg(st.spool->path(), e));
        return false;
    }
    const TransactionOutcome outcome = writeTransaction(*st.spool, st.spoolRunIds, *st.spoolFast, batch, st.givenUp);
    if (!outcome.committed) {
        st.spoolRunIds.clear();
        if (!std::exchange(st.spoolTrouble, true))
            sendNotice(QStringLiteral("failing"),
                       QStringLiteral("cannot spool the run's rows to %1 (%2); they wait in memory").arg(st.spool->path(), outcome.error));
        return false;
    }
    finishCommittedBatch(st, batch, outcome);
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
    keep(st, batch); // bounded: the oldest telemetry goes first, counted, when memory would run away
}

// A committed transaction: what it held is acknowledged (the cursors' afterCommit), and only that.
// The operations it held out (a refused row and its run's later ones) are kept for the next, and
// one refused kGiveUpAfter times the same way is given up alone, counted and said.
void HistoryWriter::finishCommittedBatch(WriterState &st, std::deque<WriteOp> &batch, const TransactionOutcome &outcome)
{
    const QString given = st.givenUpToBound ? QStringLiteral("; %1 telemetry reports were given up to the memory bound meanwhile, "
                                                             "counted as lost at their ranks")
                                                  .arg(st.givenUpToBound)
                                            : QStringLiteral("; nothing was lost");
    if (st.lockedFor.isValid()) {
        sendNotice(QStringLiteral("unlocked"),
                   QStringLiteral("the history database %1 is writable again after %2 s%3").arg(m_path).arg(st.lockedFor.elapsed() / 1000.0, 0, 'f', 1).arg(given));
        st.lockedFor.invalidate();
    }
    if (st.failingFor.isValid()) {
        sendNotice(QStringLiteral("writable"),
                   QStringLiteral("the history %1 takes writes again after %2 s; what waited is written now%3").arg(m_path).arg(st.failingFor.elapsed() / 1000.0, 0, 'f', 1).arg(given));
        st.failingFor.invalidate();
    }
    st.givenUpToBound = 0;
    m_rowsWritten += outcome.rows;
    std::vector<bool> held(batch.size(), false);
    for (std::size_t i : outcome.held)
        held[i] = true;
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (held[i])
            continue;
        const WriteOp &op = batch[i];
        if (const auto *n = std::get_if<NewRunOp>(&op))
            st.newRuns[n->runId] = *n;
        else if (const auto *status = std::get_if<RunStatusOp>(&op))
            st.lastStatus[status->runId] = *status;
        else if (const auto *cursor = std::get_if<CursorOp>(&op)) {
            if (cursor->reset)
                st.givenUp.erase(cursor->runId); // a new attempt counts its own
            if (cursor->afterCommit)
                cursor->afterCommit();
        }
    }
    std::deque<WriteOp> kept;
    QString lastRefusal;
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (!held[i])
            continue;
        const auto refusal = outcome.refused.find(i);
        if (refusal != outcome.refused.end()) {
            const WriteOp &op = batch[i];
            const QString runId = std::visit([](const auto &o) { return o.runId; }, op);
            lastRefusal = refusal->second;
            if (++st.refusals[runId + QLatin1Char('\n') + kindName(op) + QLatin1Char('\n') + refusal->second] >= kGiveUpAfter) {
                giveUp(st, op, refusal->second);
                continue;
            }
        }
        kept.push_back(std::move(batch[i]));
    }
    if (!kept.empty()) {
        st.nextStart = std::min(st.nextStart, std::chrono::steady_clock::now() + st.interval);
        keep(st, kept);
    }
    std::lock_guard lock(m_mutex);
    if (!lastRefusal.isEmpty())
        m_lastError = lastRefusal;
}

// An operation refused for its own data kGiveUpAfter times: given up alone so that it cannot block
// the history; its reports count as lost at their ranks, and it is said (the supervisor records
// the notice as an event of the run).
void HistoryWriter::giveUp(WriterState &st, const WriteOp &op, const QString &why)
{
    const QString runId = std::visit([](const auto &o) { return o.runId; }, op);
    QStringList ranks;
    for (const auto &[rank, n] : reportsByRank(op)) {
        st.givenUp[runId][rank] += n;
        ranks << QString::number(rank);
    }
    sendNotice(QStringLiteral("gave-up"),
               QStringLiteral("the history %1 refused the %2 of run %3%4 %5 times (%6); given up, never acknowledged as stored%7")
                   .arg(m_path, kindName(op), runId,
                        ranks.isEmpty() ? QString() : QStringLiteral(" (rank %1)").arg(ranks.join(QStringLiteral(", "))))
                   .arg(kGiveUpAfter)
                   .arg(why.trimmed(), ranks.isEmpty() ? QString() : QStringLiteral(": counted as lost at the rank")));
}

// After stop(): true once everything is written, or what is kept is given up.
bool HistoryWriter::doneStopping(WriterState &st)
{
    // A locked or failing database gets 10 s more at the end; then what is kept is given up, said
    // with the reason it could not be written (never acknowledged as stored).
    if (!st.stoppingFor.isValid())
        st.stoppingFor.start();
    std::lock_guard lock(m_mutex);
    if (!m_queue.empty() || (!st.kept.empty() && st.stoppingFor.elapsed() <= 10000))
        return false;
    if (st.kept.empty())
        return true;
    quint64 reports = 0;
    for (const WriteOp &op : st.kept)
        for (const auto &[rank, n] : reportsByRank(op))
            reports += n;
    m_notWritten = st.kept.size();
    const QString why = st.failingFor.isValid() && !m_lastError.isEmpty() ? m_lastError.trimmed()
                        : st.unreachableFor.isValid()                      ? QStringLiteral("its server could not be reached")
                                                                           : QStringLiteral("it stayed locked by another program");
    m_lastError = QStringLiteral("the history %1 could not take the run's last rows (%2): %3 operations, %4 of them "
                                 "telemetry reports, were not written and were never acknowledged as stored")
                      .arg(m_path, why)
                      .arg(st.kept.size())
                      .arg(reports);
    return true;
}

} // namespace trellis::launcher
