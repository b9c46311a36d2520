// The Estimate panel's predicted timeline and plan comparison: the schedule simulator's step drawn
// as one lane per stage (bars where the simulator put them, hover naming the action, idle time
// named as bubble, zoom keeping the point under the pointer), the bubble fraction the estimate
// states; a pinned plan compared with an edited one (the differing fields, the predicted figures
// of both and their change), and the pinned plan taken back as one undo step.
#include "launcher/document/plan_document.h"
#include "backend/plan/cost/cost_model.h"
#include "backend/plan/plan_json.h"
#include "ui/estimate/estimate_format.h"
#include "ui/estimate/plan_comparison.h"
#include "ui/estimate/estimate_panel.h"
#include "ui/workspace/main_window.h"
#include "ui/widgets/timeline_chart.h"

#include "tests/support/mesh_plans.h"

#include <QFileInfo>
#include <QPushButton>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>
#include <QUndoStack>

using namespace trellis;

namespace {

using test::gpuPlan;

// The row of the comparison table whose first column is `what` (in any section).
QTreeWidgetItem *row(QTreeWidget *table, const QString &what)
{
    for (int s = 0; s < table->topLevelItemCount(); ++s)
        for (int r = 0; r < table->topLevelItem(s)->childCount(); ++r)
            if (table->topLevelItem(s)->child(r)->text(0) == what)
                return table->topLevelItem(s)->child(r);
    return nullptr;
}

bool estimateOf(ui::EstimatePanel &panel, const plan::Plan &p)
{
    QSignalSpy shown(&panel, &ui::EstimatePanel::estimateShown);
    panel.showPlan(p);
    return shown.wait(20000) && panel.isCurrent();
}

} // namespace

class TestEstimateViews : public QObject {
    Q_OBJECT
private slots:
    // A CPU plan that runs here, estimated on a machine with no calibration yet: the panel says it
    // measures this machine (trellis-cli calibrate, in a process of its own) and estimates again,
    // calibrated, once it is done; another estimate does not measure again. Real trellis-cli and
    // mpirun.
    void calibratesThisMachineUnasked()
    {
        QTemporaryDir dir;
        const QString calibration = dir.filePath(QStringLiteral("calibration.json"));
        qputenv("TRELLIS_AUTO_CALIBRATE", "1");
        qputenv("TRELLIS_CLI", TRELLIS_BINARY_DIR "/bin/trellis-cli");
        const auto restore = qScopeGuard([] { qputenv("TRELLIS_AUTO_CALIBRATE", "0"); });
        auto loaded = plan::loadPlanFile(TRELLIS_SOURCE_DIR "/resources/plans/quickstart.json");
        QVERIFY(loaded);
        plan::Plan p = loaded.value();
        p.parallel.dp = 2; // two ranks measure faster than the quick start's four
        ui::EstimatePanel panel(calibration);
        QSignalSpy shown(&panel, &ui::EstimatePanel::estimateShown);
        panel.showPlan(p);
        QVERIFY(shown.wait(20000));
        QVERIFY2(panel.headlineText().contains(QStringLiteral("measuring this machine for 2 rank(s)")), qPrintable(panel.headlineText()));
        QTRY_VERIFY2_WITH_TIMEOUT(QFileInfo::exists(calibration) && panel.headlineText().contains(QStringLiteral(", calibrated")),
                                  qPrintable(panel.headlineText()), 120000);
        const QDateTime written = QFileInfo(calibration).lastModified();
        QVERIFY(estimateOf(panel, p));
        QVERIFY2(!panel.headlineText().contains(QStringLiteral("measuring")), qPrintable(panel.headlineText()));
        QCOMPARE(QFileInfo(calibration).lastModified(), written);
    }

    void predictedTimeline()
    {
        ui::EstimatePanel panel(QString{});
        panel.resize(900, 600);
        const plan::Plan p = gpuPlan();
        QVERIFY(estimateOf(panel, p));
        ui::TimelineChart *chart = panel.timelineChart();
        chart->resize(800, 300);
        const auto &view = chart->timeline();
        const plan::Estimate e = plan::estimatePlan(p, plan::deviceFor(p.cluster));
        QCOMPARE(int(view.lanes.size()), 4);
        QCOMPARE(view.predictedBubble, e.bubbleFraction);
        QVERIFY(view.predictedMs > 0);
        // The first bar of stage 0 is the simulator's first action, drawn where it belongs.
        const auto &first = view.lanes[0].bars.front();
        QCOMPARE(first.kind, QStringLiteral("F"));
        QCOMPARE(first.startMs, 0.0);
        const QRectF bar = chart->barRect(0, 0);
        QVERIFY(!bar.isEmpty());
        QVERIFY2(chart->describeAt(bar.center().toPoint()).startsWith(QStringLiteral("F · micro-batch 0")),
                 qPrintable(chart->describeAt(bar.center().toPoint())));
        // Stage 3 waits for the first micro-batch: its lane starts idle.
        const QRectF lastFirst = chart->barRect(3, 0);
        QVERIFY(lastFirst.left() > bar.left() + 2);
        QVERIFY2(chart->describeAt(QPoint(int(bar.left()) + 1, int(lastFirst.center().y()))).contains(QStringLiteral("idle (bubble)")),
                 qPrintable(chart->describeAt(QPoint(int(bar.left()) + 1, int(lastFirst.center().y())))));
        // Zooming ×4 around the left edge makes the bar four times as wide, still at the left.
        chart->setZoom(4, 0);
        QCOMPARE(chart->zoom(), 4.0);
        QVERIFY(std::abs(chart->barRect(0, 0).width() - 4 * bar.width()) < 1.0);
        QCOMPARE(chart->barRect(0, 0).left(), bar.left());
        // Bars past the visible window are not drawn.
        QVERIFY(chart->barRect(0, int(view.lanes[0].bars.size()) - 1).isEmpty());
        chart->resetZoom();
        QCOMPARE(chart->barRect(0, 0), bar);

        // One stage: no schedule, said so.
        plan::Plan flat = p;
        flat.parallel.pp = 1;
        flat.parallel.dp = 16;
        QVERIFY(estimateOf(panel, flat));
        QVERIFY(chart->timeline().note.contains(QStringLiteral("One pipeline stage")));
    }

    void comparePinnedWithEdited()
    {
        ui::EstimatePanel panel(QString{});
        auto *comparison = panel.comparison();
        QVERIFY(!comparison->pinButton()->isEnabled()); // nothing estimated yet
        const plan::Plan p = gpuPlan();
        QVERIFY(estimateOf(panel, p));
        QVERIFY(comparison->pinButton()->isEnabled());
        comparison->pinButton()->click();
        QVERIFY(comparison->isPinned());
        QCOMPARE(*comparison->pinnedPlan(), p);
        QVERIFY(!comparison->restoreButton()->isEnabled()); // the plan is the pinned one

        plan::Plan edited = p;
        edited.parallel.tp = 4;
        edited.parallel.dp = 8;
        QVERIFY(estimateOf(panel, edited));
        QTreeWidget *table = comparison->table();
        QTreeWidgetItem *tp = row(table, QStringLiteral("parallel.tp"));
        QVERIFY(tp);
        QCOMPARE(tp->text(1), QStringLiteral("8"));
        QCOMPARE(tp->text(2), QStringLiteral("4"));
        QVERIFY(row(table, QStringLiteral("parallel.dp")));
        QVERIFY(!row(table, QStringLiteral("parallel.pp"))); // unchanged fields are not listed
        const plan::Estimate a = plan::estimatePlan(p, plan::deviceFor(p.cluster));
        const plan::Estimate b = plan::estimatePlan(edited, plan::deviceFor(edited.cluster));
        QTreeWidgetItem *tokens = row(table, QStringLiteral("tokens/s"));
        QVERIFY(tokens);
        QCOMPARE(tokens->text(1), ui::estimate::rate(a.tokensPerS));
        QCOMPARE(tokens->text(2), ui::estimate::rate(b.tokensPerS));
        QCOMPARE(tokens->text(3), ui::estimate::percentChange(a.tokensPerS, b.tokensPerS));
        QVERIFY(!tokens->text(3).isEmpty());
        QTreeWidgetItem *stage0 = row(table, QStringLiteral("stage 0"));
        QVERIFY(stage0);
        QCOMPARE(stage0->text(1), ui::estimate::gigabytes(double(a.memory[0].total())));
        QCOMPARE(stage0->text(2), ui::estimate::gigabytes(double(b.memory[0].total())));
        QVERIFY(row(table, QStringLiteral("MFU")) && row(table, QStringLiteral("cost a run")) && row(table, QStringLiteral("step time")));

        // Taking the pinned plan back.
        QVERIFY(comparison->restoreButton()->isEnabled());
        std::vector<plan::Plan> chosen;
        connect(&panel, &ui::EstimatePanel::pinnedPlanChosen, this, [&chosen](const plan::Plan &taken) { chosen.push_back(taken); });
        comparison->restoreButton()->click();
        QCOMPARE(int(chosen.size()), 1);
        QCOMPARE(chosen.front(), p);
        // Unpinning empties the table.
        comparison->pinButton()->click();
        QVERIFY(!comparison->isPinned());
        QCOMPARE(table->topLevelItemCount(), 0);
    }

    // In the workbench: pin, edit, use the pinned plan — one undo step that undo takes back.
    void pinnedPlanIsAnUndoStep()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        QVERIFY(window.loadPlan(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans/gpu/llama2-70b-dgx-h100.json")));
        ui::EstimatePanel *panel = window.estimatePanel();
        QSignalSpy shown(panel, &ui::EstimatePanel::estimateShown);
        QVERIFY(panel->isCurrent() || shown.wait(20000));
        panel->comparison()->pinButton()->click();
        QVERIFY(panel->comparison()->isPinned());
        const QString pinned = window.document()->json();
        QVERIFY(window.document()->setField(QStringLiteral("parallel.micro_batches"), QStringLiteral("16")).isEmpty());
        QVERIFY(shown.wait(20000));
        QVERIFY(row(panel->comparison()->table(), QStringLiteral("parallel.micro_batches")));
        panel->comparison()->restoreButton()->click();
        QCOMPARE(window.document()->json(), pinned);
        QCOMPARE(window.document()->undoStack()->undoText(), QStringLiteral("Use pinned plan"));
        window.document()->undoStack()->undo();
        QVERIFY(window.document()->json() != pinned);
    }
};

QTEST_MAIN(TestEstimateViews)
#include "tst_estimate_views.moc"
