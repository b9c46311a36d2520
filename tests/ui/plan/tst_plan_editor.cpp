// The plan editor in the workbench: every path the validator can name has a control; a value set
// through a widget reaches the document as one undo step, its problem appears beside the field and
// in the problems list (which selects the control), and the estimate follows (or says it cannot);
// refused values change nothing; adding nodes is one step; undo from the Edit menu.
#include "launcher/document/plan_document.h"
#include "backend/plan/presets.h"
#include "ui/estimate/estimate_panel.h"
#include "ui/workspace/main_window.h"
#include "ui/plan/field_table.h"
#include "ui/plan/plan_editor.h"

#include "tests/support/validator_paths.h"

#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenuBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QThread>
#include <QUndoStack>

using namespace trellis;
using ui::plan_editor::PlanEditor;

class TestPlanEditor : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("trellis-tests"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_plan_editor"));
    }

    void everyValidatorPathHasAControl()
    {
        launcher::document::PlanDocument doc;
        PlanEditor editor(&doc);
        const QStringList paths = test::validatorFieldPaths();
        QVERIFY(paths.size() > 50);
        for (const QString &path : paths) {
            const QString control = ui::plan_editor::controlPathFor(path);
            QVERIFY2(!control.isEmpty(), qPrintable(path));
            QVERIFY2(editor.controlFor(control) != nullptr, qPrintable(path));
            QVERIFY2(editor.messageFor(control) != nullptr, qPrintable(path));
        }
        // And the table names only real fields.
        for (const auto &f : ui::plan_editor::fields())
            QVERIFY2(!doc.field(f.path).isEmpty(), qPrintable(f.path));
        QCOMPARE(ui::plan_editor::controlPathFor(QStringLiteral("cluster.nodes[12].slots")), QStringLiteral("cluster.nodes"));
        QCOMPARE(ui::plan_editor::nodeIndexOf(QStringLiteral("cluster.nodes[12].slots")), 12);
    }

    // At 1280×800 (the smallest screen the workbench is laid out for) the editor's column shows
    // every field whole: nothing in it is wider than the column, so no field hides under the
    // right edge (and there is no horizontal scroll bar).
    void everyFieldFitsTheColumnAt1280()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        QVERIFY(window.loadPlan(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans/quickstart.json")));
        window.resize(1280, 800);
        window.setMode(ui::MainWindow::Mode::Plan);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto *scroll = window.planEditor()->findChild<QScrollArea *>();
        QVERIFY(scroll);
        QTRY_VERIFY(scroll->viewport()->width() > 200);
        const int room = scroll->viewport()->width();
        QStringList wide;
        for (QWidget *w : scroll->widget()->findChildren<QWidget *>())
            if (w->isVisibleTo(scroll->widget()) && w->minimumSizeHint().width() > room - 20)
                wide << QStringLiteral("%1 %2: %3").arg(QLatin1String(w->metaObject()->className()), w->objectName()).arg(w->minimumSizeHint().width());
        QVERIFY2(scroll->widget()->minimumSizeHint().width() <= room,
                 qPrintable(QStringLiteral("the fields need %1 px, the column has %2: %3")
                                .arg(scroll->widget()->minimumSizeHint().width())
                                .arg(room)
                                .arg(wide.join(QStringLiteral("; ")))));
    }

    // The summary line shows the plan's file name as it is: one with "%2" or "%10" in it is not
    // taken for a place of the line's figures (it was: the ranks' count took the "%2").
    void summaryShowsAPlanNameAsItIs()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("load %2 and %10 test.json"));
        QVERIFY(QFile::copy(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans/quickstart.json"), path));
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        QVERIFY(window.loadPlan(path));
        const QString text = window.planEditor()->summary()->text();
        QVERIFY2(text.contains(QStringLiteral("load %2 and %10 test.json")) && text.contains(QStringLiteral("global batch")), qPrintable(text));
    }

    void editThroughWidgetsWithUndoAndEstimate()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        QVERIFY(window.loadPlan(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans/quickstart.json")));
        ui::EstimatePanel *estimate = window.estimatePanel();
        auto *doc = window.document();
        PlanEditor *editor = window.planEditor();
        const QString original = doc->json();

        // More micro-batches through the spin box: one step, the global batch shown at once.
        auto *microBatches = qobject_cast<QSpinBox *>(editor->controlFor(QStringLiteral("parallel.micro_batches")));
        QVERIFY(microBatches);
        microBatches->setValue(4);
        QCOMPARE(doc->plan().parallel.microBatches, 4);
        QCOMPARE(doc->undoStack()->count(), 1);
        QVERIFY(window.isWindowModified());
        QVERIFY2(editor->summary()->text().contains(QStringLiteral("global batch 64 sequences")), qPrintable(editor->summary()->text()));
        // Full recompute from its choice box: a new estimate, slower, with the change named; the old
        // one is never shown as this plan's meanwhile.
        QTRY_VERIFY_WITH_TIMEOUT(estimate->isCurrent(), 20000);
        const double tokensBefore = estimate->estimate()->tokensPerS;
        auto *recompute = qobject_cast<QComboBox *>(editor->controlFor(QStringLiteral("parallel.recompute")));
        QSignalSpy shown(estimate, &ui::EstimatePanel::estimateShown);
        recompute->setCurrentIndex(recompute->findText(QStringLiteral("full")));
        emit recompute->activated(recompute->currentIndex());
        QVERIFY(doc->plan().parallel.recompute == plan::Recompute::Full);
        QCOMPARE(doc->undoStack()->count(), 2);
        QVERIFY(!estimate->isCurrent());
        QVERIFY(shown.wait(20000));
        QVERIFY(estimate->isCurrent());
        QVERIFY(estimate->estimate()->tokensPerS < tokensBefore);
        QVERIFY2(estimate->changeText().contains(QStringLiteral("tokens/s −")), qPrintable(estimate->changeText()));

        // Tensor parallelism offers only the divisors of the heads (tiny: 4 heads).
        auto *tp = qobject_cast<QComboBox *>(editor->controlFor(QStringLiteral("parallel.tp")));
        QStringList offered;
        for (int i = 0; i < tp->count(); ++i)
            offered << tp->itemText(i);
        QCOMPARE(offered, QStringList({QStringLiteral("1"), QStringLiteral("2"), QStringLiteral("4")}));

        // dp 3 on 4 slots: the problem beside dp and in the list; no estimate, no launch.
        auto *dp = qobject_cast<QSpinBox *>(editor->controlFor(QStringLiteral("parallel.dp")));
        dp->setValue(3);
        QVERIFY(doc->hasErrors());
        QVERIFY(!editor->messageFor(QStringLiteral("parallel.dp"))->isHidden());
        QVERIFY2(editor->messageFor(QStringLiteral("parallel.dp"))->text().contains(QStringLiteral("slots")),
                 qPrintable(editor->messageFor(QStringLiteral("parallel.dp"))->text()));
        QVERIFY(!window.launchAction()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(!estimate->isCurrent() && !estimate->searchButton()->isEnabled(), 5000);

        // A node problem selects the node's row when clicked in the problems list.
        QTableWidget *nodes = editor->nodeTable();
        QCOMPARE(nodes->rowCount(), 1);
        nodes->item(0, 0)->setText(QStringLiteral("-oops"));
        QCOMPARE(QString::fromStdString(doc->plan().cluster.nodes[0].host), QStringLiteral("-oops"));
        QListWidgetItem *hostProblem = nullptr;
        for (int i = 0; i < editor->problems()->count(); ++i)
            if (editor->problems()->item(i)->data(Qt::UserRole).toString() == QLatin1String("cluster.nodes[0].host"))
                hostProblem = editor->problems()->item(i);
        QVERIFY(hostProblem);
        nodes->clearSelection();
        emit editor->problems()->itemClicked(hostProblem);
        QCOMPARE(nodes->currentRow(), 0);
        QVERIFY(!editor->messageFor(QStringLiteral("cluster.nodes"))->isHidden());

        // A value the loader refuses changes nothing and says why.
        auto *lr = qobject_cast<QLineEdit *>(editor->controlFor(QStringLiteral("training.lr")));
        QSignalSpy refused(editor, &PlanEditor::editRefused);
        const QString beforeRefusal = doc->json();
        const int steps = doc->undoStack()->count();
        lr->setText(QStringLiteral("fast"));
        emit lr->editingFinished();
        QCOMPARE(refused.count(), 1);
        QCOMPARE(doc->json(), beforeRefusal);
        QCOMPARE(doc->undoStack()->count(), steps);
        QCOMPARE(lr->text(), QStringLiteral("0.003"));

        // Sixteen nodes more is one step; the Edit menu's Undo takes it back.
        editor->addNodes(16);
        QCOMPARE(doc->plan().cluster.nodes.size(), std::size_t{17});
        QCOMPARE(nodes->rowCount(), 17);
        QCOMPARE(doc->undoStack()->count(), steps + 1);
        QAction *undo = nullptr;
        for (QAction *menu : window.menuBar()->actions())
            if (menu->menu())
                for (QAction *a : menu->menu()->actions())
                    if (a->shortcut() == QKeySequence(QKeySequence::Undo))
                        undo = a;
        QVERIFY(undo);
        QVERIFY(undo->text().contains(QStringLiteral("cluster.node_count")));
        undo->trigger();
        QCOMPARE(nodes->rowCount(), 1);
        while (doc->undoStack()->canUndo())
            undo->trigger();
        QCOMPARE(doc->json(), original);
        QCOMPARE(microBatches->value(), 1); // the widgets follow the document back
        QVERIFY(!window.isWindowModified());
    }

    // Choosing the cpu-local cluster gives it this machine's cores, in one step.
    void cpuLocalFollowsTheCores()
    {
        launcher::document::PlanDocument doc;
        doc.newDocument(*plan::starterPlan("tiny", "dgx-h100", 2, "two nodes"));
        PlanEditor editor(&doc);
        auto *preset = qobject_cast<QComboBox *>(editor.controlFor(QStringLiteral("cluster.preset")));
        QVERIFY(preset);
        preset->setCurrentIndex(preset->findText(QStringLiteral("cpu-local")));
        emit preset->activated(preset->currentIndex());
        QCOMPARE(QString::fromStdString(doc.plan().cluster.preset), QStringLiteral("cpu-local"));
        QCOMPARE(int(doc.plan().cluster.nodes.size()), 2);
        for (const auto &node : doc.plan().cluster.nodes) {
            QCOMPARE(node.slotCount, std::max(1, QThread::idealThreadCount()));
            QVERIFY(node.device == plan::DeviceKind::Cpu);
        }
        QCOMPARE(doc.undoStack()->count(), 1);
        doc.undoStack()->undo();
        QCOMPARE(QString::fromStdString(doc.plan().cluster.preset), QStringLiteral("dgx-h100"));
    }

    // The Own trainer section: a command typed as JSON makes the plan run it; a plan without a
    // model says why there is no estimate; clearing the command gives the plan back to trellis-trainer.
    void ownTrainerThroughTheEditor()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        QVERIFY(window.loadPlan(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans/quickstart.json")));
        auto *doc = window.document();
        PlanEditor *editor = window.planEditor();
        auto *command = qobject_cast<QLineEdit *>(editor->controlFor(QStringLiteral("own_trainer.command")));
        auto *env = qobject_cast<QLineEdit *>(editor->controlFor(QStringLiteral("own_trainer.env")));
        QVERIFY(command && env);
        QVERIFY(command->text().isEmpty());
        // A plan without its own trainer: the section is the last, folded, and says it is not used.
        auto *toggle = editor->findChild<QToolButton *>(QStringLiteral("ownTrainerToggle"));
        QVERIFY(toggle);
        QVERIFY(!toggle->isChecked() && command->isHidden() == false && !command->isVisibleTo(editor));
        QVERIFY2(editor->ownTrainerNote()->text().contains(QStringLiteral("Not used")) && editor->ownTrainerNote()->isVisibleTo(editor),
                 qPrintable(editor->ownTrainerNote()->text()));
        QVERIFY(editor->controlFor(QStringLiteral("model.layers"))->mapTo(editor, QPoint()).y() < toggle->mapTo(editor, QPoint()).y());
        toggle->click(); // opened to start using it
        command->setText(QStringLiteral(R"(["python3", "train.py", "--steps", "5"])"));
        emit command->editingFinished();
        QVERIFY(doc->plan().ownTrainer.external());
        QVERIFY(toggle->isChecked() && !editor->ownTrainerNote()->isVisibleTo(editor));
        QCOMPARE(doc->plan().ownTrainer.command.size(), std::size_t(4));
        QVERIFY2(editor->summary()->text().contains(QStringLiteral("runs its own trainer")), qPrintable(editor->summary()->text()));
        env->setText(QStringLiteral(R"({"RANK": "3"})")); // the launcher's: refused beside the field
        emit env->editingFinished();
        QVERIFY(doc->plan().ownTrainer.env.empty());
        env->setText(QStringLiteral(R"({"OMP_NUM_THREADS": "1"})"));
        emit env->editingFinished();
        QCOMPARE(doc->plan().ownTrainer.env.size(), std::size_t(1));
        command->setText(QString());
        emit command->editingFinished();
        QVERIFY(!doc->plan().ownTrainer.external());

        // A plan with only a trainer and a cluster: no estimate, and the panel says why.
        const QString path = dir.filePath(QStringLiteral("own.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"schema": "trellis.plan/1", "name": "own", "own_trainer": {"command": ["python3", "train.py"]},
                    "cluster": {"nodes": [{"host": "localhost", "slots": 2}]}})");
        f.close();
        toggle->setChecked(false);
        QVERIFY(window.loadPlan(path));
        QVERIFY(!doc->hasErrors());
        QVERIFY(toggle->isChecked()); // a plan that uses it opens with it open
        QTRY_VERIFY2_WITH_TIMEOUT(window.estimatePanel()->headlineText().contains(QStringLiteral("runs its own trainer")),
                                  qPrintable(window.estimatePanel()->headlineText()), 10000);
        QVERIFY(editor->summary()->text().contains(QStringLiteral("no model section: no estimate")));
        // No model: its fields are not offered (a preset still gives it one).
        QVERIFY(!editor->controlFor(QStringLiteral("model.layers"))->isEnabled());
        QVERIFY(editor->controlFor(QStringLiteral("model.preset"))->isEnabled());
    }

    // Local updates' fields: inner steps with local SGD or DiLoCo, the outer optimizer with DiLoCo.
    void dpSyncFieldsFollowTheMode()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        auto *doc = window.document();
        auto *editor = window.planEditor();
        const QString inner = QStringLiteral("parallel.dp_sync.inner_steps"), lr = QStringLiteral("parallel.dp_sync.outer_lr");
        QVERIFY(!editor->controlFor(inner)->isEnabled());
        QVERIFY(!editor->controlFor(lr)->isEnabled());
        QVERIFY(doc->setField(QStringLiteral("parallel.dp_sync.mode"), QStringLiteral("\"local_sgd\"")).isEmpty());
        QTRY_VERIFY(editor->controlFor(inner)->isEnabled());
        QVERIFY(!editor->controlFor(lr)->isEnabled());
        QVERIFY(doc->setField(QStringLiteral("parallel.dp_sync.mode"), QStringLiteral("\"diloco\"")).isEmpty());
        QTRY_VERIFY(editor->controlFor(lr)->isEnabled());
        QVERIFY(editor->controlFor(QStringLiteral("parallel.dp_sync.nesterov"))->isEnabled());
        QCOMPARE(doc->plan().parallel.dpSync.mode, plan::DpSyncMode::DiLoCo);
    }

    void saveAndReopenThroughTheWindow()
    {
        QTemporaryDir dir;
        ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
        auto *doc = window.document();
        QVERIFY(doc->setField(QStringLiteral("parallel.micro_batches"), QStringLiteral("2")).isEmpty());
        const QString path = dir.filePath(QStringLiteral("mine.json"));
        QVERIFY(window.savePlanTo(path));
        QVERIFY(!window.isWindowModified());
        QVERIFY(window.windowTitle().startsWith(QStringLiteral("mine.json")));
        const QString saved = doc->json();
        window.newPlan();
        QCOMPARE(doc->displayName(), QStringLiteral("Untitled"));
        QVERIFY(window.loadPlan(path));
        QCOMPARE(doc->json(), saved);

        // Import through the window: a bad config changes nothing and says why; a good one is a step.
        QStringList messages;
        QVERIFY(!window.importConfig(QStringLiteral("deepspeed"), R"({"zero_optimization": {"stage": 9}})", &messages));
        QVERIFY(!messages.isEmpty() && messages.first().contains(QStringLiteral("zero_optimization.stage")));
        QCOMPARE(doc->json(), saved);
        QVERIFY(window.importConfig(QStringLiteral("megatron"), "--use-distributed-optimizer --foo 3", &messages));
        QCOMPARE(doc->plan().parallel.zero, 1);
        QVERIFY(messages.join(QLatin1Char(' ')).contains(QStringLiteral("--foo is not used")));
        QCOMPARE(doc->undoStack()->undoText(), QStringLiteral("Import Megatron-LM arguments"));
        QVERIFY(window.isWindowModified());
    }
};

QTEST_MAIN(TestPlanEditor)
#include "tst_plan_editor.moc"
