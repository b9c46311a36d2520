// The mesh as the canvas: hit-testing at 1, 128 and 4096 ranks at every zoom (each rank's cell
// answers with that rank, gaps with none; zoomed out, nodes become tiles that answer with the
// node), clicking selects a rank and outlines its groups while the rest is dimmed (checked on the
// painted pixels), colouring by an axis, and the per-axis steppers as undo steps on the document
// (tp stepping among the heads' divisors, dp following to keep the world size, undo putting both
// back).
#include "launcher/document/plan_document.h"
#include "backend/plan/plan_json.h"
#include "ui/plan/mesh_view.h"
#include "ui/plan/mesh_canvas.h"

#include "tests/support/mesh_plans.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QSpinBox>
#include <QTest>
#include <QUndoStack>
#include <QWheelEvent>

using namespace trellis;
using ui::MeshView;
using ui::plan_editor::MeshCanvas;

namespace {

using test::gpuPlan;

plan::Plan planWithRanks(int ranks) { return test::gpuPlanWithRanks(ranks); }

// The painted colour inside a rank's cell, clear of its outline and its label.
QRgb pixel(MeshView &view, int rank)
{
    const QImage image = view.grab().toImage(); // lays the view out first
    return image.pixelColor((view.rankRect(rank).topLeft() + QPoint(5, 5)) * view.devicePixelRatioF()).rgb();
}

} // namespace

class TestMeshCanvas : public QObject {
    Q_OBJECT
private slots:
    void hitTesting_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::newRow("1") << 1;
        QTest::newRow("128") << 128;
        QTest::newRow("4096") << 4096;
    }

    // At every zoom level, every (sampled) rank's cell centre answers with the rank and the gap
    // beside the cell with none; as tiles, every node's tile answers with the node.
    void hitTesting()
    {
        QFETCH(int, ranks);
        MeshView view;
        view.setPlan(planWithRanks(ranks));
        QCOMPARE(view.rankCount(), ranks);
        view.setFitHeight(400);
        const int step = ranks > 512 ? 37 : 1;
        for (int level = -1; level < MeshView::zoomLevels(); ++level) {
            view.setZoom(level);
            view.resize(std::max(600, view.minimumWidth()), view.heightForWidth(std::max(600, view.minimumWidth())));
            if (view.showsNodeTiles()) {
                QCOMPARE(view.rankAt(view.nodeRect(0).center()), -1);
                for (int node = 0; node < view.nodeCount(); node += step) {
                    const QRect tile = view.nodeRect(node);
                    QVERIFY(!tile.isEmpty());
                    QCOMPARE(view.nodeAt(tile.center()), node);
                    QCOMPARE(view.nodeAt(tile.topRight() + QPoint(1, 0)), -1); // the gap between tiles
                    QCOMPARE(view.nodeAt(tile.bottomLeft() + QPoint(0, 1)), -1);
                }
                continue;
            }
            for (int rank = 0; rank < ranks; rank += step) {
                const QRect cell = view.rankRect(rank);
                QVERIFY2(!cell.isEmpty(), qPrintable(QStringLiteral("level %1 rank %2").arg(level).arg(rank)));
                QCOMPARE(view.rankAt(cell.center()), rank);
                QCOMPARE(view.rankAt(cell.topLeft()), rank);
                QCOMPARE(view.rankAt(cell.bottomRight()), rank);
                QCOMPARE(view.rankAt(cell.topRight() + QPoint(1, 0)), -1); // the gap between cells
                QCOMPARE(view.rankAt(cell.bottomLeft() + QPoint(0, 1)), -1);
            }
            QCOMPARE(view.rankAt(QPoint(1, 1)), -1); // the margin
        }
    }

    // Fitted, 4096 ranks are node tiles (one per node) and 128 ranks are cells; a click on a tile
    // selects the node's first rank, a click on a cell its rank, a click on nothing clears.
    void zoomAndClick()
    {
        MeshView view;
        view.setPlan(planWithRanks(4096));
        view.setFitHeight(400);
        view.resize(600, view.heightForWidth(600));
        QVERIFY(view.showsNodeTiles());
        QCOMPARE(view.nodeCount(), 512);
        QTest::mouseClick(&view, Qt::LeftButton, {}, view.nodeRect(17).center());
        QCOMPARE(view.selectedRank(), 17 * 8);
        QVERIFY(view.describeNode(17).contains(QStringLiteral("ranks 136–143")));
        // Ctrl+wheel zooms in to rank cells, level by level.
        const QPoint at = view.nodeRect(0).center();
        for (int i = 0; i < 8 && view.showsNodeTiles(); ++i) {
            QWheelEvent wheel(at, view.mapToGlobal(at), {}, {0, 120}, Qt::NoButton, Qt::ControlModifier, Qt::NoScrollPhase, false);
            QCoreApplication::sendEvent(&view, &wheel);
        }
        QVERIFY(!view.showsNodeTiles());
        QCOMPARE(view.cellSize(), 7);
        view.resize(std::max(600, view.minimumWidth()), view.heightForWidth(600));
        QTest::mouseClick(&view, Qt::LeftButton, {}, view.rankRect(4000).center());
        QCOMPARE(view.selectedRank(), 4000);
        QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(1, 1));
        QCOMPARE(view.selectedRank(), -1);

        MeshView small;
        small.setPlan(gpuPlan());
        small.resize(600, small.heightForWidth(600));
        QVERIFY(!small.showsNodeTiles());
        QVERIFY(small.cellSize() >= 7);
    }

    // Selecting rank 37 of tp 8 · dp 4 · pp 4 outlines its groups and dims every other rank: the
    // painted centre of a group member keeps its colour, an unrelated rank is faded towards the
    // background.
    void selectionOutlinesGroups()
    {
        launcher::document::PlanDocument doc;
        doc.newDocument(gpuPlan());
        MeshCanvas canvas(&doc);
        canvas.resize(900, 700);
        MeshView &view = *canvas.view();
        view.resize(860, view.heightForWidth(860));
        const QRgb memberBefore = pixel(view, 36);
        QCOMPARE(memberBefore, view.colorOf(36).rgb());
        QTest::mouseClick(&view, Qt::LeftButton, {}, view.rankRect(37).center());
        QCOMPARE(view.selectedRank(), 37);
        const QString text = canvas.selectionLabel()->text();
        QVERIFY2(text.contains(QStringLiteral("tensor-parallel group: 32, 33, 34, 35, 36, 37, 38, 39")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("data-parallel group: 37, 45, 53, 61")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("pipeline group: 5, 37, 69, 101")), qPrintable(text));
        QCOMPARE(pixel(view, 36), view.colorOf(36).rgb());  // tp group member
        QCOMPARE(pixel(view, 101), view.colorOf(101).rgb()); // pipeline group member
        const QColor faded = QColor(pixel(view, 0)); // tp 0, pp 0: no group of 37
        QVERIFY2(faded.rgb() != view.colorOf(0).rgb(), qPrintable(faded.name()));
        const QColor base = view.palette().color(QPalette::Base);
        QVERIFY(std::abs(faded.lightness() - base.lightness()) < std::abs(view.colorOf(0).lightness() - base.lightness()));
    }

    // Colouring by an axis: ranks sharing the coordinate share the colour, and the painted cell
    // has it.
    void colourByAxis()
    {
        launcher::document::PlanDocument doc;
        doc.newDocument(gpuPlan());
        MeshCanvas canvas(&doc);
        MeshView &view = *canvas.view();
        view.resize(860, view.heightForWidth(860));
        QCOMPARE(view.colorOf(0).rgb(), view.colorOf(31).rgb()); // stage 0
        QVERIFY(view.colorOf(0).rgb() != view.colorOf(32).rgb()); // stage 1
        canvas.axisBox()->setCurrentIndex(canvas.axisBox()->findData(int(MeshView::Axis::Tp)));
        QCOMPARE(view.colorAxis(), MeshView::Axis::Tp);
        QCOMPARE(view.colorOf(0).rgb(), view.colorOf(8).rgb()); // tp 0 in two dp replicas
        QVERIFY(view.colorOf(0).rgb() != view.colorOf(1).rgb());
        QCOMPARE(pixel(view, 9), view.colorOf(1).rgb());
        canvas.axisBox()->setCurrentIndex(canvas.axisBox()->findData(int(MeshView::Axis::Dp)));
        QCOMPARE(view.colorOf(0).rgb(), view.colorOf(1).rgb());
        QVERIFY(view.colorOf(0).rgb() != view.colorOf(8).rgb());
        QCOMPARE(pixel(view, 8), view.colorOf(8).rgb());
    }

    // The steppers: tp steps among the divisors of the heads; with the world size kept, dp
    // follows in the same undo step; undo puts both back and the steppers follow.
    void steppersAreUndoSteps()
    {
        launcher::document::PlanDocument doc;
        doc.newDocument(gpuPlan());
        MeshCanvas canvas(&doc);
        QSpinBox *tp = canvas.stepper(QStringLiteral("tp"));
        QSpinBox *dp = canvas.stepper(QStringLiteral("dp"));
        QSpinBox *pp = canvas.stepper(QStringLiteral("pp"));
        QVERIFY(tp && dp && pp && canvas.stepper(QStringLiteral("cp")) && canvas.stepper(QStringLiteral("ep")));
        QVERIFY(!canvas.stepper(QStringLiteral("ep"))->isEnabled()); // a dense model
        QCOMPARE(tp->value(), 8);
        QCOMPARE(MeshCanvas::offeredDegrees(doc.plan(), QStringLiteral("tp"), false), (std::vector<int>{1, 2, 4, 8}));
        QCOMPARE(MeshCanvas::offeredDegrees(doc.plan(), QStringLiteral("pp"), true), (std::vector<int>{1, 2, 4, 8, 16}));
        const int steps = doc.undoStack()->count();
        tp->stepBy(-1);
        QCOMPARE(doc.plan().parallel.tp, 4);
        QCOMPARE(doc.plan().parallel.dp, 8);
        QCOMPARE(doc.plan().parallel.worldSize(), 128);
        QCOMPARE(dp->value(), 8);
        QCOMPARE(doc.undoStack()->count(), steps + 1);
        QCOMPARE(doc.undoStack()->undoText(), QStringLiteral("Set tp to 4 (dp 8)"));
        pp->stepBy(1); // 4 → 8 with dp 8 → 4
        QCOMPARE(doc.plan().parallel.pp, 8);
        QCOMPARE(doc.plan().parallel.dp, 4);
        doc.undoStack()->undo();
        doc.undoStack()->undo();
        QCOMPARE(doc.plan(), gpuPlan());
        QCOMPARE(tp->value(), 8);
        QCOMPARE(pp->value(), 4);
        // Without keeping the world size, only the axis changes (and the validator speaks).
        canvas.keepWorldBox()->setChecked(false);
        tp->stepBy(-1);
        QCOMPARE(doc.plan().parallel.tp, 4);
        QCOMPARE(doc.plan().parallel.dp, 4);
        QVERIFY(doc.hasErrors() || !doc.diagnostics().empty());
        dp->setValue(1);
        QCOMPARE(doc.plan().parallel.dp, 1);
        QCOMPARE(canvas.view()->rankCount(), 16); // tp 4 · pp 4
        QCOMPARE(doc.undoStack()->undoText(), QStringLiteral("Set parallel.dp to 1"));
    }
};

QTEST_MAIN(TestMeshCanvas)
#include "tst_mesh_canvas.moc"
