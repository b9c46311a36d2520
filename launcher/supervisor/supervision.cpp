// Supervisor's supervision (see supervisor.h): naming the first process to fail, the restart
// policy (launch.restart, elastic shrinking), alerts and the Prometheus exposition. The watchdog
// (stalls and hangs) is in watchdog.cpp; supervisor.cpp keeps the launch, the telemetry and the
// process plumbing.
#include "launcher/supervisor/supervisor.h"
#include "launcher/owner_only.h"
#include "launcher/feed/feed_publisher.h"
#include "launcher/job/job_process.h"

#include "launcher/ingest/telemetry_receiver.h"

#include "backend/plan/mesh.h"
#include "backend/plan/plan_json.h"
#include "backend/plan/plan_validate.h"
#include "backend/protocol/exit_codes.h"

#include <QDateTime>
#include <QFile>
#include <QRegularExpression>
#include <QTimer>

#include <cmath>

namespace trellis::launcher {
namespace {

// "python3 train.py --steps 50" (at most 80 characters), for failure messages.
QString commandSummary(const plan::Plan &plan)
{
    QStringList words;
    for (const std::string &w : plan.ownTrainer.command)
        words << QString::fromStdString(w);
    QString text = words.join(QLatin1Char(' '));
    if (text.size() > 80)
        text = text.left(77) + QStringLiteral("...");
    return QStringLiteral("'%1'").arg(text);
}

} // namespace

QString Supervisor::firstFailure(int &rank) const
{
    // mpirun names the first process to fail: "mpirun noticed that process rank 2 with PID 0 on
    // node vm exited on signal 9 (Killed)." or "Process name: [[62347,1],3] / Exit code: 70".
    const auto tail = m_stderrTail.find(-1);
    if (tail == m_stderrTail.end())
        return {};
    QString all;
    for (const QString &line : tail->second)
        all += line + QLatin1Char('\n');
    static const QRegularExpression signal(
        QStringLiteral("process rank (\\d+) with PID \\d+ on node (\\S+) exited on signal (\\d+) \\(([^)]*)\\)"));
    if (const auto m = signal.match(all); m.hasMatch()) {
        rank = m.captured(1).toInt();
        return QStringLiteral("rank %1 on %2 exited on signal %3 (%4)").arg(m.captured(1), m.captured(2), m.captured(3), m.captured(4));
    }
    static const QRegularExpression code(QStringLiteral("Process name: \\[\\[\\d+,\\d+\\],(\\d+)\\]\\s*Exit code:\\s*(\\d+)"));
    if (const auto m = code.match(all); m.hasMatch()) {
        rank = m.captured(1).toInt();
        const auto host = m_hosts.find(rank);
        const int exit = m.captured(2).toInt();
        // A job with its own trainer: the command's codes are its own, except the launcher shim's.
        const bool own = m_plan.ownTrainer.external() && exit != proto::kExitCommandNotFound && exit != proto::kExitCommandNotExecutable && exit < 128;
        const QString meaning = own ? QStringLiteral("failed") : QString::fromUtf8(proto::describeExitCode(exit));
        return QStringLiteral("rank %1 on %2 exited with code %3 (%4)")
            .arg(m.captured(1), host == m_hosts.end() ? QStringLiteral("its node") : host->second, m.captured(2),
                 m_plan.ownTrainer.external() ? QStringLiteral("%1: %2").arg(commandSummary(m_plan), meaning) : meaning);
    }
    return {};
}

void Supervisor::failOrRestart(const QString &cause, int exitCode, const QString &message, int culprit)
{
    if (m_watched) { // nothing here to stop or start again
        watchedHang(message);
        return;
    }
    const plan::RestartPolicy &policy = m_plan.launch.restart;
    const bool retryable = (cause == QLatin1String("crash") && policy.onCrash) ||
                           (cause == QLatin1String("hang") && policy.onHang) ||
                           (cause == QLatin1String("node loss") && policy.onNodeLoss);
    const bool running = m_job && m_job->running();
    const QString firstLine = message.section(QLatin1Char('\n'), 0, 0);
    closeStall(QStringLiteral("ended")); // a stall in progress ends with the job (a hang closed it already)
    finishGathering(); // the checkpoint a restart resumes from, or the run leaves here
    if (!retryable || m_attempt >= policy.maxRestarts || m_stopRequested) {
        QString story = message;
        if (m_attempt > 0)
            story = QStringLiteral("failed after %1 restart%2 (%3); last: %4")
                        .arg(m_attempt)
                        .arg(m_attempt == 1 ? QString() : QStringLiteral("s"))
                        .arg(m_story.join(QStringLiteral("; ")), message);
        if (m_attempt > 0 && m_attempt >= policy.maxRestarts && retryable)
            story = QStringLiteral("restart budget exhausted: ") + story;
        settle(RunState::Failed, exitCode, story);
        if (running)
            terminateProcess();
        return;
    }
    ++m_attempt;
    // The step under way when it failed: one past the highest any rank reported.
    qint64 reported = m_resumedFrom; // an attempt that resumed starts past its checkpoint
    for (const auto &[r, row] : m_latest)
        reported = std::max(reported, row.step);
    // The newest checkpoint the trainer will find: the memory store's where it is newer.
    const bool fromMemory = m_lastMemoryCheckpointStep > m_lastCheckpointStep;
    const qint64 from = std::max(m_lastCheckpointStep, m_lastMemoryCheckpointStep);
    const qint64 lost = std::max<qint64>(0, reported - from);
    QString note = QStringLiteral("restart %1/%2 after %3 in step %4: %5; resuming from %6, %7 step%8 repeated")
                       .arg(m_attempt)
                       .arg(policy.maxRestarts)
                       .arg(cause)
                       .arg(reported + 1)
                       .arg(firstLine)
                       .arg(from > 0 ? (!fromMemory ? QStringLiteral("the checkpoint of step %1")
                                        : m_frozenPlan.cluster.nodes.size() > 1
                                            // each node's copy on the next may lag its own store by a save or two
                                            ? QStringLiteral("the newest in-memory checkpoint whole across the nodes (step %1 at most)")
                                            : QStringLiteral("the in-memory checkpoint of step %1"))
                                           .arg(from)
                                     : QStringLiteral("the start (no checkpoint yet)"))
                       .arg(lost)
                       .arg(lost == 1 ? QString() : QStringLiteral("s"));
    if (policy.elastic && cause != QLatin1String("hang") && culprit >= 0) {
        const QString shrunk = shrinkAroundNodeOf(culprit);
        if (!shrunk.isEmpty())
            note += QStringLiteral("; elastic: ") + shrunk;
    }
    m_story << QStringLiteral("%1 in step %2").arg(cause).arg(reported + 1);
    raiseEvent(QStringLiteral("restart"), culprit, m_progress.step, note);
    m_statusMessage = note;
    emit restarting(m_attempt, note);
    publishStatus();
    m_restartPending = true;
    m_watchdog.stop();
    if (running)
        terminateProcess(); // onProcessFinished relaunches
    else
        scheduleRelaunch();
}

QString Supervisor::localCheckpointDir() const
{
    const std::string &dir = m_frozenPlan.training.checkpoint.dir;
    return dir.empty() ? m_runDir + QStringLiteral("/checkpoints") : QString::fromStdString(dir);
}

void Supervisor::gatherCheckpoint(qint64 step)
{
    if (step <= m_lastCheckpointStep || step <= m_gatheringStep || step <= m_gatherNext)
        return; // every rank reports each checkpoint: gather it once
    if (m_gathering.valid()) {
        m_gatherNext = step; // after the one under way; a newer report replaces it
        return;
    }
    m_gatheringStep = step;
    const LaunchTarget *target = m_target.get();
    m_gathering = std::async(std::launch::async, [this, target, plan = m_plan, step, dir = localCheckpointDir()] {
        QString error = target->gatherCheckpoint(plan, step, dir);
        QMetaObject::invokeMethod(this, [this, step, error] { onCheckpointGathered(step, error); }, Qt::QueuedConnection);
        return error;
    });
}

void Supervisor::onCheckpointGathered(qint64 step, const QString &error)
{
    if (m_gathering.valid() && m_gatheringStep == step)
        m_gathering.get();
    if (error.isEmpty()) {
        m_lastCheckpointStep = std::max(m_lastCheckpointStep, step);
    } else {
        raiseEvent(QStringLiteral("warning"), -1, step,
                   QStringLiteral("%1; a restart resumes from %2")
                       .arg(error, m_lastCheckpointStep > 0 ? QStringLiteral("the checkpoint of step %1").arg(m_lastCheckpointStep)
                                                            : QStringLiteral("the start")));
    }
    if (m_gatherNext > step) {
        const qint64 next = m_gatherNext;
        m_gatherNext = 0;
        gatherCheckpoint(next);
    }
}

void Supervisor::finishGathering()
{
    if (!m_target || !m_target->gathersCheckpoints())
        return;
    // The checkpoint on its way here, then the newest one reported meanwhile (bounded by the
    // target's timeouts): a restart resumes from it, a finished run leaves it here.
    if (m_gathering.valid()) {
        const qint64 step = m_gatheringStep;
        if (const QString error = m_gathering.get(); error.isEmpty())
            m_lastCheckpointStep = std::max(m_lastCheckpointStep, step);
    }
    if (m_gatherNext > m_lastCheckpointStep) {
        const qint64 step = m_gatherNext;
        m_gatherNext = 0;
        m_gatheringStep = step;
        if (const QString error = m_target->gatherCheckpoint(m_plan, step, localCheckpointDir()); error.isEmpty())
            m_lastCheckpointStep = step;
        else
            raiseEvent(QStringLiteral("warning"), -1, step, error);
    }
}

QString Supervisor::spreadCheckpointForRestart()
{
    if (!m_target || !m_target->gathersCheckpoints() || m_plan.ownTrainer.external())
        return {};
    finishGathering();
    if (m_lastCheckpointStep <= 0)
        return {};
    return m_target->spreadCheckpoint(m_plan, m_lastCheckpointStep, localCheckpointDir());
}

void Supervisor::scheduleRelaunch()
{
    const plan::RestartPolicy &policy = m_plan.launch.restart;
    const double backoff = std::min(300.0, policy.backoffS * std::pow(2.0, std::max(0, m_attempt - 1)));
    QTimer::singleShot(static_cast<int>(backoff * 1000), this, [this] {
        if (m_settled)
            return;
        m_restartPending = false;
        m_receiver->stop();
        m_resumedFrom = std::max(m_lastCheckpointStep, m_lastMemoryCheckpointStep); // as the trainer will find it
        if (const QString spread = spreadCheckpointForRestart(); !spread.isEmpty()) {
            settle(RunState::Failed, -1, QStringLiteral("restart %1 could not start: %2").arg(m_attempt).arg(spread));
            return;
        }
        const QString error = launchAttempt(true);
        if (!error.isEmpty())
            settle(RunState::Failed, -1, QStringLiteral("restart %1 could not start: %2").arg(m_attempt).arg(error));
    });
}

QString Supervisor::shrinkAroundNodeOf(int rank)
{
    // The failed rank's node leaves; dp shrinks to what the other nodes hold and the global
    // batch stays, through more micro-batches. Refused (plain restart) when that is impossible.
    plan::Plan next = m_frozenPlan;
    const int node = plan::Mesh::nodeOf(rank, m_plan.cluster);
    if (node < 0 || m_plan.cluster.nodes.size() < 2)
        return {};
    const std::string host = m_plan.cluster.nodes[static_cast<std::size_t>(node)].host;
    next.cluster.nodes.erase(next.cluster.nodes.begin() + node);
    const plan::ParallelSpec &p = m_plan.parallel;
    const int perReplica = p.tp * p.pp * p.cp;
    int dp = std::min(p.dp, next.cluster.totalSlots() / perReplica);
    while (dp > 0 && ((p.dp * p.microBatches) % dp != 0 || dp % p.ep != 0))
        --dp;
    if (dp < 1 || dp == p.dp)
        return {};
    next.parallel.dp = dp;
    next.parallel.microBatches = p.microBatches * p.dp / dp;
    if (plan::hasErrors(plan::validatePlan(next)))
        return {};
    const QString path = m_runDir + QStringLiteral("/plan-attempt-%1.json").arg(m_attempt);
    prepareOwnerOnlyFile(path);
    if (auto saved = plan::savePlanFile(next, path.toStdString()); !saved)
        return {};
    const QString note = QStringLiteral("node %1 (%2) excluded; dp %3 -> %4, micro-batches %5 -> %6")
                             .arg(node)
                             .arg(QString::fromStdString(host))
                             .arg(p.dp)
                             .arg(dp)
                             .arg(p.microBatches)
                             .arg(next.parallel.microBatches);
    m_plan = next;
    m_frozenPlan = next;
    m_frozenPath = path;
    return note;
}

void Supervisor::terminateJob(const QString &message)
{
    failOrRestart(QStringLiteral("hang"), -1, message, -1);
}

void Supervisor::terminateProcess()
{
    if (!m_job || !m_job->running())
        return;
    m_job->terminate();
    JobProcess *job = m_job.get();
    QTimer::singleShot(3000, this, [this, job] {
        if (m_job.get() == job && m_job->running())
            m_job->kill();
    });
}

void Supervisor::raiseEvent(const QString &kind, int rank, qint64 step, const QString &message)
{
    record(EventOp{m_runId, EventRow{rank, step, kind, message, QDateTime::currentDateTimeUtc()}});
    raise(kind, step, message);
}

void Supervisor::raise(const QString &kind, qint64 step, const QString &message)
{
    ++m_alertCounts[kind];
    m_alertSink.deliver(kind, step, message);
    emit alert(kind, message);
    if (m_feed)
        m_feed->alert(kind, message);
}

QByteArray Supervisor::metricsText() const
{
    MetricsText m;
    const QString run = MetricsText::label("run", m_runId);
    auto perRank = [&](const char *name, const char *help, auto value) {
        m.family(name, "gauge", help); // name, type, help
        for (const auto &[rank, row] : m_latest)
            m.sample(name, run + QLatin1Char(',') + MetricsText::label("rank", QString::number(rank)), value(row));
    };
    perRank("trellis_step_seconds", "The rank's latest step time.", [](const StepRow &r) { return r.stepMs / 1000.0; });
    perRank("trellis_compute_seconds", "The rank's latest compute time in a step.", [](const StepRow &r) { return r.computeMs / 1000.0; });
    perRank("trellis_tokens_per_second", "The rank's latest throughput.", [](const StepRow &r) { return r.tokensPerS; });
    perRank("trellis_bubble_seconds", "The rank's latest pipeline bubble in a step.", [](const StepRow &r) { return r.bubbleMs / 1000.0; });
    perRank("trellis_exposed_communication_seconds", "The rank's latest exposed communication in a step.",
            [](const StepRow &r) { return r.commExposedMs / 1000.0; });
    m.family("trellis_heartbeat_age_seconds", "gauge", "Time since the rank's last message.");
    for (const auto &[rank, seen] : m_lastSeenMs)
        m.sample("trellis_heartbeat_age_seconds", run + QLatin1Char(',') + MetricsText::label("rank", QString::number(rank)),
                 (m_clock.elapsed() - seen) / 1000.0);
    m.family("trellis_bus_bandwidth_gbps", "gauge", "The rank's latest bus bandwidth per group and operation (nccl-tests convention).");
    for (const auto &[key, gbps] : m_busGbps)
        m.sample("trellis_bus_bandwidth_gbps",
                 run + QLatin1Char(',') + MetricsText::label("rank", QString::number(std::get<0>(key))) + QLatin1Char(',') +
                     MetricsText::label("group", std::get<1>(key)) + QLatin1Char(',') + MetricsText::label("op", std::get<2>(key)),
                 gbps);
    m.family("trellis_step", "gauge", "The step every rank has finished.");
    m.sample("trellis_step", run, static_cast<double>(m_progress.step));
    m.family("trellis_loss", "gauge", "The loss at that step.");
    m.sample("trellis_loss", run, m_progress.loss);
    m.family("trellis_restarts_total", "counter", "Restarts of the run (launch.restart).");
    m.sample("trellis_restarts_total", run, m_attempt);
    m.family("trellis_alerts_total", "counter", "Alerts raised, by kind.");
    for (const auto &[kind, count] : m_alertCounts)
        m.sample("trellis_alerts_total", run + QLatin1Char(',') + MetricsText::label("kind", kind), count);
    m.family("trellis_running", "gauge", "1 while the run is launching or running.");
    m.sample("trellis_running", run, m_state == RunState::Launching || m_state == RunState::Running ? 1 : 0);
    return m.text();
}

} // namespace trellis::launcher
