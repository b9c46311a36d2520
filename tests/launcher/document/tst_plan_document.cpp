// The plan document: 30 edits undone give back the original JSON byte for byte and redone give
// the edited one; merging of repeated edits; the modified state; save and reopen; refused values,
// unreadable files and Save As into another folder.
#include "launcher/document/plan_document.h"
#include "backend/plan/plan_json.h"
#include "backend/plan/presets.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using trellis::launcher::document::PlanDocument;

namespace {

QString writeFile(const QString &path, const QByteArray &bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write(bytes);
    return path;
}

QByteArray bytesOf(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QByteArray planText()
{
    return R"({"schema": "trellis.plan/1", "name": "doc",
      "model": {"preset": "tiny"},
      "cluster": {"nodes": [{"host": "localhost", "slots": 4}]},
      "parallel": {"dp": 4, "micro_batch_size": 2},
      "training": {"steps": 20, "data": {"source": "text", "path": "../corpus/a.txt"},
                   "checkpoint": {"every": 10, "dir": "ckpt"}}})";
}

} // namespace

class TestPlanDocument : public QObject {
    Q_OBJECT
private slots:
    void thirtyEditsUndoneAndRedone()
    {
        QTemporaryDir dir;
        PlanDocument doc;
        QVERIFY(doc.open(writeFile(dir.filePath(QStringLiteral("plans/a.json")), planText())).isEmpty());
        const QString original = doc.json();
        // 30 edits, never the same field twice in a row (so none merge), structural ones among them.
        const QList<QPair<QString, QString>> edits = {
            {"parallel.dp", "2"},           {"parallel.tp", "2"},          {"parallel.schedule", "gpipe"},
            {"parallel.pp", "2"},           {"training.lr", "0.002"},      {"parallel.zero", "1"},
            {"cluster.node_count", "4"},    {"parallel.dp", "8"},          {"model.preset", "gpt2-124m"},
            {"model.vocab", "50304"},       {"parallel.micro_batches", "4"}, {"parallel.sequence_parallel", "true"},
            {"parallel.recompute", "full"}, {"parallel.precision", "bf16"}, {"parallel.bucket_mb", "50"},
            {"cluster.nodes[1].slots", "2"}, {"cluster.nodes[2].host", "gpu-b"}, {"training.steps", "1000"},
            {"training.warmup_steps", "100"}, {"telemetry.trace_every", "10"}, {"launch.hang_timeout_s", "120"},
            {"name", "\"edited plan\""},    {"parallel.bucket_mb", "null"}, {"cluster.node_count", "2"},
            {"training.checkpoint.every", "50"}, {"model.layers", "6"},     {"parallel.tp", "4"},
            {"cluster.links.inter_node.bandwidth_gbps", "12.5"}, {"launch.restart.max_restarts", "3"}, {"parallel.dp", "2"}};
        QCOMPARE(edits.size(), 30);
        QSignalSpy changed(&doc, &PlanDocument::changed);
        for (const auto &[path, value] : edits) {
            const quint64 revision = doc.revision();
            const QString error = doc.setField(path, value);
            QVERIFY2(error.isEmpty(), qPrintable(path + QStringLiteral(": ") + error));
            QVERIFY2(doc.revision() > revision, qPrintable(path));
        }
        QCOMPARE(doc.undoStack()->count(), 30);
        QCOMPARE(changed.count(), 30);
        QVERIFY(doc.isModified());
        const QString edited = doc.json();
        QVERIFY(edited != original);
        QCOMPARE(doc.undoStack()->undoText(), QStringLiteral("Set parallel.dp to 2"));
        while (doc.undoStack()->canUndo())
            doc.undoStack()->undo();
        QCOMPARE(doc.json(), original); // byte for byte
        QVERIFY(!doc.isModified());
        while (doc.undoStack()->canRedo())
            doc.undoStack()->redo();
        QCOMPARE(doc.json(), edited);
    }

    void repeatedEditsOfOneFieldMerge()
    {
        PlanDocument doc;
        doc.newDocument(*trellis::plan::starterPlan("tiny", "cpu-local", 1));
        const QString original = doc.json();
        QVERIFY(doc.setField(QStringLiteral("parallel.micro_batches"), QStringLiteral("2")).isEmpty());
        QVERIFY(doc.setField(QStringLiteral("parallel.micro_batches"), QStringLiteral("3")).isEmpty());
        QVERIFY(doc.setField(QStringLiteral("parallel.micro_batches"), QStringLiteral("4")).isEmpty());
        QCOMPARE(doc.undoStack()->count(), 1); // typing 2, 3, 4 into one box is one step
        QCOMPARE(doc.field(QStringLiteral("parallel.micro_batches")), QStringLiteral("4"));
        // Back to where it began: no step left at all.
        QVERIFY(doc.setField(QStringLiteral("parallel.micro_batches"), QStringLiteral("1")).isEmpty());
        QCOMPARE(doc.undoStack()->count(), 0);
        QCOMPARE(doc.json(), original);
        QVERIFY(!doc.isModified());
        // The same value again is no step.
        QVERIFY(doc.setField(QStringLiteral("parallel.dp"), QStringLiteral("4")).isEmpty());
        QCOMPARE(doc.undoStack()->count(), 0);
    }

    void modifiedStateSaveAndReopen()
    {
        QTemporaryDir dir;
        PlanDocument doc;
        QSignalSpy modified(&doc, &PlanDocument::modifiedChanged);
        const QString path = writeFile(dir.filePath(QStringLiteral("plans/a.json")), planText());
        QVERIFY(doc.open(path).isEmpty());
        QCOMPARE(doc.displayName(), QStringLiteral("a.json"));
        QVERIFY(doc.setField(QStringLiteral("parallel.tp"), QStringLiteral("2")).isEmpty());
        QVERIFY(doc.isModified());
        QCOMPARE(modified.count(), 1);
        QCOMPARE(modified.last().at(0).toBool(), true);
        QVERIFY(doc.save().isEmpty());
        QVERIFY(!doc.isModified());
        QCOMPARE(modified.last().at(0).toBool(), false);
        QCOMPARE(bytesOf(path), (doc.json() + QStringLiteral("\n")).toUtf8()); // the JSON the CLI reads
        // Undo past the save: modified again; redo back to the saved state: clean.
        doc.undoStack()->undo();
        QVERIFY(doc.isModified());
        doc.undoStack()->redo();
        QVERIFY(!doc.isModified());

        PlanDocument again;
        QVERIFY(again.open(path).isEmpty());
        QCOMPARE(again.json(), doc.json());
        QVERIFY(again.plan() == doc.plan());
        QVERIFY(!QFile::exists(path + QStringLiteral(".tmp")));
    }

    void refusedValuesAndBadFilesChangeNothing()
    {
        QTemporaryDir dir;
        PlanDocument doc;
        const QString path = writeFile(dir.filePath(QStringLiteral("a.json")), planText());
        QVERIFY(doc.open(path).isEmpty());
        QVERIFY(doc.setField(QStringLiteral("parallel.tp"), QStringLiteral("2")).isEmpty());
        const QString json = doc.json();
        const quint64 revision = doc.revision();
        QSignalSpy changed(&doc, &PlanDocument::changed);
        QCOMPARE(doc.setField(QStringLiteral("parallel.tp"), QStringLiteral("two")), QStringLiteral("parallel.tp: expected an integer, got string"));
        QVERIFY(doc.setField(QStringLiteral("parallel.tensor"), QStringLiteral("2")).contains(QStringLiteral("no such field")));
        QVERIFY(!doc.setFields({{QStringLiteral("parallel.dp"), QStringLiteral("2")}, {QStringLiteral("parallel.pp"), QStringLiteral("x")}},
                               QStringLiteral("both"))
                     .isEmpty());
        // An impossible but well-typed value is taken: its problem is shown beside the field.
        for (const QString &bad : {QStringLiteral("{"), QStringLiteral("{\"schema\": \"trellis.plan/9\"}"), QStringLiteral("[1, 2]")}) {
            const QString badPath = writeFile(dir.filePath(QStringLiteral("bad.json")), bad.toUtf8());
            QVERIFY2(!doc.open(badPath).isEmpty(), qPrintable(bad));
        }
        QVERIFY(!doc.open(dir.filePath(QStringLiteral("missing.json"))).isEmpty());
        QCOMPARE(doc.json(), json);
        QCOMPARE(doc.revision(), revision);
        QCOMPARE(doc.filePath(), QFileInfo(path).absoluteFilePath());
        QCOMPARE(doc.undoStack()->count(), 1);
        QVERIFY(doc.isModified());
        QCOMPARE(changed.count(), 0);
        // A well-typed value the validator refuses is an edit like any other: shown, not launched.
        QVERIFY(doc.setField(QStringLiteral("parallel.tp"), QStringLiteral("3")).isEmpty());
        QVERIFY(doc.hasErrors());
        bool named = false;
        for (const auto &d : doc.diagnostics())
            named = named || d.path == "parallel.tp";
        QVERIFY(named);
    }

    void saveAsAnotherFolderRebasesRelativePaths()
    {
        QTemporaryDir dir;
        PlanDocument doc;
        QVERIFY(doc.open(writeFile(dir.filePath(QStringLiteral("plans/a.json")), planText())).isEmpty());
        QVERIFY(!doc.saveAs(dir.filePath(QStringLiteral("elsewhere/deeper/b.json"))).isEmpty()); // no such folder
        QCOMPARE(QString::fromStdString(doc.plan().training.data.path), QStringLiteral("../corpus/a.txt"));
        QVERIFY(QDir().mkpath(dir.filePath(QStringLiteral("elsewhere/deeper"))));
        QVERIFY(doc.saveAs(dir.filePath(QStringLiteral("elsewhere/deeper/b.json"))).isEmpty());
        QCOMPARE(QString::fromStdString(doc.plan().training.data.path), QStringLiteral("../../corpus/a.txt"));
        QCOMPARE(QString::fromStdString(doc.plan().training.checkpoint.dir), QStringLiteral("../../plans/ckpt"));
        QVERIFY(!doc.isModified());
        QCOMPARE(doc.displayName(), QStringLiteral("b.json"));
        QCOMPARE(doc.undoStack()->undoText(), QStringLiteral("Rebase relative paths"));
        // The same folder: nothing to rebase, no step.
        const int steps = doc.undoStack()->count();
        QVERIFY(doc.saveAs(dir.filePath(QStringLiteral("elsewhere/deeper/c.json"))).isEmpty());
        QCOMPARE(doc.undoStack()->count(), steps);
    }

    // Imports are one step each; bad ones change nothing and name the key or flag.
    void importsAndExports()
    {
        PlanDocument doc;
        doc.newDocument(*trellis::plan::starterPlan("tiny", "cpu-local", 2)); // 8 slots: dp 8
        const QString original = doc.json();
        QStringList warnings;
        QVERIFY(doc.importDeepSpeed(R"({"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 4,
                                        "zero_optimization": {"stage": 2}, "wall_clock_breakdown": true})",
                                    &warnings)
                    .isEmpty());
        QCOMPARE(doc.plan().parallel.zero, 2);
        QCOMPARE(doc.plan().parallel.microBatches, 4);
        QCOMPARE(doc.undoStack()->undoText(), QStringLiteral("Import DeepSpeed config"));
        QVERIFY2(warnings.join(QLatin1Char('\n')).contains(QStringLiteral("wall_clock_breakdown is not used")), qPrintable(warnings.join(QLatin1Char('\n'))));
        const QString imported = doc.json();
        // Bad: not JSON, a wrong value, a Megatron layout that does not divide the world.
        QCOMPARE(doc.importDeepSpeed("{not json"), QStringLiteral("deepspeed: not a JSON object (a DeepSpeed config is one)"));
        QVERIFY(doc.importDeepSpeed(R"({"zero_optimization": {"stage": "two"}})").contains(QStringLiteral("zero_optimization.stage")));
        QVERIFY(doc.importMegatron(QStringLiteral("--tensor-model-parallel-size x")).contains(QStringLiteral("--tensor-model-parallel-size")));
        QVERIFY(doc.importMegatron(QStringLiteral("--tensor-model-parallel-size 3")).contains(QStringLiteral("megatron")));
        QCOMPARE(doc.json(), imported);
        QCOMPARE(doc.undoStack()->count(), 1);
        // A Megatron line: tp 2 × pp 2 of the 8 ranks; flags Trellis does not use are warnings.
        warnings.clear();
        QVERIFY(doc.importMegatron(QStringLiteral("torchrun pretrain_gpt.py --tensor-model-parallel-size 2 "
                                                  "--pipeline-model-parallel-size 2 --log-interval 10"),
                                   &warnings)
                    .isEmpty());
        QCOMPARE(doc.plan().parallel.tp, 2);
        QCOMPARE(doc.plan().parallel.dp, 2);
        QVERIFY(warnings.join(QLatin1Char('\n')).contains(QStringLiteral("--log-interval is not used")));
        // Exports read back as the same parallel layout.
        QVERIFY(doc.exportMegatron().contains(QStringLiteral("--tensor-model-parallel-size 2")));
        QVERIFY(doc.exportDeepSpeed().contains(QStringLiteral("\"train_micro_batch_size_per_gpu\"")));
        doc.undoStack()->undo();
        doc.undoStack()->undo();
        QCOMPARE(doc.json(), original);
    }

    void structuralSteps()
    {
        PlanDocument doc;
        doc.newDocument(*trellis::plan::starterPlan("tiny", "cpu-local", 3));
        QCOMPARE(doc.displayName(), QStringLiteral("Untitled"));
        QVERIFY(!doc.save().isEmpty()); // no file yet
        QVERIFY(doc.removeNode(1));
        QCOMPARE(doc.plan().cluster.nodes.size(), std::size_t{2});
        QCOMPARE(doc.undoStack()->undoText(), QStringLiteral("Remove node node1"));
        QVERIFY(!doc.removeNode(7));
        trellis::plan::Plan chosen = doc.plan();
        chosen.parallel.dp = 2;
        chosen.parallel.tp = 4;
        doc.replacePlan(chosen, QStringLiteral("Apply searched plan"));
        QCOMPARE(doc.undoStack()->count(), 2);
        doc.undoStack()->undo();
        QCOMPARE(doc.plan().parallel.tp, 1);
    }
};

QTEST_GUILESS_MAIN(TestPlanDocument)
#include "tst_plan_document.moc"
