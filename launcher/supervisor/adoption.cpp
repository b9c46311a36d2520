// Supervisor::adopt (see supervisor.h): a new supervisor takes over a job whose supervisor
// died — the plan and run folder it left, the history's telemetry cursor, hosts and steps — and
// follows the job through its keeper. Split from supervisor.cpp.
#include "launcher/supervisor/supervisor.h"
#include "launcher/supervisor/supervisor_process.h"
#include "launcher/targets/launch_target.h"

#include "launcher/feed/feed_publisher.h"
#include "launcher/job/job_process.h"
#include "launcher/ingest/telemetry_receiver.h"
#include "launcher/ingest/telemetry_rows.h"
#include "backend/plan/plan_json.h"

#include <QCoreApplication>

#include <limits>

namespace trellis::launcher {

QString Supervisor::adopt(const QString &runId, const QString &runDir, qint64 keeperPid, int attempt,
                             const RunData &history, const RunOptions &options)
{
    if (m_state == RunState::Launching || m_state == RunState::Running)
        return QStringLiteral("a run is already in progress (%1)").arg(m_runId);
    // The plan of the attempt going on (elastic restarts rewrite it), as the ranks read it.
    const QString frozenPath = runDir + QStringLiteral("/plan.json");
    auto loaded = plan::loadPlanFile(frozenPath.toStdString());
    if (!loaded)
        return QStringLiteral("cannot adopt run %1: %2").arg(runId, QString::fromStdString(loaded.errorText()));
    const QString trainer = options.trainerPath.isEmpty() ? defaultTrainerPath(&loaded.value()) : options.trainerPath;
    if (const QString e = beginSession(loaded.value(), runId, runDir, options, trainer); !e.isEmpty())
        return e;
    m_frozenPlan = m_plan;
    m_frozenPath = frozenPath;
    m_attempt = attempt;
    if (const QString e = reconnectTelemetry(history); !e.isEmpty())
        return e;
    resetDetectors();
    restoreFromHistory(history);

    m_commandLine = QStringLiteral("(adopted: job keeper pid %1)").arg(keeperPid);
    m_settled = false;
    m_job = std::make_unique<JobProcess>();
    connectJob();
    m_job->adopt(keeperPid, runDir);
    setState(RunState::Running);
    record(RunStatusOp{m_runId, toString(RunState::Running), QString(), QDateTime(), 0, -1, true});
    raiseEvent(QStringLiteral("adopted"), -1, m_progress.step,
               QStringLiteral("supervisor pid %1 adopted the run (job keeper pid %2, attempt %3): its previous supervisor ended "
                              "while the job went on")
                   .arg(QCoreApplication::applicationPid())
                   .arg(keeperPid)
                   .arg(attempt));
    m_sinceProgress.start();
    m_watchdog.start();
    return {};
}

QString Supervisor::reconnectTelemetry(const RunData &history)
{
    // The receiver takes up where the history's committed telemetry ends; the ranks resend the rest.
    std::map<quint32, quint64> cursor;
    for (const RankRow &r : history.ranks)
        cursor[static_cast<quint32>(r.rank)] = static_cast<quint64>(std::max<qint64>(0, r.receivedSeq));
    // A remote run's receiver: the same address and keys as before (the ranks know only those).
    m_target.reset();
    m_telemetryBind.clear();
    m_receiver->setCurve({});
    if (m_plan.launch.target != plan::LaunchTarget::Local) {
        QFile endpointFile(m_runDir + QStringLiteral("/telemetry.endpoint"));
        std::string keyError;
        const auto keys = proto::readCurveKeys((m_runDir + QStringLiteral("/telemetry.keys")).toStdString(), keyError);
        if (!keys || !endpointFile.open(QIODevice::ReadOnly))
            return QStringLiteral("cannot adopt run %1: %2")
                .arg(m_runId, keys ? QStringLiteral("its telemetry endpoint is unknown") : QString::fromStdString(keyError));
        m_receiver->setCurve(*keys);
        m_options.telemetryEndpoint = QString::fromUtf8(endpointFile.readAll()).trimmed().toStdString();
        m_telemetryBind = m_options.telemetryEndpoint;
    }
    QString error;
    m_target = makeLaunchTarget(m_plan, targetOptionsFor(m_trainer, m_options, m_runDir), error);
    if (!m_target)
        return QStringLiteral("cannot adopt run %1: %2").arg(m_runId, error);
    if (const QString e = m_target->reattach(m_runId); !e.isEmpty())
        raiseEvent(QStringLiteral("warning"), -1, 0, e); // the job goes on; only a restart would need them
    if (m_options.telemetryEndpoint.empty())
        return QStringLiteral("cannot adopt run %1: its telemetry endpoint is unknown").arg(m_runId);
    return m_receiver->start(m_runId.toStdString(), static_cast<quint32>(m_plan.parallel.worldSize()),
                             m_options.telemetryEndpoint, cursor);
}

void Supervisor::restoreFromHistory(const RunData &history)
{
    for (const EventRow &e : history.events)
        if (e.kind == QLatin1String("checkpoint"))
            m_lastCheckpointStep = std::max(m_lastCheckpointStep, e.step);
    if (m_target->gathersCheckpoints())
        m_lastCheckpointStep = newestCompleteCheckpoint(localCheckpointDir()); // what a restart can put back
    restoreRanks(history);
}

void Supervisor::restoreRanks(const RunData &history)
{
    for (const StepRow &row : history.steps) {
        if (row.step >= m_latest[row.rank].step)
            m_latest[row.rank] = row;
        m_stalls.learnStep(row.stepMs); // the learned timeout survives the supervisor too
    }
    for (const RankRow &r : history.ranks) {
        m_hangs->hello(r.rank, r.host.toStdString());
        m_stragglers->hello(r.rank, r.host.toStdString());
        m_hosts[r.rank] = r.host;
        m_pids[r.rank] = r.pid;
        m_hangs->seen(r.rank, m_clock.elapsed());
    }
    if (!m_latest.empty()) {
        qint64 minStep = std::numeric_limits<qint64>::max();
        for (const auto &[rank, row] : m_latest)
            minStep = std::min(minStep, row.step);
        m_progress.step = minStep;
        m_progress.loss = m_latest.begin()->second.loss;
        m_progress.ranksReporting = static_cast<int>(m_latest.size());
    }
}

} // namespace trellis::launcher
