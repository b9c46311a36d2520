// A subscriber's view of one run: what the workbench's dashboards and `trellis-cli attach` show.
// attach() starts a feed thread that subscribes to the supervisor's live feed, backfills what the
// history database already holds for the run (read on that thread, with its own connection), then
// follows the feed: step rows go to series() (thread-safe), state and progress are kept here, and
// alerts, output lines, events and state changes are handed to the owner's thread once per batch
// as signals. A run that is no longer supervised is shown from the history and ends at once.
// Threading: the object lives on the owner's (GUI) thread; decoding, SQLite and everything that
// grows with the message rate happen on the feed thread.
#pragma once

#include "launcher/run_types.h"
#include "launcher/metrics/series_store.h"
#include "launcher/metrics/dashboard_snapshot.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <deque>
#include <mutex>
#include <thread>
#include <variant>

namespace trellis::proto {
class Envelope;
class FeedMessage;
class RunStatus;
} // namespace trellis::proto

namespace trellis::launcher {

class HistoryDatabase;

class RunFeed : public QObject {
    Q_OBJECT
public:
    explicit RunFeed(QObject *parent = nullptr);
    ~RunFeed() override;

    // `endpoint` "" : the run is not supervised any more (history only).
    void attach(const QString &runId, const QString &endpoint, const QString &database);
    void detach();
    bool isAttached() const { return m_thread.joinable(); }

    QString runId() const { return m_runId; }
    // Every step row as it came (`onlyRank` ≥ 0: that rank's alone), for a follower that prints
    // them (trellis-cli attach); off by default: the dashboards draw from snapshot(), bounded at
    // any size, where every row of a long run at scale would not be.
    void setKeepRows(bool keep, int onlyRank = -1)
    {
        m_keepRank = onlyRank;
        m_keepRows = keep;
    }
    SeriesStore &series() { return m_series; }
    // The newest dashboard snapshot (built on the feed thread at most 4 times a second, when
    // something changed); null before the first.
    std::shared_ptr<const telemetry::DashboardSnapshot> snapshot() const;
    // Which metric the snapshots' rank × step heat map shows.
    void setHeatMetric(telemetry::Metric metric) { m_heatMetric = static_cast<int>(metric); }
    RunProgress progress() const;
    RunState state() const;
    int worldSize() const;
    int attempt() const;
    QString message() const;       // why it failed or stopped, or the restart in progress
    QString queue() const;         // a batch job's place in its scheduler ("" : none)
    quint64 feedGaps() const { return m_gaps.load(); } // feed messages this subscriber missed

signals:
    void stateChanged(trellis::launcher::RunState state);
    void stepsArrived(int count);
    void outputLine(int rank, bool isStderr, const QString &line);
    void alert(const QString &kind, const QString &message);
    void event(const trellis::launcher::EventRow &event); // the run's events, backfilled then live
    void restarting(int attempt, const QString &message);
    void snapshotReady(); // a new snapshot() (coalesced: at most one pending)
    void finished(trellis::launcher::RunState state, int exitCode, const QString &message);

private:
    struct StateNote { RunState state; };
    struct StepsNote { int count; };
    struct OutputNote { int rank; bool isStderr; QString text; };
    struct AlertNote { QString kind, message; };
    struct EventNote { EventRow row; };
    struct RestartNote { int attempt; QString message; };
    struct FinishedNote { RunState state; int exitCode; QString message; };
    struct SnapshotNote {};
    using Note = std::variant<StateNote, StepsNote, OutputNote, AlertNote, EventNote, RestartNote, FinishedNote, SnapshotNote>;

    // The feed thread's work, in steps sharing a FeedState (run_feed.cpp).
    struct FeedState;
    void run(QString runId, std::string endpoint, QString database);
    bool backfillFromHistory(FeedState &st, bool final);
    void catchUpWithHistory(FeedState &st);
    void followFeed(FeedState &st);
    bool handleFeedMessage(FeedState &st, const proto::FeedMessage &m);
    void handleTelemetry(FeedState &st, const proto::Envelope &e);
    bool handleStatus(FeedState &st, const proto::RunStatus &s);
    void addStepRow(FeedState &st, const StepRow &row);
    HistoryDatabase *refillHistory(FeedState &st);
    void refillMissing(FeedState &st, bool force);
    void refillTails(FeedState &st, qint64 lastStep);
    void updateProgress(const FeedState &st);
    void postNewSteps(FeedState &st);
    void publishSnapshot(FeedState &st, bool force);
    void setState(RunState s);
    bool keeps(int rank) const { return m_keepRows && (m_keepRank < 0 || rank == m_keepRank); }
    void post(Note note); // feed thread
    void deliver();       // owner thread

    QString m_runId;
    SeriesStore m_series;
    std::atomic<bool> m_keepRows{false};
    std::atomic<int> m_keepRank{-1};
    std::shared_ptr<const telemetry::DashboardSnapshot> m_snapshot; // guarded by m_mutex
    std::atomic<int> m_heatMetric{static_cast<int>(telemetry::Metric::StepMs)};
    std::thread m_thread;
    std::atomic<bool> m_stop{false};
    std::atomic<quint64> m_gaps{0};
    mutable std::mutex m_mutex;
    std::deque<Note> m_notes; // guarded
    RunProgress m_progress;   // guarded
    RunState m_state = RunState::Idle;
    int m_worldSize = 0;
    int m_attempt = 0;
    QString m_message;
    QString m_queue;
    std::atomic<bool> m_deliverPending{false};
};

} // namespace trellis::launcher

Q_DECLARE_METATYPE(trellis::launcher::EventRow)
