// parallel.allreduce under a real mpirun, gradient clipping off: a dp = 4 plan on two nodes of two
// ranks (the cluster's nodes, all on this machine) with each algorithm — ring and recursive
// doubling forced in Open MPI's coll/tuned and coll/libnbc, hierarchical composed by the trainer
// over the two nodes — gives the single-rank reference's loss at every step and its step-1
// gradients (the same global batch on one rank), in fp32 and in bf16. The trainer's log shows the
// algorithm in effect: the MCA parameters as MPI reads them back (MPI_T), the hierarchical groups.
// Each algorithm sums in another order, so the bounds are round-off: fp32 1e-6 relative, bf16
// (fp32 reductions of bf16 training) 1e-5 for losses and gradients.
#include "tests/support/trainer_runs.h"

#include <QTemporaryDir>
#include <QTest>

using namespace trellis::test;

namespace {

const QString kCorpus = QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt");

QString planJson(int dp, const QString &algorithm, const QString &precision)
{
    const QString nodes = dp == 1 ? QStringLiteral(R"([{"host": "node-a", "slots": 1}])")
                                  : QStringLiteral(R"([{"host": "node-a", "slots": 2}, {"host": "node-b", "slots": 2}])");
    return QStringLiteral(R"({
      "schema": "trellis.plan/1", "name": "allreduce-%1",
      "model": {"layers": 2, "hidden": 32, "heads": 4, "ffn": 64, "seq_len": 32, "vocab": 256, "init_std": 0.02},
      "cluster": {"nodes": %2},
      "parallel": {"dp": %3, "micro_batch_size": %4, "micro_batches": 1, "allreduce": "%1", "precision": "%5",
                   "bucket_mb": 0.05},
      "training": {"steps": 5, "lr": 0.003, "min_lr": 0.0003, "warmup_steps": 1, "seed": 11, "grad_clip": 0,
                   "data": {"source": "text", "path": "%6"}}
    })")
        .arg(algorithm, nodes)
        .arg(dp)
        .arg(8 / dp)
        .arg(precision, kCorpus);
}

} // namespace

class TestAllReduceAlgorithms : public QObject {
    Q_OBJECT
private slots:
    void equalsTheSingleRankReference_data();
    void equalsTheSingleRankReference();
};

void TestAllReduceAlgorithms::equalsTheSingleRankReference_data()
{
    QTest::addColumn<QString>("algorithm");
    QTest::addColumn<QString>("precision");
    QTest::addColumn<QString>("inLog"); // what the trainer says runs
    for (const char *precisionName : {"fp32", "bf16"}) {
        const QString precision = QString::fromLatin1(precisionName);
        const QByteArray p = precision.toLatin1();
        QTest::newRow(("ring " + p).constData()) << QStringLiteral("ring") << precision
                                                 << QStringLiteral("coll_tuned_allreduce_algorithm=ring coll_libnbc_iallreduce_algorithm=ring");
        QTest::newRow(("recursive doubling " + p).constData())
            << QStringLiteral("recursive_doubling") << precision
            << QStringLiteral("coll_tuned_allreduce_algorithm=recursive_doubling coll_libnbc_iallreduce_algorithm=recursive_doubling");
        QTest::newRow(("hierarchical " + p).constData()) << QStringLiteral("hierarchical") << precision
                                                         << QStringLiteral("all-reduce dp: hierarchical, 2 ranks on each of 2 nodes");
        QTest::newRow(("auto " + p).constData()) << QStringLiteral("auto") << precision << QString();
    }
}

void TestAllReduceAlgorithms::equalsTheSingleRankReference()
{
    QFETCH(QString, algorithm);
    QFETCH(QString, precision);
    QFETCH(QString, inLog);
    QTemporaryDir dir;
    const TrainerRun reference = runTrainer(dir, QStringLiteral("reference"), planJson(1, QStringLiteral("auto"), precision), 1);
    QVERIFY2(reference.code == 0, qPrintable(reference.output));
    const TrainerRun run = runTrainer(dir, algorithm, planJson(4, algorithm, precision), 4);
    QVERIFY2(run.code == 0, qPrintable(run.output));
    if (!inLog.isEmpty())
        QVERIFY2(run.output.contains(inLog), qPrintable(run.output));
    else
        QVERIFY2(!run.output.contains(QStringLiteral("all-reduce")), qPrintable(run.output)); // auto forces nothing
    const double bound = precision == QLatin1String("fp32") ? 1e-6 : 1e-5;
    const double losses = worstLossDifference(run.losses, reference.losses);
    const double grads = relativeL2(run.grads, reference.grads);
    qInfo("%s %s: losses within %.2e, step-1 gradients within %.2e (bound %.0e)", qPrintable(algorithm), qPrintable(precision),
          losses, grads, bound);
    QCOMPARE(run.losses.size(), std::size_t(5));
    QVERIFY2(losses <= bound, qPrintable(QStringLiteral("losses differ by %1").arg(losses)));
    QVERIFY2(grads <= bound, qPrintable(QStringLiteral("step-1 gradients differ by %1").arg(grads)));
}

QTEST_GUILESS_MAIN(TestAllReduceAlgorithms)
#include "tst_allreduce_algorithms.moc"
