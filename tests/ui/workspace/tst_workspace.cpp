// The workbench as a person meets it, without a run process: the modes (Start when nothing is
// open, Plan once a plan is, Run for a run, History for a comparison) and the title and status
// line naming plan and run; the dashboard grid in its sections at 1280 × 800 with no title cut,
// a section collapsing and the panels behind it drawing when it expands, a panel maximised and
// back with Esc, a panel dragged into another place and the arrangement saved and restored
// (and an older or malformed one ignored); the shared step cursor and the linked x-range; every
// panel's empty state before a run and for a run without a pipeline or experts; a chart saved as
// PNG and SVG; the start page's examples and recent runs; a run deleted while shown.
#include "launcher/metrics/dashboard_snapshot.h"
#include "launcher/history/history_database.h"
#include "ui/history/compare_view.h"
#include "ui/run/run_header.h"
#include "ui/dashboards/metric_panel.h"
#include "ui/workspace/main_window.h"
#include "ui/plan/mesh_view.h"
#include "ui/plan/mesh_canvas.h"
#include "ui/workspace/dashboard_grid.h"
#include "ui/workspace/panel_frame.h"
#include "ui/workspace/start_page.h"
#include "launcher/document/plan_document.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QDockWidget>
#include <QLabel>
#include <QMouseEvent>
#include <QListWidget>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

using namespace trellis;
using launcher::telemetry::DashboardSnapshot;
using ui::workspace::PanelFrame;

namespace {

// A recorded dense run of 4 ranks without a pipeline: loss, step time, tokens/s, a breakdown.
launcher::RunData recordedRun(int steps = 30)
{
    launcher::RunData run;
    run.run.runId = QStringLiteral("recorded");
    run.run.status = QStringLiteral("completed");
    run.run.worldSize = 4;
    run.run.totalSteps = steps;
    run.run.stepsDone = steps;
    for (int s = 1; s <= steps; ++s)
        for (int r = 0; r < 4; ++r) {
            launcher::StepRow row;
            row.rank = r;
            row.step = s;
            row.loss = 5.0 - 0.01 * s;
            row.computeMs = 10 + r;
            row.stepMs = 12 + r;
            row.tokensPerS = 1000;
            row.memParameters = 100 << 20;
            run.steps.append(row);
        }
    return run;
}

std::shared_ptr<const DashboardSnapshot> snapshotOf(const launcher::RunData &run)
{
    return launcher::telemetry::snapshotOf(run, {});
}

ui::dashboards::MetricPanel *metricPanel(ui::MainWindow &window, const QString &id)
{
    for (ui::dashboards::Panel *p : window.panels())
        if (p->objectId() == id)
            return qobject_cast<ui::dashboards::MetricPanel *>(p);
    return nullptr;
}

// The window at `size`, shown in Run mode; whether it was exposed.
bool showInRunMode(ui::MainWindow &window, QSize size)
{
    window.resize(size);
    window.show();
    window.setMode(ui::MainWindow::Mode::Run);
    return QTest::qWaitForWindowExposed(&window);
}

} // namespace

class TstWorkspace : public QObject {
    Q_OBJECT
private slots:
    void init()
    {
        // Each test its own settings: the saved layouts of one never reach the next.
        QSettings().clear();
    }

    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("trellis-tests"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_workspace"));
    }

    void modesTitleAndStatusLine()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.mode() == ui::MainWindow::Mode::Start); // nothing opened yet
        QVERIFY(window.loadPlan(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans/pipeline-cpu.json")));
        QVERIFY(window.mode() == ui::MainWindow::Mode::Plan);
        QVERIFY2(window.windowTitle().startsWith(QStringLiteral("pipeline-cpu.json")), qPrintable(window.windowTitle()));
        QVERIFY2(window.statusLine().contains(QStringLiteral("pipeline-cpu.json")), qPrintable(window.statusLine()));
        QVERIFY(window.statusLine().contains(QStringLiteral("no run open")));
        // The mesh is the Plan mode's canvas: on screen, and 2 ranks fill it (large cells).
        QVERIFY(window.meshCanvas()->isVisible());
        QTRY_VERIFY2(window.meshCanvas()->width() > window.width() / 4, qPrintable(QString::number(window.meshCanvas()->width())));
        QTRY_VERIFY(window.meshCanvas()->view()->rankRect(0).width() >= 56);
        QVERIFY(window.raisePanel(QStringLiteral("training")));
        QVERIFY(window.mode() == ui::MainWindow::Mode::Run);
        QVERIFY(window.raisePanel(QStringLiteral("history")));
        QVERIFY(window.mode() == ui::MainWindow::Mode::History);
        QVERIFY(window.raisePanel(QStringLiteral("estimate.timeline")));
        QVERIFY(window.mode() == ui::MainWindow::Mode::Plan);
        QVERIFY(!window.raisePanel(QStringLiteral("no-such-panel")));
        // A run shown: the title and the status line name it.
        launcher::RunData run = recordedRun();
        window.runHeader()->showRun(run);
        window.openRun(QStringLiteral("recorded")); // not in this history: the status bar says so
        QVERIFY(window.mode() == ui::MainWindow::Mode::Run);
    }

    void gridFitsWithoutCutTitles_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::newRow("1280x800") << QSize(1280, 800);
        QTest::newRow("1920x1080") << QSize(1920, 1080);
    }

    void gridFitsWithoutCutTitles()
    {
        QFETCH(QSize, size);
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        QVERIFY(showInRunMode(window, size));
        ui::workspace::DashboardGrid *grid = window.grid();
        QCOMPARE(grid->sectionIds(), (QStringList{QStringLiteral("training"), QStringLiteral("throughput"), QStringLiteral("steptime"),
                                                  QStringLiteral("pipeline"), QStringLiteral("communication"), QStringLiteral("memory"),
                                                  QStringLiteral("experts"), QStringLiteral("health"), QStringLiteral("events")}));
        QTRY_VERIFY(grid->columns() >= 2);
        window.runHeader()->showSnapshot(snapshotOf(recordedRun()));
        QTest::qWait(100);
        int onScreen = 0;
        for (const QString &section : grid->sectionIds())
            for (const QString &id : grid->panelsIn(section)) {
                PanelFrame *frame = grid->frame(id);
                auto *title = frame->findChild<QLabel *>(QStringLiteral("panelTitle"));
                QVERIFY(title);
                const int needed = title->fontMetrics().horizontalAdvance(frame->panel()->title());
                QVERIFY2(title->width() >= needed, qPrintable(QStringLiteral("%1: %2 of %3 px").arg(id).arg(title->width()).arg(needed)));
                onScreen += grid->isOnScreen(frame);
            }
        QVERIFY2(onScreen >= 4, qPrintable(QString::number(onScreen))); // two rows of two at least
        // The charts' plot areas fill their frames: the axes take most of the chart's height.
        auto *training = metricPanel(window, QStringLiteral("training"));
        QVERIFY(training->pointCount() > 0);
        const QRect axes = training->plot()->axisRect()->rect();
        QVERIFY2(axes.height() * 2 >= training->plot()->height() - 60,
                 qPrintable(QStringLiteral("axes %1 of %2 px").arg(axes.height()).arg(training->plot()->height())));
    }

    void collapseMaximiseAndCatchUp()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        QVERIFY(showInRunMode(window, {1400, 900}));
        ui::workspace::DashboardGrid *grid = window.grid();
        auto *training = metricPanel(window, QStringLiteral("training"));
        auto *throughput = metricPanel(window, QStringLiteral("throughput"));
        grid->setCollapsed(QStringLiteral("throughput"), true);
        QTest::qWait(50);
        QVERIFY(!grid->isOnScreen(grid->frame(QStringLiteral("throughput"))));
        window.runHeader()->showSnapshot(snapshotOf(recordedRun()));
        QVERIFY(training->pointCount() > 0);
        QCOMPARE(throughput->pointCount(), 0); // collapsed: drew nothing
        grid->setCollapsed(QStringLiteral("throughput"), false);
        QTRY_VERIFY(throughput->pointCount() > 0); // caught up when it showed

        QVERIFY(grid->maximise(QStringLiteral("throughput")));
        QTRY_VERIFY(grid->isOnScreen(grid->frame(QStringLiteral("throughput"))));
        QVERIFY(!grid->isOnScreen(grid->frame(QStringLiteral("training"))));
        QVERIFY(throughput->width() > window.width() / 2);
        QTest::keyClick(grid->frame(QStringLiteral("throughput")), Qt::Key_Escape);
        QCOMPARE(grid->maximised(), QString());
        QTRY_VERIFY(grid->isOnScreen(grid->frame(QStringLiteral("training"))));
        // Double-clicking the title maximises too.
        QWidget *titleBar = grid->frame(QStringLiteral("training"))->findChild<QLabel *>(QStringLiteral("panelTitle"));
        QTest::mouseDClick(titleBar, Qt::LeftButton);
        QCOMPARE(grid->maximised(), QStringLiteral("training"));
        QTest::keyClick(grid->frame(QStringLiteral("training")), Qt::Key_Escape);
        QCOMPARE(grid->maximised(), QString());
    }

    // A panel opened in a window of its own (a dock) draws there; closing it puts it back.
    void panelInAWindowAndBack()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        QVERIFY(showInRunMode(window, {1400, 900}));
        ui::workspace::DashboardGrid *grid = window.grid();
        PanelFrame *memory = grid->frame(QStringLiteral("memory"));
        QVERIFY(grid->openInWindow(QStringLiteral("memory")));
        QVERIFY(!grid->openInWindow(QStringLiteral("memory"))); // once
        auto *dock = window.findChild<QDockWidget *>(QStringLiteral("window-memory"));
        QVERIFY(dock && dock->isFloating());
        QCOMPARE(dock->widget(), memory);
        QVERIFY(!grid->isAncestorOf(memory));
        window.runHeader()->showSnapshot(snapshotOf(recordedRun()));
        QTRY_VERIFY(memory->showsPanel() && grid->isOnScreen(memory));
        dock->close();
        QVERIFY(!grid->isInWindow(QStringLiteral("memory")));
        QVERIFY(grid->isAncestorOf(memory));
        QCOMPARE(grid->sectionOf(QStringLiteral("memory")), QStringLiteral("memory"));
        QTRY_VERIFY(!window.findChild<QDockWidget *>(QStringLiteral("window-memory")));
    }

    // A snapshot is drawn on two on-screen panels at most, the longest-waiting first; the rest
    // follow with the next snapshot, or the catch-up timer when snapshots stop.
    void snapshotsDrawTwoPanelsEach()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        QVERIFY(showInRunMode(window, {1400, 900}));
        ui::workspace::DashboardGrid *grid = window.grid();
        QTest::qWait(50);
        QVERIFY(grid->isOnScreen(grid->frame(QStringLiteral("breakdown"))));
        auto *training = metricPanel(window, QStringLiteral("training"));
        auto *throughput = metricPanel(window, QStringLiteral("throughput"));
        auto *breakdown = grid->frame(QStringLiteral("breakdown"))->panel()->findChild<QCustomPlot *>();
        window.runHeader()->showSnapshot(snapshotOf(recordedRun(40)));
        QCOMPARE(training->pointCount(), 4 * 40);
        QCOMPARE(throughput->plot()->graphCount() > 0, true);
        QCOMPARE(breakdown->graphCount(), 0); // waits its turn
        // The next snapshot goes first to those that waited longest: training keeps 40 steps.
        window.runHeader()->showSnapshot(snapshotOf(recordedRun(41)));
        QVERIFY(breakdown->graphCount() > 0);
        QCOMPARE(training->pointCount(), 4 * 40);
        // No snapshot after it: the catch-up timer brings the rest to the newest.
        QTRY_COMPARE_WITH_TIMEOUT(training->pointCount(), 4 * 41, 2000);
    }

    void arrangementSavedRestoredAndOldOnesIgnored()
    {
        QTemporaryDir dir;
        {
            ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
            ui::workspace::DashboardGrid *grid = window.grid();
            QVERIFY(grid->movePanel(QStringLiteral("events"), QStringLiteral("training"))); // as a drop does
            QCOMPARE(grid->panelsIn(QStringLiteral("training")), (QStringList{QStringLiteral("events"), QStringLiteral("training")}));
            QVERIFY(grid->panelsIn(QStringLiteral("events")).isEmpty());
            grid->setCollapsed(QStringLiteral("memory"), true);
            window.close();
        }
        {
            ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
            QCOMPARE(window.grid()->panelsIn(QStringLiteral("training")), (QStringList{QStringLiteral("events"), QStringLiteral("training")}));
            QVERIFY(window.grid()->isCollapsed(QStringLiteral("memory")));
        }
        // An older version's layout (docks), a panel that no longer exists, one named twice, and
        // garbage: ignored, the default stands for the rest.
        QSettings settings;
        settings.setValue(QStringLiteral("window/state"), QByteArray("\x00\x00\x00\xff garbage", 12));
        settings.setValue(QStringLiteral("workbench/grid/panels"),
                          QStringList{QStringLiteral("training/gone"), QStringLiteral("nosuch/training"), QStringLiteral("memory/events"),
                                      QStringLiteral("experts/events"), QStringLiteral("junk")});
        settings.setValue(QStringLiteral("workbench/runSplit"), QByteArray("not a splitter state"));
        settings.sync();
        {
            ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            QCOMPARE(window.grid()->panelsIn(QStringLiteral("memory")), (QStringList{QStringLiteral("events"), QStringLiteral("memory")}));
            QCOMPARE(window.grid()->panelsIn(QStringLiteral("training")), QStringList{QStringLiteral("training")});
            QVERIFY(window.grid()->panelsIn(QStringLiteral("events")).isEmpty());
            window.setMode(ui::MainWindow::Mode::Run);
            QVERIFY(window.grid()->isVisible());
        }
        settings.setValue(QStringLiteral("workbench/grid/version"), 0); // an older grid's: not read at all
        {
            ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
            QCOMPARE(window.grid()->panelsIn(QStringLiteral("events")), QStringList{QStringLiteral("events")});
        }
        // A window saved bigger than this screen opens inside it.
        settings.clear();
        {
            ui::MainWindow big(dir.filePath(QStringLiteral("history.sqlite")));
            big.resize(6000, 4000);
            big.close();
        }
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        const QRect screen = window.screen()->availableGeometry();
        // Fitted into the screen, down to the window's minimum (which fits 1280 × 800).
        QVERIFY2(window.minimumSizeHint().width() <= 1280 && window.minimumSizeHint().height() <= 800,
                 qPrintable(QStringLiteral("%1x%2").arg(window.minimumSizeHint().width()).arg(window.minimumSizeHint().height())));
        const QSize fit = screen.size().expandedTo(window.minimumSizeHint());
        QVERIFY2(window.width() <= fit.width() && window.height() <= fit.height(),
                 qPrintable(QStringLiteral("%1x%2 on %3x%4").arg(window.width()).arg(window.height()).arg(screen.width()).arg(screen.height())));
    }

    void sharedCursorAndLinkedRange()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        QVERIFY(showInRunMode(window, {1400, 900}));
        window.runHeader()->showSnapshot(snapshotOf(recordedRun(40)));
        auto *training = metricPanel(window, QStringLiteral("training"));
        auto *throughput = metricPanel(window, QStringLiteral("throughput"));
        QTRY_VERIFY(throughput->pointCount() > 0);
        QCustomPlot *plot = training->plot();
        const QPoint at(int(plot->xAxis->coordToPixel(20)), plot->axisRect()->center().y());
        QMouseEvent move(QEvent::MouseMove, at, plot->mapToGlobal(at), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
        QApplication::sendEvent(plot, &move);
        QTRY_COMPARE(window.grid()->cursorStep(), 20.0);
        auto cursorOf = [](QCustomPlot *p) -> QCPItemStraightLine * {
            for (int i = 0; i < p->itemCount(); ++i)
                if (p->item(i)->objectName() == QLatin1String("stepCursor"))
                    return qobject_cast<QCPItemStraightLine *>(p->item(i));
            return nullptr;
        };
        QCPItemStraightLine *other = cursorOf(throughput->plot());
        QVERIFY(other && other->visible());
        QCOMPARE(other->point1->coords().x(), 20.0);
        // Zooming one step chart's x-range zooms them all, and a newer snapshot keeps it.
        window.grid()->setStepRange(QCPRange(5, 15));
        QCOMPARE(throughput->plot()->xAxis->range(), QCPRange(5, 15));
        window.runHeader()->showSnapshot(snapshotOf(recordedRun(41)));
        QTRY_COMPARE(throughput->plot()->xAxis->range(), QCPRange(5, 15));
        QCOMPARE(training->plot()->xAxis->range(), QCPRange(5, 15));
        window.grid()->resetStepRange();
        QTRY_VERIFY(training->plot()->xAxis->range().upper >= 41);
    }

    void emptyStatesSayWhatWillAppear()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        ui::workspace::DashboardGrid *grid = window.grid();
        for (const QString &section : grid->sectionIds())
            for (const QString &id : grid->panelsIn(section)) {
                const QString text = grid->frame(id)->emptyText();
                QVERIFY2(text.contains(QStringLiteral("Launch")), qPrintable(id + QStringLiteral(": ") + text));
                QVERIFY(!grid->frame(id)->showsPanel());
            }
        window.runHeader()->showSnapshot(snapshotOf(recordedRun()));
        QVERIFY(grid->frame(QStringLiteral("training"))->showsPanel());
        QVERIFY(grid->frame(QStringLiteral("memory"))->showsPanel());
        QVERIFY2(grid->frame(QStringLiteral("experts"))->emptyText().contains(QStringLiteral("no experts")),
                 qPrintable(grid->frame(QStringLiteral("experts"))->emptyText()));
        QVERIFY2(grid->frame(QStringLiteral("timeline"))->emptyText().contains(QStringLiteral("no pipeline")),
                 qPrintable(grid->frame(QStringLiteral("timeline"))->emptyText()));
        QVERIFY(!grid->frame(QStringLiteral("communication"))->emptyText().isEmpty());
        QVERIFY(grid->frame(QStringLiteral("events"))->emptyText().contains(QStringLiteral("No events")));
        // Nothing to draw again (a run without steps): every panel says so instead of old axes.
        window.runHeader()->showRun({});
        QVERIFY(!grid->frame(QStringLiteral("training"))->showsPanel());
    }

    void chartSavedAsPngAndSvg()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        QVERIFY(showInRunMode(window, {1400, 900}));
        window.runHeader()->showSnapshot(snapshotOf(recordedRun()));
        PanelFrame *frame = window.grid()->frame(QStringLiteral("training"));
        QTRY_VERIFY(metricPanel(window, QStringLiteral("training"))->pointCount() > 0);
        const QString png = dir.filePath(QStringLiteral("loss.png")), svg = dir.filePath(QStringLiteral("loss.svg"));
        QCOMPARE(frame->saveImage(png), QString());
        QImage image(png);
        QVERIFY(!image.isNull() && image.width() > 100 && image.height() > 100);
        QCOMPARE(frame->saveImage(svg), QString());
        QFile file(svg);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray text = file.readAll();
        QVERIFY(text.contains("<svg"));
        QVERIFY(text.contains("<path") || text.contains("<polyline")); // the curves as vectors
        QVERIFY(!frame->saveImage(QStringLiteral("/nonexistent-folder/x.png")).isEmpty());
        QVERIFY(!frame->image().isNull());
    }

    void startPageListsExamplesAndRuns()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        window.setExamplesDirectory(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans"));
        QListWidget *examples = window.startPage()->examples();
        QVERIFY(examples->count() >= 6);
        QVERIFY(examples->item(0)->text().startsWith(QStringLiteral("quickstart — ")));
        for (int i = 0; i < examples->count(); ++i)
            QVERIFY2(examples->item(i)->text().section(QStringLiteral(" — "), 1).size() > 10, qPrintable(examples->item(i)->text()));
        // Choosing one opens it in Plan mode.
        window.show();
        QTest::mouseClick(examples->viewport(), Qt::LeftButton, {}, examples->visualItemRect(examples->item(0)).center());
        QTRY_VERIFY(window.mode() == ui::MainWindow::Mode::Plan);
        QVERIFY(window.document()->filePath().endsWith(QStringLiteral("quickstart.json")));
        QCOMPARE(window.startPage()->recentPlans()->item(0)->data(Qt::UserRole).toString(), window.document()->filePath());
        launcher::RunSummary summary;
        summary.runId = QStringLiteral("20261126-000000-abcd");
        summary.status = QStringLiteral("completed");
        window.startPage()->setRecentRuns({summary});
        QCOMPARE(window.startPage()->recentRuns()->item(0)->data(Qt::UserRole).toString(), summary.runId);
        QVERIFY(ui::workspace::StartPage::describeExample(QStringLiteral(TRELLIS_SOURCE_DIR "/tests/data/plans/dp4_short.json")).contains(QStringLiteral("4 ranks")));
    }
};

QTEST_MAIN(TstWorkspace)
#include "tst_workspace.moc"
