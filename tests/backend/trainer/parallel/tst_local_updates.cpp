// Local updates over the data-parallel replicas (parallel.dp_sync local_sgd and diloco) under a
// real mpirun, clipping off:
// - one replica with DiLoCo's outer step at outer_lr 1 and momentum 0 (and local SGD, whose average
//   of one replica is itself) is plain training, to the bit: every step's loss and the parameters,
//   at inner_steps 1, 3 and 4;
// - two replicas equal a reference run here in one process: the replicas one after another, each
//   with its own model, AdamW state and data shard (DataLoader's dp rank of 2), the parameters
//   averaged (local SGD) or the outer Nesterov step taken (DiLoCo) every inner_steps steps, the loss
//   the replicas' mean — every step's loss and the parameters bitwise: the same kernels on one
//   thread, the same data, and MPI's average of two values is the reference's (a + b) / 2;
// - every-step data parallelism and DiLoCo at momentum 0.9 are other runs, so neither check passes
//   by accident;
// - tensor and pipeline parallelism inside each replica give the run without them (to the parity
//   tests' 1e-5).
#include "backend/plan/plan_json.h"
#include "tests/support/trainer_runs.h"
#include "backend/trainer/optimizer/adamw.h"
#include "backend/trainer/data/data_loader.h"
#include "backend/trainer/model/gpt_model.h"
#include "kernels/cpu/cpu_ops.h"
#include "backend/trainer/parallel/parallel_stack.h"

#include <QTemporaryDir>
#include <QTest>

#include <cblas.h>
#include <cmath>

using namespace trellis;
using namespace trellis::trainer;
namespace cpu = trellis::kernels::cpu;

namespace {

const QString kCorpus = QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt");
constexpr int kSteps = 6, kBatch = 4;

// tp, pp: tensor and pipeline parallelism inside each replica (ranks = dp · tp · pp).
QString planJson(int dp, const QString &sync, int tp = 1, int pp = 1)
{
    return QStringLiteral(R"({
      "schema": "trellis.plan/1", "name": "local-updates",
      "model": {"layers": 2, "hidden": 32, "heads": 4, "ffn": 64, "seq_len": 32, "vocab": 256, "init_std": 0.02},
      "cluster": {"nodes": [{"host": "localhost", "slots": %1}]},
      "parallel": {"dp": %2, "tp": %6, "pp": %7, "micro_batch_size": %3, "micro_batches": %8 %4},
      "training": {"steps": %5, "lr": 0.003, "min_lr": 0.0003, "warmup_steps": 1, "seed": 11, "grad_clip": 0,
                   "data": {"source": "text", "path": "%9"}}
    })")
        .arg(dp * tp * pp)
        .arg(dp)
        .arg(pp > 1 ? kBatch / 2 : kBatch)
        .arg(sync.isEmpty() ? QString() : QStringLiteral(", \"dp_sync\": ") + sync)
        .arg(kSteps)
        .arg(tp)
        .arg(pp)
        .arg(pp > 1 ? 2 : 1)
        .arg(kCorpus);
}

QString diloco(int inner, double lr, double momentum)
{
    return QStringLiteral(R"({"mode": "diloco", "inner_steps": %1, "outer_lr": %2, "outer_momentum": %3, "nesterov": true})")
        .arg(inner)
        .arg(lr)
        .arg(momentum);
}

double lossDifference(const std::vector<double> &a, const std::vector<double> &b)
{
    double worst = a.size() == b.size() && !a.empty() ? 0.0 : INFINITY;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
        worst = std::max(worst, std::abs(a[i] - b[i]) / std::abs(b[i]));
    return worst;
}

double normRelative(const std::vector<float> &a, const std::vector<float> &b)
{
    if (a.size() != b.size() || a.empty())
        return INFINITY;
    double diff = 0, ref = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        ref += double(b[i]) * b[i];
    }
    return std::sqrt(diff / ref);
}

struct Reference {
    std::vector<double> losses;
    std::vector<float> params; // the first replica's after the last step
};

// The replicas one after another in this process, as plan.h describes local SGD and DiLoCo.
Reference runReplicas(const plan::Plan &plan)
{
    const plan::DpSyncSpec &sync = plan.parallel.dpSync;
    const int dp = plan.parallel.dp;
    const GptConfig config = configOf(plan);
    GptModel<float> model(config);
    model.initialize(plan.training.seed);
    const std::size_t n = model.parameterCount();
    const std::vector<float> initial(model.parameters().begin(), model.parameters().end());
    std::vector<std::vector<float>> replicas(static_cast<std::size_t>(dp), initial);
    std::vector<float> anchor = initial, momentum(n, 0.0f);
    std::vector<std::unique_ptr<AdamW>> optimizers;
    const plan::TrainingSpec &ts = plan.training;
    for (int r = 0; r < dp; ++r) {
        optimizers.push_back(std::make_unique<AdamW>(std::vector<ParamRange>{{0, n}},
                                                     AdamWConfig{ts.beta1, ts.beta2, ts.eps, ts.weightDecay}));
        optimizers.back()->setDecayMask(weightDecayMask(model.tensors(), n));
    }
    const LrSchedule schedule{ts.lr, ts.minLr, ts.warmupSteps, ts.steps};
    auto data = DataLoader::fromTextFile(kCorpus.toStdString(), config.maxSeqLen, ts.seed);
    Reference out;
    if (!data.ok())
        return out;
    for (int step = 0; step < ts.steps; ++step) {
        double loss = 0;
        for (int r = 0; r < dp; ++r) {
            std::copy(replicas[r].begin(), replicas[r].end(), model.parameters().begin());
            const Batch b = data.value().batch(static_cast<std::uint64_t>(step), r, dp, 0, 1, kBatch);
            model.zeroGradients();
            loss += model.forward(b.tokens.data(), b.targets.data(), b.batch, b.seqLen);
            model.backward();
            optimizers[r]->step(replicas[r].data(), model.gradients().data(), schedule.at(step));
        }
        out.losses.push_back(loss / dp);
        if ((step + 1) % sync.innerSteps != 0)
            continue;
        const auto mu = static_cast<float>(sync.outerMomentum), lr = static_cast<float>(sync.outerLr);
        for (std::size_t i = 0; i < n; ++i) {
            float mean = 0;
            for (int r = 0; r < dp; ++r)
                mean += replicas[r][i];
            mean /= static_cast<float>(dp);
            if (sync.mode == plan::DpSyncMode::DiLoCo) {
                const float delta = anchor[i] - mean;
                momentum[i] = mu * momentum[i] + delta;
                const float outer = sync.nesterov ? delta + mu * momentum[i] : momentum[i];
                mean += delta - lr * outer;
            }
            anchor[i] = mean;
            for (int r = 0; r < dp; ++r)
                replicas[r][i] = mean;
        }
    }
    out.params = replicas.front();
    return out;
}

} // namespace

class TstLocalUpdates : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

    test::TrainerRun run(const QString &name, int dp, const QString &sync, int tp = 1, int pp = 1)
    {
        test::TrainerRun r =
            test::runTrainer(m_dir, name, planJson(dp, sync, tp, pp), dp * tp * pp, {QStringLiteral("--quiet")});
        if (r.code != 0)
            qWarning("%s: %s", qPrintable(name), qPrintable(r.output));
        return r;
    }

private slots:
    void initTestCase()
    {
        openblas_set_num_threads(1); // as the trainer's ranks (OPENBLAS_NUM_THREADS=1)
        cpu::setKernelThreads(1);
    }

    void oneReplicaIsPlainTraining()
    {
        const test::TrainerRun plain = run(QStringLiteral("plain"), 1, {});
        QCOMPARE(plain.code, 0);
        QCOMPARE(plain.losses.size(), std::size_t(kSteps));
        for (int inner : {1, 3, 4}) {
            for (const QString &sync : {diloco(inner, 1.0, 0.0),
                                        QStringLiteral(R"({"mode": "local_sgd", "inner_steps": %1})").arg(inner)}) {
                const test::TrainerRun local = run(QStringLiteral("one-%1").arg(qHash(sync)), 1, sync);
                QCOMPARE(local.code, 0);
                QVERIFY2(local.losses == plain.losses, qPrintable(sync + QStringLiteral(": losses differ")));
                QVERIFY2(local.params == plain.params, qPrintable(sync + QStringLiteral(": parameters differ")));
            }
        }
        // The outer step is not the identity otherwise: momentum 0.9 moves the parameters.
        const test::TrainerRun moved = run(QStringLiteral("one-moved"), 1, diloco(3, 0.7, 0.9));
        QCOMPARE(moved.code, 0);
        QVERIFY(normRelative(moved.params, plain.params) > 1e-4);
    }

    void twoReplicasMatchTheReference_data()
    {
        QTest::addColumn<QString>("sync");
        QTest::newRow("local_sgd inner 2") << QStringLiteral(R"({"mode": "local_sgd", "inner_steps": 2})");
        QTest::newRow("diloco inner 3") << diloco(3, 0.7, 0.9);
        QTest::newRow("diloco inner 1") << diloco(1, 0.7, 0.9);
    }
    void twoReplicasMatchTheReference()
    {
        QFETCH(QString, sync);
        const QString text = planJson(2, sync);
        auto plan = plan::parsePlan(text.toStdString(), "local-updates");
        QVERIFY2(plan.ok(), plan.errorText().c_str());
        const Reference want = runReplicas(plan.value());
        QCOMPARE(want.losses.size(), std::size_t(kSteps));
        const test::TrainerRun got = run(QStringLiteral("two-%1").arg(qHash(sync)), 2, sync);
        QCOMPARE(got.code, 0);
        const double losses = lossDifference(got.losses, want.losses), params = normRelative(got.params, want.params);
        qInfo("%s: losses %.3g, parameters %.3g", qPrintable(sync), losses, params);
        QVERIFY2(got.losses == want.losses, qPrintable(QString::number(losses)));
        QVERIFY2(got.params == want.params, qPrintable(QString::number(params)));
        // Every-step data parallelism is a different run: the check above is not met by accident.
        const test::TrainerRun everyStep = run(QStringLiteral("two-every-step"), 2, {});
        QCOMPARE(everyStep.code, 0);
        QVERIFY(normRelative(everyStep.params, want.params) > 1e-4);
    }

    // Inside each replica tensor or pipeline parallelism (the same global batch: a pipeline of two
    // micro-batches of half the size): the same run as the replicas without them, to the bounds the
    // parallel parity tests hold every-step training to (losses 1e-5 relative, parameters 1e-5).
    void composesWithTensorAndPipelineParallelism_data()
    {
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("pp");
        QTest::newRow("dp 2 x tp 2") << 2 << 1;
        QTest::newRow("dp 2 x pp 2") << 1 << 2;
    }
    void composesWithTensorAndPipelineParallelism()
    {
        QFETCH(int, tp);
        QFETCH(int, pp);
        const QString sync = diloco(3, 0.7, 0.9);
        const test::TrainerRun flat = run(QStringLiteral("flat"), 2, sync);
        const test::TrainerRun inner = run(QStringLiteral("inner-%1-%2").arg(tp).arg(pp), 2, sync, tp, pp);
        QCOMPARE(flat.code, 0);
        QCOMPARE(inner.code, 0);
        const double losses = lossDifference(inner.losses, flat.losses), params = normRelative(inner.params, flat.params);
        qInfo("tp %d pp %d: losses %.3g, parameters %.3g", tp, pp, losses, params);
        QVERIFY2(losses <= 1e-5, qPrintable(QString::number(losses)));
        QVERIFY2(params <= 1e-5, qPrintable(QString::number(params)));
    }
};

QTEST_GUILESS_MAIN(TstLocalUpdates)
#include "tst_local_updates.moc"
