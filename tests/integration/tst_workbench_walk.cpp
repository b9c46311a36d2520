// The workbench walked through as a person uses it, with the real trainer under its supervisor:
// on the start page choose the example (a pipeline of 2 stages × 2 data-parallel ranks with 4
// experts), change it in the editor and save it, launch it (the window goes to Run mode), watch
// it: every section that applies to it shows data — training, throughput, step time, pipeline,
// communication, memory, experts, health — and the rest their empty state; launch it again with
// another learning rate, compare the two runs in History mode, export a report of one; then the
// other run is deleted from the history while it is listed, and choosing it shows an empty state.
#include "launcher/document/plan_document.h"
#include "ui/history/compare_view.h"
#include "ui/run/run_header.h"
#include "ui/dashboards/metric_panel.h"
#include "ui/history/history_panel.h"
#include "ui/workspace/main_window.h"
#include "ui/plan/plan_editor.h"
#include "ui/workspace/dashboard_grid.h"
#include "ui/workspace/panel_frame.h"
#include "ui/workspace/start_page.h"

#include <qcustomplot.h>

#include <QAction>
#include <QLineEdit>
#include <QFile>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace trellis;
using ui::MainWindow;

namespace {

// The plan as an example beside its corpus (the example's relative path points at it).
QString writeExample(const QTemporaryDir &dir)
{
    QFile source(QStringLiteral(TRELLIS_SOURCE_DIR "/tests/data/plans/pp2_dp2_experts.json"));
    if (!source.open(QIODevice::ReadOnly))
        return {};
    QString text = QString::fromUtf8(source.readAll());
    text.replace(QStringLiteral("../../../resources"), QStringLiteral(TRELLIS_SOURCE_DIR "/resources"));
    QDir(dir.path()).mkpath(QStringLiteral("examples"));
    const QString path = dir.filePath(QStringLiteral("examples/pp2-dp2-experts.json"));
    QFile out(path);
    if (!out.open(QIODevice::WriteOnly))
        return {};
    out.write(text.toUtf8());
    return path;
}

void clickRow(QAbstractItemView *view, const QModelIndex &index, Qt::KeyboardModifiers modifiers = {})
{
    QTest::mouseClick(view->viewport(), Qt::LeftButton, modifiers, view->visualRect(index).center());
}

} // namespace

class TstWorkbenchWalk : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        qputenv("TRELLIS_CLI", TRELLIS_BINARY_DIR "/bin/trellis-cli");
        qputenv("TRELLIS_TRAINER", TRELLIS_BINARY_DIR "/bin/trellis-trainer");
    }

    void configureLaunchWatchCompareExport()
    {
        QTemporaryDir dir;
        const QString example = writeExample(dir);
        QVERIFY(!example.isEmpty());
        const QString db = dir.filePath(QStringLiteral("history.sqlite"));
        MainWindow window(db);
        launcher::RunOptions options;
        options.trainerPath = QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-trainer");
        options.runsDirectory = dir.filePath(QStringLiteral("runs"));
        window.setRunOptions(options);
        window.setExamplesDirectory(dir.filePath(QStringLiteral("examples")));
        window.resize(1280, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));

        // Configure: the example from the start page, two fields changed in the editor, saved.
        QVERIFY(window.mode() == MainWindow::Mode::Start);
        QListWidget *examples = window.startPage()->examples();
        QCOMPARE(examples->count(), 1);
        clickRow(examples, examples->model()->index(0, 0));
        QTRY_VERIFY(window.mode() == MainWindow::Mode::Plan);
        auto *steps = qobject_cast<QSpinBox *>(window.planEditor()->controlFor(QStringLiteral("training.steps")));
        QVERIFY(steps && steps->isVisible() == true);
        steps->setValue(30);
        QTRY_COMPARE(window.plan()->training.steps, 30);
        QVERIFY(window.document()->isModified());
        QVERIFY(window.windowTitle().startsWith(QStringLiteral("pp2-dp2-experts.json")));
        const QString saved = dir.filePath(QStringLiteral("walk.json"));
        QVERIFY(window.savePlanTo(saved));
        QVERIFY(!window.document()->isModified());

        // Launch: Run mode, the run named in the title; watch it to the end.
        QSignalSpy finished(window.feed(), &launcher::RunFeed::finished);
        QVERIFY(window.launchAction()->isEnabled());
        window.launchAction()->trigger();
        QVERIFY(window.mode() == MainWindow::Mode::Run);
        QTRY_VERIFY_WITH_TIMEOUT(!window.feed()->runId().isEmpty(), 10000);
        QVERIFY2(window.windowTitle().contains(window.feed()->runId()), qPrintable(window.windowTitle()));
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 180000);
        QVERIFY(finished.first().at(0).value<launcher::RunState>() == launcher::RunState::Completed);
        QVERIFY(window.statusLine().contains(QStringLiteral("completed")));
        ui::workspace::DashboardGrid *grid = window.grid();
        const QStringList withData = {QStringLiteral("training"),      QStringLiteral("throughput"), QStringLiteral("breakdown"),
                                      QStringLiteral("heatmap"),       QStringLiteral("timeline"),   QStringLiteral("communication"),
                                      QStringLiteral("memory"),        QStringLiteral("experts"),    QStringLiteral("health")};
        for (const QString &id : withData) {
            QVERIFY(window.raisePanel(id));
            QTRY_VERIFY2_WITH_TIMEOUT(grid->frame(id)->showsPanel(),
                                      qPrintable(id + QStringLiteral(" shows: ") + grid->frame(id)->emptyText()), 10000);
            QTRY_VERIFY(grid->isOnScreen(grid->frame(id)));
        }
        // The events panel has its list or says there were none; never empty axes.
        QVERIFY(grid->frame(QStringLiteral("events"))->showsPanel() ||
                grid->frame(QStringLiteral("events"))->emptyText().contains(QStringLiteral("No events")));
        auto *training = qobject_cast<ui::dashboards::MetricPanel *>(grid->frame(QStringLiteral("training"))->panel());
        window.raisePanel(QStringLiteral("training"));
        QTRY_COMPARE(training->pointCount(), 4 * 30);

        // Again with another learning rate, then compare the two in History mode.
        window.setMode(MainWindow::Mode::Plan);
        auto *lr = qobject_cast<QLineEdit *>(window.planEditor()->controlFor(QStringLiteral("training.lr")));
        QVERIFY(lr);
        lr->setText(QStringLiteral("0.001"));
        emit lr->editingFinished();
        QTRY_COMPARE(window.plan()->training.lr, 0.001);
        window.launchAction()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 2, 180000);
        QVERIFY(finished.at(1).at(0).value<launcher::RunState>() == launcher::RunState::Completed);
        window.raisePanel(QStringLiteral("history"));
        ui::HistoryPanel *history = window.historyPanel();
        QTRY_COMPARE_WITH_TIMEOUT(history->rowCount(), 2, 10000);
        clickRow(history->table(), history->table()->model()->index(0, 0));
        clickRow(history->table(), history->table()->model()->index(1, 0), Qt::ControlModifier);
        QCOMPARE(history->selectedRunIds().size(), 2);
        QVERIFY(history->compareButton()->isEnabled());
        QTest::mouseClick(history->compareButton(), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(window.compareView()->lossPlot()->graphCount(), 2, 10000);
        QVERIFY(window.mode() == MainWindow::Mode::History);
        QVERIFY(window.compareView()->isVisible());

        // Export a report of one run.
        clickRow(history->table(), history->table()->model()->index(0, 0));
        const QString report = dir.filePath(QStringLiteral("report.html"));
        QVERIFY(window.exportReportTo(report));
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(report), 20000);
        QFile html(report);
        QVERIFY(html.open(QIODevice::ReadOnly));
        QVERIFY(html.readAll().contains("<html"));

        // The older run is deleted from the history while listed; choosing it shows an empty state.
        {
            QSqlDatabase sql = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("walk-delete"));
            sql.setDatabaseName(db);
            QVERIFY(sql.open());
            QSqlQuery q(sql);
            QVERIFY(q.exec(QStringLiteral("PRAGMA busy_timeout = 5000")));
            QVERIFY(q.exec(QStringLiteral("DELETE FROM runs WHERE id = (SELECT MIN(id) FROM runs)")));
            sql.close();
        }
        QSqlDatabase::removeDatabase(QStringLiteral("walk-delete"));
        clickRow(history->table(), history->table()->model()->index(1, 0)); // the list still shows it
        window.setMode(MainWindow::Mode::Run);
        QTRY_VERIFY_WITH_TIMEOUT(!grid->frame(QStringLiteral("training"))->showsPanel(), 10000);
        QVERIFY2(window.runHeader()->stateText().contains(QStringLiteral("no longer")), qPrintable(window.runHeader()->stateText()));
        QTRY_COMPARE_WITH_TIMEOUT(history->rowCount(), 1, 10000);
    }
};

QTEST_MAIN(TstWorkbenchWalk)
#include "tst_workbench_walk.moc"
