// PowerSGD (parallel.grad_compression) in the real trainer under mpirun, gradient clipping off:
// - dp 2 at full rank (32 = the model's hidden size, every matrix's smaller side) gives the
//   uncompressed run's losses and step-1 gradients to float round-off, in fp32 (1e-6) and bf16 (5e-5);
// - at rank 1 the compression is applied (the log names the matrices and the bytes; the step-1
//   gradients differ) and the loss after 40 steps stays near the uncompressed run's;
// - the estimate's dp all-reduce bytes are the trainer's, to the byte (its factors and vectors,
//   and the loss that shares the group).
// The maths in one process: tst_powersgd.
#include "backend/plan/cost/cost_model.h"
#include "backend/plan/plan_json.h"
#include "tests/support/trainer_runs.h"

#include <QRegularExpression>

#include <QTemporaryDir>
#include <QTest>

#include <cmath>

using namespace trellis::test;

namespace {

const QString kCorpus = QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt");

QString planJson(int dp, const QString &compression, const QString &precision, int steps)
{
    return QStringLiteral(R"({
      "schema": "trellis.plan/1", "name": "powersgd",
      "model": {"layers": 2, "hidden": 32, "heads": 4, "ffn": 64, "seq_len": 32, "vocab": 256, "init_std": 0.02},
      "cluster": {"nodes": [{"host": "localhost", "slots": %1}]},
      "parallel": {"dp": %1, "micro_batch_size": %2, "micro_batches": 1, "precision": "%3" %4},
      "training": {"steps": %5, "lr": 0.003, "min_lr": 0.0003, "warmup_steps": 1, "seed": 11, "grad_clip": 0,
                   "data": {"source": "text", "path": "%6"}}
    })")
        .arg(dp)
        .arg(8 / dp)
        .arg(precision)
        .arg(compression.isEmpty() ? QString() : QStringLiteral(", \"grad_compression\": ") + compression)
        .arg(steps)
        .arg(kCorpus);
}

} // namespace

class TestPowerSgdTraining : public QObject {
    Q_OBJECT
private slots:
    void trainerAtFullRankEqualsUncompressed_data()
    {
        QTest::addColumn<QString>("precision");
        QTest::newRow("fp32") << QStringLiteral("fp32");
        QTest::newRow("bf16") << QStringLiteral("bf16");
    }
    void trainerAtFullRankEqualsUncompressed()
    {
        QFETCH(QString, precision);
        QTemporaryDir dir;
        const TrainerRun plain = runTrainer(dir, QStringLiteral("plain"), planJson(2, {}, precision, 5), 2);
        QVERIFY2(plain.code == 0, qPrintable(plain.output));
        const TrainerRun full =
            runTrainer(dir, QStringLiteral("full"), planJson(2, QStringLiteral(R"({"kind": "powersgd", "rank": 32})"), precision, 5), 2);
        QVERIFY2(full.code == 0, qPrintable(full.output));
        QVERIFY2(full.output.contains(QStringLiteral("grad compression powersgd: 10 matrices compressed")), qPrintable(full.output));
        // The estimate counts what the trainer all-reduces.
        const auto bytes = QRegularExpression(QStringLiteral("; (\\d+) bytes\\)")).match(full.output).captured(1).toULongLong();
        const auto parsed = trellis::plan::parsePlan(planJson(2, QStringLiteral(R"({"kind": "powersgd", "rank": 32})"), precision, 5).toStdString());
        QVERIFY2(parsed.ok(), parsed.errorText().c_str());
        const trellis::plan::Estimate e = trellis::plan::estimatePlan(parsed.value(), trellis::plan::deviceFor(parsed.value().cluster));
        std::uint64_t estimated = 0;
        for (const auto &c : e.collectives)
            if (c.group == "dp" && c.op == "all_reduce")
                estimated += c.bytes;
        QCOMPARE(estimated, std::uint64_t(bytes + 8)); // + the loss, a double
        const double losses = worstLossDifference(full.losses, plain.losses), grads = relativeL2(full.grads, plain.grads);
        qInfo("%s, rank 32: losses within %.2e, step-1 gradients within %.2e", qPrintable(precision), losses, grads);
        // fp32: round-off of the QR and the products; bf16 turns the same round-off into other bf16
        // roundings of the parameters, step after step.
        const double bound = precision == QLatin1String("fp32") ? 1e-6 : 5e-5;
        QVERIFY2(losses < bound, qPrintable(QString::number(losses)));
        QVERIFY2(grads < bound, qPrintable(QString::number(grads)));
    }

    void trainerAtRankOneCompresses()
    {
        QTemporaryDir dir;
        const TrainerRun plain = runTrainer(dir, QStringLiteral("plain"), planJson(2, QStringLiteral(R"({"kind": "none", "rank": 1, "warm_start": true})"), QStringLiteral("fp32"), 40), 2);
        QVERIFY2(plain.code == 0, qPrintable(plain.output));
        const TrainerRun low = runTrainer(
            dir, QStringLiteral("low"), planJson(2, QStringLiteral(R"({"kind": "powersgd", "rank": 1, "warm_start": true})"), QStringLiteral("fp32"), 40), 2);
        QVERIFY2(low.code == 0, qPrintable(low.output));
        QVERIFY2(low.output.contains(QStringLiteral("x fewer;")), qPrintable(low.output));
        QCOMPARE(low.losses.size(), plain.losses.size());
        const double step1 = relativeL2(low.grads, plain.grads);
        const double last = low.losses.back(), lastPlain = plain.losses.back();
        qInfo("rank 1: step-1 gradients %.3f off; loss after %zu steps %.4f against %.4f uncompressed", step1, low.losses.size(),
              last, lastPlain);
        QVERIFY(step1 > 0.05);                              // compressed, not skipped
        QVERIFY(std::abs(last - lastPlain) / lastPlain < 0.1); // and still training
    }
};

QTEST_GUILESS_MAIN(TestPowerSgdTraining)
#include "tst_powersgd_training.moc"
