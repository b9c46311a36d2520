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
    // Falls to 2.01 at step 99, then rises by 0.1 a step. The lowest median of 20 is 2.095 (the
    // window ending at step 100: the mean of its middle two, 2.09 and 2.10); the loss itself first
    // exceeds twice that (4.19) at step 122, and a median of 20 follows a steady rise within half a
    // window: the alert must come at step 123 to 133 — not before the loss is high, not a window
    // late — once, naming both figures.
    void sustainedRiseFiresOnceAndOnTime()
    {
        DivergenceDetector d;
        int alerts = 0;
        qint64 firedAt = 0;
        QString message;
        for (int step = 1; step <= 200; ++step) {
            const double loss = step < 100 ? 3.0 - step * 0.01 : 2.0 + (step - 100) * 0.1;
            if (const auto m = d.loss(step, loss)) {
                ++alerts;
                firedAt = step;
                message = *m;
            }
            QVERIFY(!d.loss(step, std::nan(""))); // NaN is the trainer's to report
        }
        QCOMPARE(alerts, 1);
        QVERIFY2(firedAt >= 123 && firedAt <= 133, qPrintable(QStringLiteral("fired at step %1").arg(firedAt)));
        QVERIFY2(message.startsWith(QStringLiteral("loss diverging: ")), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("at step %1,").arg(firedAt)), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("its lowest (2.0950 at step 100)")), qPrintable(message));
    }
};

QTEST_GUILESS_MAIN(TstDivergence)
#include "tst_divergence.moc"
