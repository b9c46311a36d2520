// DeepSpeed configs and Megatron-LM argument lines to plans and back: realistic inputs map as
// expected, every mapped field survives a round trip, unmapped keys and flags are warnings that
// name them, and bad values are errors with the exact key or flag.
#include "plan/interop.h"
#include "plan/plan_validate.h"
#include "plan/presets.h"

#include <QTest>

#include <cmath>

using namespace trellis::plan;
using nlohmann::json;

namespace {

Plan basePlan(const char *model, const char *cluster, int nodes, int dp)
{
    Plan p;
    p.name = "base";
    p.model = *modelPreset(model);
    p.cluster = expandCluster(*clusterPreset(cluster), nodes);
    p.parallel.dp = dp;
    p.training.data.source = "synthetic";
    return p;
}

QString messages(const Diagnostics &d)
{
    QStringList out;
    for (const auto &x : d)
        out << QString::fromStdString(x.toString());
    return out.join(QStringLiteral(" | "));
}

} // namespace

class TstInterop : public QObject {
    Q_OBJECT
private slots:
    void deepSpeedZero3Bf16()
    {
        const json config = json::parse(R"({
          "train_batch_size": 256, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8,
          "zero_optimization": {"stage": 3, "overlap_comm": true, "reduce_bucket_size": 50000000,
                                "stage3_prefetch_bucket_size": 5e7},
          "bf16": {"enabled": true}, "gradient_clipping": 1.0,
          "optimizer": {"type": "AdamW", "params": {"lr": 3e-4, "betas": [0.9, 0.95], "eps": 1e-8, "weight_decay": 0.1}},
          "scheduler": {"type": "WarmupCosineLR", "params": {"warmup_num_steps": 2000, "total_num_steps": 100000, "cos_min_ratio": 0.1}},
          "activation_checkpointing": {"partition_activations": true},
          "wall_clock_breakdown": false
        })");
        Diagnostics warnings;
        const auto p = fromDeepSpeedConfig(config, basePlan("llama2-7b", "dgx-h100", 1, 8), &warnings);
        QVERIFY2(p, p.errorText().c_str());
        const Plan &plan = p.value();
        QCOMPARE(plan.parallel.zero, 3);
        QCOMPARE(plan.parallel.microBatchSize, 4);
        QCOMPARE(plan.parallel.microBatches, 8);
        QCOMPARE(plan.parallel.precision, Precision::Bf16);
        QCOMPARE(plan.parallel.recompute, Recompute::Full);
        QVERIFY(std::abs(*plan.parallel.bucketMb - 50000000 * 4.0 / 1048576.0) < 1e-9);
        QCOMPARE(plan.training.warmupSteps, 2000);
        QCOMPARE(plan.training.steps, 100000);
        QVERIFY(std::abs(plan.training.minLr - 3e-5) < 1e-15);
        QVERIFY(!hasErrors(validatePlan(plan)));
        QCOMPARE(messages(warnings), QStringLiteral("warning: deepspeed.wall_clock_breakdown: is not used by Trellis | warning: "
                                                    "deepspeed.zero_optimization.stage3_prefetch_bucket_size: is not used by Trellis"));
    }

    void deepSpeedRoundTrip_data()
    {
        QTest::addColumn<int>("zero");
        QTest::addColumn<int>("precision");
        QTest::addColumn<bool>("recompute");
        for (int zero : {0, 1, 2, 3})
            QTest::newRow(qPrintable(QStringLiteral("zero %1").arg(zero))) << zero << 0 << false;
        QTest::newRow("bf16 recompute") << 2 << 1 << true;
        QTest::newRow("fp16") << 1 << 2 << false;
    }
    void deepSpeedRoundTrip()
    {
        QFETCH(int, zero);
        QFETCH(int, precision);
        QFETCH(bool, recompute);
        Plan p = basePlan("gpt2-350m", "dgx-a100", 2, 16);
        p.parallel.zero = zero;
        p.parallel.precision = static_cast<Precision>(precision);
        p.parallel.recompute = recompute ? Recompute::Full : Recompute::None;
        p.parallel.microBatchSize = 2;
        p.parallel.microBatches = 4;
        p.parallel.bucketMb = 100.0; // a whole number of elements
        p.parallel.overlapGradReduce = false;
        p.training.lr = 6e-4;
        p.training.minLr = 6e-5;
        p.training.warmupSteps = 700;
        p.training.steps = 9000;
        p.training.gradClip = 0.5;
        p.training.weightDecay = 0.05;
        p.training.beta2 = 0.999;
        const auto back = fromDeepSpeedConfig(toDeepSpeedConfig(p), basePlan("gpt2-350m", "dgx-a100", 2, 16));
        QVERIFY2(back, back.errorText().c_str());
        Plan q = back.value();
        QVERIFY(std::abs(q.training.minLr - p.training.minLr) < 1e-15);
        q.training.minLr = p.training.minLr; // a ratio in DeepSpeed: equal to round-off
        q.name = p.name;
        QVERIFY(q.parallel == p.parallel);
        QVERIFY(q.training == p.training);
    }

    void megatronGpt3()
    {
        // GPT-3 175B as in Narayanan et al. 2021 (tp 8, pp 16 over 1024 A100s, batch 1536).
        const std::string line = R"(pretrain_gpt.py --tensor-model-parallel-size 8 --pipeline-model-parallel-size 16 \
            --num-layers 96 --hidden-size 12288 --num-attention-heads 96 --seq-length 2048 \
            --max-position-embeddings 2048 --micro-batch-size 1 --global-batch-size 1536 \
            --lr 0.6e-4 --min-lr 0.6e-5 --lr-decay-style cosine --train-iters 100000 --bf16 \
            --use-distributed-optimizer --sequence-parallel --recompute-granularity=selective --vocab-size 51200)";
        Diagnostics warnings;
        const auto p = fromMegatronArgs(line, basePlan("gpt3-175b", "dgx-a100", 128, 1), &warnings);
        QVERIFY2(p, p.errorText().c_str());
        const ParallelSpec &ps = p.value().parallel;
        QCOMPARE(ps.tp, 8);
        QCOMPARE(ps.pp, 16);
        QCOMPARE(ps.dp, 8);
        QCOMPARE(ps.microBatches, 192);
        QCOMPARE(ps.globalBatch(), 1536);
        QCOMPARE(ps.zero, 1);
        QVERIFY(ps.sequenceParallel);
        QCOMPARE(ps.recompute, Recompute::Selective);
        QCOMPARE(p.value().model.ffn, 4 * 12288);
        QCOMPARE(p.value().model.vocab, 51200);
        QVERIFY(p.value().model.preset.empty());
        QCOMPARE(messages(warnings), QStringLiteral("warning: megatron --max-position-embeddings: is not used by Trellis | warning: "
                                                    "megatron --lr-decay-style: is not used by Trellis"));
    }

    void megatronRoundTrip_data()
    {
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("v");
        QTest::addColumn<bool>("sp");
        QTest::addColumn<int>("recompute");
        QTest::addColumn<int>("precision");
        QTest::newRow("tp8 pp4") << 8 << 4 << 1 << false << 0 << 0;
        QTest::newRow("tp4 pp8 v2 sp") << 4 << 8 << 2 << true << 0 << 1;
        QTest::newRow("tp2 full recompute fp16") << 2 << 1 << 1 << true << 2 << 2;
        QTest::newRow("pp16 selective") << 1 << 16 << 1 << false << 1 << 1;
    }
    void megatronRoundTrip()
    {
        QFETCH(int, tp);
        QFETCH(int, pp);
        QFETCH(int, v);
        QFETCH(bool, sp);
        QFETCH(int, recompute);
        QFETCH(int, precision);
        Plan p = basePlan("llama2-70b", "dgx-h100", 16, 128 / (tp * pp));
        p.parallel.tp = tp;
        p.parallel.pp = pp;
        p.parallel.virtualStages = v;
        p.parallel.schedule = v > 1 ? "interleaved-1f1b" : "1f1b";
        p.parallel.sequenceParallel = sp;
        p.parallel.recompute = static_cast<Recompute>(recompute);
        p.parallel.precision = static_cast<Precision>(precision);
        p.parallel.zero = 1;
        p.parallel.microBatchSize = 1;
        p.parallel.microBatches = 4 * pp;
        p.model.preset.clear();
        p.training.checkpoint = {500, "/ckpt/it's here", 2};
        const std::string args = toMegatronArgs(p);
        const auto back = fromMegatronArgs(args, basePlan("llama2-70b", "dgx-h100", 16, 1));
        QVERIFY2(back, (back.errorText() + "\n" + args).c_str());
        Plan q = back.value();
        q.name = p.name;
        QVERIFY2(q.model == p.model, args.c_str());
        QVERIFY2(q.parallel == p.parallel, args.c_str());
        QVERIFY2(q.training == p.training, args.c_str());
    }

    void badInputs_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("message");
        QTest::newRow("ds not object") << "ds" << R"([1, 2])" << "deepspeed: expected a JSON object, got [1,2]";
        QTest::newRow("ds stage text") << "ds" << R"({"zero_optimization": {"stage": "two"}})"
                                       << "deepspeed.zero_optimization.stage: expected an integer 0-3, got \"two\"";
        QTest::newRow("ds stage 4") << "ds" << R"({"zero_optimization": {"stage": 4}})"
                                    << "deepspeed.zero_optimization.stage: expected an integer 0-3, got 4";
        QTest::newRow("ds batch mismatch") << "ds" << R"({"train_batch_size": 100, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8})"
                                           << "deepspeed.train_batch_size: 100 is not train_micro_batch_size_per_gpu (4) × gradient_accumulation_steps (8) × dp (8) = 256";
        QTest::newRow("ds batch indivisible") << "ds" << R"({"train_batch_size": 100, "train_micro_batch_size_per_gpu": 4})"
                                              << "deepspeed.train_batch_size: 100 is not a multiple of train_micro_batch_size_per_gpu (4) × dp (8)";
        QTest::newRow("ds both precisions") << "ds" << R"({"bf16": {"enabled": true}, "fp16": {"enabled": true}})"
                                            << "deepspeed.fp16.enabled: bf16 and fp16 cannot both be enabled";
        QTest::newRow("ds optimizer") << "ds" << R"({"optimizer": {"type": "Lamb"}})" << "deepspeed.optimizer.type: Trellis trains with AdamW; got \"Lamb\"";
        QTest::newRow("ds betas") << "ds" << R"({"optimizer": {"params": {"betas": [0.9]}}})" << "deepspeed.optimizer.params.betas: expected [beta1, beta2], got [0.9]";
        QTest::newRow("ds negative clip") << "ds" << R"({"gradient_clipping": -1})" << "deepspeed.gradient_clipping: expected a number >= 0, got -1";
        QTest::newRow("ds scheduler") << "ds" << R"({"scheduler": {"type": "OneCycle"}})"
                                      << "deepspeed.scheduler.type: expected WarmupLR, WarmupDecayLR or WarmupCosineLR, got \"OneCycle\"";
        QTest::newRow("mg non-numeric") << "mg" << "--tensor-model-parallel-size x"
                                        << "megatron --tensor-model-parallel-size: expected an integer >= 1, got 'x'";
        QTest::newRow("mg missing value") << "mg" << "--micro-batch-size --bf16" << "megatron --micro-batch-size: needs a value";
        QTest::newRow("mg tp does not divide") << "mg" << "--tensor-model-parallel-size 3"
                                               << "megatron --tensor-model-parallel-size: tp·pp·cp = 3 does not divide the cluster's 8 slots";
        QTest::newRow("mg global batch") << "mg" << "--micro-batch-size 2 --global-batch-size 30"
                                         << "megatron --global-batch-size: 30 is not a multiple of --micro-batch-size (2) × dp (8)";
        QTest::newRow("mg recompute") << "mg" << "--recompute-granularity some"
                                      << "megatron --recompute-granularity: expected full or selective, got 'some'";
        QTest::newRow("mg quote") << "mg" << "--save 'unterminated" << "megatron: unterminated ' quote";
        QTest::newRow("mg flag value") << "mg" << "--bf16=yes" << "megatron --bf16: takes no value, got 'yes'";
        QTest::newRow("mg virtual") << "mg" << "--num-layers 12 --pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 4"
                                    << "megatron --num-layers-per-virtual-pipeline-stage: 4 × --pipeline-model-parallel-size (2) does not divide the layers (12)";
    }
    void badInputs()
    {
        QFETCH(QString, kind);
        QFETCH(QString, input);
        QFETCH(QString, message);
        const Plan base = basePlan("gpt2-124m", "dgx-h100", 1, 8);
        if (kind == QLatin1String("ds")) {
            const auto r = fromDeepSpeedConfig(json::parse(input.toStdString()), base);
            QVERIFY(!r);
            QCOMPARE(QString::fromStdString(r.errorText()), message);
        } else {
            const auto r = fromMegatronArgs(input.toStdString(), base);
            QVERIFY(!r);
            QCOMPARE(QString::fromStdString(r.errorText()), message);
        }
    }
};

QTEST_APPLESS_MAIN(TstInterop)
#include "tst_interop.moc"
