// trellis-cli's commands that follow or stop runs other processes supervise: attach, ps, stop.
#include "launcher/cli/cli_support.h"
#include "launcher/cli/signal_bridge.h"
#include "launcher/feed/run_feed.h"
#include "launcher/history/history_database.h"
#include "launcher/history_location.h"
#include "launcher/registry/run_registry.h"
#include "launcher/supervisor/supervisor_process.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QThread>

#include <map>
#include <optional>
#include <utility>

namespace trellis::launcher::cli {
namespace {

// The run a reference (id, row number, "last") names, and where its supervisor's feed is ("" when
// no supervisor owns it any more).
std::optional<std::pair<QString, QString>> resolveRun(const QString &reference, const QString &dbPath)
{
    if (const auto live = RunRegistry::find(reference))
        return std::make_pair(live->runId, live->feedEndpoint());
    HistoryDatabase db;
    // A run just started may reach the history a moment after its id was printed: wait for it.
    std::optional<RunSummary> run;
    for (int tries = 0; tries < 20 && !run; ++tries) {
        if ((isServerHistory(dbPath) || QFileInfo::exists(dbPath)) && (db.isOpen() || db.open(dbPath, false).isEmpty()))
            run = db.findRun(reference);
        if (!run) {
            if (const auto live = RunRegistry::find(reference))
                return std::make_pair(live->runId, live->feedEndpoint());
            QThread::msleep(250);
        }
    }
    if (!run && !(run = findExistingRun(db, dbPath, reference)))
        return std::nullopt;
    const auto live = RunRegistry::find(run->runId);
    return std::make_pair(run->runId, live ? live->feedEndpoint() : QString());
}

// The supervisor tells its feed that the run ended as it ends; its history commits the end (and
// the last rows) a moment later — seconds when the history's disk is slow or busy. Waits up to
// `ms` for the history to hold the end, so that `attach RUN && export RUN` exports all of it; says
// so when it does not come.
void waitForRecordedEnd(const QString &dbPath, const QString &runId, int ms)
{
    QElapsedTimer waited;
    waited.start();
    while (waited.elapsed() < ms) {
        {
            HistoryDatabase db;
            if (db.open(dbPath, false).isEmpty())
                if (const auto run = db.findRun(runId); run && run->status != QLatin1String("running"))
                    return;
        }
        QThread::msleep(100);
    }
    err() << "attach: the history has not recorded the end of run " << runId << " after " << ms / 1000 << " s" << Qt::endl;
}

} // namespace

// attach: follows a run through its supervisor's live feed, after what the history holds, until
// it ends; a run no supervisor owns is shown from the history. Reading only: stopping (or killing)
// this command changes nothing for the run.
int cmdAttach(const Args &a, const QString &dbPath)
{
    if (a.positional.size() != 1)
        return usageError(QStringLiteral("attach takes one run"));
    const auto target = resolveRun(a.positional.first(), dbPath);
    if (!target)
        return 1;
    const auto &[runId, endpoint] = *target;
    out() << "run " << runId << (endpoint.isEmpty() ? QStringLiteral(" (from the history)") : QStringLiteral(" (live)"))
          << Qt::endl;
    RunFeed feed;
    feed.setKeepRows(true, 0); // rank 0's losses; every rank's rows of a long run would not fit
    qint64 shownStep = 0;
    quint64 version = 0;
    std::map<qint64, double> lossAt;
    int exitCode = 1;
    QObject::connect(&feed, &RunFeed::event, &feed, [](const EventRow &e) {
        if (e.kind != QLatin1String("checkpoint"))
            out() << "event " << e.kind << " at step " << e.step << (e.rank >= 0 ? QStringLiteral(" (rank %1)").arg(e.rank) : QString())
                  << ": " << e.message << Qt::endl;
    });
    QObject::connect(&feed, &RunFeed::alert, &feed, [](const QString &kind, const QString &message) {
        if (kind == QLatin1String("history"))
            out() << "event history: " << message << Qt::endl;
    });
    // A step is shown once every rank has reported it (the feed's progress: the oldest rank's
    // newest step), with rank 0's loss.
    QObject::connect(&feed, &RunFeed::stepsArrived, &feed, [&] {
        for (const StepRow &row : feed.series().rowsSince(version, &version))
            lossAt[row.step] = row.loss;
        const RunProgress progress = feed.progress();
        for (auto it = lossAt.begin(); it != lossAt.end() && it->first <= progress.step;) {
            if (it->first > shownStep) {
                out() << "step " << it->first << "/" << progress.totalSteps << " loss " << QString::number(it->second, 'f', 4) << Qt::endl;
                shownStep = it->first;
            }
            it = lossAt.erase(it);
        }
    });
    QObject::connect(&feed, &RunFeed::finished, &feed, [&](RunState state, int, const QString &message) {
        out() << "run " << runId << " " << toString(state) << (message.isEmpty() ? QString() : QStringLiteral(": ") + message)
              << Qt::endl;
        exitCode = state == RunState::Completed ? 0 : 1;
        waitForRecordedEnd(dbPath, runId, 30000);
        QCoreApplication::quit();
    });
    SignalBridge bridge([](int) { QCoreApplication::quit(); });
    feed.attach(runId, endpoint, historyIdentity(dbPath));
    QCoreApplication::exec();
    return exitCode;
}

// ps: the runs a supervisor owns now, on this machine, for this user.
int cmdPs()
{
    QString error;
    if (RunRegistry::directory(&error).isEmpty())
        return fail(error);
    const auto runs = RunRegistry::running();
    const auto orphans = RunRegistry::orphaned();
    for (const RunRecord &r : orphans)
        out() << "run " << r.runId << " has no supervisor (it died) but its job goes on (keeper pid " << r.keeperPid
              << "): trellis-cli adopt " << r.runId << Qt::endl;
    if (runs.isEmpty()) {
        out() << "no runs are going" << (orphans.isEmpty() ? "" : " under a supervisor") << Qt::endl;
        return 0;
    }
    out() << QStringLiteral("%1  %2  %3  %4").arg(QStringLiteral("RUN"), -22).arg(QStringLiteral("PID"), 8).arg(QStringLiteral("STARTED"), -20).arg(QStringLiteral("HISTORY"))
          << Qt::endl;
    for (const RunRecord &r : runs)
        out() << QStringLiteral("%1  %2  %3  %4")
                     .arg(r.runId, -22)
                     .arg(r.pid, 8)
                     .arg(r.startedAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")), -20)
                     .arg(r.database)
              << Qt::endl;
    return 0;
}

// stop: asks a run's supervisor to stop it (SIGTERM to the supervisor, which ends the job and
// records the run as stopped).
int cmdStop(const Args &a)
{
    if (a.positional.size() != 1)
        return usageError(QStringLiteral("stop takes one run id"));
    if (const QString e = stopSupervisedRun(a.positional.first()); !e.isEmpty())
        return fail(e + QStringLiteral(" (see trellis-cli ps)"));
    out() << "asked the supervisor of " << a.positional.first() << " to stop it" << Qt::endl;
    return 0;
}

} // namespace trellis::launcher::cli
