// Plain data that crosses the launcher's API: run states and the rows of the run history.
// Shared by the history store, the supervisor, the exporters and the UI.
#pragma once

#include <functional>
#include <vector>

#include <QDateTime>
#include <QList>
#include <QMetaType>
#include <QSet>
#include <QString>
#include <QStringList>

namespace trellis::launcher {

// Whether a run's processes are still there, as whoever owns runs on this machine knows it (the
// run registry, launcher/registry/): the history records runs, it does not own them, so the
// programs that open it hand it this (app/: HistoryDatabase::setRunLiveness(RunRegistry::liveness()) at start-up).
struct RunLiveness {
    // Run ids whose job goes on (its supervisor may have died: someone may adopt it) or whose claim
    // a live process holds (an adopter that has not recorded itself yet).
    std::function<QSet<QString>()> runsWithLiveJobs;
    std::function<bool(qint64 pid)> processAlive;    // a process on this host
};

// A live run's progress as its supervisor, or a follower of its feed, sees it.
struct RunProgress {
    qint64 step = 0;        // highest step every reporting rank has finished
    qint64 totalSteps = 0;
    double loss = 0;        // loss at that step
    double tokensPerS = 0;  // sum over ranks of their latest tokens/s
    double stepMs = 0;      // slowest rank's latest step time
    int ranksReporting = 0;
};

enum class RunState { Idle, Launching, Running, Completed, Failed, Stopped };
QString toString(RunState state);
RunState runStateFromString(const QString &text);

// How a run came to be in the history (schema 17), written by whoever creates it: launched by a
// supervisor (trellis-cli run, the workbench), simulated ranks (trellis-cli simulate), a job Trellis
// did not launch watched by a collector (trellis-cli collect), or a launched run whose supervisor
// died and another took it over (trellis-cli adopt). A launched or adopted run can be launched
// again from its recorded plan; a simulated or collected one cannot.
enum class RunKind { Launched, Simulated, Collected, Adopted };
QString toString(RunKind kind);                       // "launched", "simulated", "collected", "adopted"
bool runKindFromString(const QString &text, RunKind *kind); // false: not a kind
inline bool canLaunchAgain(RunKind kind) { return kind == RunKind::Launched || kind == RunKind::Adopted; }

struct RunSummary {
    qint64 id = 0;        // database row id
    QString runId;        // user-facing id, e.g. 20261122-120501-7f3a
    QString name;
    QString target;
    QString status;
    int worldSize = 0;
    qint64 totalSteps = 0;
    QDateTime startedAt;
    QDateTime endedAt;
    int exitCode = 0;
    QString error;
    qint64 stepsDone = 0;   // highest step any rank reported
    double lastLoss = 0;
    QStringList launchCommands; // each attempt's exact launch command, the first attempt first
    // What a person added (schema 14): a note, tags (sorted), and whether the run is archived
    // (hidden from the list unless asked for).
    QString note;
    QStringList tags;
    bool archived = false;
    // Read from the recorded plan: its name, layout ("dp2 tp2 pp1 cp1"), precision; the host of
    // the process that launched (or watched) the run.
    QString planName, layout, precision, launcherHost;
    // Where the run's files (its folder: plan, logs, output, checkpoints) are: "HOST:FOLDER" of
    // the machine that launched it (schema 15); empty for runs recorded before.
    QString filesAt;
    // Who recorded the run into this history (schema 16): the database role on a server, the user
    // name for a file; empty for runs recorded before.
    QString owner;
    RunKind kind = RunKind::Launched;
    // The run's figures once it ended (computed from its steps, kept in the history): the job's
    // median tokens/s over its steps and the model FLOPs utilisation; < 0: not computed (yet), or
    // for the MFU no datasheet peak (CPUs).
    double tokensPerS = -1, mfu = -1;
    qint64 figuresStep = -1; // stepsDone when the figures were computed; -1: never
    qint64 durationMs() const { return startedAt.isValid() && endedAt.isValid() ? startedAt.msecsTo(endedAt) : -1; }
};

struct RankRow {
    int rank = 0;
    QString host;
    qint64 pid = 0;
    QString device;
    int dp = 0, tp = 0, pp = 0, cp = 0;
    // From its Hello: the precision it trains in, how its kernels run it (e.g. "bf16 GEMMs: onednn
    // (native bf16)"), and its kernel threads.
    QString precision, kernels;
    int threads = 0;
    int exitCode = -1;
    qint64 dropped = 0;
    qint64 receivedSeq = 0;  // messages received in sequence (every seq below arrived and is stored)
    qint64 goodbyeSeq = -1;  // seq of the rank's Goodbye, -1 until it said goodbye
    qint64 lost = 0;         // messages the rank gave up before they were stored (its Skip)
};

struct StepRow {
    int rank = 0;
    qint64 step = 0;
    double stepMs = 0, computeMs = 0, commMs = 0, commExposedMs = 0, bubbleMs = 0, idleMs = 0;
    qint64 tokens = 0;
    double tokensPerS = 0, loss = 0, gradNorm = 0, lr = 0;
    qint64 memParameters = 0, memGradients = 0, memOptimizer = 0, memActivations = 0, memComm = 0, peakRss = 0;
    // Mixed precision: fp32 master weights beside the 16-bit parameters; fp16: the loss scale the
    // step ran with (0: none), updates skipped for overflow so far, and whether this one was.
    qint64 memMaster = 0;
    double lossScale = 0;
    qint64 skippedSteps = 0;
    bool updateSkipped = false;
    // Local updates and gradient compression (parallel.dp_sync, parallel.grad_compression): outer
    // steps so far, the payload bytes this rank all-reduced over dp so far, and what every-step
    // whole-gradient reduction would have (all 0 for every-step training).
    qint64 outerSteps = 0, dpBytes = 0, dpDenseBytes = 0;
    // Checkpoints (training.checkpoint): the step boundary's time on them, outside stepMs;
    // whether a shard was written behind the step; the write time of the save put in place at the
    // boundary (0: none).
    double checkpointMs = 0;
    bool checkpointBehind = false;
    double checkpointWriteMs = 0;
};

// Where a mixture-of-experts model's routers sent one rank's tokens in one step (its StepReport's
// ExpertLoad): tokens[layer · experts + expert], every top-k choice before capacity drops.
struct ExpertLoadRow {
    int rank = 0;
    qint64 step = 0;
    int layers = 0, experts = 0;
    std::vector<qint64> tokens;
    qint64 dropped = 0;
    double auxLoss = 0;
};

struct CollectiveRow {
    int rank = 0;
    qint64 step = 0;
    QString group, op;
    qint64 bytes = 0;
    double ms = 0, busGBps = 0;
    int count = 0;
};

// One timeline span (a pipeline action) of a traced step; times are wall-clock nanoseconds.
struct SpanRow {
    int rank = 0;
    qint64 step = 0;
    QString name;
    qint64 startNs = 0, endNs = 0;
    int microBatch = -1, stage = -1;
};

struct EventRow {
    int rank = -1;
    qint64 step = 0;
    QString kind;
    QString message;
    QDateTime at;
};

// A rank that held the others up for a while (launcher/detectors/stall_tracker.h): named at once,
// a record once it ends — cleared (the run went on), a hang (decided: the job was ended or
// restarted) or ended with the job (a crash, a stop, the end of the run).
struct StallRow {
    int number = 0;          // 1, 2, … in the run
    int attempt = 0;         // the launch attempt it happened in (0: the first)
    QList<int> holders;      // the ranks holding the others up
    QList<int> waiting;      // the ranks waiting for them
    bool silent = false;     // the holders stopped sending (else they stopped moving)
    qint64 step = 0;         // the run's step when it began
    QDateTime startedAt, endedAt;
    qint64 durationMs = 0;
    QString outcome;         // "cleared", "hang", "ended"
    QString what;            // how it was named
};

// "stall 2 cleared after 2.6 s: rank 3 held up ranks 0,1,2 from step 31" — how the events, the
// feed and the report say a stall that ended.
inline QString stallSummary(const StallRow &s)
{
    auto list = [](const QList<int> &ranks) {
        QStringList parts;
        for (int r : ranks)
            parts << QString::number(r);
        return parts.join(QLatin1Char(','));
    };
    const QString holders = (s.holders.size() == 1 ? QStringLiteral("rank ") : QStringLiteral("ranks ")) + list(s.holders);
    const QString waiting = s.waiting.isEmpty() ? QStringLiteral("nobody") : QStringLiteral("ranks ") + list(s.waiting);
    const QString how = s.outcome == QLatin1String("cleared") ? QStringLiteral("cleared") : QStringLiteral("ended (%1)").arg(s.outcome);
    return QStringLiteral("stall %1 %2 after %3 s: %4 held up %5 from step %6")
        .arg(s.number)
        .arg(how)
        .arg(static_cast<double>(s.durationMs) / 1000.0, 0, 'f', 1)
        .arg(holders, waiting)
        .arg(s.step);
}

struct RunData {
    RunSummary run;
    QString planJson;
    QList<RankRow> ranks;
    QList<StepRow> steps; // ordered by step, then rank
    QList<EventRow> events;
    QList<StallRow> stalls; // in the order they began
};

// Counts of the telemetry receiver (launcher/ingest/telemetry_receiver.h) for one run.
struct ReceiverStats {
    quint64 received = 0;   // frames accepted
    quint64 rejected = 0;   // frames that failed validation
    quint64 lost = 0;       // messages a rank gave up before they were stored (its Skip)
    quint64 duplicates = 0; // sequence numbers seen twice (resends of what had arrived)
    quint64 outOfOrder = 0; // arrived after a gap: dropped, and asked for again in order
    quint64 refused = 0;    // connections refused: an unknown CURVE key (also counted in rejected)
    QString lastRejection;
};

} // namespace trellis::launcher

Q_DECLARE_METATYPE(trellis::launcher::RunState)
Q_DECLARE_METATYPE(trellis::launcher::RunSummary)
Q_DECLARE_METATYPE(trellis::launcher::RunData)
