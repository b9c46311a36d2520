// The loss-divergence alert on recorded curves: a falling curve with warm-up spikes raises
// nothing, nor does an epoch-to-epoch wobble of 1.5x on a small, overfitted corpus (seen in a
// 58,000-step clean run); a curve whose last 20 losses sit at twice its lowest stretch raises one
// alert, naming both; NaN is left to the trainer's own check.
#include "launcher/detectors/alerts.h"

#include <QTest>

#include <cmath>

using namespace trellis::launcher;

class TstDivergence : public QObject {
    Q_OBJECT
private slots:
    void spikesAreNotDivergence()
    {
        DivergenceDetector d;
        int alerts = 0;
        for (int step = 1; step <= 300; ++step) {
            double loss = 5.5 * std::exp(-step / 60.0) + 1.0;
            if (step % 17 == 0)
                loss *= 3; // a spike
            alerts += d.loss(step, loss).has_value();
        }
        QCOMPARE(alerts, 0);
    }
    void epochWobbleIsNotDivergence()
    {
        DivergenceDetector d;
        int alerts = 0;
        for (int step = 1; step <= 2000; ++step)
            alerts += d.loss(step, (step / 300) % 2 ? 0.73 : 0.49).has_value(); // 1.5x, epoch to epoch
        QCOMPARE(alerts, 0);
    }
    void sustainedRiseFiresOnce()
    {
        DivergenceDetector d;
        int alerts = 0;
        QString message;
        for (int step = 1; step <= 200; ++step) {
            const double loss = step < 100 ? 3.0 - step * 0.01 : 2.0 + (step - 100) * 0.1;
            if (const auto m = d.loss(step, loss)) {
                ++alerts;
                message = *m;
            }
            d.loss(step, std::nan(""));
        }
        QCOMPARE(alerts, 1);
        QVERIFY2(message.startsWith(QStringLiteral("loss diverging: ")) && message.contains(QStringLiteral("its lowest")), qPrintable(message));
    }
};

QTEST_GUILESS_MAIN(TstDivergence)
#include "tst_divergence.moc"
