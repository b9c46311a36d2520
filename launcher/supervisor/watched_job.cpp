// Supervisor's watch mode: a job Trellis did not launch (see supervisor.h, watch()). Its ranks
// joined a collector (launcher/collector/collector.h); everything else — the receiver, the history,
// the feed, the detectors, stalls and hangs, alerts — is the launched run's. What differs: there is
// no process to start, stop or restart, so the run ends with the job (every rank's Goodbye) or with
// its silence, and a hang is told, not acted on.
#include "launcher/supervisor/supervisor.h"

#include "launcher/ingest/telemetry_receiver.h"
#include "launcher/owner_only.h"
#include "backend/plan/plan_json.h"

#include <QDateTime>

#include <QTimer>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <QSysInfo>

#include <algorithm>

namespace trellis::launcher {

namespace {

// The plan a watched job is recorded with: its name, its command, its world as one data-parallel
// group (the collector knows no plan), on the hosts its ranks joined from.
plan::Plan planOf(const WatchedJob &job)
{
    plan::Plan p;
    p.name = job.name.toStdString();
    p.parallel.dp = job.worldSize;
    p.parallel.tp = p.parallel.pp = p.parallel.cp = 1;
    p.training.steps = 0; // unknown until its step reports say
    p.ownTrainer.command = {job.command.toStdString()};
    p.ownTrainer.hasModel = false; // no model section: nothing to estimate
    plan::NodeSpec node;
    node.host = job.hosts.isEmpty() ? std::string("?") : job.hosts.first().toStdString();
    node.slotCount = job.worldSize;
    p.cluster.nodes = {node};
    return p;
}

} // namespace

std::string Supervisor::telemetryEndpoint() const { return m_receiver->endpoint(); }

QString Supervisor::watch(const WatchedJob &job, const RunOptions &options)
{
    if (m_state == RunState::Launching || m_state == RunState::Running)
        return QStringLiteral("a run is already in progress (%1)").arg(m_runId);
    const plan::Plan thePlan = planOf(job);
    const QString runsDir = runsDirectory(options);
    const QString runId = options.runId.isEmpty() ? newRunId() : options.runId;
    if (const QString e = beginSession(thePlan, runId, runsDir + QLatin1Char('/') + runId, options, QString()); !e.isEmpty())
        return e;
    m_watched = true;
    m_watchedLocal = !job.hosts.isEmpty() && std::all_of(job.hosts.begin(), job.hosts.end(), [](const QString &h) {
        return h == QSysInfo::machineHostName();
    });
    if (!makeOwnerOnlyPath(m_runDir))
        return QStringLiteral("cannot create run folder %1").arg(m_runDir);
    m_frozenPlan = thePlan;
    m_receiver->setCurve(job.keys);
    if (const QString e = m_receiver->start(m_runId.toStdString(), static_cast<quint32>(job.worldSize), job.bind); !e.isEmpty())
        return e;
    // For a collector started again: where this job's ranks send, and the keys they hold.
    QFile endpointFile(m_runDir + QStringLiteral("/telemetry.endpoint"));
    if (endpointFile.open(QIODevice::WriteOnly | QIODevice::Truncate, kOwnerOnlyFile))
        endpointFile.write(QByteArray::fromStdString(m_receiver->endpoint()) + '\n');
    record(NewRunOp{m_runId, job.name, QString::fromStdString(plan::planToJson(thePlan)), QStringLiteral("collected"), job.worldSize,
                    0, QDateTime::currentDateTimeUtc()});
    m_commandLine = job.command;
    record(LaunchCommandOp{m_runId, m_commandLine});
    const QString origin = job.jobId.isEmpty() ? QString() : QStringLiteral(" (%1 job %2)").arg(job.scheduler.isEmpty() ? QStringLiteral("its launcher's") : job.scheduler, job.jobId);
    record(EventOp{m_runId, EventRow{-1, 0, QStringLiteral("info"),
                                     QStringLiteral("watching job %1%2: %3 rank%4 joined the collector (%5); not launched by "
                                                    "Trellis, so it cannot be stopped or restarted from here")
                                         .arg(job.name, origin)
                                         .arg(job.worldSize)
                                         .arg(job.worldSize == 1 ? QString() : QStringLiteral("s"))
                                         .arg(job.client.isEmpty() ? QStringLiteral("a client") : job.client),
                                     QDateTime::currentDateTimeUtc()}});
    m_attempt = job.attempt;
    m_settled = false;
    resetDetectors();
    setState(RunState::Running);
    m_sinceProgress.start();
    m_watchdog.start();
    m_statusTimer.start();
    return {};
}

QString Supervisor::watchAttempt(int attempt)
{
    if (!m_watched || m_settled)
        return QStringLiteral("run %1 is not a job being watched").arg(m_runId);
    if (attempt <= m_attempt)
        return {};
    closeStall(QStringLiteral("ended"));
    const QString note = QStringLiteral("restart: the job's own launcher started attempt %1 (it was %2); the run goes on")
                             .arg(attempt)
                             .arg(m_attempt);
    m_attempt = attempt;
    m_story << QStringLiteral("attempt %1").arg(attempt);
    raiseEvent(QStringLiteral("restart"), -1, m_progress.step, note);
    emit restarting(attempt, note);
    // Its ranks number their telemetry from 0 again, on the same endpoint.
    const std::string endpoint = m_receiver->endpoint();
    if (m_writer)
        record(CursorOp{m_runId, {}, {}, true, {}});
    if (const QString e = m_receiver->start(m_runId.toStdString(), static_cast<quint32>(m_plan.parallel.worldSize()), endpoint); !e.isEmpty())
        return e;
    m_goodbyes.clear();
    m_watchedHangRaised = false;
    resetDetectors();
    m_sinceProgress.restart();
    return {};
}

void Supervisor::stopWatching(const QString &message)
{
    if (!m_watched || m_settled)
        return;
    drainTelemetry();
    settle(RunState::Stopped, -1, message);
}

void Supervisor::watchedGoodbye(int rank, int exitCode)
{
    m_goodbyes[rank] = exitCode;
    if (exitCode != 0) {
        // A rank failed: its launcher ends the others (their Goodbyes may never come), or starts
        // the job again (torchrun's elastic restarts, a requeue). The run fails naming it unless
        // a next attempt joins within the confirmation time.
        const int attempt = m_attempt;
        QTimer::singleShot(static_cast<int>(std::min<qint64>(static_cast<qint64>(m_hangConfirmS) * 1000, 600000)), this,
                           [this, rank, exitCode, attempt] {
            drainTelemetry();
            if (m_settled || m_attempt != attempt)
                return;
            const auto host = m_hosts.find(rank);
            settle(RunState::Failed, exitCode,
                   QStringLiteral("rank %1 on %2 exited with code %3 (its Goodbye)")
                       .arg(rank)
                       .arg(host == m_hosts.end() ? QStringLiteral("its host") : host->second)
                       .arg(exitCode));
        });
        return;
    }
    if (static_cast<int>(m_goodbyes.size()) < m_plan.parallel.worldSize())
        return;
    // Every rank said goodbye: the job is over. What is still in flight arrives first.
    QTimer::singleShot(300, this, [this] {
        drainTelemetry();
        if (m_settled || static_cast<int>(m_goodbyes.size()) < m_plan.parallel.worldSize())
            return;
        for (const auto &[rank, code] : m_goodbyes)
            if (code != 0)
                return; // a failure: settled by its own timer, unless the job starts again
        settle(RunState::Completed, 0, QStringLiteral("the job ended: every rank said goodbye after step %1").arg(m_progress.step));
    });
}

bool Supervisor::everyRankSilent(qint64 forMs) const
{
    const qint64 now = m_clock.elapsed();
    int live = 0;
    for (const auto &[rank, seen] : m_lastSeenMs) {
        if (m_goodbyes.count(rank))
            continue;
        ++live;
        if (now - seen < forMs)
            return false;
    }
    return live > 0 || m_lastSeenMs.empty();
}

void Supervisor::watchedHang(const QString &message)
{
    // Silent ranks all, for the confirmation time: the job is gone (killed, its nodes lost).
    if (everyRankSilent(static_cast<qint64>(m_hangConfirmS) * 1000)) {
        settle(RunState::Failed, -1, QStringLiteral("the job went silent: every rank stopped answering for %1 s or more; %2")
                                         .arg(m_hangConfirmS)
                                         .arg(message));
        return;
    }
    m_sinceProgress.restart(); // judged again after another learned timeout
    if (m_watchedHangRaised)
        return; // told already (decideHang's event and alert)
    m_watchedHangRaised = true;
    raiseEvent(QStringLiteral("hang"), -1, m_progress.step,
               message + QStringLiteral(" — this job was not launched by Trellis, so it is left running: stop or restart it "
                                        "with its own launcher (scancel, kill, torchrun)"));
}

} // namespace trellis::launcher
