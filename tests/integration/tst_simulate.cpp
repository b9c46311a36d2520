// The simulator end to end: `trellis-cli simulate` drives 1024 simulated ranks through
// the real protocol, receiver, detectors and history with no message lost; a slow rank is named a
// straggler, a stopped one a stall and then a hang, a crashing one the cause of the failure; steps the live feed
// skips reach a follower from the history.
#include "tests/support/cli_test_support.h"
#include "launcher/history/history_database.h"
#include "launcher/feed/run_feed.h"
#include "launcher/registry/run_registry.h"
#include "backend/protocol/relay.h"

#include <QSignalSpy>

#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

using namespace trellis::launcher;
using trellis::test::cli;
using trellis::test::Result;

class TstSimulate : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    std::optional<RunData> lastRun(const QString &database)
    {
        HistoryDatabase h;
        if (!h.open(database, false).isEmpty())
            return std::nullopt;
        const auto summary = h.findRun(QStringLiteral("last"));
        return summary ? h.loadRun(summary->id) : std::nullopt;
    }

private slots:
    void thousandRanksLoseNothing()
    {
        const QString database = m_dir.filePath(QStringLiteral("wide.sqlite"));
        const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("simulate"), QStringLiteral("--ranks"), QStringLiteral("1024"),
                              QStringLiteral("--hz"), QStringLiteral("20"), QStringLiteral("--seconds"), QStringLiteral("3"),
                              QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const auto data = lastRun(database);
        QVERIFY(data);
        QCOMPARE(data->run.status, QStringLiteral("completed"));
        QCOMPARE(data->ranks.size(), 1024);
        QSet<QPair<int, qint64>> seen;
        for (const auto &s : data->steps)
            seen.insert({s.rank, s.step});
        QCOMPARE(seen.size(), 1024 * 60);
        for (const RankRow &rank : data->ranks) {
            QVERIFY(rank.goodbyeSeq > 0);
            QCOMPARE(rank.receivedSeq, rank.goodbyeSeq + 1); // every message, in sequence
            QCOMPARE(rank.dropped, 0);
            QCOMPARE(rank.lost, 0);
        }
    }

    // The first two simulated nodes send through real relay processes (trellis-trainer --relay), a
    // socket per rank, beside six nodes on in-process node connections: every rank's every step
    // arrives, in sequence, and the relays end with their ranks' Goodbyes (in their logs).
    void realRelaysCarryTheirNodes()
    {
        const QString database = m_dir.filePath(QStringLiteral("relays.sqlite"));
        const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("simulate"), QStringLiteral("--ranks"), QStringLiteral("64"),
                              QStringLiteral("--hz"), QStringLiteral("10"), QStringLiteral("--seconds"), QStringLiteral("3"),
                              QStringLiteral("--relays"), QStringLiteral("2"), QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const auto data = lastRun(database);
        QVERIFY(data);
        QCOMPARE(data->run.status, QStringLiteral("completed"));
        QSet<QPair<int, qint64>> seen;
        for (const auto &s : data->steps)
            seen.insert({s.rank, s.step});
        QCOMPARE(seen.size(), 64 * 30);
        for (const RankRow &rank : data->ranks) {
            QCOMPARE(rank.receivedSeq, rank.goodbyeSeq + 1);
            QCOMPARE(rank.lost, 0);
        }
        for (int node : {0, 8}) {
            std::string error;
            const QString folder = QString::fromStdString(
                trellis::proto::relayFolder(data->run.runId.toStdString(), "node" + std::to_string(node), error));
            const QString log = trellis::test::readAll(folder + QStringLiteral("/relay.log"));
            QVERIFY2(log.contains(QStringLiteral("relay: ended (every rank said goodbye)")), qPrintable(folder + QStringLiteral(": ") + log));
            QVERIFY2(log.contains(QStringLiteral(", 0 refused")), qPrintable(log));
        }
    }

    // The supervisor's feed loses step reports, as a subscriber too slow for its queue sees them:
    // every 7th (each gap shows when the rank's next step arrives), or every step from 90 on (a
    // follower that fell behind at the end: no later step shows that gap). Either way the follower
    // reads what it missed from the history and ends with every step of every rank.
    void feedLossIsFilledFromTheHistory_data()
    {
        QTest::addColumn<QByteArray>("fault");
        QTest::addColumn<QByteArray>("value");
        QTest::addColumn<int>("minGaps");
        QTest::newRow("every 7th step report") << QByteArray("TRELLIS_FEED_DROP_EVERY") << QByteArray("7") << 11;
        QTest::newRow("the tail, steps 90-120") << QByteArray("TRELLIS_FEED_DROP_FROM_STEP") << QByteArray("90") << 4;
    }
    void feedLossIsFilledFromTheHistory()
    {
        QFETCH(QByteArray, fault);
        QFETCH(QByteArray, value);
        QFETCH(int, minGaps);
        const QString database = m_dir.filePath(QString::fromLatin1(fault) + QStringLiteral(".sqlite"));
        qputenv(fault.constData(), value);
        const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("simulate"), QStringLiteral("--ranks"), QStringLiteral("4"),
                              QStringLiteral("--hz"), QStringLiteral("20"), QStringLiteral("--seconds"), QStringLiteral("6"),
                              QStringLiteral("--detach")});
        qunsetenv(fault.constData());
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const QString runId = r.out.section(QLatin1Char('\n'), 0, 0).section(QLatin1Char(' '), 1);
        QTRY_VERIFY_WITH_TIMEOUT(RunRegistry::find(runId).has_value(), 10000);
        RunFeed feed;
        feed.setKeepRows(true);
        QSignalSpy finished(&feed, &RunFeed::finished);
        feed.attach(runId, RunRegistry::feedEndpoint(runId), database);
        QVERIFY(finished.wait(30000));
        QVERIFY2(feed.feedGaps() >= quint64(minGaps), qPrintable(QString::number(feed.feedGaps()))); // the feed did lose them
        QSet<QPair<int, qint64>> seen;
        for (int rank : feed.series().ranks())
            for (const StepRow &row : feed.series().rowsOf(rank))
                seen.insert({row.rank, row.step});
        QCOMPARE(seen.size(), 4 * 120);
        QCOMPARE(feed.progress().step, qint64(120));
        // The dashboards' store has every step too: each rank's line is whole.
        const auto snapshot = feed.snapshot();
        QVERIFY(snapshot);
        const auto &loss = snapshot->metrics.at(trellis::launcher::telemetry::Metric::Loss);
        QCOMPARE(loss.lines.size(), std::size_t(4));
        for (const auto &line : loss.lines)
            QCOMPARE(line.steps.size(), std::size_t(120));
    }

    void slowRankIsAStraggler()
    {
        const QString database = m_dir.filePath(QStringLiteral("slow.sqlite"));
        const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("simulate"), QStringLiteral("--ranks"), QStringLiteral("16"),
                              QStringLiteral("--hz"), QStringLiteral("10"), QStringLiteral("--seconds"), QStringLiteral("3"),
                              QStringLiteral("--slow"), QStringLiteral("5@5"), QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.err.contains(QStringLiteral("rank 5 on sim-node-000 is a straggler")), qPrintable(r.err));
        const auto data = lastRun(database);
        QVERIFY(std::any_of(data->events.begin(), data->events.end(), [](const EventRow &e) {
            return e.kind == QLatin1String("straggler") && e.rank == 5 && e.step <= 5 + 10;
        }));
    }

    // A stopped process (the rank's stand-in got SIGSTOP) while the others wait for it in the dp
    // all-reduce, as in a real hang: a stall named with the call within 3 s of its last message
    // (the supervisor's own figure), the hang decided once it has stayed stopped for
    // --hang-confirm (3 s here; launch.hang_confirm_s).
    void stoppedRankIsAStallThenAHang()
    {
        const QString database = m_dir.filePath(QStringLiteral("silent.sqlite"));
        const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("simulate"), QStringLiteral("--ranks"), QStringLiteral("8"),
                              QStringLiteral("--hz"), QStringLiteral("10"), QStringLiteral("--seconds"), QStringLiteral("20"),
                              QStringLiteral("--silent"), QStringLiteral("2@1"), QStringLiteral("--hang-confirm"), QStringLiteral("3"),
                              QStringLiteral("--quiet")});
        QCOMPARE(r.code, 1);
        static const QRegularExpression named(QStringLiteral(
            "stall: rank 2 on sim-node-000 stopped responding \\(no heartbeat for (\\d+\\.\\d) s\\); ranks 0,1,3-7 wait in dp all_reduce "
            "#\\d+ since \\d+\\.\\d s \\[rank 2's process is stopped\\]"));
        const auto match = named.match(r.err);
        QVERIFY2(match.hasMatch(), qPrintable(r.err));
        QVERIFY2(match.captured(1).toDouble() <= 3.0, qPrintable(match.captured(0)));
        static const QRegularExpression decided(QStringLiteral(
            "hang: rank 2 on sim-node-000 stopped responding .*\\[rank 2's process is stopped\\]; rank 2's process has been stopped "
            "for (\\d+\\.\\d) s \\(launch.hang_confirm_s 3.0 s\\)"));
        const auto hang = decided.match(r.err);
        QVERIFY2(hang.hasMatch(), qPrintable(r.err));
        QVERIFY2(hang.captured(1).toDouble() >= 3.0, qPrintable(hang.captured(0)));
    }

    void crashingRankFailsTheRun()
    {
        const QString database = m_dir.filePath(QStringLiteral("crash.sqlite"));
        const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("simulate"), QStringLiteral("--ranks"), QStringLiteral("8"),
                              QStringLiteral("--hz"), QStringLiteral("10"), QStringLiteral("--seconds"), QStringLiteral("20"),
                              QStringLiteral("--crash"), QStringLiteral("3@1"), QStringLiteral("--quiet")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(QStringLiteral("exit code 137")) && r.err.contains(QStringLiteral("rank 3")), qPrintable(r.err));
    }

    void badOptionsAreNamed_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("ranks") << QStringList{QStringLiteral("--ranks"), QStringLiteral("0")} << QStringLiteral("--ranks expects 1 to 65536");
        QTest::newRow("hz") << QStringList{QStringLiteral("--hz"), QStringLiteral("-3")} << QStringLiteral("--hz expects");
        QTest::newRow("slow rank") << QStringList{QStringLiteral("--ranks"), QStringLiteral("4"), QStringLiteral("--slow"), QStringLiteral("9")}
                                   << QStringLiteral("--slow expects RANK or RANK@VALUE with a rank below 4");
        QTest::newRow("silent") << QStringList{QStringLiteral("--silent"), QStringLiteral("x@y")} << QStringLiteral("--silent expects");
        QTest::newRow("relays") << QStringList{QStringLiteral("--ranks"), QStringLiteral("64"), QStringLiteral("--relays"), QStringLiteral("9")}
                                << QStringLiteral("--relays expects 0 to 8 nodes of 8 ranks");
        QTest::newRow("nice") << QStringList{QStringLiteral("--nice"), QStringLiteral("25")} << QStringLiteral("--nice expects 0 to 19, got '25'");
    }
    void badOptionsAreNamed()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Result r = cli(QStringList{QStringLiteral("--db"), m_dir.filePath(QStringLiteral("bad.sqlite")), QStringLiteral("simulate")} + args);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TstSimulate)
#include "tst_simulate.moc"
