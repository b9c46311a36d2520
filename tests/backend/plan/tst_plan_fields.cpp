// Plan fields by path: reading, setting (types checked by the loader, presets applied, node counts),
// removing optional fields, differences, and every path the validator can name being a field.
#include "backend/plan/plan_fields.h"
#include "backend/plan/plan_json.h"
#include "backend/plan/plan_validate.h"

#include "tests/support/validator_paths.h"

#include <QTest>

#include <algorithm>
#include <set>

using namespace trellis::plan;

namespace {

Plan basePlan()
{
    auto parsed = parsePlan(R"({
      "schema": "trellis.plan/1", "name": "base",
      "model": {"layers": 2, "hidden": 64, "heads": 4, "ffn": 256, "seq_len": 32, "vocab": 256},
      "cluster": {"nodes": [{"host": "localhost", "slots": 4, "device": "cpu"}]},
      "parallel": {"dp": 4, "micro_batch_size": 2},
      "training": {"steps": 10, "lr": 0.001, "min_lr": 0.0001, "data": {"source": "text", "path": "x.txt"}}
    })");
    if (!parsed)
        qFatal("base plan: %s", parsed.errorText().c_str());
    return parsed.value();
}

QString errorsOf(const Result<Plan> &r)
{
    return r ? QString() : QString::fromStdString(r.errorText()).trimmed();
}

} // namespace

class TestPlanFields : public QObject {
    Q_OBJECT
private slots:
    void readsFields_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("value"); // or "error: <text the message contains>"
        QTest::newRow("int") << "parallel.dp" << "4";
        QTest::newRow("string") << "parallel.schedule" << "\"1f1b\"";
        QTest::newRow("bool") << "parallel.sequence_parallel" << "false";
        QTest::newRow("node field") << "cluster.nodes[0].host" << "\"localhost\"";
        QTest::newRow("optional, absent") << "parallel.bucket_mb" << "null";
        QTest::newRow("optional section, absent") << "model.moe.experts" << "null";
        QTest::newRow("node count") << "cluster.node_count" << "1";
        QTest::newRow("section") << "training.checkpoint" << "{\"every\":0,\"dir\":\"\",\"keep\":2,\"when_busy\":\"wait\"}"; // mode: only where given
        QTest::newRow("unknown field") << "parallel.tensor" << "error: parallel.tensor: no such field";
        QTest::newRow("malformed path") << "parallel..tp" << "error: parallel..tp: no such field";
        QTest::newRow("index on a section") << "parallel[0]" << "error: no such field";
        QTest::newRow("node out of range") << "cluster.nodes[3].host" << "error: cluster.nodes[3]: no such entry: the list has 1";
    }
    void readsFields()
    {
        QFETCH(QString, path);
        QFETCH(QString, value);
        const auto got = planField(basePlan(), path.toStdString());
        if (value.startsWith(QLatin1String("error: "))) {
            QVERIFY(!got);
            QVERIFY2(QString::fromStdString(got.errorText()).contains(value.mid(7)), got.errorText().c_str());
        } else {
            QVERIFY2(got, got.errorText().c_str());
            QCOMPARE(QString::fromStdString(got.value()), value);
        }
    }

    void setsFields_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("expected"); // the field read back, or "error: ..."
        QTest::newRow("int") << "parallel.tp" << "2" << "2";
        QTest::newRow("bare word") << "parallel.schedule" << "gpipe" << "\"gpipe\"";
        QTest::newRow("quoted string") << "name" << "\"my plan\"" << "\"my plan\"";
        QTest::newRow("float") << "training.lr" << "0.0005" << "0.0005";
        QTest::newRow("bool") << "parallel.sequence_parallel" << "true" << "true";
        QTest::newRow("optional added") << "parallel.bucket_mb" << "50" << "50.0";
        QTest::newRow("node field") << "cluster.nodes[0].slots" << "8" << "8";
        QTest::newRow("enum") << "parallel.recompute" << "full" << "\"full\"";
        QTest::newRow("section created") << "cluster.links.inter_node.bandwidth_gbps" << "25" << "25.0";
        QTest::newRow("semantic error kept for the validator") << "parallel.tp" << "3" << "3";
        QTest::newRow("wrong type") << "parallel.tp" << "two" << "error: parallel.tp: expected an integer";
        QTest::newRow("unknown enum") << "parallel.recompute" << "sometimes" << "error: parallel.recompute";
        QTest::newRow("unknown field") << "parallel.tensor" << "2" << "error: parallel.tensor: no such field";
        QTest::newRow("unknown key inside a value") << "training.checkpoint" << "{\"evry\":5}" << "error: evry";
        QTest::newRow("node out of range") << "cluster.nodes[2].slots" << "8" << "error: cluster.nodes[2]: no such entry";
        QTest::newRow("node count zero") << "cluster.node_count" << "0" << "error: cluster.node_count: expected a whole number";
    }
    void setsFields()
    {
        QFETCH(QString, path);
        QFETCH(QString, value);
        QFETCH(QString, expected);
        const Plan before = basePlan();
        const auto got = withPlanField(before, path.toStdString(), value.toStdString());
        if (expected.startsWith(QLatin1String("error: "))) {
            QVERIFY(!got);
            QVERIFY2(errorsOf(got).contains(expected.mid(7)), qPrintable(errorsOf(got)));
            return;
        }
        QVERIFY2(got, qPrintable(errorsOf(got)));
        QCOMPARE(QString::fromStdString(planField(got.value(), path.toStdString()).value()), expected);
        // Only that field changed (and, where its section was created, that section's other fields).
        const auto differences = planDifferences(before, got.value());
        QVERIFY(!differences.empty());
        const QString section = path.left(path.lastIndexOf(QLatin1Char('.')) + 1);
        bool found = false;
        for (const auto &d : differences) {
            found = found || QString::fromStdString(d.path) == path;
            QVERIFY2(QString::fromStdString(d.path).startsWith(section) && (d.path == path.toStdString() || d.before == "null"),
                     d.path.c_str());
        }
        QVERIFY(found);
        // The result survives a save and a load as it is.
        QVERIFY(parsePlan(planToJson(got.value())).value() == got.value());
    }

    void removesOptionalFields()
    {
        Plan p = withPlanField(basePlan(), "parallel.bucket_mb", "50").value();
        QVERIFY(p.parallel.bucketMb);
        p = withPlanField(p, "parallel.bucket_mb", "null").value();
        QVERIFY(!p.parallel.bucketMb);
        QVERIFY(p == basePlan());
        p = withPlanField(p, "model.moe", R"({"experts": 8, "top_k": 2})").value();
        QCOMPARE(p.model.moe.experts, 8);
        QCOMPARE(p.model.moe.topK, 2);
        QVERIFY(withPlanField(p, "model.moe", "null").value() == basePlan());
    }

    void editsTheOwnTrainerSection()
    {
        Plan p = withPlanField(basePlan(), "own_trainer.command", R"(["python3", "train.py"])").value();
        QVERIFY(p.ownTrainer.external());
        QVERIFY(p.ownTrainer.hasModel); // the model it had stays (informative: the estimate)
        p = withPlanField(p, "own_trainer.env", R"({"OMP_NUM_THREADS": "1"})").value();
        QCOMPARE(QString::fromStdString(planField(p, "own_trainer.env").value()), QStringLiteral(R"({"OMP_NUM_THREADS":"1"})"));
        const auto paths = planFieldPaths(p);
        QVERIFY(std::find(paths.begin(), paths.end(), "own_trainer.env") != paths.end()); // one field, not a path per name
        QVERIFY(!withPlanField(p, "own_trainer.env", R"({"RANK": "3"})").ok());
        // Clearing the command hands the plan back to trellis-trainer, section and all.
        p = withPlanField(p, "own_trainer.command", "null").value();
        QVERIFY(!p.ownTrainer.external());
        QVERIFY(p.ownTrainer.env.empty());
        QVERIFY(p == basePlan());
    }

    void appliesPresetsAndNodeCounts()
    {
        Plan p = withPlanField(basePlan(), "model.preset", "gpt2-124m").value();
        QCOMPARE(p.model.hidden, 768);
        QCOMPARE(p.model.layers, 12);
        QCOMPARE(QString::fromStdString(p.model.preset), QStringLiteral("gpt2-124m"));
        QVERIFY(!withPlanField(basePlan(), "model.preset", "gpt-17").ok());

        p = withPlanField(basePlan(), "cluster.node_count", "16").value();
        QCOMPARE(p.cluster.nodes.size(), std::size_t{16});
        std::set<std::string> hosts;
        for (const auto &n : p.cluster.nodes) {
            hosts.insert(n.host);
            QCOMPARE(n.slotCount, 4); // copies of the last node
        }
        QCOMPARE(hosts.size(), std::size_t{16});
        QCOMPARE(withPlanField(p, "cluster.node_count", "3").value().cluster.nodes.size(), std::size_t{3});

        p = withPlanField(p, "cluster.preset", "dgx-h100").value(); // keeps the 16 nodes
        QCOMPARE(p.cluster.nodes.size(), std::size_t{16});
        QCOMPARE(p.cluster.nodes[0].slotCount, 8);
        QVERIFY(p.cluster.nodes[0].device == DeviceKind::Cuda);
        QVERIFY(p.cluster.interNode.bandwidthGBps > 0);
    }

    void differences()
    {
        Plan a = basePlan();
        Plan b = withPlanField(withPlanField(a, "parallel.tp", "2").value(), "parallel.bucket_mb", "10").value();
        b = withPlanField(b, "cluster.node_count", "2").value();
        const auto d = planDifferences(a, b);
        QStringList paths;
        for (const auto &x : d)
            paths << QString::fromStdString(x.path + "=" + x.before + "→" + x.after);
        QCOMPARE(paths, QStringList({QStringLiteral("cluster.nodes[1].host=null→\"node1\""), QStringLiteral("cluster.nodes[1].slots=null→4"),
                                     QStringLiteral("cluster.nodes[1].device=null→\"cpu\""), QStringLiteral("parallel.tp=1→2"),
                                     QStringLiteral("parallel.bucket_mb=null→10.0")}));
        QVERIFY(planDifferences(a, a).empty());
    }

    void everyValidatorPathIsAField()
    {
        const QStringList paths = trellis::test::validatorFieldPaths();
        QVERIFY2(paths.size() > 50, qPrintable(paths.join(QLatin1Char(' '))));
        for (const QString &path : paths)
            QVERIFY2(isPlanFieldPath(path.toStdString()), qPrintable(path));
        QVERIFY(!isPlanFieldPath("parallel.tensor"));
        // Every leaf of a plan is a path it can be set through.
        for (const auto &path : planFieldPaths(basePlan()))
            QVERIFY2(isPlanFieldPath(path), path.c_str());
    }
};

QTEST_GUILESS_MAIN(TestPlanFields)
#include "tst_plan_fields.moc"
