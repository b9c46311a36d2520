// The workbench offscreen: load a plan, press Launch, and see the loss and throughput charts grow
// while the real 4-rank run goes; afterwards the run is in the history list and selecting it
// shows its curves.
#include "ui/dashboard.h"
#include "ui/history_panel.h"
#include "ui/main_window.h"

#include <QAction>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace trellis;

class TstMainWindow : public QObject {
    Q_OBJECT
private slots:
    void launchShowsLiveCharts()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        launcher::RunOptions options;
        options.trainerPath = QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-trainer");
        options.runsDirectory = dir.filePath(QStringLiteral("runs"));
        window.setRunOptions(options);
        window.show();
        QVERIFY(!window.launchAction()->isEnabled()); // nothing loaded yet
        QVERIFY(window.loadPlan(QStringLiteral(TRELLIS_SOURCE_DIR "/tests/data/plans/dp4_short.json")));
        QVERIFY(window.launchAction()->isEnabled());

        QSignalSpy finished(window.controller(), &launcher::RunController::finished);
        window.launchAction()->trigger();
        QVERIFY(!window.launchAction()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(window.dashboard()->lossPointCount() > 0, 120000);
        const int first = window.dashboard()->lossPointCount();
        QTRY_VERIFY_WITH_TIMEOUT(window.dashboard()->lossPointCount() > first, 120000);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 180000);
        QVERIFY(finished.first().at(0).value<launcher::RunState>() == launcher::RunState::Completed);
        QCOMPARE(window.dashboard()->lossPointCount(), 4 * 12);
        QCOMPARE(window.dashboard()->throughputPointCount(), 4 * 12);

        QTRY_COMPARE_WITH_TIMEOUT(window.historyPanel()->rowCount(), 1, 10000);
        window.dashboard()->showRun({}); // clear, then let the history bring the curves back
        QCOMPARE(window.dashboard()->lossPointCount(), 0);
        window.historyPanel()->selectRow(0);
        QTRY_COMPARE_WITH_TIMEOUT(window.dashboard()->lossPointCount(), 4 * 12, 10000);
        QVERIFY(window.launchAction()->isEnabled());
    }

    void badPlanIsShownNotLaunched()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        QVERIFY(!window.loadPlan(QStringLiteral(TRELLIS_SOURCE_DIR "/tests/data/plans/bad_tp.json")));
        QVERIFY(!window.launchAction()->isEnabled());
    }
};

QTEST_MAIN(TstMainWindow)
#include "tst_main_window.moc"
