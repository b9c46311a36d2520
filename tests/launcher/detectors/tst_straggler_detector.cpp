// The straggler detector on recorded compute times: a rank 2x slower is flagged once, named with
// how much slower, within the window; noisy but even ranks and a single slow step are not; a
// recovered rank is cleared and can be flagged again.
#include "launcher/detectors/straggler_detector.h"

#include <QTest>

#include <random>

using namespace trellis::launcher;

class TstStragglerDetector : public QObject {
    Q_OBJECT
private slots:
    void slowRankFlaggedOnce()
    {
        StragglerDetector d(8, 1.5);
        d.hello(2, "node-c");
        std::vector<StragglerReport> reports;
        std::int64_t flaggedAt = -1;
        for (std::int64_t step = 1; step <= 40; ++step)
            for (int r = 0; r < 4; ++r) {
                const double ms = 100 + 3 * ((step + r) % 3) + (r == 2 && step >= 10 ? 100 : 0); // rank 2 twice as slow from step 10
                for (const auto &rep : d.step(r, step, ms)) {
                    reports.push_back(rep);
                    if (flaggedAt < 0)
                        flaggedAt = step;
                }
            }
        QCOMPARE(reports.size(), size_t(1));
        QCOMPARE(reports.front().rank, 2);
        QVERIFY2(flaggedAt >= 10 && flaggedAt < 20, qPrintable(QString::number(flaggedAt)));
        QVERIFY(reports.front().ratio > 1.9 && reports.front().ratio < 2.1);
        QVERIFY2(QString::fromStdString(reports.front().message).startsWith(QStringLiteral("rank 2 on node-c is a straggler: ")),
                 reports.front().message.c_str());
    }

    void noisyEvenRanksAreNotFlagged()
    {
        StragglerDetector d(8, 1.5);
        std::mt19937 gen(5);
        std::lognormal_distribution<double> noise(0.0, 0.15); // ±15% jitter, the odd 40% spike
        int reports = 0;
        for (std::int64_t step = 1; step <= 5000; ++step)
            for (int r = 0; r < 8; ++r)
                reports += static_cast<int>(d.step(r, step, 50 * noise(gen)).size());
        QCOMPARE(reports, 0);
    }

    void millisecondsOfNoiseAreNotFlagged()
    {
        StragglerDetector d(8, 1.5, 10.0);
        int reports = 0;
        for (std::int64_t step = 1; step <= 50; ++step)
            for (int r = 0; r < 4; ++r)
                reports += static_cast<int>(d.step(r, step, r == 1 ? 9.0 : 5.8).size()); // 1.55x, but 3 ms
        QCOMPARE(reports, 0);
    }

    void singleSlowStepIsNotFlagged()
    {
        StragglerDetector d(8, 1.5);
        int reports = 0;
        for (std::int64_t step = 1; step <= 30; ++step)
            for (int r = 0; r < 4; ++r)
                reports += static_cast<int>(d.step(r, step, r == 1 && step == 12 ? 900.0 : 100.0).size());
        QCOMPARE(reports, 0);
    }

    void recoveredRankIsClearedAndFlaggedAgain()
    {
        StragglerDetector d(4, 1.5);
        int reports = 0;
        for (std::int64_t step = 1; step <= 60; ++step) {
            const bool slow = (step >= 10 && step < 25) || step >= 40;
            for (int r = 0; r < 3; ++r)
                reports += static_cast<int>(d.step(r, step, r == 0 && slow ? 300.0 : 100.0).size());
            if (step == 30)
                QVERIFY(!d.flagged(0));
        }
        QCOMPARE(reports, 2);
    }
};

QTEST_GUILESS_MAIN(TstStragglerDetector)
#include "tst_straggler_detector.moc"
