// Pipeline schedules as data: every schedule validates for p ∈ {2,3,4,8}, m ∈ {p, 2p+1},
// v ∈ {1,2} (or is refused with its rule's exact message); with equal costs the simulated bubble
// equals the closed forms; peak in-flight activations are those the schedules promise; broken
// lists are caught with precise messages.
#include "backend/plan/schedule.h"

#include <QTest>

#include <cmath>

using namespace trellis::plan;

namespace {

Schedule make(const char *name, int p, int m, int v = 1)
{
    auto s = generateSchedule(name, p, m, v);
    if (!s)
        qFatal("%s", s.errorText().c_str());
    return std::move(s).value();
}

QString joined(const std::vector<std::string> &problems)
{
    QStringList out;
    for (const auto &p : problems)
        out << QString::fromStdString(p);
    return out.join(QStringLiteral(" | "));
}

} // namespace

class TstSchedule : public QObject {
    Q_OBJECT
private slots:
    void everyScheduleValidates_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("p");
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("v");
        QTest::addColumn<QString>("refusal");
        for (const char *name : kScheduleNames)
            for (int p : {2, 3, 4, 8})
                for (int m : {p, 2 * p + 1})
                    for (int v : {1, 2}) {
                        QString refusal;
                        const bool interleaved = QLatin1String(name) == QLatin1String("interleaved-1f1b");
                        if (v > 1 && !interleaved)
                            refusal = QStringLiteral("parallel.virtual_stages: only the interleaved-1f1b schedule uses virtual stages");
                        else if (v > 1 && m % p != 0)
                            refusal = QStringLiteral("parallel.micro_batches: %1 is not a multiple of parallel.pp (%2), "
                                                     "which interleaved-1f1b needs")
                                          .arg(m)
                                          .arg(p);
                        QTest::newRow(qPrintable(QStringLiteral("%1 p%2 m%3 v%4").arg(QLatin1String(name)).arg(p).arg(m).arg(v)))
                            << QString::fromLatin1(name) << p << m << v << refusal;
                    }
    }
    void everyScheduleValidates()
    {
        QFETCH(QString, name);
        QFETCH(int, p);
        QFETCH(int, m);
        QFETCH(int, v);
        QFETCH(QString, refusal);
        auto s = generateSchedule(name.toStdString(), p, m, v);
        if (!refusal.isEmpty()) {
            QVERIFY(!s);
            QCOMPARE(QString::fromStdString(s.errorText()), refusal);
            return;
        }
        QVERIFY2(s, s.errorText().c_str());
        const auto problems = validateSchedule(s.value());
        QVERIFY2(problems.empty(), qPrintable(joined(problems) + QStringLiteral("\n") +
                                              QString::fromStdString(formatSchedule(s.value()))));
        QVERIFY(simulateSchedule(s.value(), ScheduleCosts::uniform(s.value())).completed);
    }

    void bubbleMatchesClosedForms_data()
    {
        QTest::addColumn<int>("p");
        QTest::addColumn<int>("m");
        for (int p : {2, 3, 4, 8})
            for (int m : {p, 2 * p, 4 * p})
                QTest::newRow(qPrintable(QStringLiteral("p%1 m%2").arg(p).arg(m))) << p << m;
    }
    void bubbleMatchesClosedForms()
    {
        QFETCH(int, p);
        QFETCH(int, m);
        const double flat = double(p - 1) / (m + p - 1);
        for (const char *name : {"gpipe", "1f1b"}) {
            const Schedule s = make(name, p, m);
            QVERIFY(std::abs(simulateSchedule(s, ScheduleCosts::uniform(s)).bubbleFraction - flat) < 1e-9);
        }
        const Schedule inter = make("interleaved-1f1b", p, m, 2);
        const double interleavedBubble = simulateSchedule(inter, ScheduleCosts::uniform(inter)).bubbleFraction;
        QVERIFY2(std::abs(interleavedBubble - double(p - 1) / (2 * m + p - 1)) < 1e-9, qPrintable(QString::number(interleavedBubble)));
        // zb-h1: the bubble time is (p−1)(F+B−W) instead of 1F1B's (p−1)(F+B+W) (Qi et al. 2023):
        // with F = B = W a third of it.
        const Schedule zb = make("zb-h1", p, m);
        const Simulation z = simulateSchedule(zb, ScheduleCosts::uniform(zb));
        QVERIFY(z.bubbleFraction < flat);
        const double bubbleTime = z.makespan - 3.0 * m;
        QVERIFY2(std::abs(bubbleTime - (p - 1)) < 1e-9, qPrintable(QStringLiteral("bubble time %1").arg(bubbleTime)));
    }

    void peakInFlight()
    {
        for (int p : {2, 4}) {
            for (int m : {p, 3 * p}) {
                const Schedule one = make("1f1b", p, m), gp = make("gpipe", p, m), zb = make("zb-h1", p, m);
                const auto a = simulateSchedule(one, ScheduleCosts::uniform(one));
                const auto b = simulateSchedule(gp, ScheduleCosts::uniform(gp));
                const auto c = simulateSchedule(zb, ScheduleCosts::uniform(zb));
                for (int r = 0; r < p; ++r) {
                    QCOMPARE(a.peakInFlight[r], std::min(p - r, m));
                    QCOMPARE(b.peakInFlight[r], m);
                    QCOMPARE(c.peakInFlight[r], std::min(p - r, m));
                }
            }
        }
    }

    void brokenSchedulesAreCaught()
    {
        const Schedule good = make("1f1b", 2, 2);
        QCOMPARE(QString::fromStdString(formatSchedule(good)), QStringLiteral("rank 0: F0.0 F1.0 BW0.0 BW1.0\nrank 1: F0.1 BW0.1 F1.1 BW1.1\n"));
        {
            Schedule s = good; // drop rank 1's first forward
            s.ranks[1].erase(s.ranks[1].begin() + 1);
            QVERIFY(joined(validateSchedule(s)).contains(QStringLiteral("F of micro-batch 0 on chunk 1 runs 0 times on rank 1 (expected once)")));
        }
        {
            Schedule s = good; // a backward twice
            s.ranks[0].insert(s.ranks[0].end() - 1, Action{ActionKind::Backward, 1, 0});
            QVERIFY(joined(validateSchedule(s)).contains(QStringLiteral("BW of micro-batch 1 on chunk 0 runs 2 times on rank 0 (expected once)")));
        }
        {
            Schedule s = good; // rank 1 sends the gradient of micro-batch 0 only after it waits for micro-batch 1,
                               // which rank 0 sends only after it got that gradient: a deadlock.
            auto &r0 = s.ranks[0];
            // rank 0: recv_act? no: F0 send F1 send recv_grad0 BW0 recv_grad1 BW1 — move F1 after BW0.
            std::vector<Action> reordered = {r0[0], r0[1], r0[4], r0[5], r0[2], r0[3], r0[6], r0[7], r0[8]};
            r0 = reordered;
            auto &r1 = s.ranks[1];
            // rank 1: recv_act0 F0 BW0 send_grad0 recv_act1 F1 BW1 send_grad1 — receive 1 before sending 0.
            std::vector<Action> r1b = {r1[0], r1[1], r1[4], r1[2], r1[3], r1[5], r1[6], r1[7], r1[8]};
            r1 = r1b;
            const QString problems = joined(validateSchedule(s));
            QVERIFY2(problems.contains(QStringLiteral("deadlock: rank 0 at action 2 (recv_grad micro-batch 0 chunk 0 peer 1)")),
                     qPrintable(problems));
            QVERIFY2(problems.contains(QStringLiteral("deadlock: rank 1 at action 2 (recv_act micro-batch 1 chunk 1 peer 0)")),
                     qPrintable(problems));
        }
        {
            Schedule s = good; // a send removed
            s.ranks[0].erase(s.ranks[0].begin() + 1);
            QVERIFY(joined(validateSchedule(s)).contains(
                QStringLiteral("activation of micro-batch 0 for chunk 1 is received by rank 1 but never sent by rank 0")));
        }
        {
            // Two receives from the same rank swapped: every count and dependency still holds (tag
            // matching would deliver each to its buffer), but without tags the first receive gets
            // the first send: rank 1 would train micro-batch 1 on micro-batch 2's activation.
            Schedule s = make("gpipe", 2, 3);
            auto &r1 = s.ranks[1];
            std::vector<std::size_t> receives;
            for (std::size_t i = 0; i < r1.size(); ++i)
                if (r1[i].kind == ActionKind::RecvActivation)
                    receives.push_back(i);
            QVERIFY(receives.size() == 3);
            std::swap(r1[receives[1]], r1[receives[2]]);
            const QString problems = joined(validateSchedule(s));
            QVERIFY2(problems.contains(QStringLiteral(
                         "rank 1's receive 2 from rank 0 waits for the activation of micro-batch 2 for chunk 1, but rank 0's send 2 to "
                         "it is the activation of micro-batch 1 for chunk 1: transfers between two ranks match in the order they are "
                         "posted (NCCL has no tags)")),
                     qPrintable(problems));
        }
        {
            Schedule s = good; // the optimizer step moved up
            std::swap(s.ranks[0][s.ranks[0].size() - 1], s.ranks[0][s.ranks[0].size() - 2]);
            QVERIFY(joined(validateSchedule(s)).contains(QStringLiteral("the optimizer step must be the last action")));
        }
    }

    void refusals_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("p");
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("v");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown") << QStringLiteral("pipedream") << 2 << 2 << 1
                                 << QStringLiteral("parallel.schedule: unknown schedule 'pipedream' (expected gpipe, 1f1b, interleaved-1f1b or zb-h1)");
        QTest::newRow("p") << QStringLiteral("1f1b") << 0 << 2 << 1 << QStringLiteral("parallel.pp: must be at least 1, got 0");
        QTest::newRow("m") << QStringLiteral("1f1b") << 2 << 0 << 1 << QStringLiteral("parallel.micro_batches: must be at least 1, got 0");
        QTest::newRow("v") << QStringLiteral("1f1b") << 2 << 2 << 0 << QStringLiteral("parallel.virtual_stages: must be at least 1, got 0");
        QTest::newRow("v for gpipe") << QStringLiteral("gpipe") << 2 << 2 << 2
                                     << QStringLiteral("parallel.virtual_stages: only the interleaved-1f1b schedule uses virtual stages");
        QTest::newRow("interleaved m") << QStringLiteral("interleaved-1f1b") << 4 << 9 << 2
                                       << QStringLiteral("parallel.micro_batches: 9 is not a multiple of parallel.pp (4), which interleaved-1f1b needs");
    }
    void refusals()
    {
        QFETCH(QString, name);
        QFETCH(int, p);
        QFETCH(int, m);
        QFETCH(int, v);
        QFETCH(QString, message);
        const auto s = generateSchedule(name.toStdString(), p, m, v);
        QVERIFY(!s);
        QCOMPARE(QString::fromStdString(s.errorText()), message);
    }
};

QTEST_APPLESS_MAIN(TstSchedule)
#include "tst_schedule.moc"
