// Supervisor's watch mode: a job Trellis did not launch (see supervisor.h, watch()). Its ranks
// joined a collector (launcher/collector/collector.h); everything else — the receiver, the history,
// the feed, the detectors, stalls and hangs, alerts — is the launched run's. What differs: there is
// no process to start, stop or restart, so the run ends with the job (every rank's Goodbye) or with
// its silence, and a hang is told, not acted on.
#include "launcher/supervisor/supervisor.h"

#include "launcher/ingest/telemetry_receiver.h"
#include "launcher/owner_only.h"
#include "backend/plan/plan_json.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QStandardPaths>
#include <QSysInfo>
#include <QTimer>

#include <algorithm>
#include <limits>

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
    m_stalls.setCrashReporter("the job's launcher"); // no mpirun of ours started it
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
                    0, QDateTime::currentDateTimeUtc(), QSysInfo::machineHostName() + QLatin1Char(':') + m_runDir, RunKind::Collected});
    m_commandLine = job.command;
    record(LaunchCommandOp{m_runId, m_commandLine});
    const QString origin = job.jobId.isEmpty() ? QString() : QStringLiteral(" (%1 job %2)").arg(job.scheduler.isEmpty() ? QStringLiteral("its launcher's") : job.scheduler, job.jobId);
    record(EventOp{m_runId, EventRow{-1, 0, QStringLiteral("info"),
                                     QStringLiteral("watching job %1%2: %3 rank%4 joined the collector (%5); not launched by "
                                                    "Trellis, so it cannot be stopped or restarted from here")
                                         // One arg(): a job's name (the job's own word) holding "%3" stays as it is.
                                         .arg(job.name, origin, QString::number(job.worldSize),
                                              job.worldSize == 1 ? QString() : QStringLiteral("s"),
                                              job.client.isEmpty() ? QStringLiteral("a client") : job.client),
                                     QDateTime::currentDateTimeUtc()}});
    m_attempt = job.attempt;
    m_watchedJob = job;
    saveWatchedJob(job);
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
    m_watchedJob.attempt = attempt;
    saveWatchedJob(m_watchedJob);
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
    m_watchPaused = true; // a collector started again takes it up
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
        for (const auto &[anyRank, code] : m_goodbyes)
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
    if (endIfNoneCameBack())
        return;
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

// --- a collector started again ------------------------------------------------------------

void Supervisor::saveWatchedJob(const WatchedJob &job)
{
    const QJsonObject o{{QStringLiteral("name"), job.name},
                        {QStringLiteral("job_id"), job.jobId},
                        {QStringLiteral("scheduler"), job.scheduler},
                        {QStringLiteral("command"), job.command},
                        {QStringLiteral("client"), job.client},
                        {QStringLiteral("hosts"), QJsonArray::fromStringList(job.hosts)},
                        {QStringLiteral("world_size"), job.worldSize},
                        {QStringLiteral("attempt"), job.attempt},
                        {QStringLiteral("collector"), job.collector},
                        {QStringLiteral("job_key"), job.jobKey}};
    QSaveFile f(m_runDir + QStringLiteral("/watching.json"));
    if (f.open(QIODevice::WriteOnly)) {
        f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
        f.write(QJsonDocument(o).toJson());
        f.commit();
    }
}

std::optional<WatchedJob> Supervisor::watchedJobIn(const QString &runDir, QString *error)
{
    const QString path = runDir + QStringLiteral("/watching.json");
    QFile f(path);
    const auto fail = [&](const QString &why) -> std::optional<WatchedJob> {
        if (error)
            *error = QStringLiteral("%1: %2").arg(path, why);
        return std::nullopt;
    };
    if (!f.open(QIODevice::ReadOnly))
        return fail(f.errorString());
    if (f.size() > 65536)
        return fail(QStringLiteral("larger than 64 KiB: not a file Trellis wrote"));
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &parseError);
    if (!doc.isObject())
        return fail(QStringLiteral("not a JSON object (%1)").arg(parseError.errorString()));
    const QJsonObject o = doc.object();
    WatchedJob job;
    job.name = o.value(QStringLiteral("name")).toString();
    job.jobId = o.value(QStringLiteral("job_id")).toString();
    job.scheduler = o.value(QStringLiteral("scheduler")).toString();
    job.command = o.value(QStringLiteral("command")).toString();
    job.client = o.value(QStringLiteral("client")).toString();
    for (const QJsonValue &h : o.value(QStringLiteral("hosts")).toArray())
        job.hosts << h.toString();
    job.worldSize = o.value(QStringLiteral("world_size")).toInt(0);
    job.attempt = o.value(QStringLiteral("attempt")).toInt(-1);
    job.collector = o.value(QStringLiteral("collector")).toString();
    job.jobKey = o.value(QStringLiteral("job_key")).toString();
    if (job.worldSize < 1 || job.worldSize > 65536 || job.attempt < 0 || job.jobKey.isEmpty() || job.collector.isEmpty())
        return fail(QStringLiteral("world_size (1 to 65536), attempt, collector or job_key missing or out of range"));
    return job;
}

QString Supervisor::resumeWatching(const QString &runId, const RunData &history, const proto::CurveKeys &keys, const RunOptions &options)
{
    if (m_state == RunState::Launching || m_state == RunState::Running)
        return QStringLiteral("a run is already in progress (%1)").arg(m_runId);
    const QString runDir = runsDirectoryFor(options, m_writer) + QLatin1Char('/') + runId;
    QString error;
    std::optional<WatchedJob> job = watchedJobIn(runDir, &error);
    if (!job)
        return error;
    QFile endpointFile(runDir + QStringLiteral("/telemetry.endpoint"));
    if (!endpointFile.open(QIODevice::ReadOnly))
        return QStringLiteral("%1: %2 (where the job's ranks send is unknown)").arg(endpointFile.fileName(), endpointFile.errorString());
    const std::string endpoint = QString::fromUtf8(endpointFile.read(512)).trimmed().toStdString();
    job->keys = keys;
    const plan::Plan thePlan = planOf(*job);
    if (const QString e = beginSession(thePlan, runId, runDir, options, QString()); !e.isEmpty())
        return e;
    m_watched = true;
    m_stalls.setCrashReporter("the job's launcher"); // no mpirun of ours started it
    m_watchedLocal = std::all_of(job->hosts.begin(), job->hosts.end(), [](const QString &h) { return h == QSysInfo::machineHostName(); });
    m_frozenPlan = thePlan;
    m_watchedJob = *job;
    // The receiver takes up where the history's telemetry ends; the ranks send again what they held.
    std::map<quint32, quint64> cursor;
    for (const RankRow &r : history.ranks)
        cursor[static_cast<quint32>(r.rank)] = static_cast<quint64>(std::max<qint64>(0, r.receivedSeq));
    m_receiver->setCurve(keys);
    if (const QString e = m_receiver->start(m_runId.toStdString(), static_cast<quint32>(job->worldSize), endpoint, cursor); !e.isEmpty())
        return QStringLiteral("cannot listen again where the job's ranks send (%1): %2").arg(QString::fromStdString(endpoint), e);
    m_commandLine = job->command;
    m_attempt = job->attempt;
    m_settled = false;
    m_resumed = true;
    resetDetectors();
    followFromHistory(history);
    record(RunStatusOp{m_runId, toString(RunState::Running), QString(), QDateTime(), 0, -1, true});
    raiseEvent(QStringLiteral("resumed"), -1, m_progress.step,
               QStringLiteral("a collector started again (pid %1) takes the job up where the history ends (step %2): its ranks "
                              "send again what was not acknowledged while no collector listened")
                   .arg(QCoreApplication::applicationPid())
                   .arg(m_progress.step));
    setState(RunState::Running);
    m_sinceProgress.start();
    m_watchdog.start();
    m_statusTimer.start();
    QTimer::singleShot(std::max(m_hangConfirmS, 3) * 1000, this, [this] {
        drainTelemetry();
        endIfNoneCameBack();
    });
    return {};
}

void Supervisor::followFromHistory(const RunData &history)
{
    restoreRanks(history); // as adopt() does
    // Ranks that said goodbye before the collector went away: the job may have ended meanwhile.
    for (const RankRow &r : history.ranks)
        if (r.goodbyeSeq >= 0)
            watchedGoodbye(r.rank, r.exitCode);
}

bool Supervisor::endIfNoneCameBack()
{
    if (!m_resumed || m_settled || !m_lastSeenMs.empty())
        return false;
    settle(RunState::Stopped, -1,
           QStringLiteral("no rank of the job reported within %1 s of the collector starting again: the job ended, or can no "
                          "longer reach the collector, while none listened; what it reported meanwhile is not in the history")
               .arg(std::max(m_hangConfirmS, 3)));
    return true;
}

} // namespace trellis::launcher
