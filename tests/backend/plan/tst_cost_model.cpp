// The cost model and the planner: finite predictions for every preset on every cluster; the
// pieces add up (step = compute + exposed communication + bubble); the bubble is the schedule
// simulator's; ZeRO shares fall with dp as the ZeRO paper's formulas say; the search returns
// valid plans that fit, fastest first, each with a reason. (Agreement with what the trainer
// measures is checked against real runs in tst_cli.)
#include "plan/cost_model.h"
#include "plan/plan_validate.h"
#include "plan/planner.h"
#include "plan/presets.h"
#include "plan/schedule.h"

#include <QTest>

#include <cmath>

using namespace trellis::plan;

namespace {

Plan planFor(const std::string &model, const std::string &cluster, int nodes, int dp, int tp, int pp)
{
    Plan p;
    p.name = "t";
    p.model = *modelPreset(model);
    p.cluster = expandCluster(*clusterPreset(cluster), nodes);
    p.parallel.dp = dp;
    p.parallel.tp = tp;
    p.parallel.pp = pp;
    p.parallel.microBatchSize = 1;
    p.parallel.microBatches = 2 * pp;
    p.training.data.source = "synthetic";
    return p;
}

} // namespace

class TstCostModel : public QObject {
    Q_OBJECT
private slots:
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
    // P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB. Our 36 × 4096 GPT has 7.47 B parameters.
    void zeroPaperFigureOne()
    {
        Plan p = planFor("gpt2-124m", "dgx-a100", 8, 64, 1, 1);
        p.model = {"", "gpt", 36, 4096, 32, 32, 16384, 2048, 50257, {}};
        p.parallel.precision = Precision::Bf16;
        QVERIFY(std::abs(double(parameterCount(p.model)) - 7.5e9) / 7.5e9 < 0.01);
        const double published[] = {120.0, 31.4, 16.6, 1.9};
        for (int zero : {0, 1, 2, 3}) {
            p.parallel.zero = zero;
            const StageMemory m = estimatePlan(p, deviceFor(p.cluster)).memory.front();
            const double gb = double(m.parameters + m.gradients + m.optimizer) / 1e9;
            qInfo("ZeRO stage %d: predicted %.2f GB of model states a GPU, published %.1f GB", zero, gb, published[zero]);
            QVERIFY(std::abs(gb - published[zero]) / published[zero] < 0.10);
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
                QVERIFY(c.estimate.tokensPerS <= result.best[i - 1].estimate.tokensPerS);
        }
        // 70 B parameters do not fit on 8 GPUs without model parallelism or ZeRO-3.
        const auto &top = result.best.front().plan.parallel;
        QVERIFY(top.tp * top.pp > 1 || top.zero == 3);
    }
};

QTEST_APPLESS_MAIN(TstCostModel)
#include "tst_cost_model.moc"
