// The cost model and the planner: finite predictions for every preset on every cluster; the
// pieces add up (step = compute + exposed communication + bubble); the bubble is the schedule
// simulator's; ZeRO shares fall with dp as the ZeRO paper's formulas say; the search returns
// valid plans that fit, fastest first, each with a reason; parameter counts of the presets, the
// activation formula agrees with published figures, each test naming its source. (Throughput
// against published tables: tst_published_throughput; against what the trainer measures: real
// runs in tst_cli.)
#include "backend/plan/cost/cost_model.h"
#include "backend/plan/plan_validate.h"
#include "backend/plan/cost/planner.h"
#include "backend/plan/presets.h"
#include "backend/plan/schedule.h"
#include "tests/support/plan_fixtures.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace trellis::plan;
using trellis::test::planFor;

class TstCostModel : public QObject {
    Q_OBJECT
private slots:
    // Local updates: the dp group all-reduces the fp32 parameters once every inner_steps steps,
    // not the gradients every step — a step's data-parallel bytes fall by inner_steps (fp32
    // gradients and parameters are the same size), and so does their time.
    void localUpdatesCountTheirCommunication()
    {
        Plan p = planFor("gpt2-124m", "dgx-h100", 2, 16, 1, 1);
        p.parallel.framework = Framework::Trellis;
        auto dpAllReduce = [](const Estimate &e) {
            std::uint64_t bytes = 0;
            for (const CollectiveEstimate &c : e.collectives)
                if (c.group == "dp" && c.op == "all_reduce")
                    bytes += c.bytes;
            return bytes;
        };
        const Estimate every = estimatePlan(p, deviceFor(p.cluster));
        p.parallel.dpSync = {DpSyncMode::DiLoCo, 8, 0.7, 0.9, true};
        QVERIFY(!hasErrors(validatePlan(p)));
        const Estimate diloco = estimatePlan(p, deviceFor(p.cluster));
        const double ratio = static_cast<double>(dpAllReduce(every)) / static_cast<double>(dpAllReduce(diloco));
        QVERIFY2(dpAllReduce(diloco) > 0 && std::abs(ratio - 8.0) < 0.05, qPrintable(QString::number(ratio)));
    }

    // parallel.allreduce: the gradient all-reduce under each algorithm follows its latency–bandwidth
    // formula per link tier; the plan's choice is what the step pays; hierarchical over one node
    // is the flat all-reduce; over nodes it carries 1/k of the bytes across them.
    void allReduceAlgorithmsFollowTheLinkModel()
    {
        Plan p = planFor("gpt2-124m", "dgx-h100", 2, 16, 1, 1); // 2 nodes of 8: k = 8, m = 2
        p.parallel.framework = Framework::Megatron;
        const Estimate e = estimatePlan(p, deviceFor(p.cluster));
        const AllReduceChoice &c = e.allReduce;
        QCOMPARE(c.group, std::string("dp"));
        QCOMPARE(c.ranks, 16);
        QCOMPARE(c.nodes, 2);
        QCOMPARE(c.perNode, 8);
        QCOMPARE(c.options.size(), std::size_t(4));
        QVERIFY(c.chosen == AllReduceAlgorithm::Auto);
        const LinkSpec inter = p.cluster.interNode, intra = p.cluster.intraNode;
        const double n = 16, S = c.bytesPerCall, calls = c.callsPerStep;
        auto close = [](double a, double b) { return std::abs(a - b) <= 1e-9 + 1e-6 * std::abs(b); };
        // Each formula is affine in a call's bytes, so the calls times the formula at their mean
        // size is the sum over the calls.
        const double ring = calls * (2 * (n - 1) * inter.latencyUs / 1e3 + 2 * (n - 1) / n * S / (inter.bandwidthGBps * 1e9) * 1e3);
        const double doubling = calls * 4 * (inter.latencyUs / 1e3 + S / (inter.bandwidthGBps * 1e9) * 1e3);
        const double inside = 7 * intra.latencyUs / 1e3 + 7.0 / 8 * S / (intra.bandwidthGBps * 1e9) * 1e3;
        const double across = 2 * inter.latencyUs / 1e3 + (S / 8) / (inter.bandwidthGBps * 1e9) * 1e3;
        const double hierarchical = calls * (2 * inside + across);
        QVERIFY2(close(c.msOf(AllReduceAlgorithm::Ring), ring), qPrintable(QString::number(c.msOf(AllReduceAlgorithm::Ring))));
        QVERIFY2(close(c.msOf(AllReduceAlgorithm::RecursiveDoubling), doubling),
                 qPrintable(QString::number(c.msOf(AllReduceAlgorithm::RecursiveDoubling))));
        QVERIFY2(close(c.msOf(AllReduceAlgorithm::Hierarchical), hierarchical),
                 qPrintable(QString::number(c.msOf(AllReduceAlgorithm::Hierarchical))));
        QVERIFY(c.fastest == AllReduceAlgorithm::Hierarchical);
        QVERIFY2(c.why.find("hierarchical is predicted faster") != std::string::npos, c.why.c_str());
        // The step pays the plan's algorithm: the dp all-reduce's time is the chosen one's.
        auto dpMs = [](const Estimate &x) {
            for (const CollectiveEstimate &col : x.collectives)
                if (col.group == "dp" && col.op == "all_reduce")
                    return col.msPerStep;
            return -1.0;
        };
        QVERIFY(close(dpMs(e), c.msOf(AllReduceAlgorithm::Auto)));
        p.parallel.allReduce = AllReduceAlgorithm::Ring;
        const Estimate withRing = estimatePlan(p, deviceFor(p.cluster));
        QVERIFY(close(dpMs(withRing), ring));
        QVERIFY(withRing.stepMs > e.stepMs); // 30 latencies a call instead of one
        // One node: hierarchical is the flat one, and says so.
        Plan one = planFor("gpt2-124m", "dgx-h100", 1, 8, 1, 1);
        one.parallel.framework = Framework::Megatron;
        one.parallel.allReduce = AllReduceAlgorithm::Hierarchical;
        const Estimate flat = estimatePlan(one, deviceFor(one.cluster));
        QCOMPARE(flat.allReduce.nodes, 1);
        QVERIFY(close(flat.allReduce.msOf(AllReduceAlgorithm::Hierarchical), flat.allReduce.msOf(AllReduceAlgorithm::Auto)));
        QVERIFY2(flat.allReduce.why.find("its ranks are on one node") != std::string::npos, flat.allReduce.why.c_str());
        // ZeRO reduce-scatters its gradients: no gradient all-reduce to choose for.
        p.parallel.zero = 1;
        QVERIFY(estimatePlan(p, deviceFor(p.cluster)).allReduce.group.empty());
    }

    // Megatron-LM pads the vocabulary to a multiple of 128 · tp (make_vocab_size_divisible_by):
    // GPT-2's 50257 rows hold as much as 51200 at tp 8, and 50304 at tp 1.
    void megatronPadsTheVocabulary()
    {
        auto firstStage = [](int vocab, int tp) {
            Plan p = planFor("gpt2-124m", "dgx-h100", 1, 8 / tp, tp, 1);
            p.model.vocab = vocab;
            p.parallel.framework = Framework::Megatron;
            p.parallel.precision = Precision::Bf16;
            return estimatePlan(p, deviceFor(p.cluster)).memory.front().parameters;
        };
        QCOMPARE(firstStage(50257, 8), firstStage(51200, 8));
        QCOMPARE(firstStage(50257, 1), firstStage(50304, 1));
        QVERIFY(firstStage(50257, 1) < firstStage(51200, 1));
    }

    // The optimizer step on a GPU outside trellis-trainer: memory-bound passes at the device's
    // bandwidth, a fixed cost of every step — the held gradients zeroed, and for each owned
    // parameter fp16's copy to fp32 (6), the overflow check and norm (8), Adam (28) and the 16-bit
    // parameter written back (4 + 2): 50 bytes with fp16, 46 with bf16's fp32 buffer (zeroing 4).
    void optimizerStepIsAMemoryBoundFixedCost_data()
    {
        QTest::addColumn<int>("precision");
        QTest::addColumn<double>("bytes"); // a parameter, not sharded
        QTest::newRow("fp16") << int(Precision::Fp16) << 2.0 + 6 + 8 + 28 + 6;
        QTest::newRow("bf16") << int(Precision::Bf16) << 4.0 + 8 + 28 + 6;
    }
    void optimizerStepIsAMemoryBoundFixedCost()
    {
        QFETCH(int, precision);
        QFETCH(double, bytes);
        Plan p = planFor("gpt2-350m", "dgx-a100", 1, 8, 1, 1);
        p.parallel.framework = Framework::Megatron;
        p.parallel.precision = Precision(precision);
        p.parallel.microBatches = 1;
        const DeviceSpec device = deviceFor(p.cluster);
        DeviceSpec measured = device; // the calibrated path, with a cost too small to see
        measured.gradientNsPerParameter = 1e-12;
        const Estimate e = estimatePlan(p, device), without = estimatePlan(p, measured);
        const double held = double(e.memory.front().parameters) / 2;
        const double want = held * bytes / (device.memoryBandwidthGBps * 1e9) * 1e3;
        qInfo("%s: the optimizer step %.3f ms of a %.3f ms step", QTest::currentDataTag(), e.stepMs - without.stepMs, e.stepMs);
        QVERIFY2(std::abs((e.stepMs - without.stepMs) - want) < 1e-6 * want + 1e-9,
                 qPrintable(QStringLiteral("%1 ms, want %2 ms").arg(e.stepMs - without.stepMs).arg(want)));
    }

    void finiteForEveryPresetAndCluster()
    {
        for (const auto &model : modelPresetNames()) {
            for (const auto &cluster : clusterPresetNames()) {
                Plan p = planFor(model, cluster, 2, 1, 1, 1);
                const int world = p.cluster.totalSlots();
                p.parallel.dp = world;
                if (hasErrors(validatePlan(p)))
                    continue;
                const Estimate e = estimatePlan(p, deviceFor(p.cluster));
                for (double x : {e.stepMs, e.tokensPerS, e.mfu, e.computeMs, e.exposedCommMs, e.bubbleMs, e.costPerRun})
                    QVERIFY2(std::isfinite(x) && x >= 0, (model + " on " + cluster).c_str());
                QVERIFY(e.stepMs > 0);
                QVERIFY(std::abs(e.computeMs + e.exposedCommMs + e.bubbleMs - e.stepMs) < 1e-6 * e.stepMs);
            }
        }
    }

    void bubbleIsTheSimulators()
    {
        Plan p = planFor("gpt2-350m", "dgx-h100", 1, 2, 1, 4);
        p.parallel.microBatches = 8;
        for (const char *schedule : {"gpipe", "1f1b", "zb-h1"}) {
            p.parallel.schedule = schedule;
            QVERIFY(!hasErrors(validatePlan(p)));
            const Estimate e = estimatePlan(p, deviceFor(p.cluster));
            QVERIFY(e.bubbleFraction > 0 && e.bubbleFraction < 1);
            QVERIFY(std::abs(e.bubbleMs / e.stepMs - e.bubbleFraction) < 0.05); // DP time is the rest
        }
        p.parallel.schedule = "1f1b";
        const double oneF = estimatePlan(p, deviceFor(p.cluster)).bubbleFraction;
        p.parallel.schedule = "zb-h1";
        QVERIFY(estimatePlan(p, deviceFor(p.cluster)).bubbleFraction < oneF);
    }

    void zeroSharesFollowThePaper()
    {
        // fp32: 4 + 4 + 8 bytes a parameter without ZeRO; stage 1 divides the 8, stage 2 the 4 + 8,
        // stage 3 all 16 by dp (up to padding).
        Plan p = planFor("gpt2-124m", "dgx-a100", 1, 8, 1, 1);
        const double n = static_cast<double>(parameterCount(p.model));
        for (int zero : {0, 1, 2, 3}) {
            p.parallel.zero = zero;
            const StageMemory m = estimatePlan(p, deviceFor(p.cluster)).memory.front();
            const double states = static_cast<double>(m.parameters + m.gradients + m.optimizer);
            const double want = zero == 0 ? 16 * n : zero == 1 ? 8 * n + 8 * n / 8 : zero == 2 ? 4 * n + 12 * n / 8 : 16 * n / 8;
            QVERIFY2(std::abs(states - want) / want < 1e-3, qPrintable(QStringLiteral("zero %1: %2 vs %3").arg(zero).arg(states).arg(want)));
        }
    }

    // Published: Rajbhandari et al. 2020 (ZeRO), Figure 1 — model states per GPU for a 7.5 B
    // parameter model, 64-way data parallelism, mixed-precision Adam (K = 12): baseline 120 GB,
    // P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB, the paper's closed forms (2 + 2 + K)Ψ,
    // (2 + 2)Ψ + KΨ/N, 2Ψ + (2 + K)Ψ/N, (2 + 2 + K)Ψ/N rounded to 0.1 GB. Our 36 × 4096 GPT has
    // Ψ = 7.47 B parameters: the prediction must equal the closed forms for that Ψ (to 0.1%, the
    // padding of shards), and, scaled to 7.5 B, the published figures to their rounding.
    void zeroPaperFigureOne()
    {
        Plan p = planFor("gpt2-124m", "dgx-a100", 8, 64, 1, 1);
        p.model = {"", "gpt", 36, 4096, 32, 32, 16384, 2048, 50257, {}};
        p.parallel.precision = Precision::Bf16;
        p.parallel.framework = Framework::DeepSpeed; // the ZeRO paper's accounting
        QVERIFY(std::abs(double(parameterCount(p.model)) - 7.5e9) / 7.5e9 < 0.01);
        const double published[] = {120.0, 31.4, 16.6, 1.9};
        for (int zero : {0, 1, 2, 3}) {
            p.parallel.zero = zero;
            const StageMemory m = estimatePlan(p, deviceFor(p.cluster)).memory.front();
            const double bytes = double(m.parameters + m.gradients + m.optimizer), psi = double(parameterCount(p.model));
            const double K = 12, N = 64;
            const double closed[] = {(2 + 2 + K) * psi, 4 * psi + K * psi / N, 2 * psi + (2 + K) * psi / N, (2 + 2 + K) * psi / N};
            const double gb = bytes / 1e9, scaled = gb * 7.5e9 / psi;
            qInfo("ZeRO stage %d: predicted %.3f GB of model states a GPU (%.3f at 7.5 B), closed form %.3f, published %.1f",
                  zero, gb, scaled, closed[zero] / 1e9, published[zero]);
            QVERIFY2(std::abs(bytes - closed[zero]) / closed[zero] < 1e-3, qPrintable(QString::number(zero)));
            QVERIFY2(std::abs(scaled - published[zero]) <= 0.05 + 1e-9, qPrintable(QString::number(zero)));
        }
    }

    // Parameter counts as the model cards and papers give them: GPT-2 124 M (Radford et al. 2019),
    // GPT-3 175 B (Brown et al. 2020), Llama 2 6.74 / 13.0 / 69.0 B (Touvron et al. 2023, the
    // released checkpoints' counts), Llama 3 405 B (Dubey et al. 2024), Mixtral 8x7B 46.7 B of
    // which 12.9 B active (Jiang et al. 2024).
    void presetParameterCounts_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<double>("total");
        QTest::addColumn<double>("active");
        QTest::newRow("gpt2-124m") << "gpt2-124m" << 124.4e6 << 124.4e6;
        QTest::newRow("gpt3-175b") << "gpt3-175b" << 175.0e9 << 175.0e9;
        QTest::newRow("llama2-7b") << "llama2-7b" << 6.74e9 << 6.74e9;
        QTest::newRow("llama2-13b") << "llama2-13b" << 13.0e9 << 13.0e9;
        QTest::newRow("llama2-70b") << "llama2-70b" << 68.98e9 << 68.98e9;
        QTest::newRow("llama3-405b") << "llama3-405b" << 405.0e9 << 405.0e9;
        QTest::newRow("mixtral-8x7b") << "mixtral-8x7b" << 46.7e9 << 12.9e9;
    }
    void presetParameterCounts()
    {
        QFETCH(QString, preset);
        QFETCH(double, total);
        QFETCH(double, active);
        const ModelSpec m = *modelPreset(preset.toStdString());
        const double n = double(parameterCount(m)), a = double(activeParameterCount(m));
        qInfo("%s: %.4g parameters (published %.4g), %.4g active (published %.4g)", qPrintable(preset), n, total, a, active);
        QVERIFY(std::abs(n - total) / total < 0.01);
        QVERIFY(std::abs(a - active) / active < 0.01);
    }

    // Model states as each framework keeps them, bytes a parameter (dp 8, one GPU's share), from
    // Megatron-LM's code: bf16 with fp32 main gradients (bf16 forces
    // accumulate_allreduce_grads_in_fp32) 18 and 6 + 12/d; fp16 with its gradient buffer in fp16
    // (the flag's default) 16 and 4 + 12/d, plus 4 (4/d) bytes of fp32 gradient copies alive only
    // at the optimizer step — its distributed-optimizer table's 20 and 4 + 16/d are that step's
    // peak; fp32 16 and 8 + 8/d. DeepSpeed (the ZeRO paper, K = 12) 16 and 4 + 12/d. Megatron-LM
    // has no ZeRO-2/3: such a plan is refused, naming the field.
    void modelStatesFollowTheFramework_data()
    {
        QTest::addColumn<int>("framework");
        QTest::addColumn<int>("precision");
        QTest::addColumn<int>("zero");
        QTest::addColumn<double>("bytes");
        const double d = 8;
        QTest::newRow("megatron bf16") << int(Framework::Megatron) << int(Precision::Bf16) << 0 << 18.0;
        QTest::newRow("megatron bf16 distributed optimizer") << int(Framework::Megatron) << int(Precision::Bf16) << 1 << 6 + 12 / d;
        QTest::newRow("megatron fp16") << int(Framework::Megatron) << int(Precision::Fp16) << 0 << 16.0;
        QTest::newRow("megatron fp16 distributed optimizer") << int(Framework::Megatron) << int(Precision::Fp16) << 1 << 4 + 12 / d;
        QTest::newRow("megatron fp32") << int(Framework::Megatron) << int(Precision::Fp32) << 0 << 16.0;
        QTest::newRow("megatron fp32 distributed optimizer") << int(Framework::Megatron) << int(Precision::Fp32) << 1 << 8 + 8 / d;
        QTest::newRow("deepspeed bf16") << int(Framework::DeepSpeed) << int(Precision::Bf16) << 0 << 16.0;
        QTest::newRow("deepspeed bf16 zero1") << int(Framework::DeepSpeed) << int(Precision::Bf16) << 1 << 4 + 12 / d;
        QTest::newRow("deepspeed bf16 zero2") << int(Framework::DeepSpeed) << int(Precision::Bf16) << 2 << 2 + 14 / d;
        QTest::newRow("auto on GPUs is megatron") << int(Framework::Auto) << int(Precision::Bf16) << 1 << 6 + 12 / d;
        QTest::newRow("auto at zero 3 is deepspeed") << int(Framework::Auto) << int(Precision::Bf16) << 3 << 16 / d;
    }
    void modelStatesFollowTheFramework()
    {
        QFETCH(int, framework);
        QFETCH(int, precision);
        QFETCH(int, zero);
        QFETCH(double, bytes);
        const double d_ = 8;
        Plan p = planFor("gpt2-350m", "dgx-h100", 1, 8, 1, 1);
        p.parallel.framework = Framework(framework);
        p.parallel.precision = Precision(precision);
        p.parallel.zero = zero;
        QVERIFY(!hasErrors(validatePlan(p)));
        const StageMemory m = estimatePlan(p, deviceFor(p.cluster)).memory.front();
        const double perParameter = double(m.parameters + m.gradients + m.optimizer) / double(parameterCount(p.model));
        qInfo("%s: %.4f bytes a parameter, documented %.4f", QTest::currentDataTag(), perParameter, bytes);
        QVERIFY(std::abs(perParameter - bytes) < 0.01);
        QVERIFY(!accountingSummary(p).empty());
        // The optimizer step's fp32 gradient copies: Megatron-LM's fp16 alone, 4 bytes an owned parameter.
        const double owned = zero == 1 ? 1.0 / d_ : 1.0;
        const double copies = double(m.optimizerStep) / double(parameterCount(p.model));
        const bool fp16Megatron = Framework(framework) == Framework::Megatron && Precision(precision) == Precision::Fp16;
        QVERIFY2(std::abs(copies - (fp16Megatron ? 4 * owned : 0.0)) < 0.01, qPrintable(QString::number(copies)));
    }
    void megatronHasNoZeroTwo()
    {
        Plan p = planFor("gpt2-350m", "dgx-h100", 1, 8, 1, 1);
        p.parallel.framework = Framework::Megatron;
        p.parallel.zero = 2;
        const Diagnostics d = validatePlan(p);
        QVERIFY(hasErrors(d));
        QVERIFY2(QString::fromStdString(d.front().toString()).startsWith(QStringLiteral("parallel.framework: Megatron-LM shards at most")),
                 d.front().toString().c_str());
    }

    // Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
    // Table 2: activation bytes a transformer layer keeps in 16-bit training, s·b·h·(10 + 24/t +
    // 5·a·s/(h·t)) with tensor parallelism, s·b·h·(34/t + 5·a·s/(h·t)) with sequence parallelism
    // too, s·b·h·34/t with selective recompute besides, and 2·s·b·h with full recompute (the
    // layer's input; with tensor parallelism alone it is whole on every rank). Their GPT-3 175B
    // setting (a 96, h 12288, s 2048, t 8; attention probabilities written out), per layer: a
    // plan's activations less those of the same plan one layer shorter.
    void activationsPerLayerFollowKorthikanti_data()
    {
        QTest::addColumn<bool>("sp");
        QTest::addColumn<int>("recompute");
        QTest::addColumn<double>("perSbh"); // bytes / (s·b·h)
        const double t = 8, a = 96, s = 2048, h = 12288;
        QTest::newRow("tensor parallel") << false << int(Recompute::None) << 10 + 24 / t + 5 * a * s / (h * t);
        QTest::newRow("tensor + sequence parallel") << true << int(Recompute::None) << 34 / t + 5 * a * s / (h * t);
        QTest::newRow("selective recompute") << true << int(Recompute::Selective) << 34 / t;
        QTest::newRow("full recompute") << false << int(Recompute::Full) << 2.0;
    }
    void activationsPerLayerFollowKorthikanti()
    {
        QFETCH(bool, sp);
        QFETCH(int, recompute);
        QFETCH(double, perSbh);
        Plan p = planFor("gpt3-175b", "dgx-a100", 1, 1, 8, 1);
        p.model.vocab = 51200;
        p.parallel.sequenceParallel = sp;
        p.parallel.recompute = static_cast<Recompute>(recompute);
        p.parallel.precision = Precision::Bf16;
        p.parallel.attention = AttentionKernel::Materialized;
        p.parallel.microBatches = 1;
        QVERIFY(!hasErrors(validatePlan(p)));
        const double longer = double(estimatePlan(p, deviceFor(p.cluster)).memory.front().activations);
        p.model.layers -= 1;
        const double shorter = double(estimatePlan(p, deviceFor(p.cluster)).memory.front().activations);
        const double sbh = 2048.0 * 1 * 12288;
        qInfo("%.4f s·b·h bytes a layer, published %.4f", (longer - shorter) / sbh, perSbh);
        QVERIFY(std::abs((longer - shorter) / sbh - perSbh) < 1e-6);
    }

    // Interleaved 1F1B as Megatron-LM runs it: the first stage's warm-up is (p − 1)·2 + (v − 1)·p
    // chunk forwards, then 1F1B, so at its peak it keeps L·(1 + (p − 1)/(p·v)) layers' activations
    // (Korthikanti et al. 2022 §4.2.3), freed after each backward. A llama model (no embedding
    // dropout) whose chunks hold equal layers, per-layer bytes from a one-stage plan.
    void interleavedActivationsFollowMegatronsWarmup_data()
    {
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("v");
        QTest::newRow("p 4 v 2") << 4 << 2;
        QTest::newRow("p 4 v 4") << 4 << 4;
        QTest::newRow("p 8 v 2") << 8 << 2;
    }
    void interleavedActivationsFollowMegatronsWarmup()
    {
        QFETCH(int, pp);
        QFETCH(int, v);
        Plan p = planFor("llama2-7b", "dgx-h100", 1, 1, 1, 1);
        p.model.layers = 32;
        p.parallel.precision = Precision::Bf16;
        p.parallel.microBatches = 1;
        p.parallel.dp = 8;
        QVERIFY(!hasErrors(validatePlan(p)));
        const double all = double(estimatePlan(p, deviceFor(p.cluster)).memory.front().activations);
        p.model.layers = 31;
        const double perLayer = all - double(estimatePlan(p, deviceFor(p.cluster)).memory.front().activations);
        p.model.layers = 32;
        p.cluster = expandCluster(*clusterPreset("dgx-h100"), pp);
        p.parallel.pp = pp;
        p.parallel.schedule = "interleaved-1f1b";
        p.parallel.virtualStages = v;
        p.parallel.microBatches = 4 * pp;
        p.parallel.dp = 8; // the nodes' slots
        const Diagnostics d = validatePlan(p);
        QVERIFY2(!hasErrors(d), d.empty() ? "" : d.front().toString().c_str());
        for (bool exact : {true, false}) {
            const double first = double(estimatePlan(p, deviceFor(p.cluster), exact).memory.front().activations);
            const double layers = 32.0 * (1 + double(pp - 1) / (pp * v));
            qInfo("exact %d: first stage keeps %.3f layers' activations, Megatron-LM %.3f", exact, first / perLayer, layers);
            QVERIFY(std::abs(first / perLayer - layers) < 1e-9);
        }
    }

    void memoryThatDoesNotFitIsNamed()
    {
        Plan p = planFor("gpt3-175b", "dgx-h100", 1, 8, 1, 1);
        const Estimate e = estimatePlan(p, deviceFor(p.cluster));
        QCOMPARE(e.warnings.size(), size_t(1));
        QVERIFY2(QString::fromStdString(e.warnings.front().toString()).startsWith(QStringLiteral("warning: parallel: stage 0 ranks need ")),
                 e.warnings.front().toString().c_str());
        QVERIFY(QString::fromStdString(e.warnings.front().toString()).contains(QStringLiteral("but a H100-SXM has 80 GB")));
    }

    // In-memory checkpoints: a node's store holds its own shards of `keep` saves and the one being
    // written; on several nodes the previous node's copy of as many too, and each save crosses to
    // the next node beside the run's traffic — its share of the inter-node bandwidth over the steps
    // between saves, warned about above a quarter. One node: no copy, nothing sent.
    void inMemoryCheckpointsCountThePeerCopy()
    {
        Plan p = planFor("gpt2-124m", "dgx-h100", 2, 16, 1, 1);
        p.parallel.zero = 1;
        p.training.checkpoint = {100, "ckpt", 2, CheckpointMode::Async, false, CheckpointWhenBusy::Wait, {true, 1, 2}};
        Estimate e = estimatePlan(p, deviceFor(p.cluster));
        const CheckpointEstimate &c = e.checkpoint;
        QVERIFY(c.peerCopy);
        QCOMPARE(c.peerBytesPerSave, c.mostBytesPerNode);
        QCOMPARE(c.memoryBytesPerNode, c.mostBytesPerNode * 3 * 2);
        QVERIFY(std::abs(c.peerCopyMs - static_cast<double>(c.peerBytesPerSave) / (p.cluster.interNode.bandwidthGBps * 1e9) * 1e3) < 1e-9);
        QVERIFY(std::abs(c.peerShare - c.peerCopyMs / e.stepMs) < 1e-12);
        auto warnedAbout = [](const Estimate &est, const char *path) {
            return std::any_of(est.warnings.begin(), est.warnings.end(), [&](const Diagnostic &d) { return d.path == path; });
        };
        QCOMPARE(warnedAbout(e, "training.checkpoint.memory.every"), c.peerShare > 0.25);
        // A network a tenth as fast: more than a quarter of it, warned; saves every 64 steps: a 64th.
        p.cluster.interNode.bandwidthGBps /= 10;
        e = estimatePlan(p, deviceFor(p.cluster));
        QVERIFY2(e.checkpoint.peerShare > 0.25, qPrintable(QString::number(e.checkpoint.peerShare)));
        QVERIFY(warnedAbout(e, "training.checkpoint.memory.every"));
        p.training.checkpoint.memory.every = 64;
        e = estimatePlan(p, deviceFor(p.cluster));
        QVERIFY(std::abs(e.checkpoint.peerShare - e.checkpoint.peerCopyMs / (64 * e.stepMs)) < 1e-12);
        QVERIFY2(e.checkpoint.peerShare < 0.25, qPrintable(QString::number(e.checkpoint.peerShare)));
        QVERIFY(!warnedAbout(e, "training.checkpoint.memory.every"));

        Plan one = planFor("gpt2-124m", "dgx-h100", 1, 8, 1, 1);
        one.training.checkpoint = p.training.checkpoint;
        e = estimatePlan(one, deviceFor(one.cluster));
        QVERIFY(!e.checkpoint.peerCopy);
        QCOMPARE(e.checkpoint.peerBytesPerSave, std::uint64_t(0));
        QCOMPARE(e.checkpoint.memoryBytesPerNode, e.checkpoint.mostBytesPerNode * 3);
    }

    // A checkpoint's cost as the trainer spreads the writing: every element once, fp32 parameter
    // and both moments (12 bytes); without ZeRO the first dp rank writes it all, with ZeRO each dp
    // rank its 1/dp; a node's ranks share its disk. Async is the default unless the staging
    // buffers would take more than half a node's host memory (then sync, with the warning).
    void checkpointCostFollowsTheLayout()
    {
        Plan p = planFor("gpt2-124m", "dgx-h100", 2, 16, 1, 1);
        p.training.checkpoint = {100, "ckpt", 2, CheckpointMode::Async, false, CheckpointWhenBusy::Wait, {}};
        DeviceSpec device = deviceFor(p.cluster);
        Estimate e = estimatePlan(p, device);
        const double whole = 12.0 * static_cast<double>(e.parametersTotal);
        const CheckpointEstimate &c = e.checkpoint;
        QVERIFY(c.enabled);
        QVERIFY(c.mode == CheckpointMode::Async);
        QVERIFY2(std::abs(static_cast<double>(c.bytesPerSave) / whole - 1) < 0.01, qPrintable(QString::number(c.bytesPerSave)));
        QCOMPARE(c.mostBytesPerRank, c.bytesPerSave); // dp rank 0 writes everything
        QCOMPARE(c.mostBytesPerNode, c.bytesPerSave); // and it is on node 0
        QCOMPARE(c.stagingBytesPerNode, c.mostBytesPerNode);
        QCOMPARE(c.hostMemoryGB, 2048.0);
        QVERIFY(std::abs(c.copyMs - static_cast<double>(c.mostBytesPerRank) / 12e9 * 1e3) < 1e-6); // the GPU defaults
        QVERIFY(std::abs(c.writeMs - static_cast<double>(c.mostBytesPerNode) / 2e9 * 1e3) < 1e-6);
        QCOMPARE(c.blockMs, c.copyMs); // async: training waits for the copy only
        QVERIFY(std::abs(c.overheadFraction - c.blockMs / (100 * e.stepMs)) < 1e-12);
        QCOMPARE(c.landsEvery, 100);

        p.parallel.zero = 1; // each of the 16 dp ranks its sixteenth, eight on each node
        e = estimatePlan(p, device);
        QVERIFY(std::abs(static_cast<double>(e.checkpoint.mostBytesPerRank) * 16 / static_cast<double>(e.checkpoint.bytesPerSave) - 1) < 0.01);
        QVERIFY(std::abs(static_cast<double>(e.checkpoint.mostBytesPerNode) * 2 / static_cast<double>(e.checkpoint.bytesPerSave) - 1) < 0.01);

        // Calibrated rates replace the defaults; sync makes training wait for the write too.
        device.hostCopyGBps = 1;
        device.diskWriteGBps = 0.1;
        p.training.checkpoint.mode = CheckpointMode::Sync;
        p.training.checkpoint.modeGiven = true;
        e = estimatePlan(p, device);
        QVERIFY(std::abs(e.checkpoint.copyMs - static_cast<double>(e.checkpoint.mostBytesPerRank) / 1e9 * 1e3) < 1e-6);
        QVERIFY(std::abs(e.checkpoint.blockMs - e.checkpoint.copyMs - e.checkpoint.writeMs) < 1e-9);
        QCOMPARE(e.checkpoint.stagingBytesPerNode, std::uint64_t(0));
        // Async saves every step whose write outlasts a step: the next save due waits for the rest
        // of the write (when_busy wait), or the saves due meanwhile are skipped (skip).
        p.training.checkpoint = {1, "ckpt", 2, CheckpointMode::Async, true, CheckpointWhenBusy::Wait, {}};
        e = estimatePlan(p, device);
        const int k = static_cast<int>(std::ceil(e.checkpoint.writeMs / e.stepMs));
        QVERIFY2(k > 1, qPrintable(QString::number(e.checkpoint.writeMs)));
        QCOMPARE(e.checkpoint.landsEvery, 1);
        QVERIFY(std::abs(e.checkpoint.blockMs - (e.checkpoint.copyMs + e.checkpoint.writeMs - e.stepMs)) < 1e-6);
        p.training.checkpoint.whenBusy = CheckpointWhenBusy::Skip;
        e = estimatePlan(p, device);
        QCOMPARE(e.checkpoint.landsEvery, k);
        QCOMPARE(e.checkpoint.blockMs, e.checkpoint.copyMs);
        QVERIFY(!e.checkpoint.copyBehind); // GPUs copy at the boundary

        // CPUs copy behind the next step's forward and backward: training waits for what outlasts
        // them (nothing for the quick start), and sync for the copy and the write.
        Plan cpu = planFor("tiny", "cpu-local", 1, 4, 1, 1); // the quick start's model and machine
        cpu.training.checkpoint = {1, "ckpt", 2, CheckpointMode::Async, true, CheckpointWhenBusy::Skip, {}};
        DeviceSpec cpuDevice = deviceFor(cpu.cluster);
        e = estimatePlan(cpu, cpuDevice);
        QVERIFY(e.checkpoint.copyBehind);
        QVERIFY(e.checkpoint.copyMs > 0 && e.checkpoint.copyMs < e.computeMs);
        QCOMPARE(e.checkpoint.blockMs, 0.0);
        cpuDevice.hostCopyGBps = 1e-4; // a copy far slower than the step: the rest is waited for
        e = estimatePlan(cpu, cpuDevice);
        QVERIFY(std::abs(e.checkpoint.blockMs - (e.checkpoint.copyMs - e.computeMs)) < 1e-6);
        cpu.training.checkpoint.mode = CheckpointMode::Sync;
        e = estimatePlan(cpu, cpuDevice);
        QVERIFY(!e.checkpoint.copyBehind);
        QVERIFY(std::abs(e.checkpoint.blockMs - e.checkpoint.copyMs - e.checkpoint.writeMs) < 1e-9);

        // 175 B parameters on one node of 2 TB: 2.1 TB of staging buffers. Without a mode: sync,
        // said; an explicit async stays, with the warning.
        Plan big = planFor("gpt3-175b", "dgx-h100", 1, 8, 1, 1);
        big.training.checkpoint = {100, "ckpt", 2, CheckpointMode::Async, false, CheckpointWhenBusy::Wait, {}};
        std::string why;
        QVERIFY(resolvedCheckpointMode(big, 0, &why) == CheckpointMode::Sync);
        QVERIFY2(QString::fromStdString(why).startsWith(QStringLiteral("checkpoints are written sync: async saves' staging buffers would take 2")),
                 why.c_str());
        const Diagnostics warned = checkpointWarnings(big);
        QCOMPARE(warned.size(), size_t(1));
        QCOMPARE(QString::fromStdString(warned.front().path), QStringLiteral("training.checkpoint.mode"));
        QVERIFY(estimatePlan(big, deviceFor(big.cluster)).checkpoint.mode == CheckpointMode::Sync);
        QVERIFY(resolvedCheckpointMode(big, 8192) == CheckpointMode::Async); // a node of 8 TB: async
        big.cluster.hostMemoryGB = 0;
        QVERIFY(resolvedCheckpointMode(big) == CheckpointMode::Async); // not known to the plan: the trainer decides
        QVERIFY(checkpointWarnings(big).empty());
        big.cluster.hostMemoryGB = 2048;
        big.training.checkpoint.modeGiven = true;
        QVERIFY(resolvedCheckpointMode(big) == CheckpointMode::Async);
        QCOMPARE(checkpointWarnings(big).size(), size_t(1));
        QVERIFY(QString::fromStdString(checkpointWarnings(big).front().message).contains(QStringLiteral("more than half")));
        big.training.checkpoint.every = 0; // no checkpoints: nothing to say
        QVERIFY(checkpointWarnings(big).empty());
        QVERIFY(!estimatePlan(big, deviceFor(big.cluster)).checkpoint.enabled);
    }

    void searchFindsValidFittingPlansFastestFirst()
    {
        SearchRequest r;
        r.model = *modelPreset("llama2-70b");
        r.cluster = expandCluster(*clusterPreset("dgx-h100"), 16);
        r.globalBatch = 256;
        r.top = 5;
        const SearchResult result = searchPlans(r);
        QVERIFY(result.considered > 100);
        QVERIFY(result.fitting > 0 && result.fitting <= result.valid && result.valid <= result.considered);
        QCOMPARE(result.best.size(), size_t(5));
        for (std::size_t i = 0; i < result.best.size(); ++i) {
            const Candidate &c = result.best[i];
            QVERIFY(!hasErrors(validatePlan(c.plan)));
            QVERIFY(c.estimate.warnings.empty());
            QCOMPARE(c.plan.parallel.globalBatch(), 256);
            QCOMPARE(c.plan.parallel.worldSize(), 128);
            QVERIFY(!c.reason.empty());
            if (i > 0)
                QVERIFY(c.estimate.tokensPerS <= result.best[i - 1].estimate.tokensPerS * 1.001); // ties go to less memory
        }
        // 70 B parameters do not fit on 8 GPUs without model parallelism or ZeRO-3.
        const auto &top = result.best.front().plan.parallel;
        QVERIFY(top.tp * top.pp > 1 || top.zero == 3);
    }

    // The fast search (fixed sections validated once, one working plan, only plans that can still
    // enter the best kept, shapes split over threads) returns exactly what the plain one does —
    // every plan copied, validated in full, all ranked at the end — plan for plan, in order, with
    // the same counts; on clusters and models a test can afford, dense and mixture of experts,
    // CPUs and GPUs, with more plans asked for than fit (ties and the cut at `top` included).
    void fastSearchEqualsExhaustive_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("cluster");
        QTest::addColumn<int>("nodes");
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("top");
        QTest::newRow("llama2-7b on 4 dgx") << "llama2-7b" << "dgx-h100" << 4 << 64 << 10;
        QTest::newRow("llama2-70b on 16 dgx") << "llama2-70b" << "dgx-h100" << 16 << 256 << 25;
        QTest::newRow("gpt2 on cpus") << "gpt2-124m" << "cpu-local" << 1 << 8 << 1000;
        QTest::newRow("experts") << "mixtral-8x7b" << "dgx-h100" << 8 << 128 << 40;
    }
    void fastSearchEqualsExhaustive()
    {
        QFETCH(QString, model);
        QFETCH(QString, cluster);
        QFETCH(int, nodes);
        QFETCH(int, batch);
        QFETCH(int, top);
        const auto m = modelPreset(model.toStdString());
        const auto c = clusterPreset(cluster.toStdString());
        if (!m || !c)
            QFAIL(qPrintable(QStringLiteral("no preset %1 or %2").arg(model, cluster)));
        SearchRequest r;
        r.model = *m;
        r.cluster = expandCluster(*c, nodes);
        r.globalBatch = batch;
        r.top = top;
        const SearchResult fast = searchPlans(r);
        r.exhaustive = true;
        const SearchResult all = searchPlans(r);
        QVERIFY(all.fitting > 0);
        QCOMPARE(fast.considered, all.considered);
        QCOMPARE(fast.valid, all.valid);
        QCOMPARE(fast.fitting, all.fitting);
        QCOMPARE(fast.best.size(), all.best.size());
        for (std::size_t i = 0; i < all.best.size(); ++i) {
            QVERIFY2(fast.best[i].plan == all.best[i].plan, qPrintable(QStringLiteral("plan #%1 differs").arg(i + 1)));
            QCOMPARE(fast.best[i].estimate.tokensPerS, all.best[i].estimate.tokensPerS);
            QCOMPARE(fast.best[i].estimate.peakMemory(), all.best[i].estimate.peakMemory());
            QCOMPARE(fast.best[i].reason, all.best[i].reason);
        }
    }
};

QTEST_APPLESS_MAIN(TstCostModel)
#include "tst_cost_model.moc"
