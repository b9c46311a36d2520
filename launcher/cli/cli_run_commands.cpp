// trellis-cli's commands that supervise runs in this process: run (and --detach, and --command),
// simulate, adopt, collect. The run's supervisor is this process while one of them runs (see
// launcher/supervisor/); what it prints is run_console.h's. attach, ps and stop, which follow or stop
// a run another process supervises, are cli_follow_commands.cpp's; the history and report
// commands, cli_history_commands.cpp's and cli_export_commands.cpp's.
#include "launcher/history_location.h"
#include "launcher/cli/cli_support.h"
#include "launcher/cli/run_console.h"
#include "launcher/cli/signal_bridge.h"
#include "launcher/history/history_database.h"
#include "launcher/history/history_writer.h"
#include "launcher/supervisor/supervisor.h"
#include "launcher/feed/feed_publisher.h"
#include "launcher/registry/run_registry.h"
#include "launcher/collector/collector.h"
#include "launcher/owner_only.h"
#include "launcher/programs.h"
#include "launcher/simulator/simulator.h"
#include "backend/plan/plan_json.h"
#include "backend/plan/plan_validate.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QThread>

#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <unistd.h>

namespace trellis::launcher::cli {
namespace {

// run --detach: the same command in a process of its own session (it owns the run: the receiver,
// the history writes, the restarts, the detectors), started through setsid so it outlives this
// shell, its terminal and whoever asked; this process prints the run id once the owner has one.
int cmdRunDetached(const QString &dbPath)
{
    QStringList args = QCoreApplication::arguments().mid(1);
    args.removeAll(QStringLiteral("--detach"));
    if (!args.contains(QStringLiteral("--quiet")))
        args << QStringLiteral("--quiet");
    const QString logPath = historyLocalFolder(dbPath) + QStringLiteral("/runs/detached-%1-%2.log")
                                                                .arg(QDateTime::currentMSecsSinceEpoch())
                                                                .arg(QCoreApplication::applicationPid());
    QDir().mkpath(QFileInfo(logPath).absolutePath());
    QProcess owner;
    owner.setProgram(QStringLiteral("/usr/bin/setsid"));
    owner.setArguments(QStringList{QCoreApplication::applicationFilePath()} + args);
    owner.setStandardInputFile(QProcess::nullDevice());
    owner.setStandardOutputFile(logPath);
    owner.setStandardErrorFile(logPath, QIODevice::Append);
    qint64 pid = 0;
    if (!owner.startDetached(&pid))
        return fail(QStringLiteral("cannot start the run's owner process (setsid %1)").arg(QCoreApplication::applicationFilePath()));
    // Wait for "run <id>" (or its failure) in the owner's output.
    QElapsedTimer waited;
    waited.start();
    while (waited.elapsed() < 30000) {
        QFile log(logPath);
        if (log.open(QIODevice::ReadOnly)) {
            const QString text = QString::fromUtf8(log.readAll());
            static const QRegularExpression id(QStringLiteral("^run (\\S+)$"), QRegularExpression::MultilineOption);
            if (const auto m = id.match(text); m.hasMatch()) {
                out() << "run " << m.captured(1) << "\nowner pid " << pid << "; follow it with: trellis-cli attach "
                      << m.captured(1) << "\nlog " << logPath << Qt::endl;
                return 0;
            }
            if (!QFile::exists(QStringLiteral("/proc/%1").arg(pid)))
                return fail(QStringLiteral("the run did not start: %1").arg(text.trimmed()));
        }
        QThread::msleep(50);
    }
    return fail(QStringLiteral("the run's owner (pid %1) printed no run id within 30 s; see %2").arg(pid).arg(logPath));
}

} // namespace

int superviseRun(const Args &a, const QString &dbPath, RunRecord record,
                 const std::function<QString(Supervisor &, const RunOptions &)> &begin);

namespace {

// --run-id as given (checked) or a new one into `runId`; 0, or the usage error's exit code.
int takeRunId(const Args &a, QString &runId)
{
    runId = a.options.value(QStringLiteral("--run-id"));
    if (runId.isEmpty())
        runId = Supervisor::newRunId();
    else if (!RunRegistry::validRunId(runId))
        return usageError(QStringLiteral("--run-id '%1': letters, digits, '.', '_' and '-' only, at most 64").arg(runId));
    return 0;
}

// A supervised run of a plan made here (simulate, run --command): saved as
// runs/SUBDIR/RUN.plan.json beside the history, where adopt and compare find it like a plan file.
int superviseMadePlan(const Args &a, const QString &dbPath, const QString &subdir, const plan::Plan &thePlan,
                      const std::function<QString(Supervisor &, const RunOptions &, const QString &)> &start)
{
    QString runId;
    if (const int code = takeRunId(a, runId); code != 0)
        return code;
    const QString dir = historyLocalFolder(dbPath) + QStringLiteral("/runs/") + subdir;
    QDir().mkpath(dir);
    const QString planPath = dir + QLatin1Char('/') + runId + QStringLiteral(".plan.json");
    if (auto saved = plan::savePlanFile(thePlan, planPath.toStdString()); !saved)
        return fail(QString::fromStdString(saved.errorText()));
    RunRecord record;
    record.runId = runId;
    record.database = historyIdentity(dbPath);
    record.planPath = planPath;
    return superviseRun(a, dbPath, record,
                        [&](Supervisor &supervisor, const RunOptions &options) { return start(supervisor, options, planPath); });
}

} // namespace

// run --command [--ranks N] [--name NAME] [--max-restarts N] -- PROGRAM ARGS: a job with its own
// trainer (docs/pytorch.md) without a plan file: N ranks on this machine, each running PROGRAM in
// the current folder with torchrun's variables set, watched like any run.
int cmdRunCommand(const Args &a, const QString &dbPath)
{
    if (!a.positional.isEmpty())
        return usageError(QStringLiteral("run --command takes no plan file: the command follows --"));
    if (a.trailing.isEmpty() || a.trailing.first().isEmpty())
        return usageError(QStringLiteral("run --command needs the program after --, e.g. run --command --ranks 4 -- python3 train.py"));
    bool ok = true;
    const int ranks = a.options.value(QStringLiteral("--ranks"), QStringLiteral("1")).toInt(&ok);
    if (!ok || ranks < 1 || ranks > 4096)
        return usageError(QStringLiteral("--ranks needs a whole number from 1 to 4096"));
    const int restarts = a.options.value(QStringLiteral("--max-restarts"), QStringLiteral("0")).toInt(&ok);
    if (!ok || restarts < 0 || restarts > 1000)
        return usageError(QStringLiteral("--max-restarts needs a whole number from 0 to 1000"));
    plan::Plan thePlan;
    for (const QString &word : a.trailing)
        thePlan.ownTrainer.command.push_back(word.toStdString());
    thePlan.ownTrainer.hasModel = false;
    // Named after the script (python3 train.py → train.py), else the program.
    QString named = QFileInfo(a.trailing[0]).fileName();
    for (int i = 1; i < a.trailing.size(); ++i)
        if (!a.trailing[i].startsWith(QLatin1Char('-'))) {
            named = QFileInfo(a.trailing[i]).fileName();
            break;
        } else if (a.trailing[i] == QLatin1String("-c") || a.trailing[i] == QLatin1String("-m")) {
            break; // python3 -c CODE / -m MODULE: the program's name says more than the code
        }
    thePlan.name = a.options.value(QStringLiteral("--name"), named).toStdString();
    thePlan.cluster.nodes.push_back({});
    thePlan.cluster.nodes.front().host = "localhost";
    thePlan.cluster.nodes.front().slotCount = ranks;
    thePlan.parallel.dp = ranks;
    thePlan.launch.restart.maxRestarts = restarts;
    thePlan.launch.restart.backoffS = 1;
    if (const plan::Diagnostics d = plan::validatePlan(thePlan); plan::hasErrors(d))
        return fail(QString::fromStdString(d.front().toString()));
    thePlan.ownTrainer.dir = QDir::currentPath().toStdString();
    return superviseMadePlan(a, dbPath, QStringLiteral("commands"), thePlan,
                             [&](Supervisor &supervisor, const RunOptions &options, const QString &planPath) {
                                 return supervisor.start(thePlan, planPath, options);
                             });
}

int cmdRun(const Args &a, const QString &dbPath)
{
    if (a.flags.contains(QStringLiteral("--detach")))
        return cmdRunDetached(dbPath);
    if (a.flags.contains(QStringLiteral("--command")))
        return cmdRunCommand(a, dbPath);
    if (!a.trailing.isEmpty())
        return usageError(QStringLiteral("a command after -- needs --command (run --command -- PROGRAM ARGS)"));
    if (a.positional.size() != 1)
        return usageError(QStringLiteral("run takes one plan file"));
    const QString path = a.positional.first();
    auto loaded = loadValidPlan(path, a.options.value(QStringLiteral("--hostfile"))); // prints warnings and errors
    if (!loaded)
        return 1;
    const auto unsupported = plan::checkTrainerSupport(loaded.value());
    if (!unsupported.empty()) {
        for (const auto &d : unsupported)
            err() << path << ": " << QString::fromStdString(d.toString()) << "\n";
        err().flush();
        return 1;
    }

    if (a.options.contains(QStringLiteral("--name")) && a.options.value(QStringLiteral("--name")).trimmed().isEmpty())
        return usageError(QStringLiteral("--name needs a name"));
    if (a.options.contains(QStringLiteral("--name")))
        loaded->name = a.options.value(QStringLiteral("--name")).toStdString();
    // --db, else the plan's telemetry.history, else $TRELLIS_HISTORY or the user's file.
    const QString history = historyForPlan(QString::fromStdString(loaded->telemetry.history), path, a.historyGiven, dbPath);

    // The run is claimed before anything starts: two supervisors never own the same run.
    QString runId;
    if (const int code = takeRunId(a, runId); code != 0)
        return code;
    RunRecord record;
    record.runId = runId;
    record.database = historyIdentity(history);
    record.planPath = QFileInfo(path).absoluteFilePath();
    return superviseRun(a, history, record, [&](Supervisor &supervisor, const RunOptions &options) {
        return supervisor.start(loaded.value(), QFileInfo(path).absoluteFilePath(), options);
    });
}

// simulate: a supervised run whose ranks are the simulator (simulator.h): the real
// protocol, sockets, receiver, detectors, history and feed, at any number of ranks.
int cmdSimulate(const Args &a, const QString &dbPath)
{
    if (a.flags.contains(QStringLiteral("--detach")))
        return cmdRunDetached(dbPath);
    if (!a.positional.isEmpty())
        return usageError(QStringLiteral("simulate takes options only"));
    simulator::SimulationOptions sim;
    if (const QString e = simulator::parseSimulation(a.options, sim); !e.isEmpty())
        return usageError(e);
    const plan::Plan thePlan = simulator::simulatedPlan(sim);
    if (const plan::Diagnostics d = plan::validatePlan(thePlan); plan::hasErrors(d))
        return fail(QStringLiteral("simulated plan: %1").arg(QString::fromStdString(d.front().toString())));
    return superviseMadePlan(a, dbPath, QStringLiteral("simulated"), thePlan,
                             [&](Supervisor &supervisor, const RunOptions &given, const QString &planPath) {
                                 RunOptions options = given;
                                 options.kind = RunKind::Simulated;
                                 options.jobProgram = supervisorProgram();
                                 options.jobArguments = QStringList{QStringLiteral("simulate-ranks")} + simulator::simulationArguments(sim);
                                 return supervisor.start(thePlan, planPath, options);
                             });
}

// adopt: a new supervisor for a run whose supervisor died while its job goes on.
int cmdAdopt(const Args &a, const QString &dbPath)
{
    if (a.positional.size() != 1)
        return usageError(QStringLiteral("adopt takes one run id"));
    const QString runId = a.positional.first();
    std::optional<RunRecord> orphan;
    for (const RunRecord &r : RunRegistry::orphaned())
        if (r.runId == runId)
            orphan = r;
    if (!orphan) {
        if (const auto owned = RunRegistry::find(runId))
            return fail(QStringLiteral("run %1 is already owned by its supervisor (pid %2); attach to it instead").arg(runId).arg(owned->pid));
        return fail(QStringLiteral("no job of a run '%1' is going without a supervisor (see trellis-cli ps)").arg(runId));
    }
    Q_UNUSED(dbPath); // the run's own history, as its first supervisor recorded it
    const QString database = orphan->database;
    const RunRecord record = *orphan;
    return superviseRun(a, database, record, [&](Supervisor &supervisor, const RunOptions &options) -> QString {
        HistoryDatabase db;
        if (const QString e = db.open(database, false); !e.isEmpty())
            return e;
        const auto summary = db.findRun(runId);
        if (!summary)
            return QStringLiteral("run %1 is not in %2").arg(runId, database);
        if (const QString e = db.mayChangeRun(summary->id); !e.isEmpty())
            return QStringLiteral("cannot adopt: %1").arg(e);
        const auto data = db.loadRunForTakeOver(summary->id);
        if (!data)
            return QStringLiteral("cannot read run %1 from %2: %3").arg(runId, database, db.lastError());
        return supervisor.adopt(runId, orphan->runDir, orphan->keeperPid, orphan->attempt, *data, options);
    });
}

namespace {

// The run's options from the command's: its id and telemetry endpoint, an injected fault, the
// hang timeout, the metrics port. Returns the exit code when an option is malformed.
std::optional<int> readRunOptions(const Args &a, const RunRecord &record, RunOptions &options)
{
    options.runId = record.runId;
    options.telemetryEndpoint = record.telemetryEndpoint().toStdString();
    if (a.options.contains(QStringLiteral("--inject")))
        options.extraTrainerArgs << QStringLiteral("--inject") << a.options[QStringLiteral("--inject")];
    // The plan's own values are validated with it; these replace them for one run.
    for (const auto &[option, field, low, high, into] :
         {std::tuple{QStringLiteral("--hang-timeout"), "launch.hang_timeout_s", 1, 604800, &options.hangTimeoutS},
          std::tuple{QStringLiteral("--hang-confirm"), "launch.hang_confirm_s", 1, 86400, &options.hangConfirmS}}) {
        if (!a.options.contains(option))
            continue;
        bool ok = false;
        const int value = a.options[option].toInt(&ok);
        if (!ok || value < low || value > high)
            return usageError(QStringLiteral("%1 expects seconds from %2 to %3 (it replaces %4), got '%5'")
                                  .arg(option)
                                  .arg(low)
                                  .arg(high)
                                  .arg(QLatin1String(field), a.options[option]));
        *into = value;
    }
    if (a.options.contains(QStringLiteral("--metrics-port"))) {
        bool ok = false;
        const int port = a.options[QStringLiteral("--metrics-port")].toInt(&ok);
        if (!ok || port < 0 || port > 65535)
            return usageError(QStringLiteral("--metrics-port expects a port 0-65535 (0: any free one), got '%1'")
                                  .arg(a.options[QStringLiteral("--metrics-port")]));
        options.metricsPort = port;
    }
    return std::nullopt;
}

// run --report FILE: the finished run's HTML report. Returns 0, or the exit code of a failure.
int writeRunReport(const QString &reportPath, const QString &dbPath, const QString &runId)
{
    HistoryDatabase db;
    const auto run = findExistingRun(db, dbPath, runId);
    if (!run)
        return 1;
    if (const QString e = writeReport(db, *run, reportPath); !e.isEmpty())
        return fail(e);
    out() << "report " << QFileInfo(reportPath).absoluteFilePath() << Qt::endl;
    return 0;
}

} // namespace

// Supervises one run in this process until it ends: claims it (two supervisors never own the
// same run), publishes its live feed, writes its history, and prints progress; `begin` starts or
// adopts the run once everything is in place.
int superviseRun(const Args &a, const QString &dbPath, RunRecord record,
                 const std::function<QString(Supervisor &, const RunOptions &)> &begin)
{
    simulator::raiseOpenFileLimit(); // a connection per rank
    QString claimError;
    const auto claim = RunRegistry::claim(record, &claimError);
    if (!claim)
        return fail(claimError);
    FeedPublisher feed;
    if (const QString e = feed.bind(record.feedEndpoint().toStdString()); !e.isEmpty())
        return fail(e);

    HistoryWriter writer(dbPath);
    if (const QString e = writer.start(); !e.isEmpty())
        return fail(e);
    Supervisor supervisor(&writer);
    supervisor.setFeed(&feed);
    QObject::connect(&supervisor, &Supervisor::jobStarted, &supervisor,
                     [&](qint64 keeperPid, int attempt) { claim->jobStarted(keeperPid, supervisor.runDirectory(), attempt); });
    SignalBridge bridge([&](int) { supervisor.stop(); });
    RunOptions options;
    if (const std::optional<int> code = readRunOptions(a, record, options))
        return *code;
    RunConsole console;
    console.quiet = a.flags.contains(QStringLiteral("--quiet"));
    console.tty = isatty(fileno(stderr));

    console.clock.start();
    connectConsole(supervisor, console);

    if (const QString e = begin(supervisor, options); !e.isEmpty())
        return fail(e);
    out() << "run " << supervisor.runId() << Qt::endl;
    if (supervisor.metricsPort() > 0)
        out() << "metrics http://127.0.0.1:" << supervisor.metricsPort() << "/metrics" << Qt::endl;
    if (!console.quiet)
        err() << "command: " << supervisor.commandLine() << "\nlogs: " << supervisor.runDirectory() << "\nhistory: " << historyIdentity(dbPath)
              << Qt::endl;
    QCoreApplication::exec();
    const bool historyWhole = printRunEnd(supervisor, writer, console);

    if (a.options.contains(QStringLiteral("--report")))
        if (const int rc = writeRunReport(a.options[QStringLiteral("--report")], dbPath, supervisor.runId()))
            return rc;
    if (supervisor.state() != RunState::Completed)
        return 1;
    return historyWhole ? 0 : kExitHistoryIncomplete;
}

// collect: jobs Trellis did not launch join here and are watched as runs until SIGTERM/SIGINT
// (launcher/collector/collector.h). Each job's run gets a claim and a live feed, as a launched
// run's, so `attach`, `ps` and the workbench follow it.
int cmdCollect(const Args &a, const QString &dbPath)
{
    if (!a.positional.isEmpty())
        return usageError(QStringLiteral("collect takes no arguments"));
    simulator::raiseOpenFileLimit(); // a connection per rank of every job
    CollectorOptions options;
    options.bind = a.options.value(QStringLiteral("--bind"), QStringLiteral("tcp://0.0.0.0:7700")).toStdString();
    options.keysPath = a.options.value(QStringLiteral("--keys"),
                                       historyLocalFolder(dbPath) + QStringLiteral("/collector/collector.keys"));
    options.advertise = a.options.value(QStringLiteral("--advertise"));
    if (!makeOwnerOnlyPath(QFileInfo(options.keysPath).absolutePath()))
        return fail(QStringLiteral("cannot create %1").arg(QFileInfo(options.keysPath).absolutePath()));
    if (const std::optional<int> code = readRunOptions(a, RunRecord{}, options.run))
        return *code;
    options.run.runId.clear();
    options.run.telemetryEndpoint.clear();
    options.followedElsewhere = [](const QString &runId) {
        const auto owner = RunRegistry::find(runId);
        return owner && owner->pid != QCoreApplication::applicationPid();
    };
    HistoryWriter writer(dbPath);
    if (const QString e = writer.start(); !e.isEmpty())
        return fail(e);
    const bool quiet = a.flags.contains(QStringLiteral("--quiet"));
    Collector collector(&writer);
    std::map<Supervisor *, std::pair<std::unique_ptr<RunClaim>, std::unique_ptr<FeedPublisher>>> followed;
    QObject::connect(&collector, &Collector::refused, &collector, [](const QString &message) { err() << "refused: " << message << Qt::endl; });
    QObject::connect(&collector, &Collector::notice, &collector, [](const QString &message) { err() << message << Qt::endl; });
    QObject::connect(&collector, &Collector::jobWatched, &collector, [&](Supervisor *run, const QString &description) {
        out() << "run " << run->runId() << ": " << description << Qt::endl;
        RunRecord record;
        record.runId = run->runId();
        record.database = historyIdentity(dbPath);
        record.runDir = run->runDirectory();
        record.startedAt = QDateTime::currentDateTimeUtc();
        record.watchedOnly = true;
        QString claimError;
        auto claim = RunRegistry::claim(record, &claimError);
        auto feed = std::make_unique<FeedPublisher>();
        if (!claim || !feed->bind(record.feedEndpoint().toStdString()).isEmpty()) {
            err() << "run " << run->runId() << ": no live feed (" << claimError << ")" << Qt::endl;
            feed.reset();
        } else {
            run->setFeed(feed.get());
        }
        followed[run] = {std::move(claim), std::move(feed)};
        QObject::connect(run, &Supervisor::alert, run, [run, quiet](const QString &kind, const QString &message) {
            if (!quiet || kind == QLatin1String("hang"))
                err() << "run " << run->runId() << ": " << message << Qt::endl;
        });
        QObject::connect(run, &Supervisor::restarting, run, [run](int, const QString &message) {
            err() << "run " << run->runId() << ": " << message << Qt::endl;
        });
        QObject::connect(run, &Supervisor::finished, run, [run, &followed](RunState state, int, const QString &message) {
            out() << "run " << run->runId() << " " << toString(state) << ": " << message.section(QLatin1Char('\n'), 0, 0) << Qt::endl;
            if (auto it = followed.find(run); it != followed.end()) {
                run->setFeed(nullptr);
                followed.erase(it); // its claim and feed go with it
            }
        });
    });
    if (const QString e = collector.listen(options); !e.isEmpty())
        return fail(e);
    SignalBridge bridge([](int) { QCoreApplication::quit(); });
    out() << "collecting at " << collector.address() << Qt::endl;
    out() << "give each job: TRELLIS_COLLECTOR=" << collector.address() << " TRELLIS_COLLECTOR_KEYS=" << collector.jobKeysPath()
          << Qt::endl;
    QCoreApplication::exec();
    collector.close();
    for (auto &[run, parts] : followed)
        run->setFeed(nullptr);
    followed.clear();
    if (!writer.flush(15000))
        err() << "history: the writer did not finish in 15 s" << Qt::endl;
    writer.stop();
    return 0;
}

} // namespace trellis::launcher::cli
