// Supervisor's supervision (see supervisor.h): the watchdog that turns the hang detector's
// reports into actions, naming the first process to fail, the restart policy (launch.restart,
// elastic shrinking), alerts and the Prometheus exposition. Split from supervisor.cpp, which
// keeps the launch, the telemetry and the process plumbing.
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

// How long every rank behind a node relay may be silent together before it is a hang: its ranks
// start a dead relay again after 2 resend intervals (4 s) without acknowledgements, and after
// three failed starts send to the supervisor directly (backend/trainer/telemetry/node_relay.h).
constexpr std::int64_t kRelayRecoveryMs = 12000;

// Linux /proc: whether a local pid is gone, or stopped (SIGSTOP, state T). Remote ranks' pids
// mean nothing here: a pid that does not exist locally is "gone" only if the rank runs here,
// which the local launcher's ranks do.
bool localProcessGone(qint64 pid)
{
    return pid > 0 && !QFile::exists(QStringLiteral("/proc/%1").arg(pid));
}

bool localProcessStopped(qint64 pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (pid <= 0 || !stat.open(QIODevice::ReadOnly))
        return false;
    const QByteArray text = stat.readAll();
    const int close = text.lastIndexOf(')');
    return close > 0 && close + 2 < text.size() && (text[close + 2] == 'T' || text[close + 2] == 't');
}

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
    const plan::RestartPolicy &policy = m_plan.launch.restart;
    const bool retryable = (cause == QLatin1String("crash") && policy.onCrash) ||
                           (cause == QLatin1String("hang") && policy.onHang) ||
                           (cause == QLatin1String("node loss") && policy.onNodeLoss);
    const bool running = m_job && m_job->running();
    const QString firstLine = message.section(QLatin1Char('\n'), 0, 0);
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
    const qint64 lost = std::max<qint64>(0, reported - m_lastCheckpointStep);
    QString note = QStringLiteral("restart %1/%2 after %3 in step %4: %5; resuming from %6, %7 step%8 repeated")
                       .arg(m_attempt)
                       .arg(policy.maxRestarts)
                       .arg(cause)
                       .arg(reported + 1)
                       .arg(firstLine)
                       .arg(m_lastCheckpointStep > 0 ? QStringLiteral("the checkpoint of step %1").arg(m_lastCheckpointStep)
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
        m_resumedFrom = m_lastCheckpointStep; // the newest complete checkpoint, as the trainer will find it
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

void Supervisor::checkWatchdog()
{
    if (m_settled || m_state == RunState::Idle)
        return;
    // While this supervisor holds telemetry back (its history writer is behind), heartbeats wait
    // in the ranks' links: silence then says nothing about the ranks, so hangs are not judged.
    // Behind also while more rows wait than half a second of 1024 ranks' at 20 Hz, or two steps of
    // every rank's (a step report, a collective and a heartbeat each: at 16,384 ranks one step is
    // 16,384 step rows, which a fixed 20,000 would call behind all the time): after holding back,
    // the backlog drains for a while, and the ranks' heartbeats wait in it.
    const qint64 throttled = m_receiver->msSinceThrottled();
    const std::size_t backlogLimit = std::max<std::size_t>(20000, 6 * static_cast<std::size_t>(std::max(1, m_plan.parallel.worldSize())));
    const bool behind = (throttled >= 0 && throttled < 15000) || (m_writer && m_writer->backlog() > backlogLimit);
    if (behind && !m_behindNoted) {
        m_behindNoted = true;
        raiseEvent(QStringLiteral("backlog"), -1, m_progress.step,
                   QStringLiteral("the supervisor is behind: its history writer has %1 rows waiting, so the ranks hold their "
                                  "telemetry until it catches up (nothing is lost; hang detection waits meanwhile)")
                       .arg(m_writer ? m_writer->backlog() : 0));
    } else if (!behind && m_behindNoted) {
        m_behindNoted = false;
    }
    if (batchJobWaiting()) { // queued in Slurm: nothing runs that could hang
        m_sinceProgress.restart();
        return;
    }
    if (m_hangs && m_state == RunState::Running && !behind) {
        drainTelemetry(); // judge on everything that has arrived
        const std::int64_t wallNs = QDateTime::currentMSecsSinceEpoch() * 1000000;
        if (const auto report = m_hangs->check(m_clock.elapsed(), wallNs)) {
            const bool remote = m_plan.launch.target != plan::LaunchTarget::Local;
            bool gone = false;
            const bool patient = silenceExcused(*report, gone);
            if (!patient && (!gone || (m_silentSinceMs >= 0 && m_clock.elapsed() - m_silentSinceMs > 3000))) {
                QString message = QStringLiteral("hang: ") + QString::fromStdString(report->message);
                QString cause = QStringLiteral("hang");
                if (!remote) {
                    for (int rank : report->culprits)
                        if (m_pids.count(rank) && localProcessStopped(m_pids[rank]))
                            message += QStringLiteral(" [rank %1's process is stopped]").arg(rank);
                } else if (report->silent) {
                    // Every rank of a host silent while other hosts' ranks still answer: the host
                    // is gone (down, or off the network) — a node loss, which restarts can leave out.
                    std::map<QString, std::pair<int, int>> perHost; // host -> (ranks, silent ranks)
                    for (const auto &[rank, host] : m_hosts)
                        ++perHost[host].first;
                    for (int rank : report->culprits)
                        if (m_hosts.count(rank))
                            ++perHost[m_hosts[rank]].second;
                    QStringList lost;
                    for (const auto &[host, count] : perHost)
                        if (count.first > 0 && count.first == count.second)
                            lost << host;
                    if (!lost.isEmpty() && lost.size() < static_cast<int>(perHost.size())) {
                        cause = QStringLiteral("node loss");
                        message = QStringLiteral("node loss: %1 stopped answering (every rank there silent, the others alive): %2")
                                      .arg(lost.join(QStringLiteral(", ")), QString::fromStdString(report->message));
                    }
                }
                const int culprit = report->culprits.empty() ? -1 : report->culprits.front();
                raiseEvent(QStringLiteral("hang"), culprit, m_progress.step, message);
                failOrRestart(cause, -1, message, culprit);
                return;
            }
            if (gone && m_silentSinceMs < 0)
                m_silentSinceMs = m_clock.elapsed();
        }
    }
    if (m_sinceProgress.elapsed() < qint64(m_hangTimeoutS) * 1000)
        return;
    QString where;
    for (const auto &[rank, phase] : m_phase)
        if (!m_latest.count(rank) || m_latest[rank].step <= m_progress.step)
            where += QStringLiteral(" rank %1 in '%2';").arg(rank).arg(phase);
    const QString message = m_state == RunState::Launching
                                ? QStringLiteral("hang: no rank reported within %1 s of launch").arg(m_hangTimeoutS)
                                : QStringLiteral("hang: no step finished for %1 s after step %2;%3")
                                      .arg(m_hangTimeoutS)
                                      .arg(m_progress.step)
                                      .arg(where);
    terminateJob(message);
}

bool Supervisor::silenceExcused(const HangReport &report, bool &gone) const
{
    // A silent rank whose process is gone crashed: mpirun reports how (exit code, signal) in a
    // moment; the caller gives it 3 s before calling it a hang.
    // Silent local ranks whose processes all run normally (neither stopped nor gone) are not
    // hung: their heartbeats come from a thread of their own, so what keeps them quiet is their
    // telemetry's path (a relay being started again) or a machine that keeps them off its cores
    // (seconds at a time on a loaded VM). Whether they still train, the step timeout
    // (launch.hang_timeout_s) decides.
    // Only this machine's ranks can be looked at as processes: a remote rank's pid means nothing here.
    const bool remote = m_plan.launch.target != plan::LaunchTarget::Local;
    bool allRunningNormally = report.silent && !remote && !report.culprits.empty();
    gone = false;
    if (report.silent && !remote)
        for (int rank : report.culprits) {
            const auto pid = m_pids.find(rank);
            const bool known = pid != m_pids.end();
            gone = gone || (known && localProcessGone(pid->second));
            allRunningNormally = allRunningNormally && known && !localProcessGone(pid->second) && !localProcessStopped(pid->second);
        }
    // A remote rank cannot be looked at: give a short silence (a loaded host, a slow link) 5 s.
    // Every rank behind a node relay silent together: the relay died, and its ranks start it
    // again (after 4 s without acknowledgements) or fall back to this supervisor — 12 s.
    const bool relayGap = report.silent && !report.relays.empty() && report.silentMs < kRelayRecoveryMs;
    return relayGap || allRunningNormally || (remote && report.silent && report.silentMs < 5000);
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
