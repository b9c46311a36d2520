// Data parallelism against the single-rank reference, under a real mpirun, with gradient clipping
// off: the same global batch split over dp = 2 and 4 ranks (buckets, overlap, accumulation, ZeRO
// 1-3, recompute) must give the loss of every step and the reduced gradients of the first step
// (before any clipping) that dp = 1 gives, to 1e-6 relative, and the parameters after 5 steps.
// A reduction that sums instead of averaging, or a bucket left unreduced, breaks the gradients at
// step 1 and the losses from step 2 on.
#include "tests/support/trainer_runs.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <vector>

namespace {

using trellis::test::relativeL2;
using trellis::test::worstLossDifference;

const QString kCorpus = QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt");

// The model starts from GPT-2's absolute init (0.02), not the width-scaled default (0.098 at
// hidden 32): with the larger weights the losses (5e-8) and step-1 gradients (3e-7) still agree to
// round-off, but after 5 steps the parameters differ by 4e-5 relative (max 5e-4, a fraction of one
// AdamW step): round-off in gradients near zero flips the sign of their ±lr updates. The 1e-6
// bound on parameters holds at 0.02 and is kept there.
QString planJson(int dp, int microBatchSize, int microBatches, int steps, const QString &extraParallel)
{
    return QStringLiteral(R"({
      "schema": "trellis.plan/1", "name": "parity",
      "model": {"layers": 2, "hidden": 32, "heads": 4, "ffn": 64, "seq_len": 32, "vocab": 256, "init_std": 0.02},
      "cluster": {"nodes": [{"host": "localhost", "slots": %1}]},
      "parallel": {"dp": %1, "micro_batch_size": %2, "micro_batches": %3 %6},
      "training": {"steps": %4, "lr": 0.003, "min_lr": 0.0003, "warmup_steps": 1, "seed": 11, "grad_clip": 0,
                   "data": {"source": "text", "path": "%5"}}
    })")
        .arg(dp)
        .arg(microBatchSize)
        .arg(microBatches)
        .arg(steps)
        .arg(kCorpus)
        .arg(extraParallel);
}

struct Outcome {
    std::vector<float> params, grads; // after the last step; the first step's, before clipping
    std::vector<double> losses;       // every step
    bool ok() const { return !params.empty() && !grads.empty() && !losses.empty(); }
};

// Runs the trainer under mpirun and reads what rank 0 dumped; nothing when it failed.
Outcome train(const QTemporaryDir &dir, const QString &name, int dp, int mbs, int micro, int steps,
              const QString &extraParallel = {}, const QStringList &extraArgs = {})
{
    const trellis::test::TrainerRun run = trellis::test::runTrainer(
        dir, name, planJson(dp, mbs, micro, steps, extraParallel), dp, QStringList{QStringLiteral("--quiet")} + extraArgs, 240000);
    if (run.code != 0) {
        qWarning("mpirun failed (%d): %s", run.code, qPrintable(run.output));
        return {};
    }
    return {run.params, run.grads, run.losses};
}

} // namespace

class TstDpParity : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    Outcome m_reference;

private slots:
    void initTestCase()
    {
        QVERIFY(QFile::exists(QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-trainer")));
        m_reference = train(m_dir, QStringLiteral("dp1"), 1, 8, 1, 5);
        QVERIFY(m_reference.ok());
        QCOMPARE(m_reference.losses.size(), size_t(5));
        // Training really moves the parameters and the loss, so agreement below is not trivially satisfied.
        const auto oneStep = train(m_dir, QStringLiteral("one-step"), 1, 8, 1, 1);
        QCOMPARE(oneStep.params.size(), m_reference.params.size());
        QVERIFY(relativeL2(oneStep.params, m_reference.params) > 1e-3);
        QVERIFY(worstLossDifference({m_reference.losses.back()}, {m_reference.losses.front()}) > 1e-3);
    }

    void matchesSingleRank_data()
    {
        QTest::addColumn<int>("dp");
        QTest::addColumn<int>("mbs");
        QTest::addColumn<int>("micro");
        QTest::addColumn<QString>("parallel");
        QTest::addColumn<QStringList>("args");
        // The model has 27 k parameters (0.1 MB of fp32 gradients).
        QTest::newRow("dp2") << 2 << 4 << 1 << QString() << QStringList();
        QTest::newRow("dp4") << 4 << 2 << 1 << QString() << QStringList();
        QTest::newRow("dp1 accumulate 4") << 1 << 2 << 4 << QString() << QStringList();
        QTest::newRow("dp2 accumulate 2") << 2 << 2 << 2 << QString() << QStringList();
        QTest::newRow("dp4 one bucket") << 4 << 2 << 1 << QStringLiteral(", \"bucket_mb\": 0.1") << QStringList();
        QTest::newRow("dp4 many buckets") << 4 << 2 << 1 << QStringLiteral(", \"bucket_mb\": 0.004") << QStringList();
        QTest::newRow("dp4 tiny first bucket")
            << 4 << 2 << 1 << QStringLiteral(", \"bucket_mb\": 0.03, \"first_bucket_mb\": 0.0001") << QStringList();
        QTest::newRow("dp4 no overlap") << 4 << 2 << 1 << QStringLiteral(", \"bucket_mb\": 0.004")
                                        << QStringList{QStringLiteral("--no-overlap")};
        QTest::newRow("dp2 zero1") << 2 << 4 << 1 << QStringLiteral(", \"zero\": 1, \"bucket_mb\": 0.01") << QStringList();
        QTest::newRow("dp4 zero1") << 4 << 2 << 1 << QStringLiteral(", \"zero\": 1, \"bucket_mb\": 0.01") << QStringList();
        QTest::newRow("dp2 recompute") << 2 << 4 << 1 << QStringLiteral(", \"recompute\": \"full\"") << QStringList();
        QTest::newRow("dp4 zero1 accumulate 2") << 4 << 1 << 2 << QStringLiteral(", \"zero\": 1") << QStringList();
        QTest::newRow("dp2 zero2") << 2 << 4 << 1 << QStringLiteral(", \"zero\": 2") << QStringList();
        QTest::newRow("dp4 zero2") << 4 << 2 << 1 << QStringLiteral(", \"zero\": 2") << QStringList();
        QTest::newRow("dp4 zero2 accumulate 2") << 4 << 1 << 2 << QStringLiteral(", \"zero\": 2") << QStringList();
        QTest::newRow("dp4 zero2 no overlap") << 4 << 2 << 1 << QStringLiteral(", \"zero\": 2")
                                              << QStringList{QStringLiteral("--no-overlap")};
        QTest::newRow("dp2 zero3") << 2 << 4 << 1 << QStringLiteral(", \"zero\": 3") << QStringList();
        QTest::newRow("dp4 zero3") << 4 << 2 << 1 << QStringLiteral(", \"zero\": 3") << QStringList();
        QTest::newRow("dp4 zero3 accumulate 2") << 4 << 1 << 2 << QStringLiteral(", \"zero\": 3") << QStringList();
        QTest::newRow("dp2 zero3 recompute") << 2 << 4 << 1 << QStringLiteral(", \"zero\": 3, \"recompute\": \"full\"")
                                             << QStringList();
        QTest::newRow("dp1 zero3") << 1 << 8 << 1 << QStringLiteral(", \"zero\": 3") << QStringList();
    }

    void matchesSingleRank()
    {
        QFETCH(int, dp);
        QFETCH(int, mbs);
        QFETCH(int, micro);
        QFETCH(QString, parallel);
        QFETCH(QStringList, args);
        const QString name = QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('-'));
        const Outcome run = train(m_dir, name, dp, mbs, micro, 5, parallel, args);
        QVERIFY(run.ok());
        QCOMPARE(run.params.size(), m_reference.params.size());
        QCOMPARE(run.grads.size(), m_reference.grads.size());
        // The runs differ only by fp32 rounding: GEMMs over 2, 4 or 8 sequences sum in different
        // orders, and the reductions add partial sums. Measured below 1e-6 everywhere.
        const double losses = worstLossDifference(run.losses, m_reference.losses);
        const double grads = relativeL2(run.grads, m_reference.grads);
        const double params = relativeL2(run.params, m_reference.params);
        qInfo("dp %d, micro-batch %d x %d: losses %.3g, step-1 gradients %.3g, parameters %.3g relative (max abs %.3g)", dp,
              mbs, micro, losses, grads, params, trellis::test::maxAbsoluteDifference(run.params, m_reference.params));
        QVERIFY2(losses < 1e-6, qPrintable(QStringLiteral("loss of a step differs by %1 relative").arg(losses)));
        QVERIFY2(grads < 1e-6, qPrintable(QStringLiteral("step-1 gradients differ by %1 relative (L2)").arg(grads)));
        QVERIFY2(params < 1e-6, qPrintable(QStringLiteral("parameters differ by %1 relative (L2)").arg(params)));
    }

    // Each ZeRO stage against stage 0 at the same DP degree and batch split. Stage 0 all-reduces
    // the gradients, stages 1-3 reduce-scatter them (per bucket or per unit) and all-gather the
    // updated parameters: the same sums, possibly added in another order by MPI, so the
    // tolerance is fp32 round-off of a 5-step run (1e-6 relative L2, as above); the measured
    // difference is printed and is 0 with Open MPI 4.1 on this machine.
    void zeroStagesMatchStageZero_data()
    {
        QTest::addColumn<int>("dp");
        QTest::addColumn<int>("stage");
        for (int dp : {2, 4})
            for (int stage : {1, 2, 3})
                QTest::newRow(qPrintable(QStringLiteral("dp%1 stage %2").arg(dp).arg(stage))) << dp << stage;
    }
    void zeroStagesMatchStageZero()
    {
        QFETCH(int, dp);
        QFETCH(int, stage);
        const int mbs = 8 / dp;
        const Outcome base = train(m_dir, QStringLiteral("stage0-dp%1").arg(dp), dp, mbs, 1, 5, QStringLiteral(", \"zero\": 0"));
        const Outcome sharded = train(m_dir, QStringLiteral("stage%1-dp%2").arg(stage).arg(dp), dp, mbs, 1, 5,
                                      QStringLiteral(", \"zero\": %1").arg(stage));
        QVERIFY(base.ok() && sharded.ok());
        QCOMPARE(sharded.params.size(), base.params.size());
        const double rel = relativeL2(sharded.params, base.params), grads = relativeL2(sharded.grads, base.grads);
        qInfo("dp %d, ZeRO %d vs 0: parameters %.3g, step-1 gradients %.3g relative L2, losses %.3g", dp, stage, rel, grads,
              worstLossDifference(sharded.losses, base.losses));
        QVERIFY2(rel < 1e-6, qPrintable(QStringLiteral("relative L2 difference %1").arg(rel)));
        QVERIFY2(grads < 1e-6, qPrintable(QStringLiteral("gradients: relative L2 difference %1").arg(grads)));
        QVERIFY(worstLossDifference(sharded.losses, base.losses) < 1e-6);
    }
};

QTEST_GUILESS_MAIN(TstDpParity)
#include "tst_dp_parity.moc"
