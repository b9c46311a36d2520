// The local mpirun command: an argument list (no shell), oversubscription and root handling.
#include "launcher/targets/mpi_command.h"

#include <QTest>

using namespace trellis;
using namespace trellis::launcher;

class TstMpiCommand : public QObject {
    Q_OBJECT
private slots:
    void flags_data()
    {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("cores");
        QTest::addColumn<bool>("root");
        QTest::addColumn<bool>("oversubscribe");
        QTest::newRow("fits") << 2 << 2 << false << false;
        QTest::newRow("more ranks than cores") << 4 << 2 << false << true;
        QTest::newRow("root") << 2 << 8 << true << false;
        QTest::newRow("root oversubscribed") << 8 << 2 << true << true;
    }
    void flags()
    {
        QFETCH(int, ranks);
        QFETCH(int, cores);
        QFETCH(bool, root);
        QFETCH(bool, oversubscribe);
        plan::Plan p;
        p.parallel.dp = ranks;
        LaunchRequest r;
        r.trainerPath = QStringLiteral("/opt/my trellis/trellis-trainer");
        r.planPath = QStringLiteral("/tmp/plan; rm -rf ~.json");
        r.runId = QStringLiteral("abc");
        r.endpoint = QStringLiteral("tcp://127.0.0.1:5555");
        r.availableCores = cores;
        r.runningAsRoot = root;
        const LaunchCommand c = buildLocalCommand(p, r);
        QCOMPARE(c.program, QStringLiteral("mpirun"));
        QCOMPARE(c.arguments.mid(0, 2), (QStringList{QStringLiteral("-np"), QString::number(ranks)}));
        QCOMPARE(c.arguments.contains(QStringLiteral("--oversubscribe")), oversubscribe);
        QCOMPARE(c.arguments.contains(QStringLiteral("--allow-run-as-root")), root);
        QCOMPARE(c.environment.contains(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT")), root);
        QVERIFY(c.arguments.contains(QStringLiteral("--tag-output")));
        // Paths with spaces and shell syntax stay single, untouched arguments.
        const int trainer = static_cast<int>(c.arguments.indexOf(r.trainerPath));
        QVERIFY(trainer > 0);
        QCOMPARE(c.arguments.mid(trainer + 1, 6),
                 (QStringList{QStringLiteral("--plan"), r.planPath, QStringLiteral("--run-id"), QStringLiteral("abc"),
                              QStringLiteral("--endpoint"), r.endpoint}));
        QVERIFY(c.displayString().contains(QStringLiteral("'/tmp/plan; rm -rf ~.json'")));
        QVERIFY(!c.arguments.contains(QStringLiteral("btl_vader_eager_limit")));
    }

    void pipelineRunsSendActivationsEagerly()
    {
        plan::Plan p;
        p.parallel.pp = 2;
        LaunchRequest r;
        r.trainerPath = QStringLiteral("trellis-trainer");
        const LaunchCommand c = buildLocalCommand(p, r);
        const int at = static_cast<int>(c.arguments.indexOf(QStringLiteral("btl_vader_eager_limit")));
        QVERIFY(at > 0);
        QCOMPARE(c.arguments.at(at - 1), QStringLiteral("--mca"));
        QCOMPARE(c.arguments.at(at + 1), QStringLiteral("262144"));
    }
};

QTEST_GUILESS_MAIN(TstMpiCommand)
#include "tst_mpi_command.moc"
