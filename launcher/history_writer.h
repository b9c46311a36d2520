// The single writer of the run history. Producers (the run controller on the GUI thread) enqueue
// rows without waiting; one writer thread owns its own HistoryDatabase connection and writes
// everything queued in one transaction every flush interval, so the database sees a few batched
// transactions per second whatever the telemetry rate. Threading: enqueue(), flush() and
// stats are thread-safe; start()/stop() are called from the owning thread.
#pragma once

#include "launcher/run_types.h"

#include <QString>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <thread>
#include <variant>

namespace trellis::launcher {

struct NewRunOp {
    QString runId, name, planJson, target;
    int worldSize = 0;
    qint64 totalSteps = 0;
    QDateTime startedAt;
};
struct RunStatusOp {
    QString runId, status, error;
    QDateTime endedAt; // invalid: still running
    int exitCode = 0;
};
struct RankOp {
    QString runId;
    RankRow row;
};
struct StepOp {
    QString runId;
    StepRow row;
};
struct CollectiveOp {
    QString runId;
    CollectiveRow row;
};
struct SpansOp {
    QString runId;
    QList<SpanRow> rows;
};
struct EventOp {
    QString runId;
    EventRow row;
};
using WriteOp = std::variant<NewRunOp, RunStatusOp, RankOp, StepOp, CollectiveOp, SpansOp, EventOp>;

class HistoryWriter {
public:
    explicit HistoryWriter(QString path, int flushIntervalMs = 200);
    ~HistoryWriter();
    HistoryWriter(const HistoryWriter &) = delete;
    HistoryWriter &operator=(const HistoryWriter &) = delete;

    // Starts the writer thread and opens the database there; returns an error message or "".
    QString start();
    void enqueue(WriteOp op);
    // Blocks until everything enqueued before the call is committed (for the CLI and tests).
    void flush();
    void stop();

    qint64 rowsWritten() const { return m_rowsWritten.load(); }
    QString lastError() const;
    QString path() const { return m_path; }

private:
    void run(std::promise<QString> opened);

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
    std::atomic<qint64> m_rowsWritten{0};
};

} // namespace trellis::launcher
