// The single writer of the run history. Producers (the supervisor, on the thread it lives on) enqueue
// rows without waiting; one writer thread owns its own HistoryDatabase connection and writes
// everything queued in one transaction every flush interval, so the database sees a few batched
// transactions per second whatever the telemetry rate.
// Trouble with the file never stops a run, and nothing is acknowledged before it is committed
// (history_transaction.h has the rule and the kinds of failure): while the database is locked by
// another process or refuses writes (a full or read-only disk, a failed COPY or commit) the batch
// is kept and retried (the ranks keep their unacknowledged telemetry meanwhile); a row refused for
// its own data is retried a few times and then given up alone, counted; a database
// file removed or replaced under the writer is recreated at its path with the runs it was writing;
// while a PostgreSQL server is away the batches go to a local spool (history_spool.h) and are
// acknowledged from there, and the spool is merged into the server once it is back. Each is
// reported through the notice callback. Threading: enqueue(), flush() and stats are
// thread-safe; start()/stop() are called from the owning thread; the notice callback runs on the
// writer thread.
#pragma once

#include "launcher/run_types.h"

#include <QString>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <future>
#include <mutex>
#include <thread>
#include <variant>
#include <vector>

class QElapsedTimer;

namespace trellis::launcher {

struct TransactionOutcome;

struct NewRunOp {
    QString runId, name, planJson, target;
    int worldSize = 0;
    qint64 totalSteps = 0;
    QDateTime startedAt;
    QString filesAt = {}; // where the run's files are: "HOST:FOLDER" of the machine that launched it
    RunKind kind = RunKind::Launched;
};
struct RunStatusOp {
    QString runId, status, error;
    QDateTime endedAt; // invalid: still running
    int exitCode = 0;
    qint64 totalSteps = -1; // >= 0: the run's step count as it turned out (a job with its own trainer says it)
    // This process now owns the run (it adopted it, or a collector took it up again): the run's
    // launcher becomes this host and pid, so an open of the history does not close it as abandoned.
    bool takeOver = false;
};
struct RankOp {
    QString runId;
    RankRow row;
};
// An attempt's exact launch command, appended to the run's record (one attempt a line).
struct LaunchCommandOp {
    QString runId, commandLine;
};
struct StepOp { // the step reports of one drained batch (one queue entry, not one per report)
    QString runId;
    std::vector<StepRow> rows;
};
struct CollectiveOp {
    QString runId;
    CollectiveRow row;
};
struct ExpertLoadOp {
    QString runId;
    ExpertLoadRow row;
};
struct SpansOp {
    QString runId;
    QList<SpanRow> rows;
};
struct EventOp {
    QString runId;
    EventRow row;
};
struct StallOp {
    QString runId;
    StallRow row;
};
// Per rank, how far the telemetry drained so far reaches (every seq below nextSeq); afterCommit
// runs on the writer thread once the transaction holding it, and everything enqueued before it,
// is committed (the supervisor acknowledges the messages to the ranks then).
struct CursorOp {
    QString runId;
    std::map<int, quint64> nextSeq;
    std::function<void()> afterCommit;
    bool reset = false; // a new launch attempt: every rank's sequence starts again at 0
    std::map<int, quint64> lost; // per rank, given up by the rank (this attempt, so far)
};
// PostgreSQL: the channel a writer NOTIFYs with the id of each run a committed transaction wrote
// to, and readers LISTEN on (HistoryReader::runWritten).
inline constexpr char kHistoryChannel[] = "trellis_history";

using WriteOp = std::variant<NewRunOp, RunStatusOp, RankOp, LaunchCommandOp, StepOp, CollectiveOp, ExpertLoadOp, SpansOp, EventOp, StallOp, CursorOp>;

class HistoryWriter {
public:
    explicit HistoryWriter(QString path, int flushIntervalMs = 200);
    ~HistoryWriter();
    HistoryWriter(const HistoryWriter &) = delete;
    HistoryWriter &operator=(const HistoryWriter &) = delete;

    // Starts the writer thread and opens the database there; returns an error message or "".
    QString start();
    void enqueue(WriteOp op);
    // Blocks until everything enqueued before the call is committed (for the CLI and tests), or
    // until timeoutMs passed (false then: the database is locked or failing).
    bool flush(int timeoutMs = 30000);
    // kind: "locked", "unlocked", "recreated", "failing", "writable", "gave-up", "unreachable",
    // "reachable", "spooling", "merged", "spooled"; message: for a person.
    void setNoticeCallback(std::function<void(const QString &kind, const QString &message)> notice)
    {
        m_notice = std::move(notice);
    }
    void stop();
    // The memory bound on what waits while the history cannot be written (before start();
    // TRELLIS_HISTORY_MAX_KEPT_OPS sets it too).
    void setMaxKeptOps(std::size_t ops) { m_maxKeptOps = std::max<std::size_t>(1, ops); }

    qint64 rowsWritten() const { return m_rowsWritten.load(); }
    // Operations enqueued and not committed yet (the writer's lag).
    quint64 backlog() const;
    QString lastError() const;
    // After stop(): the operations it could not write before it gave up at the end (0 when the
    // history took everything); lastError() says why.
    quint64 notWritten() const
    {
        std::lock_guard lock(m_mutex);
        return m_notWritten;
    }
    QString path() const { return m_path; }

private:
    // The writer thread's work, in steps sharing its connection (history_writer.cpp).
    struct WriterState;
    void run(std::promise<QString> opened);
    std::deque<WriteOp> takeBatch(WriterState &st, bool &stopping);
    bool reopenIfReplaced(WriterState &st, std::deque<WriteOp> &batch);
    void writeBatch(WriterState &st, std::deque<WriteOp> &batch);
    void keepLockedBatch(WriterState &st, std::deque<WriteOp> &batch, const QElapsedTimer &attempt);
    void keepUnreachableBatch(WriterState &st, std::deque<WriteOp> &batch, const QString &why);
    void keepFailingBatch(WriterState &st, std::deque<WriteOp> &batch, const QString &why);
    void keep(WriterState &st, std::deque<WriteOp> &batch);
    void trimToBound(WriterState &st, std::deque<WriteOp> &batch);
    void giveUp(WriterState &st, const WriteOp &op, const QString &why);
    void spoolOrKeep(WriterState &st, std::deque<WriteOp> &batch);
    bool spoolBatch(WriterState &st, std::deque<WriteOp> &batch);
    bool mergeSpooled(WriterState &st, const QString &path);
    bool reconnectIfLost(WriterState &st);
    void finishCommittedBatch(WriterState &st, std::deque<WriteOp> &batch, const TransactionOutcome &outcome);
    bool doneStopping(WriterState &st);
    void sendNotice(const QString &kind, const QString &message);

    QString m_path;
    int m_flushIntervalMs;
    std::thread m_thread;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_flushed;
    std::deque<WriteOp> m_queue;     // guarded by m_mutex
    quint64 m_enqueued = 0;          // guarded by m_mutex
    quint64 m_committed = 0;         // guarded by m_mutex
    bool m_flushRequested = false;   // guarded by m_mutex
    bool m_stop = false;             // guarded by m_mutex
    QString m_lastError;             // guarded by m_mutex
    quint64 m_notWritten = 0;        // guarded by m_mutex
    std::atomic<qint64> m_rowsWritten{0};
    std::function<void(const QString &, const QString &)> m_notice;
    // What may wait in memory while the history cannot be written (locked, failing, away and not
    // spooled); past it the oldest telemetry is given up, counted (trimToBound).
    std::size_t m_maxKeptOps = 2'000'000;
};

} // namespace trellis::launcher
