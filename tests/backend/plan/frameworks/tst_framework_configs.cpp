// DeepSpeed configs and Megatron-LM argument lines to plans and back: realistic inputs (a ZeRO-3
// bf16 config, a Hugging Face Trainer config full of "auto", the GPT-3 175B line of Megatron's
// example script) map as expected and give valid plans, DeepSpeed's and Megatron's own defaults
// apply where a key or flag is left out, every mapped field survives a round trip, the line splits
// like a shell, unused keys and flags are warnings that name them, and bad values are errors
// with their exact messages.
#include "backend/plan/frameworks/framework_configs.h"
#include "backend/plan/plan_validate.h"
#include "backend/plan/presets.h"

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

QStringList texts(const Diagnostics &diagnostics)
{
    QStringList out;
    for (const auto &d : diagnostics)
        out << QString::fromStdString(d.toString());
    return out;
}

// validatePlan's errors only (its warnings, e.g. bucket_mb unused at ZeRO-3, are fine here).
QStringList validationErrors(const Plan &plan)
{
    Diagnostics errors;
    for (const auto &d : validatePlan(plan))
        if (d.severity == Severity::Error)
            errors.push_back(d);
    return texts(errors);
}

bool near(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(std::abs(a), std::abs(b)); }

} // namespace

class TstFrameworkConfigs : public QObject {
    Q_OBJECT
private slots:
    // A ZeRO-3 bf16 config as DeepSpeed's tutorials write it, for Llama 2 7B on 8 DGX H100 nodes.
    void deepSpeedZero3Bf16()
    {
        const json config = json::parse(R"({
          "train_batch_size": 512,
          "train_micro_batch_size_per_gpu": 4,
          "gradient_accumulation_steps": 2,
          "steps_per_print": 100,
          "wall_clock_breakdown": false,
          "bf16": {"enabled": true},
          "zero_optimization": {
            "stage": 3,
            "overlap_comm": true,
            "contiguous_gradients": true,
            "reduce_bucket_size": 5e8,
            "stage3_prefetch_bucket_size": 5e7,
            "stage3_param_persistence_threshold": 1e5,
            "stage3_max_live_parameters": 1e9,
            "stage3_gather_16bit_weights_on_model_save": true
          },
          "gradient_clipping": 1.0,
          "optimizer": {"type": "AdamW", "params": {"lr": 3e-4, "betas": [0.9, 0.95], "eps": 1e-8, "weight_decay": 0.1}},
          "scheduler": {"type": "WarmupCosineLR",
                        "params": {"total_num_steps": 100000, "warmup_num_steps": 2000, "warmup_type": "linear", "cos_min_ratio": 0.1}},
          "activation_checkpointing": {"partition_activations": true, "contiguous_memory_optimization": true}
        })");
        Plan base = basePlan("llama2-7b", "dgx-h100", 8, 64);
        base.training.gradClip = 0.3;
        base.training.beta2 = 0.999;
        Diagnostics warnings;
        const auto p = fromDeepSpeedConfig(config, base, &warnings);
        QVERIFY2(p, p.errorText().c_str());
        const ParallelSpec &ps = p->parallel;
        const TrainingSpec &ts = p->training;
        QCOMPARE(ps.zero, 3);
        QCOMPARE(ps.dp, 64);
        QCOMPARE(ps.microBatchSize, 4);
        QCOMPARE(ps.microBatches, 2);
        QCOMPARE(ps.globalBatch(), 512);
        QCOMPARE(ps.precision, Precision::Bf16);
        QCOMPARE(ps.recompute, Recompute::Full);
        QVERIFY(ps.overlapGradReduce);
        QCOMPARE(*ps.bucketMb, 5e8 * 4 / (1024.0 * 1024.0)); // 1907.35 MB: elements × 4 bytes
        QCOMPARE(ts.lr, 3e-4);
        QVERIFY(near(ts.minLr, 3e-5));
        QCOMPARE(ts.warmupSteps, 2000);
        QCOMPARE(ts.steps, 100000);
        QCOMPARE(ts.gradClip, 1.0);
        QCOMPARE(ts.beta1, 0.9);
        QCOMPARE(ts.beta2, 0.95);
        QCOMPARE(ts.eps, 1e-8);
        QCOMPARE(ts.weightDecay, 0.1);
        QCOMPARE(p->model, base.model);
        QCOMPARE(ts.seed, base.training.seed);
        QCOMPARE(validationErrors(p.value()), QStringList());
        QCOMPARE(texts(warnings), QStringList({
                                      "warning: deepspeed: steps_per_print is not used",
                                      "warning: deepspeed: wall_clock_breakdown is not used",
                                      "warning: deepspeed: zero_optimization.contiguous_gradients is not used",
                                      "warning: deepspeed: zero_optimization.stage3_gather_16bit_weights_on_model_save is not used",
                                      "warning: deepspeed: zero_optimization.stage3_max_live_parameters is not used",
                                      "warning: deepspeed: zero_optimization.stage3_param_persistence_threshold is not used",
                                      "warning: deepspeed: zero_optimization.stage3_prefetch_bucket_size is not used",
                                  }));
    }

    // The ZeRO-2 config of the Hugging Face Trainer's documentation: "auto" takes the base plan's
    // values, WarmupDecayLR and the logarithmic warm-up are approximations worth a warning.
    void deepSpeedHuggingFaceAuto()
    {
        const json config = json::parse(R"({
          "fp16": {"enabled": "auto", "loss_scale": 0, "loss_scale_window": 1000, "initial_scale_power": 16,
                   "hysteresis": 2, "min_loss_scale": 1},
          "bf16": {"enabled": "auto"},
          "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}},
          "scheduler": {"type": "WarmupDecayLR",
                        "params": {"warmup_min_lr": "auto", "warmup_max_lr": "auto", "warmup_num_steps": "auto",
                                   "total_num_steps": "auto"}},
          "zero_optimization": {"stage": 2, "allgather_partitions": true, "allgather_bucket_size": 2e8, "overlap_comm": true,
                                "reduce_scatter": true, "reduce_bucket_size": "auto", "contiguous_gradients": true},
          "gradient_accumulation_steps": "auto",
          "gradient_clipping": "auto",
          "steps_per_print": 2000,
          "train_batch_size": "auto",
          "train_micro_batch_size_per_gpu": "auto",
          "wall_clock_breakdown": false
        })");
        Plan base = basePlan("gpt2-350m", "dgx-a100", 1, 8);
        base.parallel.microBatchSize = 4;
        base.parallel.microBatches = 2;
        base.parallel.precision = Precision::Bf16;
        base.training.lr = 2e-4;
        base.training.warmupSteps = 100;
        base.training.steps = 5000;
        base.training.gradClip = 0.5;
        Diagnostics warnings;
        const auto p = fromDeepSpeedConfig(config, base, &warnings);
        QVERIFY2(p, p.errorText().c_str());
        QCOMPARE(p->parallel.microBatchSize, 4);
        QCOMPARE(p->parallel.microBatches, 2);
        QCOMPARE(p->parallel.zero, 2);
        QCOMPARE(p->parallel.precision, Precision::Bf16);
        QCOMPARE(*p->parallel.bucketMb, 1024.0 * 1024.0 * 4 / (1024.0 * 1024.0)); // hidden² elements = 4 MB
        QCOMPARE(p->training.lr, 2e-4);
        QCOMPARE(p->training.minLr, 0.0);
        QCOMPARE(p->training.warmupSteps, 100);
        QCOMPARE(p->training.steps, 5000);
        QCOMPARE(p->training.gradClip, 0.5);
        QCOMPARE(validationErrors(p.value()), QStringList());
        const QStringList w = texts(warnings);
        QCOMPARE(w.first(), QStringLiteral("warning: deepspeed: train_batch_size is \"auto\" (a Hugging Face Trainer placeholder): "
                                           "it is derived from the micro-batch size, the accumulation steps and dp"));
        QVERIFY(w.contains("warning: deepspeed: train_micro_batch_size_per_gpu is \"auto\" (a Hugging Face Trainer placeholder): "
                           "the base plan's value (4) is used"));
        QVERIFY(w.contains("warning: deepspeed: optimizer.params.betas is \"auto\" (a Hugging Face Trainer placeholder): "
                           "the base plan's value ([0.9,0.95]) is used"));
        QVERIFY(w.contains("warning: deepspeed: zero_optimization.reduce_bucket_size is \"auto\" (a Hugging Face Trainer "
                           "placeholder): model.hidden² (1048576) is used, as the Trainer fills it"));
        QVERIFY(w.contains("warning: deepspeed: fp16.loss_scale_window is not used"));
        QVERIFY(w.contains("warning: deepspeed: scheduler.params.warmup_type is \"log\" (DeepSpeed's default): Trellis warms up linearly"));
        QVERIFY(w.contains("warning: deepspeed: scheduler.type WarmupDecayLR decays linearly to 0: Trellis decays along a cosine (min_lr 0)"));
        QCOMPARE(w.filter("is \"auto\"").size(), 15);
    }

    // What a config leaves out takes DeepSpeed's default (stage 0, fp32, no clipping, one
    // micro-batch per step); the optimizer and scheduler left to the script keep the base's.
    void deepSpeedDefaults()
    {
        Plan base = basePlan("gpt2-124m", "dgx-h100", 1, 8);
        base.parallel.zero = 1;
        base.parallel.precision = Precision::Fp16;
        base.parallel.microBatches = 4;
        base.training.lr = 6e-4;
        base.training.minLr = 6e-5;
        Diagnostics warnings;
        auto p = fromDeepSpeedConfig(json::parse(R"({"train_batch_size": 64})"), base, &warnings);
        QVERIFY2(p, p.errorText().c_str());
        QCOMPARE(p->parallel.microBatchSize, 8);
        QCOMPARE(p->parallel.microBatches, 1);
        QCOMPARE(p->parallel.zero, 0);
        QVERIFY(!p->parallel.overlapGradReduce);
        QCOMPARE(p->parallel.precision, Precision::Fp32);
        QCOMPARE(p->training.gradClip, 0.0);
        QCOMPARE(p->training, [&] { TrainingSpec t = base.training; t.gradClip = 0; return t; }());
        QVERIFY(warnings.empty());

        // ZeRO-3 overlaps by default; WarmupLR holds its peak after the warm-up.
        p = fromDeepSpeedConfig(json::parse(R"({"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 3},
            "scheduler": {"type": "WarmupLR", "params": {"warmup_max_lr": 0.01, "warmup_num_steps": 50, "warmup_type": "linear"}}})"),
                                base, &warnings);
        QVERIFY2(p, p.errorText().c_str());
        QCOMPARE(p->parallel.microBatchSize, 2);
        QCOMPARE(p->parallel.microBatches, 1);
        QVERIFY(p->parallel.overlapGradReduce);
        QCOMPARE(p->training.lr, 0.01);
        QCOMPARE(p->training.minLr, 0.01);
        QCOMPARE(p->training.warmupSteps, 50);
        QCOMPARE(p->training.steps, base.training.steps);
        QVERIFY(warnings.empty());

        // A bucket larger than the model is one bucket of the whole model.
        p = fromDeepSpeedConfig(json::parse(R"({"zero_optimization": {"stage": 1, "reduce_bucket_size": 5e9}})"), base);
        QVERIFY2(p, p.errorText().c_str());
        QCOMPARE(*p->parallel.bucketMb, static_cast<double>(parameterCount(base.model)) * 4 / (1024.0 * 1024.0));
        QCOMPARE(validationErrors(p.value()), QStringList());
    }

    void deepSpeedRoundTrip_data()
    {
        QTest::addColumn<int>("zero");
        QTest::addColumn<int>("precision");
        QTest::addColumn<bool>("recompute");
        QTest::addColumn<bool>("overlap");
        QTest::addColumn<double>("bucketMb"); // 0: none
        for (int zero : {0, 1, 2, 3})
            QTest::newRow(qPrintable(QStringLiteral("zero %1").arg(zero))) << zero << 0 << false << (zero != 1) << (zero < 2 ? 50.0 : 0.0);
        QTest::newRow("zero 3 bf16 recompute") << 3 << int(Precision::Bf16) << true << true << 0.0;
        QTest::newRow("zero 1 bf16") << 1 << int(Precision::Bf16) << false << true << 12.5;
        QTest::newRow("zero 2 fp16 recompute") << 2 << int(Precision::Fp16) << true << false << 0.0;
    }
    void deepSpeedRoundTrip()
    {
        QFETCH(int, zero);
        QFETCH(int, precision);
        QFETCH(bool, recompute);
        QFETCH(bool, overlap);
        QFETCH(double, bucketMb);
        const Plan base = basePlan("gpt2-350m", "dgx-a100", 2, 16);
        Plan p = base;
        p.parallel.zero = zero;
        p.parallel.precision = static_cast<Precision>(precision);
        p.parallel.recompute = recompute ? Recompute::Full : Recompute::None;
        p.parallel.overlapGradReduce = overlap;
        p.parallel.microBatchSize = 2;
        p.parallel.microBatches = 4;
        p.parallel.framework = Framework::DeepSpeed; // a config read back is DeepSpeed's plan
        if (bucketMb > 0)
            p.parallel.bucketMb = bucketMb; // a whole number of fp32 elements
        p.training.lr = 6e-4;
        p.training.minLr = 6e-5;
        p.training.warmupSteps = 700;
        p.training.steps = 9000;
        p.training.gradClip = 0.5;
        p.training.weightDecay = 0.05;
        p.training.beta1 = 0.85;
        p.training.beta2 = 0.999;
        p.training.eps = 1e-6;
        QCOMPARE(validationErrors(p), QStringList());
        Diagnostics warnings;
        const auto back = fromDeepSpeedConfig(toDeepSpeedConfig(p), base, &warnings);
        QVERIFY2(back, back.errorText().c_str());
        QCOMPARE(texts(warnings), QStringList());
        Plan q = back.value();
        QVERIFY(near(q.training.minLr, p.training.minLr)); // written as a ratio of lr
        q.training.minLr = p.training.minLr;
        QCOMPARE(q, p);
    }

    // The exact config written for one plan: keys a DeepSpeed release accepts, nothing left implicit.
    void deepSpeedWritten()
    {
        Plan p = basePlan("gpt2-124m", "dgx-h100", 1, 8);
        p.parallel.zero = 2;
        p.parallel.microBatchSize = 4;
        p.parallel.microBatches = 2;
        p.parallel.bucketMb = 100;
        p.parallel.precision = Precision::Bf16;
        p.parallel.recompute = Recompute::Full;
        p.training.lr = 5e-4;
        p.training.minLr = 5e-5;
        p.training.warmupSteps = 10;
        QCOMPARE(QString::fromStdString(toDeepSpeedConfig(p).dump()),
                 QStringLiteral(R"({"activation_checkpointing":{"contiguous_memory_optimization":false,"partition_activations":false},)"
                                R"("bf16":{"enabled":true},"fp16":{"enabled":false},"gradient_accumulation_steps":2,"gradient_clipping":1.0,)"
                                R"("optimizer":{"params":{"betas":[0.9,0.95],"eps":1e-08,"lr":0.0005,"weight_decay":0.1},"type":"AdamW"},)"
                                R"("scheduler":{"params":{"cos_min_ratio":0.1,"total_num_steps":100,"warmup_min_ratio":0.0,)"
                                R"("warmup_num_steps":10,"warmup_type":"linear"},"type":"WarmupCosineLR"},"train_batch_size":64,)"
                                R"("train_micro_batch_size_per_gpu":4,"zero_optimization":{"overlap_comm":true,"reduce_bucket_size":26214400,"stage":2}})"));
    }

    // GPT-3 175B as Megatron-LM's examples/gpt3/train_gpt3_175b_distributed.sh runs it (tp 8,
    // pp 16, global batch 1536; the layout of Narayanan et al. 2021), on 128 DGX A100 nodes, as a
    // user pastes it: launcher, continuations, a comment, quotes and --flag=value.
    void megatronGpt3()
    {
        const std::string line = R"(CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc_per_node 8 --nnodes 128 \
    --master_addr node0 --master_port 6000 pretrain_gpt.py \
    --num-layers 96 --hidden-size 12288 --num-attention-heads 96 \
    --seq-length 2048 --max-position-embeddings 2048 \
    --attention-backend auto # Can use (flash/fused/unfused/local)
    --micro-batch-size 1 --global-batch-size 1536 --rampup-batch-size 16 16 5859375 \
    --train-iters 500000 --weight-decay 0.1 --adam-beta1 0.9 --adam-beta2 0.95 \
    --init-method-std 0.006 --clip-grad 1.0 --fp16 \
    --lr=6.0e-5 --lr-decay-style cosine --min-lr 6.0e-6 --lr-warmup-fraction .001 --lr-decay-iters 430000 \
    --tensor-model-parallel-size 8 --pipeline-model-parallel-size 16 \
    --data-path /data/gpt3_text_document --vocab-file /data/gpt2-vocab.json --merge-file /data/gpt2-merges.txt \
    --split 949,50,1 --log-interval 100 --save-interval 10000 --eval-interval 1000 \
    --save "/ckpt/gpt3 175b" --load '/ckpt/gpt3 175b' --eval-iters 10 --tensorboard-dir /logs)";
        const Plan base = basePlan("gpt3-175b", "dgx-a100", 128, 1);
        Diagnostics warnings;
        const auto p = fromMegatronArgs(line, base, &warnings);
        QVERIFY2(p, p.errorText().c_str());
        const ParallelSpec &ps = p->parallel;
        QCOMPARE(ps.tp, 8);
        QCOMPARE(ps.pp, 16);
        QCOMPARE(ps.dp, 8);
        QCOMPARE(ps.cp, 1);
        QCOMPARE(ps.virtualStages, 1);
        QCOMPARE(ps.schedule, std::string("1f1b"));
        QCOMPARE(ps.microBatchSize, 1);
        QCOMPARE(ps.microBatches, 192);
        QCOMPARE(ps.globalBatch(), 1536);
        QCOMPARE(ps.precision, Precision::Fp16);
        QCOMPARE(ps.zero, 0);
        QCOMPARE(ps.recompute, Recompute::None);
        const ModelSpec &m = p->model;
        QCOMPARE(m, (ModelSpec{"", "gpt", 96, 12288, 96, 96, 4 * 12288, 2048, 51200, {}})); // vocabulary padded as Megatron does
        const TrainingSpec &ts = p->training;
        QCOMPARE(ts.lr, 6e-5);
        QCOMPARE(ts.minLr, 6e-6);
        QCOMPARE(ts.warmupSteps, 430); // 0.001 × --lr-decay-iters
        QCOMPARE(ts.steps, 500000);
        QCOMPARE(ts.beta2, 0.95);
        QCOMPARE(ts.checkpoint.every, 10000);
        QCOMPARE(ts.checkpoint.dir, std::string("/ckpt/gpt3 175b"));
        QCOMPARE(validationErrors(p.value()), QStringList());
        QCOMPARE(texts(warnings),
                 QStringList({
                     "warning: megatron: --attention-backend is not used",
                     "warning: megatron: --rampup-batch-size is not used",
                     "warning: megatron: --init-method-std is not used",
                     "warning: megatron: --data-path is not used",
                     "warning: megatron: --vocab-file is not used",
                     "warning: megatron: --merge-file is not used",
                     "warning: megatron: --split is not used",
                     "warning: megatron: --log-interval is not used",
                     "warning: megatron: --eval-interval is not used",
                     "warning: megatron: --eval-iters is not used",
                     "warning: megatron: --tensorboard-dir is not used",
                     "warning: megatron: the vocabulary (50257) is padded to 51200, a multiple of --make-vocab-size-divisible-by (128) "
                     "× --tensor-model-parallel-size (8), as Megatron pads it",
                     "warning: megatron: --lr-decay-iters (430000) differs from the training steps (500000): Trellis decays the "
                     "learning rate until the last step",
                 }));
    }

    // Megatron's rules for what a line leaves out or implies.
    void megatronRules()
    {
        const Plan llama = basePlan("llama2-7b", "dgx-h100", 1, 8);
        Diagnostics warnings;
        // Explicit sizes replace the preset; ffn defaults to 4 × hidden, attention to multi-head;
        // without --global-batch-size one micro-batch per step. The script before the flags is skipped.
        auto p = fromMegatronArgs("python pretrain_gpt.py --num-layers 24 --hidden-size 1024 --num-attention-heads 16 --micro-batch-size 4",
                                  llama, &warnings);
        QVERIFY2(p, p.errorText().c_str());
        QCOMPARE(p->model, (ModelSpec{"", "gpt", 24, 1024, 16, 16, 4096, 4096, 32000, {}}));
        QCOMPARE(p->parallel.dp, 8);
        QCOMPARE(p->parallel.microBatches, 1);
        QCOMPARE(p->training, llama.training);
        QCOMPARE(texts(warnings), QStringList());

        // Grouped-query attention needs its switch; alone it means one group.
        p = fromMegatronArgs("--num-attention-heads 32 --num-query-groups 8", llama, &warnings);
        QVERIFY2(p, p.errorText().c_str());
        QCOMPARE(p->model.kvHeads, 32);
        QCOMPARE(texts(warnings), QStringList({"warning: megatron: --num-query-groups has no effect without --group-query-attention"}));
        warnings.clear();
        p = fromMegatronArgs("--group-query-attention", llama);
        QCOMPARE(p->model.kvHeads, 1);
        p = fromMegatronArgs("--group-query-attention --num-query-groups=8", llama);
        QCOMPARE(p->model.kvHeads, 8);

        // The Llama recipe: --swiglu plans the llama architecture; its companions alone do not.
        p = fromMegatronArgs("--swiglu --normalization RMSNorm --untie-embeddings-and-output-weights --disable-bias-linear "
                             "--position-embedding-type rope",
                             llama, &warnings);
        QVERIFY2(p, p.errorText().c_str());
        QCOMPARE(p->model.arch, std::string("llama"));
        QVERIFY2(texts(warnings).isEmpty(), qPrintable(texts(warnings).join(QLatin1Char('|'))));
        p = fromMegatronArgs("--swiglu", llama, &warnings);
        QCOMPARE(p->model.arch, std::string("llama"));
        QCOMPARE(texts(warnings), QStringList({"warning: megatron: --swiglu is planned as the llama architecture (RMSNorm, untied "
                                               "head, no biases), which the other flags here do not all ask for"}));
        warnings.clear();
        p = fromMegatronArgs("--normalization RMSNorm", llama, &warnings);
        QCOMPARE(p->model.arch, std::string("gpt"));
        QCOMPARE(texts(warnings), QStringList({"warning: megatron: without --swiglu the model is planned as the gpt architecture; "
                                               "RMSNorm, rotary positions, the untied head and bias-free linears are not modelled apart"}));
        warnings.clear();

        // No base cluster: the world is the base plan's ranks.
        Plan bare = llama;
        bare.cluster = {};
        bare.parallel.dp = 4;
        p = fromMegatronArgs("--tensor-model-parallel-size 2", bare);
        QVERIFY2(p, p.errorText().c_str());
        QCOMPARE(p->parallel.dp, 2);

        // Schedules: constant is a cosine from lr to lr; a linear decay is approximated.
        p = fromMegatronArgs("--lr 3e-4 --min-lr 0 --lr-decay-style constant --load /ckpt --num-experts 8", llama, &warnings);
        QVERIFY2(p, p.errorText().c_str());
        QCOMPARE(p->training.minLr, 3e-4);
        QCOMPARE(p->training.checkpoint.dir, std::string("/ckpt"));
        QCOMPARE(p->model.moe, (MoeSpec{8, 2, std::nullopt, 0.0})); // Megatron's defaults: dropless, no balance loss
        p = fromMegatronArgs("--num-experts 8 --moe-router-topk 1 --moe-expert-capacity-factor 1.25 --moe-aux-loss-coeff 0.02", llama);
        QVERIFY2(p, p.errorText().c_str());
        QCOMPARE(p->model.moe, (MoeSpec{8, 1, 1.25, 0.02}));
        // And back: the line names both, and reads into the same plan.
        const std::string line = toMegatronArgs(p.value());
        QVERIFY2(line.find("--moe-expert-capacity-factor 1.25") != std::string::npos && line.find("--moe-aux-loss-coeff 0.02") != std::string::npos,
                 line.c_str());
        QCOMPARE(fromMegatronArgs(line, llama)->model.moe, p->model.moe);
        QVERIFY(!fromMegatronArgs("--num-experts 8 --moe-expert-capacity-factor 0", llama));
        fromMegatronArgs("--lr 3e-4 stray $EXTRA_ARGS --foo 1 2 --no-bias --train-iters 10 --recompute-granularity full", llama, &warnings);
        QCOMPARE(texts(warnings), QStringList({
                                      "warning: megatron: 'stray' is not a flag and is not used",
                                      "warning: megatron: '$EXTRA_ARGS' is an unexpanded shell variable and is not used",
                                      "warning: megatron: --foo is not used",
                                      "warning: megatron: --no-bias is not used",
                                      "warning: megatron: --recompute-granularity full without --recompute-method: Megatron needs one; "
                                      "read as every layer recomputed",
                                      "warning: megatron: --lr-decay-style is not given: Megatron decays linearly by default, Trellis "
                                      "along a cosine",
                                  }));
    }

    void megatronRoundTrip_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("nodes");
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("v");
        QTest::addColumn<int>("cp");
        QTest::addColumn<int>("ep");
        QTest::addColumn<bool>("sp");
        QTest::addColumn<int>("recompute");
        QTest::addColumn<int>("precision");
        QTest::addColumn<int>("zero");
        QTest::addColumn<bool>("overlap");
        QTest::newRow("gpt3 tp8 pp16 v2 sp full bf16") << "gpt3-175b" << 128 << 8 << 16 << 2 << 1 << 1 << true << 2 << 1 << 1 << true;
        QTest::newRow("llama2-70b tp8 pp4 gqa") << "llama2-70b" << 16 << 8 << 4 << 1 << 1 << 1 << false << 0 << 0 << 0 << false;
        QTest::newRow("llama2-70b pp8 v3 uneven selective") << "llama2-70b" << 16 << 4 << 8 << 3 << 1 << 1 << true << 1 << 1 << 1 << true;
        QTest::newRow("llama2-7b tp2 cp2 fp16") << "llama2-7b" << 1 << 2 << 1 << 1 << 2 << 1 << true << 1 << 2 << 0 << true;
        QTest::newRow("mixtral tp2 ep4") << "mixtral-8x7b" << 4 << 2 << 1 << 1 << 1 << 4 << true << 0 << 1 << 1 << true;
        QTest::newRow("gpt2 dp8 zero3 as zero1") << "gpt2-124m" << 1 << 1 << 1 << 1 << 1 << 1 << false << 0 << 0 << 3 << false;
    }
    void megatronRoundTrip()
    {
        QFETCH(QString, model);
        QFETCH(int, nodes);
        QFETCH(int, tp);
        QFETCH(int, pp);
        QFETCH(int, v);
        QFETCH(int, cp);
        QFETCH(int, ep);
        QFETCH(bool, sp);
        QFETCH(int, recompute);
        QFETCH(int, precision);
        QFETCH(int, zero);
        QFETCH(bool, overlap);
        const QByteArray name = model.toUtf8();
        Plan p = basePlan(name.constData(), "dgx-h100", nodes, nodes * 8 / (tp * pp * cp));
        p.model.preset.clear();
        if (p.model.vocab == 50257 && tp > 1)
            p.model.vocab = 51200; // as Megatron pads it
        p.parallel.tp = tp;
        p.parallel.pp = pp;
        p.parallel.cp = cp;
        p.parallel.ep = ep;
        p.parallel.virtualStages = v;
        p.parallel.schedule = v > 1 ? "interleaved-1f1b" : "1f1b";
        p.parallel.sequenceParallel = sp;
        p.parallel.recompute = static_cast<Recompute>(recompute);
        p.parallel.precision = static_cast<Precision>(precision);
        p.parallel.zero = zero;
        p.parallel.overlapGradReduce = overlap;
        p.parallel.microBatchSize = 2;
        p.parallel.microBatches = 2 * pp;
        p.training.lr = 1.5e-4;
        p.training.minLr = 1.5e-5;
        p.training.warmupSteps = 300;
        p.training.steps = 20000;
        p.training.weightDecay = 0.05;
        p.training.beta2 = 0.98;
        p.training.eps = 1e-6;
        p.training.gradClip = 0.8;
        p.training.seed = 4242;
        p.training.checkpoint = {500, "/ckpt/it's here", 2, CheckpointMode::Async, false, CheckpointWhenBusy::Wait, {}};
        QCOMPARE(validationErrors(p), QStringList());

        const std::string args = toMegatronArgs(p);
        Diagnostics warnings;
        const auto back = fromMegatronArgs(args, basePlan(name.constData(), "dgx-h100", nodes, 1), &warnings);
        QVERIFY2(back, (back.errorText() + "\n" + args).c_str());
        QVERIFY2(warnings.empty(), qPrintable(texts(warnings).join('\n')));
        Plan q = back.value();
        if (zero > 1)
            q.parallel.zero = zero; // Megatron has no ZeRO-2/3: written as its distributed optimizer (ZeRO-1)
        QCOMPARE(q.parallel.framework, Framework::Megatron); // read back as Megatron-LM's plan
        q.parallel.framework = p.parallel.framework;
        QVERIFY2(q.model == p.model, args.c_str());
        QVERIFY2(q.parallel == p.parallel, args.c_str());
        QVERIFY2(q.training == p.training, args.c_str());
        QCOMPARE(back->parallel.zero, zero > 0 ? 1 : 0);
    }

    // The exact line written for one plan: one line, flags in a fixed order.
    void megatronWritten()
    {
        Plan p = basePlan("llama2-70b", "dgx-h100", 4, 1);
        p.parallel.tp = 8;
        p.parallel.pp = 4;
        p.parallel.virtualStages = 2;
        p.parallel.schedule = "interleaved-1f1b";
        p.parallel.sequenceParallel = true;
        p.parallel.zero = 1;
        p.parallel.microBatches = 8;
        p.parallel.precision = Precision::Bf16;
        p.parallel.recompute = Recompute::Full;
        p.training.checkpoint = {100, "/ckpt", 2, CheckpointMode::Async, false, CheckpointWhenBusy::Wait, {}};
        QCOMPARE(QString::fromStdString(toMegatronArgs(p)),
                 QStringLiteral("--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 10 "
                                "--sequence-parallel --use-distributed-optimizer --overlap-grad-reduce --num-layers 80 --hidden-size 8192 "
                                "--num-attention-heads 64 --group-query-attention --num-query-groups 8 --ffn-hidden-size 28672 "
                                "--seq-length 4096 --max-position-embeddings 4096 --vocab-size 32000 --make-vocab-size-divisible-by 1 "
                                "--swiglu --normalization RMSNorm --position-embedding-type rope --untie-embeddings-and-output-weights "
                                "--disable-bias-linear --micro-batch-size 1 --global-batch-size 8 --bf16 --recompute-granularity full --recompute-method uniform "
                                "--recompute-num-layers 1 --lr 0.001 --min-lr 1e-04 --lr-decay-style cosine --lr-warmup-iters 0 "
                                "--train-iters 100 --weight-decay 0.1 --adam-beta1 0.9 --adam-beta2 0.95 --adam-eps 1e-08 --clip-grad 1 "
                                "--seed 1234 --save-interval 100 --save '/ckpt' --load '/ckpt'"));
    }

    void shellWords_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QStringList>("words");
        QTest::newRow("blanks") << " a  b\tc\n" << QStringList{"a", "b", "c"};
        // Plain literals here: moc's tokenizer trips over quotes inside raw strings.
        QTest::newRow("quotes") << "'x y' \"z w\" a'b'\"c\"" << QStringList{"x y", "z w", "abc"};
        QTest::newRow("escaped blank") << "--save=/a\\ b" << QStringList{"--save=/a b"};
        QTest::newRow("continuation") << "a \\\n  b" << QStringList{"a", "b"};
        QTest::newRow("crlf continuation") << "a \\\r\n  b" << QStringList{"a", "b"};
        QTest::newRow("continuation in double quotes") << "\"x\\\ny\"" << QStringList{"xy"};
        QTest::newRow("backslashes in quotes") << "\"a\\\"b\\\\c\\d\" 'e\\f'" << QStringList{"a\"b\\c\\d", "e\\f"};
        QTest::newRow("comment") << "a # b c\nd" << QStringList{"a", "d"};
        QTest::newRow("hash inside a word") << "a#b '#c'" << QStringList{"a#b", "#c"};
        QTest::newRow("empty word") << "'' x" << QStringList{"", "x"};
    }
    void shellWords()
    {
        QFETCH(QString, line);
        QFETCH(QStringList, words);
        const auto split = splitShellWords(line.toStdString());
        QVERIFY2(split, split.errorText().c_str());
        QStringList got;
        for (const auto &w : split.value())
            got << QString::fromStdString(w);
        QCOMPARE(got, words);
    }

    void badInputs_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("message");
        const auto ds = [](const char *name, const char *config, const char *message) { QTest::newRow(name) << "ds" << config << message; };
        const auto mg = [](const char *name, const char *line, const char *message) { QTest::newRow(name) << "mg" << line << message; };
        ds("ds not an object", R"([1, 2])", "deepspeed: expected a JSON object, got [1,2]");
        ds("ds stage text", R"({"zero_optimization": {"stage": "two"}})",
           R"(deepspeed: zero_optimization.stage: expected an integer 0-3, got "two")");
        ds("ds stage 4", R"({"zero_optimization": {"stage": 4}})", "deepspeed: zero_optimization.stage: expected an integer 0-3, got 4");
        ds("ds zero not an object", R"({"zero_optimization": 3})", "deepspeed: zero_optimization: expected an object, got 3");
        ds("ds batch inconsistent", R"({"train_batch_size": 100, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8})",
           "deepspeed: train_batch_size: 100 is not train_micro_batch_size_per_gpu (4) × gradient_accumulation_steps (8) × dp (8) = 256");
        ds("ds batch indivisible", R"({"train_batch_size": 100, "train_micro_batch_size_per_gpu": 4})",
           "deepspeed: train_batch_size: 100 is not a multiple of train_micro_batch_size_per_gpu (4) × dp (8) = 32");
        ds("ds batch over accumulation", R"({"train_batch_size": 100, "gradient_accumulation_steps": 3})",
           "deepspeed: train_batch_size: 100 is not a multiple of gradient_accumulation_steps (3) × dp (8) = 24");
        ds("ds accumulation alone", R"({"gradient_accumulation_steps": 4})",
           "deepspeed: gradient_accumulation_steps: DeepSpeed needs train_batch_size or train_micro_batch_size_per_gpu beside it");
        ds("ds micro batch float", R"({"train_micro_batch_size_per_gpu": 2.5})",
           "deepspeed: train_micro_batch_size_per_gpu: expected a positive integer, got 2.5");
        ds("ds both precisions", R"({"bf16": {"enabled": true}, "fp16": {"enabled": true}})",
           "deepspeed: bf16.enabled and fp16.enabled cannot both be true");
        ds("ds enabled text", R"({"bf16": {"enabled": "yes"}})", R"(deepspeed: bf16.enabled: expected true or false, got "yes")");
        ds("ds optimizer", R"({"optimizer": {"type": "Lamb"}})", R"(deepspeed: optimizer.type: expected "Adam" or "AdamW", got "Lamb")");
        ds("ds betas", R"({"optimizer": {"params": {"betas": [0.9]}}})",
           "deepspeed: optimizer.params.betas: expected [beta1, beta2] with each in [0, 1), got [0.9]");
        ds("ds lr zero", R"({"optimizer": {"params": {"lr": 0}}})", "deepspeed: optimizer.params.lr: expected a number > 0, got 0");
        ds("ds negative clip", R"({"gradient_clipping": -1})", "deepspeed: gradient_clipping: expected a number >= 0, got -1");
        ds("ds scheduler", R"({"scheduler": {"type": "OneCycle"}})",
           R"(deepspeed: scheduler.type: expected "WarmupLR", "WarmupDecayLR" or "WarmupCosineLR", got "OneCycle")");
        ds("ds total steps missing", R"({"scheduler": {"type": "WarmupCosineLR", "params": {"warmup_type": "linear"}}})",
           "deepspeed: scheduler.params.total_num_steps: WarmupCosineLR needs it");
        ds("ds warmup type", R"({"scheduler": {"type": "WarmupLR", "params": {"warmup_type": "cubic"}}})",
           R"(deepspeed: scheduler.params.warmup_type: expected "log" or "linear", got "cubic")");
        ds("ds two errors", R"({"gradient_clipping": "1", "zero_optimization": {"stage": -1}})",
           "deepspeed: zero_optimization.stage: expected an integer 0-3, got -1\n"
           R"(deepspeed: gradient_clipping: expected a number >= 0, got "1")");
        mg("mg non-numeric", "--tensor-model-parallel-size x", "megatron: --tensor-model-parallel-size: expected a positive integer, got 'x'");
        mg("mg zero", "--micro-batch-size 0", "megatron: --micro-batch-size: expected a positive integer, got '0'");
        mg("mg missing value", "--micro-batch-size --bf16", "megatron: --micro-batch-size: needs a value");
        mg("mg missing last value", "--bf16 --lr", "megatron: --lr: needs a value");
        mg("mg negative lr", "--lr -1", "megatron: --lr: expected a non-negative number, got '-1'");
        mg("mg seed", "--seed 12ab", "megatron: --seed: expected a non-negative integer, got '12ab'");
        mg("mg layout does not divide", "--tensor-model-parallel-size 3",
           "megatron: --tensor-model-parallel-size (3) × --pipeline-model-parallel-size (1) × --context-parallel-size (1) = 3 does not "
           "divide the base cluster's 8 slots");
        mg("mg global batch", "--micro-batch-size 2 --global-batch-size 30",
           "megatron: --global-batch-size: 30 is not a multiple of --micro-batch-size (2) × dp (8) = 16");
        mg("mg recompute", "--recompute-granularity some", "megatron: --recompute-granularity: expected full or selective, got 'some'");
        mg("mg recompute method", "--recompute-granularity selective --recompute-method uniform",
           "megatron: --recompute-method: Megatron allows it only with --recompute-granularity full");
        mg("mg quote", "--save 'unterminated", "megatron: unterminated ' quote");
        mg("mg switch value", "--bf16=yes", "megatron: --bf16: takes no value, got 'yes'");
        mg("mg both precisions", "--fp16 --bf16", "megatron: --bf16 and --fp16 cannot both be given");
        mg("mg virtual", "--num-layers 12 --pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 4",
           "megatron: --num-layers-per-virtual-pipeline-stage: 4 does not divide the 6 layers of each pipeline stage (12 layers / "
           "--pipeline-model-parallel-size 2)");
        mg("mg two virtual flags", "--virtual-pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2",
           "megatron: --num-layers-per-virtual-pipeline-stage, --num-virtual-stages-per-pipeline-rank and "
           "--virtual-pipeline-model-parallel-size are alternatives; give one");
        mg("mg positions", "--seq-length 2048 --max-position-embeddings 1024",
           "megatron: --max-position-embeddings: 1024 is less than --seq-length (2048)");
        mg("mg two warm-ups", "--lr-warmup-iters 10 --lr-warmup-fraction 0.01",
           "megatron: --lr-warmup-fraction: cannot be combined with --lr-warmup-iters");
        mg("mg shell variable", "--save $CHECKPOINT_PATH", "megatron: --save: '$CHECKPOINT_PATH' is an unexpanded shell variable");
    }
    void badInputs()
    {
        QFETCH(QString, kind);
        QFETCH(QString, input);
        QFETCH(QString, message);
        const Plan base = basePlan("gpt2-124m", "dgx-h100", 1, 8);
        const auto r = kind == QLatin1String("ds") ? fromDeepSpeedConfig(json::parse(input.toStdString()), base)
                                                   : fromMegatronArgs(input.toStdString(), base);
        QVERIFY(!r);
        QCOMPARE(QString::fromStdString(r.errorText()), message);
    }
};

QTEST_APPLESS_MAIN(TstFrameworkConfigs)
#include "tst_framework_configs.moc"
