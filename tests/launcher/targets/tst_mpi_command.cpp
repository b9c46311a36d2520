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

    // A job with its own trainer: every rank runs the shim, which execs the command; everything
    // from the plan stays one argument each, after "--", with no shell anywhere.
    void ownTrainerRunsTheCommandThroughTheShim()
    {
        plan::Plan p;
        p.parallel.dp = 2;
        p.ownTrainer.command = {"python3", "train.py; rm -rf ~", "$(id)"};
        p.ownTrainer.env = {{"A", "b c"}};
        p.ownTrainer.dir = "/work dir";
        LaunchRequest r;
        r.trainerPath = QStringLiteral("/opt/trellis-trainer");
        r.planPath = QStringLiteral("/run/plan.json");
        r.runId = QStringLiteral("run1");
        r.endpoint = QStringLiteral("ipc:///tmp/x.telemetry");
        r.extraTrainerArgs = {QStringLiteral("--resume")};
        r.masterPort = 29555;
        r.restartCount = 2;
        r.checkpointDir = QStringLiteral("/run/checkpoints");
        const LaunchCommand c = buildLocalCommand(p, r);
        const int trainer = static_cast<int>(c.arguments.indexOf(r.trainerPath));
        QVERIFY(trainer > 0);
        const QStringList a = c.arguments.mid(trainer);
        QCOMPARE(a.at(1), QStringLiteral("--exec"));
        QVERIFY(!a.contains(QStringLiteral("--plan")));
        QVERIFY(!a.contains(QStringLiteral("--resume"))); // the trainer's own options are not the command's
        auto after = [&](const char *option) { return a.value(a.indexOf(QString::fromLatin1(option)) + 1); };
        QCOMPARE(after("--run-id"), QStringLiteral("run1"));
        QCOMPARE(after("--endpoint"), r.endpoint);
        QCOMPARE(after("--master-addr"), QStringLiteral("127.0.0.1"));
        QCOMPARE(after("--master-port"), QStringLiteral("29555"));
        QCOMPARE(after("--restart-count"), QStringLiteral("2"));
        QCOMPARE(after("--checkpoint-dir"), r.checkpointDir);
        QCOMPARE(after("--dir"), QStringLiteral("/work dir"));
        QCOMPARE(after("--env"), QStringLiteral("A=b c"));
        const int dashes = static_cast<int>(a.indexOf(QStringLiteral("--")));
        QCOMPARE(a.mid(dashes + 1), (QStringList{QStringLiteral("python3"), QStringLiteral("train.py; rm -rf ~"), QStringLiteral("$(id)")}));
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

    // telemetry.relay: --node-relay for every rank when on, from kRelayAutoRanks ranks when auto,
    // never when off or without a telemetry endpoint.
    void ranksUseNodeRelaysAsThePlanSays_data()
    {
        QTest::addColumn<QString>("relay");
        QTest::addColumn<int>("ranks");
        QTest::addColumn<bool>("endpoint");
        QTest::addColumn<bool>("expected");
        QTest::newRow("auto, small") << "auto" << 8 << true << false;
        QTest::newRow("auto, 64 ranks") << "auto" << plan::kRelayAutoRanks << true << true;
        QTest::newRow("on") << "on" << 2 << true << true;
        QTest::newRow("off, many") << "off" << 256 << true << false;
        QTest::newRow("on, no telemetry") << "on" << 2 << false << false;
        // A job with its own trainer: the rank shim (trellis-trainer --exec) sets the relay up.
        QTest::newRow("own trainer, on") << "on+command" << 2 << true << true;
        QTest::newRow("own trainer, auto, 64 ranks") << "auto+command" << plan::kRelayAutoRanks << true << true;
        QTest::newRow("own trainer, off") << "off+command" << 2 << true << false;
    }
    void ranksUseNodeRelaysAsThePlanSays()
    {
        QFETCH(QString, relay);
        QFETCH(int, ranks);
        QFETCH(bool, endpoint);
        QFETCH(bool, expected);
        plan::Plan p;
        p.parallel.dp = ranks;
        if (relay.endsWith(QLatin1String("+command")))
            p.ownTrainer.command = {"python3", "train.py"};
        relay = relay.section(QLatin1Char('+'), 0, 0);
        p.telemetry.relay = relay == QLatin1String("on") ? plan::TelemetryRelay::On
                            : relay == QLatin1String("off") ? plan::TelemetryRelay::Off : plan::TelemetryRelay::Auto;
        LaunchRequest r;
        r.trainerPath = QStringLiteral("trellis-trainer");
        if (endpoint)
            r.endpoint = QStringLiteral("ipc:///tmp/x.telemetry");
        QCOMPARE(buildLocalCommand(p, r).arguments.contains(QStringLiteral("--node-relay")), expected);
    }
};

QTEST_GUILESS_MAIN(TstMpiCommand)
#include "tst_mpi_command.moc"
