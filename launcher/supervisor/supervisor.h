// The lifecycle of one run: writes the plan the ranks will read, starts mpirun with QProcess,
// receives telemetry, feeds the history writer and the live feed, watches for hangs and
// crashes, and settles the run as completed, failed (exit code + last stderr lines) or stopped.
// Threading: a Supervisor lives on the GUI (or CLI main) thread; its QProcess is never waited
// on. Telemetry arrives on the receiver's thread and is drained here once per batch.
#pragma once

#include "launcher/history/history_writer.h"
#include "launcher/run_types.h"
#include "launcher/detectors/alerts.h"
#include "launcher/detectors/hang_detector.h"
#include "launcher/detectors/stall_tracker.h"
#include "launcher/metrics/metrics_endpoint.h"
#include "launcher/detectors/straggler_detector.h"
#include "launcher/targets/slurm_target.h"
#include "backend/plan/plan.h"
#include "backend/protocol/curve_keys.h"

#include <QElapsedTimer>
#include <QFile>
#include <QObject>
#include <QProcess>
#include <QStringList>
#include <QTimer>

#include <atomic>
#include <deque>
#include <future>
#include <map>
#include <tuple>
#include <memory>
#include <optional>

namespace trellis::proto {
class Envelope;
}

namespace trellis::launcher {

class TelemetryReceiver;
class FeedPublisher;
class LaunchTarget;
class JobProcess;

struct RunOptions {
    QString trainerPath;              // default: trellis-trainer beside the application
    QString mpirunPath = QStringLiteral("mpirun");
    QString runsDirectory;            // default: runs/ beside the history database
    QStringList extraTrainerArgs;     // e.g. {"--inject", "crash@1:5"}: see injected_fault.h
    int hangTimeoutS = 0;             // 0: the plan's launch.hang_timeout_s
    int hangConfirmS = 0;             // 0: the plan's launch.hang_confirm_s
    int metricsPort = -1;             // Prometheus endpoint on 127.0.0.1: -1 none, 0 any free port
    QString runId;                    // "" : a new one (newRunId())
    std::string telemetryEndpoint;    // "" : an ephemeral loopback TCP port
    // Instead of mpirun and the trainer: this program (the simulator), given
    // jobArguments plus --endpoint E --run-id ID.
    QString jobProgram;
    QStringList jobArguments;
    RunKind kind = RunKind::Launched; // as the history records it (Simulated: trellis-cli simulate)
};

// A job Trellis did not launch, whose ranks joined a collector (launcher/collector/collector.h):
// what its first Join said.
struct WatchedJob {
    QString name, jobId, scheduler, command, client;
    QStringList hosts;        // the hosts of the ranks that joined so far
    int worldSize = 1;
    int attempt = 0;
    proto::CurveKeys keys;    // the collector's: its server keys and the jobs' client public key
    std::string bind = "tcp://0.0.0.0:*"; // where the job's telemetry receiver listens
    QString collector;        // which collector watches it (its key file), and the job's key there:
    QString jobKey;           // a collector started again takes up only its own jobs, by that key
};

class Supervisor : public QObject {
    Q_OBJECT
public:
    // `writer` may be null (nothing recorded); it must outlive the supervisor's runs.
    explicit Supervisor(HistoryWriter *writer, QObject *parent = nullptr);
    ~Supervisor() override;

    // Starts a run; returns "" or why it could not start (nothing is left running then).
    QString start(const plan::Plan &plan, const QString &planPath, const RunOptions &options = {});
    // Takes over a run whose supervisor died while its job goes on: the job keeper `keeperPid`,
    // the run folder, the attempt, and what the history holds (the telemetry cursor, hosts, steps).
    // options.telemetryEndpoint must be the run's. Returns "" or why not.
    QString adopt(const QString &runId, const QString &runDir, qint64 keeperPid, int attempt, const RunData &history,
                  const RunOptions &options);
    // Does nothing for a watched job (it was not started here: its own launcher stops it).
    void stop();

    // Watches a job Trellis did not launch (watched_job.cpp): a run in the history named after the
    // job, its telemetry received on its own endpoint (CURVE, the collector's keys), every
    // detector and alert as for a launched run — but no process: it cannot be stopped or
    // restarted from here. It ends when every rank has said Goodbye (completed, or failed naming
    // the first rank that exited non-zero), or when every rank has gone silent by the stall and
    // hang rule; a hang while others still answer is an alert and an event, and the job is left
    // to its own launcher. "" or why not.
    QString watch(const WatchedJob &job, const RunOptions &options);
    // The job's own launcher started it again (torchrun's elastic restart, a requeued Slurm job):
    // the run goes on as attempt `attempt`, its ranks numbering their telemetry from 0 again.
    QString watchAttempt(int attempt);
    bool watchedOnly() const { return m_watched; }
    // A rank of the watched job joined from `host` (its Hello may come later: a rank stopped early
    // is still named with its host).
    void noteJoin(int rank, const QString &host)
    {
        if (!m_hosts.count(rank))
            m_hosts[rank] = host;
    }
    // The collector watching the job closes: the run ends as stopped, saying why, and stays one a
    // collector started again takes up (resumeWatching).
    void stopWatching(const QString &message);
    // A collector started again takes up a job a collector with its keys watched before and did not
    // see end — stopped, or gone with its process (watched_job.cpp): the run folder says which job
    // (watching.json, there while the run may go on) and where its ranks send (telemetry.endpoint).
    // Its receiver listens there again from where the history's telemetry ends; the ranks, which
    // kept what was not acknowledged, send it again. A run no rank reports to within the
    // confirmation time ends as stopped. "" or why not.
    QString resumeWatching(const QString &runId, const RunData &history, const proto::CurveKeys &keys, const RunOptions &options);
    // The job a run folder's watching.json names; nullopt (and why in *error) when there is none
    // or it cannot be read.
    static std::optional<WatchedJob> watchedJobIn(const QString &runDir, QString *error = nullptr);
    // Where run folders go: options.runsDirectory, else runs/ beside the writer's history.
    static QString runsDirectoryFor(const RunOptions &options, const HistoryWriter *writer);
    int attempt() const { return m_attempt; }
    std::string telemetryEndpoint() const;

    RunState state() const { return m_state; }
    QString runId() const { return m_runId; }
    QString runDirectory() const { return m_runDir; }
    QString commandLine() const { return m_commandLine; }
    int exitCode() const { return m_exitCode; }
    QString failureMessage() const { return m_failure; }
    QStringList lastLines(int rank, int count) const;
    RunProgress progress() const { return m_progress; }
    ReceiverStats receiverStats() const;
    const plan::Plan &plan() const { return m_plan; }
    // A batch job's place in its scheduler (slurm target): "Slurm job 12 pending: Resources, position
    // 1 of 2 in the queue", "Slurm job 12 running on host[1-2]"; "" for other targets.
    QString queueText() const;
    bool batchJobWaiting() const; // submitted and not yet running

    quint16 metricsPort() const { return m_metrics ? m_metrics->port() : 0; }
    // From the start of mpirun to the first telemetry of any rank (its Hello), ms; -1 until then.
    qint64 firstTelemetryMs() const { return m_firstTelemetryMs; }
    QByteArray metricsText() const; // the Prometheus exposition of the run now

    // Publishes the run's state, telemetry, alerts and output on the live feed (not owned; may be null).
    void setFeed(FeedPublisher *feed);

    // Trouble with the history file (locked, removed), from the writer: an event and an alert.
    void historyNotice(const QString &kind, const QString &message);

    // $TRELLIS_TRAINER, else trellis-trainer beside this program — trellis-trainer-cuda for a plan
    // on CUDA devices when it was built beside.
    static QString defaultTrainerPath(const plan::Plan *forPlan = nullptr);
    // The plan with its relative data and checkpoint paths made absolute against planPath's folder
    // (the current folder when planPath is ""), so it can be written and read anywhere.
    static plan::Plan withAbsolutePaths(const plan::Plan &plan, const QString &planPath);
    static QString newRunId();

signals:
    void stateChanged(trellis::launcher::RunState state);
    void stepsArrived(int count);
    void outputLine(int rank, bool isStderr, const QString &line);
    void finished(trellis::launcher::RunState state, int exitCode, const QString &message);
    // A failure is being recovered from: the job ends and attempt `attempt` starts after the backoff.
    void restarting(int attempt, const QString &message);
    // Something a person should hear about now (a stall, a straggler, a hang, a restart, a failure).
    void alert(const QString &kind, const QString &message);
    // A stall ended (cleared, or with the job): its record in a line (stallSummary).
    void stallEnded(const QString &message);
    // A batch job's state changed (slurm target): "Slurm job 12 pending (Resources), position 1 of 2
    // in the queue", "Slurm job 12 running", "Slurm job 12 hit its time limit of 00:01:00".
    void batchJobChanged(const QString &state, const QString &text);
    // A launch attempt's job keeper started (the registry records it, for adoption).
    void jobStarted(qint64 keeperPid, int attempt);

private:
    void setState(RunState state);
    void drainTelemetry();
    // One batch's messages, by kind (telemetry_intake.cpp).
    void onHello(int rank, const proto::Envelope &e);
    StepRow onStep(int rank, const proto::Envelope &e);
    void onCollective(int rank, const proto::Envelope &e);
    void onSpans(int rank, const proto::Envelope &e);
    void onRankEvent(int rank, const proto::Envelope &e);
    void onHeartbeat(int rank, const proto::Envelope &e);
    void onGoodbye(int rank, const proto::Envelope &e);
    void updateProgress();
    void acknowledgeAfterCommit();
    void connectJob();
    void onOutput(bool isStderr, const QByteArray &data, bool replay);
    void onProcessFinished(int exitCode, bool crashed);
    // The watchdog (watchdog.cpp): stalls named, hangs decided (launcher/detectors/stall_tracker.h).
    void checkWatchdog();
    void endJobThatSaidGoodbye();
    bool noteBacklog();  // whether the supervisor is behind (then stalls are not judged)
    bool watchStalls();  // true when a hang was decided (the job is ending)
    void announceStall(const StallRecord &stall);
    // said: its end as an event (not where it only grew into another)
    void recordStall(const StallRecord &stall, const QString &outcome, bool said = true);
    void closeStall(const QString &outcome); // the stall in progress ends with the job, or as a hang
    void decideHang(const std::string &detectorMessage, const HangVerdict &verdict);
    void terminateJob(const QString &message); // a hang decided by the watchdog: restart or fail
    QString launchAttempt(bool resume);
    // What start() and adopt() share: the session's plan, folder and options, everything a previous
    // run left cleared, the alert sink and metrics endpoint set up. "" or why not.
    QString runsDirectory(const RunOptions &options) const; // where run folders go (beside the history by default)
    QString beginSession(const plan::Plan &plan, const QString &runId, const QString &runDir, const RunOptions &options,
                         const QString &trainer);
    void resetDetectors(); // fresh hang and straggler detectors, per-rank state cleared, the clock started
    void restoreFromHistory(const RunData &history); // adopt(): checkpoints, newest steps, progress
    void restoreRanks(const RunData &history);       // newest steps, hosts, the learned step time, progress
    QString reconnectTelemetry(const RunData &history); // adopt(): the target and the receiver where the ranks send
    // The plan's launch target (none for local runs): preflight, telemetry keys, staging. "" or why not.
    static TargetOptions targetOptionsFor(const QString &trainer, const RunOptions &options, const QString &runDir);
    QString prepareTarget(const plan::Plan &frozen, const QString &trainer, const RunOptions &options);        // starts mpirun (and the receiver) for this attempt
    // A failure of `cause` (crash, hang, node loss): restart per launch.restart, or settle failed
    // with the whole story. culprit: the failing rank, or -1.
    void failOrRestart(const QString &cause, int exitCode, const QString &message, int culprit);
    void scheduleRelaunch();
    void terminateProcess();
    QString shrinkAroundNodeOf(int rank); // elastic: "" when the plan cannot shrink
    QString firstFailure(int &rank) const; // the process mpirun names as the first to fail
    // An alert: the signal, the command hook / webhook (launch.alerts), the count in the metrics.
    void raise(const QString &kind, qint64 step, const QString &message);
    // The same, recorded as an event of the run first.
    void raiseEvent(const QString &kind, int rank, qint64 step, const QString &message);
    void releaseMemoryStores(RunState state);
    void settle(RunState state, int exitCode, const QString &message);
    // A watched job (watched_job.cpp): a hang decided, every rank's Goodbye.
    void watchedHang(const QString &message);
    void watchedGoodbye(int rank, int exitCode);
    bool everyRankSilent(qint64 forMs) const;
    void saveWatchedJob(const WatchedJob &job); // watching.json in the run folder
    void followFromHistory(const RunData &history); // resumeWatching(): steps, hosts, goodbyes so far
    bool endIfNoneCameBack(); // resumed, and no rank reported since: stopped (true)
    void record(WriteOp op);
    void handleLine(const QString &line, bool isStderr, bool replay = false);
    void publishStatus(); // the feed's RunStatus, on every change and once a second
    void onSlurmLine(const SlurmLine &line); // the batch job's state, from `slurm-job`
    // Checkpoints on hosts without a shared folder (LaunchTarget::gathersCheckpoints): each one the
    // ranks report is gathered here in the background; a restart resumes from the newest gathered.
    void gatherCheckpoint(qint64 step);
    void onCheckpointGathered(qint64 step, const QString &error);
    QString localCheckpointDir() const;
    void finishGathering();               // waits for what is on its way, gathers the newest reported
    QString spreadCheckpointForRestart(); // before an attempt that resumes: "" or why not

    HistoryWriter *m_writer;
    // Owned here (shared only so a commit callback on the writer thread can find out it is gone);
    // a pointer, so its protobuf types stay out of this header.
    std::shared_ptr<TelemetryReceiver> m_receiver;
    plan::Plan m_plan;
    std::unique_ptr<JobProcess> m_job;
    QTimer m_watchdog;
    QElapsedTimer m_sinceProgress;
    bool m_behindNoted = false; // a "backlog" event raised for the current episode
    std::atomic<bool> m_drainPending{false};
    RunState m_state = RunState::Idle;
    QString m_runId;
    QString m_runDir;
    QString m_commandLine;
    int m_exitCode = 0;
    QString m_failure;
    bool m_stopRequested = false;
    bool m_settled = true;
    int m_hangTimeoutS = 60;
    int m_hangConfirmS = 30;
    QByteArray m_partial[2]; // unterminated output per channel
    std::map<int, std::deque<QString>> m_stderrTail; // rank (-1: mpirun) -> last lines
    std::map<int, std::unique_ptr<QFile>> m_logs;
    std::map<int, StepRow> m_latest; // latest step per rank
    std::map<int, QString> m_phase;  // last heartbeat phase per rank
    std::map<int, qint64> m_pids;    // per rank, from Hello
    std::map<int, QString> m_hosts;
    std::unique_ptr<HangDetector> m_hangs;
    std::unique_ptr<StragglerDetector> m_stragglers;
    QElapsedTimer m_clock;           // monotonic time for the hang detector
    StallTracker m_stalls;           // the run's stalls; what it learned of step times outlives restarts
    RunProgress m_progress;
    // Restarts (launch.restart).
    RunOptions m_options;
    QString m_trainer;
    std::unique_ptr<LaunchTarget> m_target; // ssh: builds each attempt's command
    std::string m_telemetryBind;             // the target's receiver address ("" : the run's own)
    std::future<QString> m_gathering;        // a checkpoint being gathered from the hosts (uses m_target)
    qint64 m_gatheringStep = 0;              // the step it gathers; later reports wait in m_gatherNext
    qint64 m_gatherNext = 0;
    QString m_frozenPath;
    plan::Plan m_frozenPlan;
    int m_attempt = 0;
    QStringList m_story;
    bool m_restartPending = false;
    qint64 m_lastCheckpointStep = 0;       // the disk's (gathered to this machine where the target gathers)
    qint64 m_lastMemoryCheckpointStep = 0; // the node's memory store's (training.checkpoint.memory)
    qint64 m_resumedFrom = 0; // the step the current attempt resumed from
    // Alerts and metrics.
    std::unique_ptr<MetricsEndpoint> m_metrics;
    AlertSink m_alertSink;
    DivergenceDetector m_divergence;
    std::map<QString, int> m_alertCounts;
    std::map<std::tuple<int, QString, QString>, double> m_busGbps; // latest per (rank, group, op)
    std::map<int, qint64> m_lastSeenMs;                              // per rank, on m_clock
    qint64 m_firstTelemetryMs = -1;
    FeedPublisher *m_feed = nullptr;
    std::map<int, quint64> m_droppedByRank; // each rank's latest count of messages it dropped
    QTimer m_statusTimer;
    QString m_statusMessage; // the restart in progress, or why it ended
    SlurmLine m_batchJob;    // the current attempt's batch job (slurm target)
    // A watched job (not launched here).
    bool m_watched = false;
    bool m_watchedLocal = false;       // every rank on this host: its processes can be looked at
    std::map<int, int> m_goodbyes;     // rank -> exit code, this attempt (launched and watched)
    QElapsedTimer m_sinceEveryGoodbye; // a launched job: since its every rank said Goodbye
    bool m_watchedHangRaised = false;  // the hang alert of the current stall episode went out
    bool m_watchPaused = false;        // the collector closed: the run may be taken up again
    bool m_resumed = false;            // taken up by a collector started again
    WatchedJob m_watchedJob;           // as watching.json says it
};

} // namespace trellis::launcher
