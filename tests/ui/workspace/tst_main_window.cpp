// The workbench offscreen: load a plan, press Launch, and see the loss and throughput charts grow
// while the real 4-rank run goes (under its own supervisor, trellis-cli); afterwards the run is in
// the history list and selecting it shows its curves. A window opened while a run is going
// reattaches to it, the history backfilled and then live. A GPU plan gets its estimate off the GUI thread, the same figures the cost
// model gives; the planner's search fills the results and taking one replaces the plan's
// parallelism.
#include "backend/plan/cost/cost_model.h"
#include "backend/plan/plan_json.h"
#include "launcher/metrics/dashboard_snapshot.h"
#include "ui/run/run_header.h"
#include "ui/dashboards/metric_panel.h"
#include "ui/estimate/estimate_panel.h"
#include "ui/plan/mesh_view.h"
#include "ui/plan/mesh_canvas.h"
#include "ui/plan/plan_panel.h"
#include "ui/history/history_panel.h"
#include "ui/workspace/main_window.h"
#include "ui/workspace/dashboard_grid.h"
#include "ui/workspace/panel_frame.h"
#include "launcher/document/plan_document.h"
#include "launcher/history/history_database.h"

#include <QAction>
#include <set>
#include <QPushButton>
#include <QTreeWidget>
#include <QSignalSpy>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <csignal>

#include <sys/types.h>

using namespace trellis;

namespace {

QString writePlan(const QTemporaryDir &dir, int steps)
{
    QFile source(QStringLiteral(TRELLIS_SOURCE_DIR "/tests/data/plans/dp4_short.json"));
    if (!source.open(QIODevice::ReadOnly))
        return {};
    QString text = QString::fromUtf8(source.readAll());
    text.replace(QStringLiteral("\"steps\": 12"), QStringLiteral("\"steps\": %1").arg(steps));
    text.replace(QStringLiteral("../../../resources"), QStringLiteral(TRELLIS_SOURCE_DIR "/resources"));
    const QString planPath = dir.filePath(QStringLiteral("plan-%1.json").arg(steps));
    QFile plan(planPath);
    if (!plan.open(QIODevice::WriteOnly))
        return {};
    plan.write(text.toUtf8());
    return planPath;
}

// A run's rank processes, once the history holds all `world` of them and `minSteps` of rank
// 0's steps; empty until then.
QList<qint64> rankPidsOnceGoing(const QString &database, const QString &runId, int world, int minSteps)
{
    trellis::launcher::HistoryDatabase db;
    if (!QFileInfo::exists(database) || !db.open(database, false).isEmpty())
        return {};
    const auto run = db.findRun(runId);
    const auto data = run ? db.loadRun(run->id) : std::nullopt;
    if (!data || data->ranks.size() != world)
        return {};
    int steps = 0;
    for (const auto &row : data->steps)
        steps += row.rank == 0 ? 1 : 0;
    QList<qint64> pids;
    for (const auto &r : data->ranks)
        if (r.pid > 0)
            pids.append(r.pid);
    return steps >= minSteps && pids.size() == world ? pids : QList<qint64>{};
}

// Holds processes stopped (SIGSTOP) while it lives.
struct Stopped {
    QList<qint64> pids;
    explicit Stopped(QList<qint64> p) : pids(std::move(p))
    {
        for (qint64 pid : pids)
            ::kill(static_cast<pid_t>(pid), SIGSTOP);
    }
    ~Stopped() { resume(); }
    void resume()
    {
        for (qint64 pid : std::exchange(pids, {}))
            ::kill(static_cast<pid_t>(pid), SIGCONT);
    }
};

// Points on the loss chart (the training panel, in Run mode's grid).
int lossPoints(ui::MainWindow &window)
{
    for (ui::dashboards::Panel *p : window.panels())
        if (p->objectId() == QLatin1String("training"))
            return qobject_cast<ui::dashboards::MetricPanel *>(p)->pointCount();
    return -1;
}

} // namespace

class TstMainWindow : public QObject {
    Q_OBJECT
    static constexpr int kSteps = 150;
private slots:
    void initTestCase()
    {
        qputenv("TRELLIS_CLI", TRELLIS_BINARY_DIR "/bin/trellis-cli");
        qputenv("TRELLIS_TRAINER", TRELLIS_BINARY_DIR "/bin/trellis-trainer");
    }

    void launchShowsLiveCharts()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        launcher::RunOptions options;
        options.trainerPath = QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-trainer");
        options.runsDirectory = dir.filePath(QStringLiteral("runs"));
        window.setRunOptions(options);
        window.show();
        QVERIFY(window.launchAction()->isEnabled()); // a new plan for this machine's cores is open
        QCOMPARE(window.document()->displayName(), QStringLiteral("Untitled"));
        // dp4_short with enough steps that the charts are seen growing while the run goes (at a
        // few ms a step its 12 steps can end before the first look, and then nothing grows).
        QFile source(QStringLiteral(TRELLIS_SOURCE_DIR "/tests/data/plans/dp4_short.json"));
        QVERIFY(source.open(QIODevice::ReadOnly));
        QString text = QString::fromUtf8(source.readAll());
        text.replace(QStringLiteral("\"steps\": 12"), QStringLiteral("\"steps\": %1").arg(kSteps));
        text.replace(QStringLiteral("../../../resources"), QStringLiteral(TRELLIS_SOURCE_DIR "/resources"));
        const QString planPath = dir.filePath(QStringLiteral("plan.json"));
        QFile plan(planPath);
        QVERIFY(plan.open(QIODevice::WriteOnly));
        plan.write(text.toUtf8());
        plan.close();
        QVERIFY(window.loadPlan(planPath));
        QVERIFY(window.launchAction()->isEnabled());

        QSignalSpy finished(window.feed(), &launcher::RunFeed::finished);
        window.launchAction()->trigger();
        QVERIFY(!window.launchAction()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(lossPoints(window) > 0, 120000);
        const int first = lossPoints(window);
        QTRY_VERIFY_WITH_TIMEOUT(lossPoints(window) > first, 120000);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 180000);
        QVERIFY(finished.first().at(0).value<launcher::RunState>() == launcher::RunState::Completed);
        QCOMPARE(lossPoints(window), 4 * kSteps);

        QTRY_COMPARE_WITH_TIMEOUT(window.historyPanel()->rowCount(), 1, 10000);
        window.runHeader()->showRun({}); // clear, then let the history bring the curves back
        QVERIFY(!window.grid()->frame(QStringLiteral("training"))->showsPanel());
        window.historyPanel()->selectRow(0);
        QTRY_VERIFY_WITH_TIMEOUT(window.grid()->frame(QStringLiteral("training"))->showsPanel(), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(lossPoints(window), 4 * kSteps, 10000);
        QVERIFY(window.launchAction()->isEnabled());
    }

    // A plan that names its history (telemetry.history, a file beside the plan here) records its
    // run there, and the window reads that history from the launch on; no switch while a run is
    // followed; File › Run history's switch is at once; --db (pinned) comes before the plan.
    void aPlansHistoryIsWhereItsRunGoes()
    {
        QTemporaryDir dir;
        const QString planPath = writePlan(dir, kSteps);
        QFile file(planPath);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QJsonObject plan = QJsonDocument::fromJson(file.readAll()).object();
        file.close();
        plan[QStringLiteral("telemetry")] = QJsonObject{{QStringLiteral("history"), QStringLiteral("team/plan-runs.sqlite")}};
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(QJsonDocument(plan).toJson());
        file.close();
        const QString mine = dir.filePath(QStringLiteral("mine.sqlite"));
        const QString planned = dir.filePath(QStringLiteral("team/plan-runs.sqlite"));
        launcher::RunOptions options;
        options.trainerPath = QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-trainer");
        {
            ui::MainWindow window(mine);
            window.setRunOptions(options);
            window.show();
            QVERIFY(window.loadPlan(planPath));
            QSignalSpy finished(window.feed(), &launcher::RunFeed::finished);
            window.launchAction()->trigger();
            QCOMPARE(window.historyPath(), planned);
            QTRY_VERIFY_WITH_TIMEOUT(lossPoints(window) > 0, 120000);
            if (finished.isEmpty()) // the run is followed: its history stays
                QVERIFY(!window.switchHistory(mine).isEmpty());
            QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 180000);
            QTRY_COMPARE_WITH_TIMEOUT(window.historyPanel()->rowCount(), 1, 10000);
            QVERIFY(!QFileInfo::exists(mine));
            // Switched at once, both ways, the list read again each time.
            QCOMPARE(window.switchHistory(mine), QString());
            QTRY_COMPARE_WITH_TIMEOUT(window.historyPanel()->rowCount(), 0, 10000);
            QCOMPARE(window.switchHistory(planned), QString());
            QTRY_COMPARE_WITH_TIMEOUT(window.historyPanel()->rowCount(), 1, 10000);
            QVERIFY(window.switchHistory(QStringLiteral("postgresql://ann:hunter2@db.example/team")).contains(QStringLiteral("password")));
            QCOMPARE(window.historyPath(), planned);
        }
        // --db named the window's history: the plan's does not move the run.
        ui::MainWindow pinned(mine);
        pinned.setHistoryPinned(true);
        pinned.setRunOptions(options);
        QVERIFY(pinned.loadPlan(planPath));
        QSignalSpy finished(pinned.feed(), &launcher::RunFeed::finished);
        pinned.launchAction()->trigger();
        QCOMPARE(pinned.historyPath(), mine);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 180000);
        QTRY_COMPARE_WITH_TIMEOUT(pinned.historyPanel()->rowCount(), 1, 10000);
        launcher::HistoryDatabase h;
        QCOMPARE(h.open(planned, false), QString());
        QCOMPARE(h.listRuns(10).size(), 1); // the first run only
    }

    // A run started without any window (trellis-cli run --detach); a window opened while it goes
    // reattaches to it: what the history holds first, then the live feed, every point once.
    void reopenedWindowReattaches()
    {
        QTemporaryDir dir;
        const int steps = 600;
        const QString planPath = writePlan(dir, steps);
        QVERIFY(!planPath.isEmpty());
        const QString db = dir.filePath(QStringLiteral("history.sqlite"));
        QProcess cli;
        // Rank 0 stalls 13 s at step 3 (the others wait for it): unless this process is kept off
        // the CPU for that long on a loaded machine, the ranks are still early in the run when it
        // stops them below (and the 600 steps after the stall are seconds more).
        cli.start(QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-cli"),
                  {QStringLiteral("--db"), db, QStringLiteral("run"), planPath, QStringLiteral("--detach"), QStringLiteral("--inject"),
                   QStringLiteral("stall@0:3")});
        QVERIFY(cli.waitForFinished(60000));
        QCOMPARE(cli.exitCode(), 0);
        const QString runId = QString::fromUtf8(cli.readAllStandardOutput()).section(QLatin1Char('\n'), 0, 0).section(QLatin1Char(' '), 1);
        QVERIFY(!runId.isEmpty());
        // Let it get going, so there is history to backfill; then its ranks wait (stopped) until
        // the window has attached, which on a busy machine can take seconds.
        QList<qint64> pids;
        QTRY_VERIFY_WITH_TIMEOUT(!(pids = rankPidsOnceGoing(db, runId, 4, 1)).isEmpty(), 60000);
        Stopped stopped(pids);

        ui::MainWindow window(db);
        window.show();
        QSignalSpy finished(window.feed(), &launcher::RunFeed::finished);
        QTRY_COMPARE_WITH_TIMEOUT(window.feed()->runId(), runId, 30000);
        QVERIFY(window.feed()->isAttached());
        // The run is live, its history on the chart, and the window can stop it.
        QTRY_VERIFY_WITH_TIMEOUT(window.feed()->state() == launcher::RunState::Running && lossPoints(window) >= 4, 30000);
        QVERIFY2(finished.isEmpty(), "the run ended before the window attached to it");
        QVERIFY(window.stopAction()->isEnabled());
        QVERIFY2(lossPoints(window) < 4 * steps, "the run ended before its ranks were stopped: the test process was kept off the CPU for as long as the whole run took");
        stopped.resume(); // the rest comes live
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 180000);
        QVERIFY(finished.first().at(0).value<launcher::RunState>() == launcher::RunState::Completed);
        QCOMPARE(lossPoints(window), 4 * steps);
        QCOMPARE(window.feed()->progress().step, qint64(steps));
    }

    // Run › Listen for jobs: a collector of this history, detached; a PyTorch DDP job started
    // torchrun-style on this machine (not by Trellis) with the two variables it prints becomes a
    // run the window follows, live, to its end; it cannot be stopped from here; stopping the
    // listener ends the collector.
    void listensForJobs()
    {
        if (QProcess::execute(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), QStringLiteral("import torch, zmq")}) != 0)
            QSKIP("needs Debian's python3-torch and python3-zmq (scripts/install-deps.sh)");
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        window.startListening(QStringLiteral("tcp://127.0.0.1:*"));
        QTRY_VERIFY_WITH_TIMEOUT(!window.listenerAddress().isEmpty(), 15000);
        QCOMPARE(window.listenAction()->text(), QStringLiteral("Stop listening"));
        std::vector<std::unique_ptr<QProcess>> ranks;
        for (int r = 0; r < 2; ++r) {
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("TRELLIS_COLLECTOR"), window.listenerAddress());
            env.insert(QStringLiteral("TRELLIS_COLLECTOR_KEYS"), window.listenerKeys());
            env.insert(QStringLiteral("PYTHONPATH"), QStringLiteral(TRELLIS_SOURCE_DIR "/python"));
            env.insert(QStringLiteral("OMP_NUM_THREADS"), QStringLiteral("1"));
            env.insert(QStringLiteral("RANK"), QString::number(r));
            env.insert(QStringLiteral("LOCAL_RANK"), QString::number(r));
            env.insert(QStringLiteral("WORLD_SIZE"), QStringLiteral("2"));
            env.insert(QStringLiteral("MASTER_ADDR"), QStringLiteral("127.0.0.1"));
            env.insert(QStringLiteral("MASTER_PORT"), QStringLiteral("29641"));
            env.insert(QStringLiteral("TRELLIS_JOB_NAME"), QStringLiteral("by-torchrun"));
            ranks.push_back(std::make_unique<QProcess>());
            ranks.back()->setProcessEnvironment(env);
            ranks.back()->start(QStringLiteral("/usr/bin/python3"),
                                {QStringLiteral(TRELLIS_SOURCE_DIR "/examples/pytorch/train_ddp.py"), QStringLiteral("--steps"), QStringLiteral("150")});
        }
        // The window follows the job's run, live: its loss on the chart while it trains.
        QTRY_VERIFY_WITH_TIMEOUT(window.feed()->isAttached() && window.feed()->state() == launcher::RunState::Running &&
                                     lossPoints(window) >= 4,
                                 60000);
        QVERIFY2(window.runHeader()->stateText().contains(QStringLiteral("a job Trellis did not launch")),
                 qPrintable(window.runHeader()->stateText()));
        QVERIFY(!window.stopAction()->isEnabled()); // watched, not stopped, from here
        const QString runId = window.feed()->runId();
        for (auto &p : ranks)
            QVERIFY(p->waitForFinished(120000) && p->exitCode() == 0);
        QTRY_VERIFY_WITH_TIMEOUT(window.feed()->state() == launcher::RunState::Completed, 30000);
        QTRY_COMPARE_WITH_TIMEOUT(lossPoints(window), 2 * 150, 15000); // every rank's every step
        // The feed says completed as the supervisor settles; the history commits it within the
        // writer's interval (the collector is stopped right after: a run it finished stays so).
        const auto recorded = [&] {
            launcher::HistoryDatabase h;
            const auto summary = h.open(dir.filePath(QStringLiteral("history.sqlite")), false).isEmpty() ? h.findRun(runId) : std::nullopt;
            return summary ? summary->name + QLatin1Char(' ') + summary->status : QString();
        };
        QTRY_COMPARE_WITH_TIMEOUT(recorded(), QStringLiteral("by-torchrun completed"), 10000);
        window.stopListening();
        QCOMPARE(window.listenAction()->text(), QStringLiteral("Listen for jobs…"));
        QTest::qWait(1000);
        QCOMPARE(recorded(), QStringLiteral("by-torchrun completed"));
    }

    void estimateAndSearch()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        const QString path = QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans/gpu/llama2-70b-dgx-h100.json");
        // The same plan for Megatron-LM: the trainer cannot run it, so it can be estimated, not
        // launched.
        QJsonObject megatron = QJsonDocument::fromJson([&path] {
                                   QFile f(path);
                                   return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
                               }()).object();
        QJsonObject parallel = megatron[QStringLiteral("parallel")].toObject();
        parallel[QStringLiteral("framework")] = QStringLiteral("megatron");
        megatron[QStringLiteral("parallel")] = parallel;
        const QString megatronPath = dir.filePath(QStringLiteral("megatron.json"));
        QFile out(megatronPath);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QJsonDocument(megatron).toJson());
        out.close();
        QVERIFY(window.loadPlan(megatronPath));
        QVERIFY(!window.launchAction()->isEnabled());
        QVERIFY2(window.launchAction()->toolTip().contains(QStringLiteral("Megatron-LM")), qPrintable(window.launchAction()->toolTip()));
        window.launch(); // refused before any process starts
        QVERIFY(window.feed()->state() == launcher::RunState::Idle);
        QVERIFY(!window.feed()->isAttached());
        // As written (CUDA on 128 GPUs, llama, bf16): the trainer runs it — several GPUs through
        // NCCL —, so Launch is on (the launch target's preflight is what would stop it here).
        QVERIFY(window.loadPlan(path));
        QVERIFY2(window.launchAction()->isEnabled(), qPrintable(window.launchAction()->toolTip()));
        ui::EstimatePanel *panel = window.estimatePanel();
        QTRY_VERIFY_WITH_TIMEOUT(panel->estimate().has_value(), 20000);
        const auto loaded = plan::loadPlanFile(path.toStdString());
        QVERIFY(loaded);
        const plan::Estimate expected = plan::estimatePlan(loaded.value(), plan::deviceFor(loaded.value().cluster));
        QCOMPARE(panel->estimate()->memory.size(), size_t(4));
        QCOMPARE(panel->estimate()->stepMs, expected.stepMs);
        QCOMPARE(panel->estimate()->memory.front().total(), expected.memory.front().total());

        QSignalSpy searched(panel, &ui::EstimatePanel::searchFinished);
        window.searchPlans();
        QVERIFY(!panel->searchButton()->isEnabled()); // one search at a time
        QVERIFY(searched.wait(60000));
        QVERIFY(panel->searchButton()->isEnabled());
        const auto &best = panel->searchResult().best;
        QVERIFY(!best.empty());
        QCOMPARE(panel->searchTable()->topLevelItemCount(), int(best.size()));
        QVERIFY(best.front().estimate.tokensPerS >= expected.tokensPerS); // the loaded plan is one of the candidates

        QSignalSpy shown(panel, &ui::EstimatePanel::estimateShown);
        panel->searchTable()->setCurrentItem(panel->searchTable()->topLevelItem(0));
        QVERIFY(panel->useButton()->isEnabled());
        panel->useButton()->click();
        QCOMPARE(window.plan()->parallel, best.front().plan.parallel);
        QCOMPARE(window.plan()->training, loaded.value().training); // only the parallelism (and model padding) change
        QVERIFY(shown.wait(20000));
        QCOMPARE(panel->estimate()->tokensPerS, plan::estimatePlan(*window.plan(), plan::deviceFor(window.plan()->cluster)).tokensPerS);
    }

    // The mesh view places every rank of a 128-GPU plan on its node, each at one spot, and names
    // its coordinates and groups as plan::Mesh gives them (tp 8 · dp 4 · pp 4: rank 37 is tp 5,
    // dp 0, pp 1; its tensor-parallel group is 32-39).
    void meshViewShowsEveryRank()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        QVERIFY(window.loadPlan(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans/gpu/llama2-70b-dgx-h100.json")));
        ui::MeshView *mesh = window.meshCanvas()->view();
        QCOMPARE(mesh->rankCount(), 128);
        const QString rank37 = mesh->describeRank(37);
        QVERIFY2(rank37.contains(QStringLiteral("tp 5 · cp 0 · dp 0 · pp 1")), qPrintable(rank37));
        QVERIFY2(rank37.contains(QStringLiteral("tensor-parallel group: 32, 33, 34, 35, 36, 37, 38, 39")), qPrintable(rank37));
        QVERIFY2(rank37.contains(QStringLiteral("pipeline group: 5, 37, 69, 101")), qPrintable(rank37));
        for (int width : {360, 900}) {
            mesh->resize(width, mesh->heightForWidth(width));
            std::set<int> seen;
            for (int y = 0; y < mesh->height(); y += 2)
                for (int x = 0; x < mesh->width(); x += 2)
                    if (const int r = mesh->rankAt(QPoint(x, y)); r >= 0)
                        seen.insert(r);
            QCOMPARE(int(seen.size()), 128);
        }
        // What is painted is what it says: each sampled rank's cell in its stage's colour, the
        // stages apart (a view of its own: inside the window, painting lets its dock lay it out).
        ui::MeshView alone;
        alone.setPlan(*window.plan());
        for (int width : {360, 900}) {
            alone.resize(width, alone.heightForWidth(width));
            QVERIFY(!alone.showsNodeTiles());
            QImage painted(alone.size(), QImage::Format_ARGB32);
            painted.fill(Qt::transparent);
            alone.render(&painted);
            QCOMPARE(alone.width(), width);
            QVERIFY(alone.colorOf(0) != alone.colorOf(37));
            for (int rank : {0, 37, 69, 127}) {
                const QRect cell = alone.rankRect(rank);
                QVERIFY2(!cell.isEmpty(), qPrintable(QStringLiteral("rank %1 at width %2").arg(rank).arg(width)));
                int matching = 0;
                for (int y = cell.top() + 1; y < cell.bottom(); ++y)
                    for (int x = cell.left() + 1; x < cell.right(); ++x)
                        matching += painted.pixelColor(x, y).rgb() == alone.colorOf(rank).rgb();
                QVERIFY2(matching * 4 > cell.width() * cell.height(),
                         qPrintable(QStringLiteral("rank %1: %2 of %3 pixels in its colour").arg(rank).arg(matching).arg(cell.width() * cell.height())));
            }
        }
    }

    // The window fits a 1280 × 800 screen with its default arrangement: no dock's minimum pushes
    // it wider (the mesh's five degree boxes and checkbox in one row made it 1303 pixels).
    void windowFitsA1280PixelScreen()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        QVERIFY(window.loadPlan(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans/quickstart.json")));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        // A failed run with a long reason on the dashboard's state line.
        launcher::RunData run;
        run.run.runId = QStringLiteral("20261125-042932-091f");
        run.run.status = QStringLiteral("failed");
        run.run.error = QStringLiteral("rank 3 on node-017 exited with code 134 (SIGABRT) at step 4512 while in the "
                                       "pipeline all-reduce of stage 2: see rank-3.log for its last lines");
        window.runHeader()->showRun(run);
        QTest::qWait(300); // the mesh sets its minimum once laid out
        QVERIFY2(window.minimumSizeHint().width() <= 1280, qPrintable(QString::number(window.minimumSizeHint().width())));
        QVERIFY2(window.width() <= 1280, qPrintable(QString::number(window.width())));
        // The left side's tabs share one width: the mesh's minimum is the side's minimum.
        QVERIFY2(window.meshCanvas()->minimumSizeHint().width() <= 400, qPrintable(QString::number(window.meshCanvas()->minimumSizeHint().width())));
    }

    // A dashboard off screen (its section collapsed, or the window in another mode) draws
    // nothing; shown again, it draws the last snapshot at once.
    void dashboardsOffScreenWaitForTheirTurn()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.raisePanel(QStringLiteral("training")));
        window.grid()->setCollapsed(QStringLiteral("throughput"), true);
        launcher::RunData run;
        run.run.runId = QStringLiteral("recorded");
        run.run.worldSize = 4;
        for (int s = 1; s <= 20; ++s)
            for (int r = 0; r < 4; ++r) {
                launcher::StepRow row;
                row.rank = r;
                row.step = s;
                row.loss = 5.0 - 0.01 * s;
                row.stepMs = 10 + r;
                row.tokensPerS = 1000;
                run.steps.append(row);
            }
        auto metricPanel = [&](const QString &id) {
            for (ui::dashboards::Panel *p : window.panels())
                if (p->objectId() == id)
                    return qobject_cast<ui::dashboards::MetricPanel *>(p);
            return static_cast<ui::dashboards::MetricPanel *>(nullptr);
        };
        auto *training = metricPanel(QStringLiteral("training")), *throughput = metricPanel(QStringLiteral("throughput"));
        QVERIFY(training && throughput);
        QTest::qWait(50);
        QVERIFY(throughput->visibleRegion().isEmpty()); // its section collapsed
        window.setMode(ui::MainWindow::Mode::Plan);     // and the grid itself hidden
        window.runHeader()->showSnapshot(launcher::telemetry::snapshotOf(run, {}));
        QCOMPARE(training->pointCount(), 0);
        QCOMPARE(throughput->pointCount(), 0);
        window.setMode(ui::MainWindow::Mode::Run);
        QTRY_VERIFY(training->pointCount() > 0);
        QCOMPARE(throughput->pointCount(), 0);
        QVERIFY(window.raisePanel(QStringLiteral("throughput"))); // expands its section
        QTRY_VERIFY(throughput->pointCount() > 0);
    }

    // A file that does not parse is not opened and changes nothing; a plan that parses but is not
    // valid opens, with its problems shown, and cannot be launched.
    void badPlanIsShownNotLaunched()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        QVERIFY(window.loadPlan(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans/quickstart.json")));
        const QString before = window.document()->json();
        QVERIFY(!window.loadPlan(QStringLiteral(TRELLIS_SOURCE_DIR "/tests/data/plans/bad_tp.json"))); // an unknown key
        QCOMPARE(window.document()->json(), before);
        QVERIFY(window.document()->filePath().endsWith(QStringLiteral("quickstart.json")));
        QFile invalid(dir.filePath(QStringLiteral("invalid.json")));
        QVERIFY(invalid.open(QIODevice::WriteOnly));
        invalid.write(R"({"schema": "trellis.plan/1", "model": {"layers": 2, "hidden": 64, "heads": 4, "ffn": 256, "seq_len": 64,
            "vocab": 256}, "cluster": {"nodes": [{"host": "localhost", "slots": 3}]}, "parallel": {"dp": 1, "tp": 3},
            "training": {"steps": 3, "data": {"source": "synthetic"}}})");
        invalid.close();
        QVERIFY(window.loadPlan(invalid.fileName()));
        QVERIFY(window.document()->hasErrors());
        QVERIFY(!window.launchAction()->isEnabled());
        window.launch(); // refused
        QVERIFY(!window.feed()->isAttached());
    }
};

QTEST_MAIN(TstMainWindow)
#include "tst_main_window.moc"
