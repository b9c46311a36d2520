// See supervisor.h.
#include "launcher/history_location.h"
#include "launcher/supervisor/supervisor.h"
#include "launcher/supervisor/injected_fault.h"
#include "launcher/owner_only.h"
#include "launcher/targets/launch_target.h"

#include "launcher/ingest/telemetry_receiver.h"
#include "launcher/ingest/telemetry_rows.h"
#include "launcher/feed/feed_publisher.h"
#include "launcher/job/job_process.h"
#include "launcher/supervisor/supervisor_process.h"

#include "backend/plan/plan_validate.h"

#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <cmath>
#include <csignal>

#include "launcher/targets/mpi_command.h"
#include "backend/plan/mesh.h"
#include "backend/plan/plan_json.h"
#include "backend/protocol/exit_codes.h"
#include "backend/protocol/memory_store_path.h"

#include <QSysInfo>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QPointer>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QThread>

#include <unistd.h>

namespace trellis::launcher {

namespace {

constexpr int kTailLines = 40;

} // namespace

Supervisor::Supervisor(HistoryWriter *writer, QObject *parent)
    : QObject(parent), m_writer(writer), m_receiver(std::make_shared<TelemetryReceiver>())
{
    // With a history, a message is acknowledged to its rank once it is committed there.
    m_receiver->setAutoAck(m_writer == nullptr);
    if (m_writer) // the history behind by more than this: the ranks hold their telemetry a while
        m_receiver->setOverloaded([writer = m_writer] { return writer->backlog() > 200000; });
    if (m_writer)
        m_writer->setNoticeCallback([self = QPointer<Supervisor>(this)](const QString &kind, const QString &message) {
            QMetaObject::invokeMethod(
                qApp, [self, kind, message] { if (self) self->historyNotice(kind, message); }, Qt::QueuedConnection);
        });
    m_watchdog.setInterval(250);
    connect(&m_watchdog, &QTimer::timeout, this, &Supervisor::checkWatchdog);
    m_receiver->setNotify([this] {
        // Receiver thread: schedule one drain per batch; coalesce while one is pending.
        if (!m_drainPending.exchange(true))
            QMetaObject::invokeMethod(this, &Supervisor::drainTelemetry, Qt::QueuedConnection);
    });
}

Supervisor::~Supervisor()
{
    if (m_job) {
        m_job->disconnect(this);
        m_job->killAndWait(3000); // destruction only: the event loop is gone by now
    }
    m_receiver->stop();
}

QString Supervisor::defaultTrainerPath(const plan::Plan *forPlan)
{
    const QString env = qEnvironmentVariable("TRELLIS_TRAINER");
    if (!env.isEmpty())
        return env;
    const QString dir = QCoreApplication::applicationDirPath();
    // A plan on CUDA devices takes the CUDA build of the trainer where one was built beside.
    if (forPlan && !forPlan->cluster.nodes.empty() && forPlan->cluster.nodes.front().device == plan::DeviceKind::Cuda &&
        QFileInfo(dir + QStringLiteral("/trellis-trainer-cuda")).isExecutable())
        return dir + QStringLiteral("/trellis-trainer-cuda");
    return dir + QStringLiteral("/trellis-trainer");
}

plan::Plan Supervisor::withAbsolutePaths(const plan::Plan &thePlan, const QString &planPath)
{
    plan::Plan out = thePlan;
    const QString base = planPath.isEmpty() ? QDir::currentPath() : QFileInfo(planPath).absolutePath();
    for (std::string *path : {&out.training.data.path, &out.training.checkpoint.dir, &out.training.init.from})
        if (!path->empty() && QFileInfo(QString::fromStdString(*path)).isRelative())
            *path = QDir::cleanPath(base + QLatin1Char('/') + QString::fromStdString(*path)).toStdString();
    // A job with its own trainer runs in the plan's folder here (on other hosts: as the plan says,
    // relative to the rank's run folder there).
    if (out.ownTrainer.external() && out.launch.target == plan::LaunchTarget::Local &&
        QFileInfo(QString::fromStdString(out.ownTrainer.dir)).isRelative())
        out.ownTrainer.dir = QDir::cleanPath(base + QLatin1Char('/') + QString::fromStdString(out.ownTrainer.dir)).toStdString();
    return out;
}

QString Supervisor::newRunId()
{
    // The time, readable and sorting as runs started, and 32 bits from the system's random source:
    // runs of a team's several users and machines share one history (a PostgreSQL server), where
    // two launched in the same second must still differ (run_id is UNIQUE there too).
    return QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss")) + QLatin1Char('-') +
           QString::number(QRandomGenerator::system()->generate(), 16).rightJustified(8, QLatin1Char('0'));
}

ReceiverStats Supervisor::receiverStats() const { return m_receiver->stats(); }

QString Supervisor::start(const plan::Plan &thePlan, const QString &planPath, const RunOptions &options)
{
    if (m_state == RunState::Launching || m_state == RunState::Running)
        return QStringLiteral("a run is already in progress (%1)").arg(m_runId);
    // What the trainer cannot run is refused here, before any process starts.
    if (const plan::Diagnostics unsupported = plan::checkTrainerSupport(thePlan); !unsupported.empty())
        return QString::fromStdString(unsupported.front().toString()) +
               (unsupported.size() > 1 ? QStringLiteral(" (and %1 more)").arg(unsupported.size() - 1) : QString());
    const QString trainer = options.trainerPath.isEmpty() ? defaultTrainerPath(&thePlan) : options.trainerPath;
    if (options.jobProgram.isEmpty() && !QFileInfo(trainer).isExecutable())
        return QStringLiteral("trainer not found or not executable: %1").arg(trainer);
    if (QString error; trainerArgsForAttempt(options.extraTrainerArgs, 1, error), !error.isEmpty())
        return error;

    const QString runsDir = runsDirectory(options);
    const QString runId = options.runId.isEmpty() ? newRunId() : options.runId;
    if (const QString e = beginSession(thePlan, runId, runsDir + QLatin1Char('/') + runId, options, trainer); !e.isEmpty())
        return e;
    // The ranks read a frozen copy of the plan, with relative data paths made absolute, so
    // editing the plan during a run changes nothing and the history keeps what really ran.
    if (!makeOwnerOnlyPath(m_runDir))
        return QStringLiteral("cannot create run folder %1").arg(m_runDir);
    const plan::Plan frozen = withAbsolutePaths(thePlan, planPath);
    const QString frozenPath = m_runDir + QStringLiteral("/plan.json");
    prepareOwnerOnlyFile(frozenPath);
    if (auto saved = plan::savePlanFile(frozen, frozenPath.toStdString()); !saved)
        return QString::fromStdString(saved.errorText());
    m_frozenPath = frozenPath;
    m_frozenPlan = frozen;

    // The launch target checks its hosts and puts the run's files there before anything starts.
    if (const QString e = prepareTarget(frozen, trainer, options); !e.isEmpty())
        return e;
    record(NewRunOp{m_runId, QString::fromStdString(thePlan.name), QString::fromStdString(plan::planToJson(frozen)),
                    QString::fromUtf8(plan::toString(thePlan.launch.target)), thePlan.parallel.worldSize(),
                    thePlan.training.steps, QDateTime::currentDateTimeUtc(), QSysInfo::machineHostName() + QLatin1Char(':') + m_runDir,
                    options.kind});
    m_settled = false;
    const QString error = launchAttempt(false);
    if (!error.isEmpty()) {
        settle(RunState::Failed, -1, error);
        return error;
    }
    return {};
}

// Run folders live beside the history database they belong to, unless the options name a place.
QString Supervisor::runsDirectory(const RunOptions &options) const { return runsDirectoryFor(options, m_writer); }

QString Supervisor::runsDirectoryFor(const RunOptions &options, const HistoryWriter *writer)
{
    if (!options.runsDirectory.isEmpty())
        return options.runsDirectory;
    return (writer ? historyLocalFolder(writer->path()) : QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)) +
           QStringLiteral("/runs");
}

QString Supervisor::beginSession(const plan::Plan &thePlan, const QString &runId, const QString &runDir,
                                    const RunOptions &options, const QString &trainer)
{
    ownerOnlyUmask(); // what the run and its processes write is the owner's alone
    m_plan = thePlan;
    m_runId = runId;
    m_runDir = runDir;
    m_options = options;
    m_trainer = trainer;
    m_hangTimeoutS = options.hangTimeoutS > 0 ? options.hangTimeoutS : thePlan.launch.hangTimeoutS;
    // The run's stalls and what it learns of its step times, kept across its restarts.
    m_hangConfirmS = options.hangConfirmS > 0 ? options.hangConfirmS : thePlan.launch.hangConfirmS;
    m_stalls = StallTracker(HangRule{static_cast<std::int64_t>(m_hangConfirmS) * 1000, thePlan.launch.hangStepFactor,
                                     static_cast<std::int64_t>(m_hangTimeoutS) * 1000});
    m_stderrTail.clear();
    m_latest.clear();
    m_phase.clear();
    m_logs.clear();
    m_partial[0].clear();
    m_partial[1].clear();
    m_progress = {};
    m_progress.totalSteps = thePlan.training.steps;
    m_exitCode = 0;
    m_failure.clear();
    m_stopRequested = false;
    m_attempt = 0;
    m_watched = m_watchedLocal = m_watchedHangRaised = m_watchPaused = m_resumed = false;
    m_watchedJob = {};
    m_goodbyes.clear();
    m_story.clear();
    m_restartPending = false;
    m_lastCheckpointStep = 0;
    m_lastMemoryCheckpointStep = 0;
    m_resumedFrom = 0;
    if (m_gathering.valid())
        m_gathering.wait();
    m_gathering = {};
    m_gatheringStep = 0;
    m_gatherNext = 0;
    m_firstTelemetryMs = -1;
    m_alertCounts.clear();
    m_busGbps.clear();
    m_divergence = DivergenceDetector();
    m_alertSink.configure(thePlan.launch.alerts, m_runId);
    m_metrics.reset();
    if (options.metricsPort >= 0) {
        m_metrics = std::make_unique<MetricsEndpoint>([this] { return metricsText(); }, this);
        if (const QString error = m_metrics->listen(static_cast<quint16>(options.metricsPort)); !error.isEmpty())
            return error;
    }
    return {};
}

void Supervisor::resetDetectors()
{
    m_hangs = std::make_unique<HangDetector>(m_plan, m_plan.telemetry.heartbeatMs, qint64(m_hangTimeoutS) * 1000);
    m_stragglers = std::make_unique<StragglerDetector>();
    m_pids.clear();
    m_latest.clear();
    m_phase.clear();
    m_clock.start();
}

TargetOptions Supervisor::targetOptionsFor(const QString &trainer, const RunOptions &options, const QString &runDir)
{
    TargetOptions targetOptions;
    targetOptions.trainerPath = trainer;
    targetOptions.mpirunPath = options.mpirunPath;
    targetOptions.workDir = runDir;
    targetOptions.cliPath = supervisorProgram();
    return targetOptions;
}

QString Supervisor::prepareTarget(const plan::Plan &frozen, const QString &trainer, const RunOptions &options)
{
    m_target.reset();
    m_telemetryBind.clear();
    m_receiver->setCurve({});
    const TargetOptions targetOptions = targetOptionsFor(trainer, options, m_runDir);
    QString error;
    plan::Plan targetPlan = frozen;
    if (!options.jobProgram.isEmpty())
        targetPlan.launch.target = plan::LaunchTarget::Local; // the simulator runs here
    m_target = makeLaunchTarget(targetPlan, targetOptions, error);
    if (!m_target)
        return error;
    if (targetPlan.launch.target == plan::LaunchTarget::Local)
        return {}; // mpirun here (checked at its start), telemetry on the run's private socket
    const Preflight preflight = m_target->preflight();
    QFile table(m_runDir + QStringLiteral("/preflight.txt"));
    if (table.open(QIODevice::WriteOnly | QIODevice::Truncate, kOwnerOnlyFile))
        table.write(preflight.table().toUtf8());
    if (!preflight.passed())
        return QStringLiteral("preflight failed, nothing was started:\n%1").arg(preflight.failures());
    TelemetryRoute route;
    if (const QString e = m_target->prepareTelemetry(route); !e.isEmpty())
        return e;
    if (route.keys.hasServer()) {
        // Kept in the run folder (0600) for a supervisor that adopts the run later.
        if (const std::string e = proto::writeCurveKeys((m_runDir + QStringLiteral("/telemetry.keys")).toStdString(), route.keys); !e.empty())
            return QString::fromStdString(e);
        m_receiver->setCurve(route.keys);
    }
    m_telemetryBind = route.bind;
    if (const QString e = m_target->stage({m_runId, frozen, trainer, route.keys.forRanks()}); !e.isEmpty())
        return QStringLiteral("staging the run on its hosts failed, nothing was started:\n%1").arg(e);
    return {};
}

QString Supervisor::launchAttempt(bool resume)
{
    // This attempt's ranks number their telemetry from 0 again.
    if (m_writer)
        record(CursorOp{m_runId, {}, {}, true, {}});
    const std::string bind = !m_telemetryBind.empty() ? m_telemetryBind : m_options.telemetryEndpoint;
    const QString receiverError =
        bind.empty() ? m_receiver->start(m_runId.toStdString(), static_cast<quint32>(m_plan.parallel.worldSize()))
                     : m_receiver->start(m_runId.toStdString(), static_cast<quint32>(m_plan.parallel.worldSize()), bind);
    if (!receiverError.isEmpty())
        return receiverError;
    if (!m_telemetryBind.empty()) {
        // A remote run's endpoint (its port chosen now), for a supervisor that adopts the run.
        m_telemetryBind = m_receiver->endpoint();
        QFile endpointFile(m_runDir + QStringLiteral("/telemetry.endpoint"));
        if (endpointFile.open(QIODevice::WriteOnly | QIODevice::Truncate, kOwnerOnlyFile))
            endpointFile.write(QByteArray::fromStdString(m_telemetryBind) + '\n');
    }
    resetDetectors();
    m_batchJob = {};

    LaunchRequest request;
    request.mpirunPath = m_options.mpirunPath;
    request.trainerPath = m_trainer;
    request.planPath = m_frozenPath;
    request.runId = m_runId;
    request.endpoint = QString::fromStdString(m_receiver->endpoint());
    // An injected fault reaches the attempts it names (the first only, unless it says otherwise).
    QString injectError;
    request.extraTrainerArgs = trainerArgsForAttempt(m_options.extraTrainerArgs, m_attempt + 1, injectError);
    if (resume)
        request.extraTrainerArgs << QStringLiteral("--resume");
    if (m_plan.ownTrainer.external()) {
        // torchrun's rendezvous port, chosen again for every attempt (the last one's may linger in
        // TIME_WAIT); the checkpoint folder the script resumes from after a restart.
        request.masterPort = freeLocalPort();
        request.restartCount = m_attempt;
        request.checkpointDir = !m_frozenPlan.training.checkpoint.dir.empty() ? QString::fromStdString(m_frozenPlan.training.checkpoint.dir)
                                : m_plan.launch.target == plan::LaunchTarget::Local ? m_runDir + QStringLiteral("/checkpoints")
                                                                                     : QStringLiteral("checkpoints");
    }
    request.availableCores = QThread::idealThreadCount();
    request.runningAsRoot = geteuid() == 0;
    // A job with its own trainer takes its folder and checkpoint folder from the frozen plan (made
    // absolute against the plan's folder); trellis-trainer reads that plan itself.
    LaunchCommand command = m_target->command(m_plan.ownTrainer.external() ? m_frozenPlan : m_plan, request);
    if (!m_options.jobProgram.isEmpty()) {
        command.program = m_options.jobProgram;
        command.arguments = m_options.jobArguments;
        command.arguments << QStringLiteral("--endpoint") << request.endpoint << QStringLiteral("--run-id") << m_runId;
    }
    m_commandLine = command.displayString();
    record(LaunchCommandOp{m_runId, m_commandLine}); // the run's record keeps what each attempt ran

    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (auto it = command.environment.begin(); it != command.environment.end(); ++it)
        env.insert(it.key(), it.value());
    // mpirun runs under the job keeper, not as this process's child directly: if this supervisor
    // dies, the job goes on (its telemetry kept by the ranks) until another supervisor adopts it.
    m_job = std::make_unique<JobProcess>();
    connectJob();
    setState(RunState::Launching);
    m_sinceProgress.start();
    m_goodbyes.clear(); // this attempt's
    m_watchdog.start();
    m_job->start(supervisorProgram(), m_runDir, command.program, command.arguments, env);
    emit jobStarted(m_job->keeperPid(), m_attempt);
    return {};
}

void Supervisor::stop()
{
    if (m_watched)
        return; // not launched here: its own launcher stops it
    if (m_restartPending && (!m_job || !m_job->running())) {
        m_restartPending = false; // waiting out the backoff: nothing to terminate
        m_stopRequested = true;
        settle(RunState::Stopped, -1, QStringLiteral("stopped by the user while restarting"));
        return;
    }
    if (!m_job || !m_job->running())
        return;
    m_stopRequested = true;
    m_job->terminate(); // the keeper forwards SIGTERM to mpirun, mpirun to every rank
    JobProcess *job = m_job.get();
    // A Slurm job is cancelled through the controller (scancel, then its KillWait): give it longer.
    const int graceMs = m_plan.launch.target == plan::LaunchTarget::Slurm ? 90000 : 5000;
    QTimer::singleShot(graceMs, this, [this, job] {
        if (m_job.get() == job && m_job->running())
            m_job->kill();
    });
}

QStringList Supervisor::lastLines(int rank, int count) const
{
    QStringList out;
    auto it = m_stderrTail.find(rank);
    if (it == m_stderrTail.end())
        return out;
    const auto &lines = it->second;
    for (auto i = lines.size() > static_cast<std::size_t>(count) ? lines.size() - count : 0; i < lines.size(); ++i)
        out << lines[i];
    return out;
}

void Supervisor::setState(RunState state)
{
    if (m_state == state)
        return;
    m_state = state;
    if (state == RunState::Running) {
        if (m_firstTelemetryMs < 0)
            m_firstTelemetryMs = m_clock.elapsed(); // launch (this attempt's mpirun start) to a rank's first message
        record(RunStatusOp{m_runId, toString(state), {}, {}, 0});
    }
    emit stateChanged(state);
    publishStatus();
}

void Supervisor::record(WriteOp op)
{
    if (m_writer)
        m_writer->enqueue(std::move(op));
}

void Supervisor::handleLine(const QString &rawLine, bool isStderr, bool replay)
{
    // --tag-output lines look like "[1,3]<stderr>:message"; untagged lines are mpirun's own.
    static const QRegularExpression tag(QStringLiteral("^\\[(\\d+),(\\d+)\\]<(stdout|stderr)>:(.*)$"));
    int rank = -1;
    QString line = rawLine;
    if (const auto m = tag.match(rawLine); m.hasMatch()) {
        rank = m.captured(2).toInt();
        isStderr = m.captured(3) == QLatin1String("stderr");
        line = m.captured(4);
    }
    if (replay) { // output of an adopted job from before: only for failure messages
        if (isStderr || rank < 0) {
            auto &tail = m_stderrTail[rank];
            tail.push_back(line);
            if (tail.size() > kTailLines)
                tail.pop_front();
        }
        return;
    }
    auto &log = m_logs[rank];
    if (!log) {
        log = std::make_unique<QFile>(m_runDir + (rank < 0 ? QStringLiteral("/mpirun.log") : QStringLiteral("/rank-%1.log").arg(rank)));
        if (!log->open(QIODevice::WriteOnly | QIODevice::Append, kOwnerOnlyFile))
            log.reset();
    }
    if (log)
        log->write((isStderr ? QStringLiteral("E ") : QStringLiteral("O ")).toUtf8() + line.toUtf8() + '\n');
    const bool batchJobLine = rank < 0 && !isStderr && line.startsWith(QLatin1String("[slurm] "));
    if ((isStderr || rank < 0) && !batchJobLine) { // the job's state lines end up in the failure message anyway
        auto &tail = m_stderrTail[rank];
        tail.push_back(line);
        if (tail.size() > kTailLines)
            tail.pop_front();
    }
    emit outputLine(rank, isStderr, line);
    if (m_feed)
        m_feed->output(rank, isStderr, line);
    if (batchJobLine)
        if (const auto slurm = parseSlurmLine(line))
            onSlurmLine(*slurm);
}

void Supervisor::onSlurmLine(const SlurmLine &line)
{
    const bool wasWaiting = batchJobWaiting();
    m_batchJob = line;
    // Waiting in the queue is not a hang: the clock for "no rank reported" starts when the job runs.
    if (wasWaiting && !batchJobWaiting())
        m_sinceProgress.restart();
    m_statusMessage = batchJobWaiting() ? queueText() : QString();
    const QString what = line.detail.isEmpty() ? QStringLiteral("Slurm job %1 %2").arg(line.jobId, line.state.toLower()) : line.detail;
    record(EventOp{m_runId, EventRow{-1, m_progress.step, QStringLiteral("slurm"), what, QDateTime::currentDateTimeUtc()}});
    emit batchJobChanged(line.state, what);
    publishStatus();
}

bool Supervisor::batchJobWaiting() const
{
    if (m_batchJob.jobId.isEmpty() && m_batchJob.state.isEmpty())
        return false;
    static const QStringList waiting{QStringLiteral("SUBMITTED"), QStringLiteral("PENDING"), QStringLiteral("CONFIGURING"),
                                     QStringLiteral("REQUEUED"), QStringLiteral("RESV_DEL_HOLD"), QStringLiteral("SUSPENDED")};
    return waiting.contains(m_batchJob.state);
}

QString Supervisor::queueText() const
{
    if (m_batchJob.state.isEmpty())
        return {};
    QString text = QStringLiteral("Slurm job %1 %2").arg(m_batchJob.jobId, m_batchJob.state.toLower());
    if (m_batchJob.state == QLatin1String("PENDING")) {
        if (!m_batchJob.reason.isEmpty() && m_batchJob.reason != QLatin1String("-") && m_batchJob.reason != QLatin1String("None"))
            text += QStringLiteral(": %1").arg(m_batchJob.reason);
        if (m_batchJob.position > 0)
            text += QStringLiteral(", position %1 of %2 in the queue").arg(m_batchJob.position).arg(m_batchJob.queued);
    } else if (!m_batchJob.nodes.isEmpty() && m_batchJob.nodes != QLatin1String("-")) {
        text += QStringLiteral(" on %1").arg(m_batchJob.nodes);
    }
    return text;
}

void Supervisor::connectJob()
{
    connect(m_job.get(), &JobProcess::output, this, &Supervisor::onOutput);
    connect(m_job.get(), &JobProcess::finished, this, &Supervisor::onProcessFinished);
    connect(m_job.get(), &JobProcess::failedToStart, this,
            [this](const QString &why) { settle(RunState::Failed, -1, why); });
}

void Supervisor::onOutput(bool isStderr, const QByteArray &data, bool replay)
{
    const int index = isStderr ? 1 : 0;
    m_partial[index] += data;
    qsizetype newline;
    while ((newline = m_partial[index].indexOf('\n')) >= 0) {
        const QString line = QString::fromUtf8(m_partial[index].left(newline));
        m_partial[index].remove(0, newline + 1);
        handleLine(line, index == 1, replay);
    }
}

void Supervisor::onProcessFinished(int exitCode, bool crashed)
{
    for (int i = 0; i < 2; ++i)
        if (!m_partial[i].isEmpty()) {
            handleLine(QString::fromUtf8(m_partial[i]), i == 1);
            m_partial[i].clear();
        }
    // The ranks flushed their telemetry before exiting; give the socket a moment to hand over
    // what is in flight, then settle — at once when every rank's Goodbye is in: each rank's stream
    // is in order and ends with it, so nothing of theirs is still on the way.
    const bool everyGoodbyeIn = static_cast<int>(m_goodbyes.size()) >= m_plan.parallel.worldSize();
    QTimer::singleShot(everyGoodbyeIn ? 0 : 300, this, [this, exitCode, crashed] {
        drainTelemetry();
        if (m_restartPending) {
            scheduleRelaunch();
            return;
        }
        if (m_settled)
            return;
        if (m_stopRequested) {
            settle(RunState::Stopped, exitCode, QStringLiteral("stopped by the user"));
        } else if (!crashed && exitCode == 0) {
            settle(RunState::Completed, 0, QStringLiteral("completed %1 steps").arg(m_progress.step));
        } else {
            const int code = exitCode;
            // A job with its own trainer: its codes are its own (the shim's 126/127 and signals aside).
            const bool own = m_plan.ownTrainer.external() && code < 126;
            QString message = QStringLiteral("exit code %1 (%2)").arg(code).arg(own ? QStringLiteral("the command failed")
                                                                                 : QString::fromUtf8(proto::describeExitCode(code)));
            QStringList lines;
            for (const auto &[rank, tail] : m_stderrTail) {
                for (auto i = tail.size() > 5 ? tail.size() - 5 : 0; i < tail.size(); ++i) {
                    if (tail[i].trimmed().isEmpty() || tail[i].startsWith(QLatin1String("----")))
                        continue;
                    lines << (rank < 0 ? QStringLiteral("mpirun: ") : QStringLiteral("rank %1: ").arg(rank)) + tail[i];
                }
            }
            int culprit = -1;
            const QString first = firstFailure(culprit);
            if (!first.isEmpty())
                message += QStringLiteral(": ") + first;
            // A batch job's end as Slurm tells it comes first (time limit, node failure, cancelled).
            QString cause = QStringLiteral("crash");
            if (!m_batchJob.detail.isEmpty() && isFinalSlurmState(m_batchJob.state)) {
                message = m_batchJob.detail + QStringLiteral("; ") + message;
                if (m_batchJob.state == QLatin1String("NODE_FAIL"))
                    cause = QStringLiteral("node loss");
            } else if (m_batchJob.state == QLatin1String("SUBMIT_FAILED")) {
                message = m_batchJob.detail;
            }
            if (!lines.isEmpty())
                message += QStringLiteral("\n") + lines.mid(std::max<qsizetype>(0, lines.size() - 12)).join(QLatin1Char('\n'));
            failOrRestart(cause, code, message, culprit);
        }
    });
}

// The run is over for good (completed, failed, stopped): the shared memory its in-memory
// checkpoints took is given back. On this machine the store is removed here, which ends its holder
// (a completed run's trainer asked it already). On remote hosts (ssh) each host is asked to give its
// store back (LaunchTarget::releaseMemoryCheckpoints) unless the run completed — its ranks' done
// marker did that; a host that cannot be reached keeps its store until its holder's lease runs out
// (backend/trainer/checkpoint/memory_store.h), and the run says so. Slurm's nodes are left to the
// lease: the allocation is gone when the job is.
void Supervisor::releaseMemoryStores(RunState state)
{
    if (!m_frozenPlan.training.checkpoint.memory.given || m_watched)
        return;
    if (m_plan.launch.target != plan::LaunchTarget::Local) {
        if (state == RunState::Completed || !m_target)
            return;
        if (const QString e = m_target->releaseMemoryCheckpoints(m_frozenPlan); !e.isEmpty())
            raiseEvent(QStringLiteral("warning"), -1, m_progress.step,
                       QStringLiteral("in-memory checkpoints not given back on every host (%1): they go when their lease (%2 s) runs out")
                           .arg(e)
                           .arg(proto::kMemoryStoreLeaseS));
        return;
    }
    const QString store = QString::fromLatin1(proto::kMemoryStoreRoot) + QLatin1Char('/') +
                          QString::fromStdString(proto::memoryStoreName(localCheckpointDir().toStdString()));
    if (QFileInfo(store).isDir() && !QFileInfo(store).isSymLink())
        QDir(store).removeRecursively();
}

void Supervisor::settle(RunState state, int exitCode, const QString &message)
{
    if (m_settled)
        return;
    // A run that completed: every rank finished every step, so whatever held it up moved on — a stall
    // still open cleared (its last steps can end the job before the watchdog looks again, a step
    // after a 5 s stall on a loaded machine: it was recorded "ended"). Else it ended with the job.
    closeStall(state == RunState::Completed ? QStringLiteral("cleared") : QStringLiteral("ended"));
    finishGathering(); // every checkpoint the ranks reported is here before the run ends
    releaseMemoryStores(state);
    if (state == RunState::Failed)
        raise(QStringLiteral("failure"), m_progress.step, message.section(QLatin1Char('\n'), 0, 0));
    m_settled = true;
    m_watchdog.stop();
    if (m_watched && !m_watchPaused)
        QFile::remove(m_runDir + QStringLiteral("/watching.json")); // ended for good: no collector takes it up again
    m_exitCode = exitCode;
    if (state != RunState::Completed)
        m_failure = message;
    // A job with its own trainer said how many steps it takes (the plan's training.steps is a default).
    record(RunStatusOp{m_runId, toString(state), state == RunState::Completed ? QString() : message,
                       QDateTime::currentDateTimeUtc(), exitCode, m_plan.ownTrainer.external() ? m_progress.totalSteps : -1});
    if (state == RunState::Failed) {
        EventRow e;
        e.kind = QStringLiteral("failure");
        e.step = m_progress.step;
        e.message = message;
        e.at = QDateTime::currentDateTimeUtc();
        record(EventOp{m_runId, e});
    }
    for (auto &[rank, log] : m_logs)
        if (log)
            log->flush();
    m_receiver->stop();
    setState(state);
    m_statusMessage = message;
    m_statusTimer.stop();
    publishStatus();
    emit finished(state, exitCode, message);
}

} // namespace trellis::launcher
