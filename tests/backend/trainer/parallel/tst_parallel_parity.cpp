// Model parallelism against the single-rank reference, under a real mpirun, gradient clipping off:
// the loss of every step, the reduced gradients of the first step (before any clipping) and the
// parameters after 3 steps.
// Pipeline: every schedule (gpipe, 1f1b, interleaved-1f1b with 2 virtual stages, zb-h1) at pp = 2
// and 4 with m = pp and 2·pp + 1 micro-batches gives the losses, parameters and gradients of a
// single rank that accumulates the same micro-batches (1e-6 relative, fp32); so do pp combined
// with dp and with ZeRO-1. A plan whose schedule cannot take its micro-batch count is refused
// before it runs.
// llama (GQA, untied head): tp, dp × tp with SP and selective recompute, ZeRO-3, pp × dp with
// ZeRO-1, zb-h1 tp × pp with SP, interleaved with full recompute, each against its own single rank.
// Tensor parallelism: tp = 2 and 4 (and dp × tp = 2 × 2), with and without sequence parallelism,
// give the same losses, parameters and gathered gradients as tp = 1 over 3 steps (1e-5 relative, the issue's bound: the split GEMMs and
// the all-reduced partial sums add in another order).
// Context parallelism: cp = 2 and 4, zigzag and contiguous, with tp (+SP, selective recompute),
// dp with ZeRO-1/3, a pipeline, full recompute, and llama with tp, alone and under zb-h1 (1e-6,
// 1e-5 with tp).
#include "tests/support/trainer_runs.h"

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <vector>

namespace {

using trellis::test::readDump;
using trellis::test::relativeL2;
using Outcome = trellis::test::TrainerRun;

const QString kCorpus = QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt");
constexpr int kSteps = 3;

const QString kGptModel = QStringLiteral(R"("layers": 8, "hidden": 32, "heads": 4, "ffn": 64, "seq_len": 16, "vocab": 256)");
// llama with grouped-query attention: 4 query heads over 2 kv heads (one a rank at tp 2).
const QString kLlamaModel =
    QStringLiteral(R"("arch": "llama", "layers": 8, "hidden": 32, "heads": 4, "kv_heads": 2, "ffn": 64, "seq_len": 16, "vocab": 256)");

Outcome train(const QTemporaryDir &dir, const QString &name, int dp, int pp, int micro, const QString &extra, int tp = 1,
              const QString &model = kGptModel, int cp = 1)
{
    const int ranks = dp * pp * tp * cp;
    // 8 layers: 4 stages × 2 virtual stages. GPT-2's absolute init (0.02): the bounds below are
    // fp32 round-off measured with it; at the width-scaled default (0.098 at hidden 32) AdamW turns
    // round-off in near-zero gradients into ±lr steps (tst_dp_parity says more).
    const QString plan = QStringLiteral(R"({
      "schema": "trellis.plan/1", "name": "pipeline",
      "model": {%9, "init_std": 0.02},
      "cluster": {"nodes": [{"host": "localhost", "slots": %1}]},
      "parallel": {"dp": %2, "pp": %3, "tp": %8, "cp": %10, "micro_batch_size": 2, "micro_batches": %4 %5},
      "training": {"steps": %6, "lr": 0.003, "min_lr": 0.0003, "warmup_steps": 1, "seed": 7, "grad_clip": 0,
                   "data": {"source": "text", "path": "%7"}}
    })")
                .arg(ranks)
                .arg(dp)
                .arg(pp)
                .arg(micro)
                .arg(extra)
                .arg(kSteps)
                .arg(kCorpus)
                .arg(tp)
                .arg(model)
                .arg(cp);
    return trellis::test::runTrainer(dir, name, plan, ranks, {QStringLiteral("--quiet")}, 240000);
}

} // namespace

class TstParallelParity : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    std::map<int, Outcome> m_reference; // by micro-batch count (and dp for the dp rows)
    std::map<int, Outcome> m_llamaReference; // by micro-batch count
    std::map<QString, Outcome> m_moeReference; // by model and micro-batch count

    const Outcome &reference(int dp, int micro)
    {
        const int key = dp * 1000 + micro;
        auto it = m_reference.find(key);
        if (it == m_reference.end())
            it = m_reference.emplace(key, train(m_dir, QStringLiteral("ref-%1").arg(key), 1, 1, micro * dp, QString())).first;
        return it->second;
    }
    const Outcome &llamaReference(int micro)
    {
        auto it = m_llamaReference.find(micro);
        if (it == m_llamaReference.end())
            it = m_llamaReference
                     .emplace(micro, train(m_dir, QStringLiteral("llama-ref-%1").arg(micro), 1, 1, micro, QString(), 1, kLlamaModel))
                     .first;
        return it->second;
    }
    // Losses of every step and the step-1 gradients within `bound` of the reference (relative),
    // the parameters after the last step within `paramBound`.
    static void compareWithReference(const Outcome &run, const Outcome &ref, double bound, double paramBound)
    {
        QVERIFY2(run.code == 0, qPrintable(run.output));
        QCOMPARE(run.params.size(), ref.params.size());
        QCOMPARE(run.grads.size(), ref.grads.size());
        QCOMPARE(run.losses.size(), size_t(kSteps));
        for (int i = 0; i < kSteps; ++i)
            QVERIFY2(std::abs(run.losses[i] - ref.losses[i]) <= bound * std::abs(ref.losses[i]),
                     qPrintable(QStringLiteral("step %1: loss %2 vs %3").arg(i + 1).arg(run.losses[i], 0, 'g', 17).arg(ref.losses[i], 0, 'g', 17)));
        const double params = relativeL2(run.params, ref.params);
        const double grads = relativeL2(run.grads, ref.grads);
        qInfo("%s: parameters %.3g, gradients %.3g relative L2 from the reference", QTest::currentDataTag(), params, grads);
        QVERIFY2(params < paramBound, qPrintable(QStringLiteral("parameters differ by %1").arg(params)));
        QVERIFY2(grads < bound, qPrintable(QStringLiteral("gradients differ by %1").arg(grads)));
    }

private slots:
    void matchesReference_data()
    {
        QTest::addColumn<QString>("schedule");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("micro");
        QTest::addColumn<int>("dp");
        QTest::addColumn<QString>("extra");
        for (const char *schedule : {"gpipe", "1f1b", "interleaved-1f1b", "zb-h1"}) {
            for (int pp : {2, 4}) {
                for (int micro : {pp, 2 * pp + 1}) {
                    const bool interleaved = QLatin1String(schedule) == QLatin1String("interleaved-1f1b");
                    if (interleaved && micro % pp != 0)
                        continue; // refused by the plan validator; see refusesBadMicroBatchCount
                    QTest::newRow(qPrintable(QStringLiteral("%1 pp%2 m%3").arg(QLatin1String(schedule)).arg(pp).arg(micro)))
                        << QString::fromLatin1(schedule) << pp << micro << 1
                        << QStringLiteral(", \"schedule\": \"%1\"%2")
                               .arg(QLatin1String(schedule), interleaved ? QStringLiteral(", \"virtual_stages\": 2") : QString());
                }
            }
        }
        QTest::newRow("1f1b pp2 dp2") << QStringLiteral("1f1b") << 2 << 3 << 2 << QStringLiteral(", \"schedule\": \"1f1b\"");
        QTest::newRow("1f1b pp2 dp2 zero1") << QStringLiteral("1f1b") << 2 << 3 << 2
                                            << QStringLiteral(", \"schedule\": \"1f1b\", \"zero\": 1");
        QTest::newRow("zb-h1 pp2 dp2 zero1") << QStringLiteral("zb-h1") << 2 << 2 << 2
                                             << QStringLiteral(", \"schedule\": \"zb-h1\", \"zero\": 1");
        QTest::newRow("1f1b pp2 recompute") << QStringLiteral("1f1b") << 2 << 3 << 1
                                            << QStringLiteral(", \"schedule\": \"1f1b\", \"recompute\": \"full\"");
        // Tensor parallelism inside the stages: dp × tp × pp = 2 × 2 × 2 on 8 ranks.
        QTest::newRow("1f1b dp2 tp2 pp2") << QStringLiteral("1f1b") << 2 << 3 << 2 << QStringLiteral(", \"schedule\": \"1f1b\", \"tp\": 2");
        QTest::newRow("zb-h1 tp2 pp2 sequence parallel")
            << QStringLiteral("zb-h1") << 2 << 2 << 1
            << QStringLiteral(", \"schedule\": \"zb-h1\", \"tp\": 2, \"sequence_parallel\": true");
        QTest::newRow("zb-h1 tp2 pp2 sequence parallel selective")
            << QStringLiteral("zb-h1") << 2 << 2 << 1
            << QStringLiteral(", \"schedule\": \"zb-h1\", \"tp\": 2, \"sequence_parallel\": true, \"recompute\": \"selective\"");
        QTest::newRow("interleaved-1f1b tp2 pp2") << QStringLiteral("interleaved-1f1b") << 2 << 2 << 1
                                                  << QStringLiteral(", \"schedule\": \"interleaved-1f1b\", \"virtual_stages\": 2, \"tp\": 2");
        // ZeRO-2/3 over a pipeline (the gradient shards of each stage's units, the tied embedding
        // summed between the end stages' shards).
        QTest::newRow("1f1b pp2 dp2 zero2") << QStringLiteral("1f1b") << 2 << 3 << 2
                                            << QStringLiteral(", \"schedule\": \"1f1b\", \"zero\": 2");
        QTest::newRow("zb-h1 pp2 dp2 zero3") << QStringLiteral("zb-h1") << 2 << 2 << 2
                                             << QStringLiteral(", \"schedule\": \"zb-h1\", \"zero\": 3");
        QTest::newRow("interleaved-1f1b pp2 dp2 zero3 recompute")
            << QStringLiteral("interleaved-1f1b") << 2 << 2 << 2
            << QStringLiteral(", \"schedule\": \"interleaved-1f1b\", \"virtual_stages\": 2, \"zero\": 3, \"recompute\": \"full\"");
        QTest::newRow("1f1b dp2 tp2 pp2 zero1") << QStringLiteral("1f1b") << 2 << 2 << 2
                                                << QStringLiteral(", \"schedule\": \"1f1b\", \"tp\": 2, \"zero\": 1");
    }

    void matchesReference()
    {
        QFETCH(QString, schedule);
        QFETCH(int, pp);
        QFETCH(int, micro);
        QFETCH(int, dp);
        QFETCH(QString, extra);
        // The reference: one rank, the same global batch as dp·micro micro-batches of 2 sequences.
        // With dp > 1 each replica takes its own slice, which the single rank sees as consecutive
        // micro-batches, so the average gradient is the same.
        const Outcome &ref = reference(dp, micro);
        QVERIFY2(ref.code == 0, qPrintable(ref.output));
        const QString name = QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('-'));
        // Rows with tensor parallelism name it in their extra fields; the plan takes it as tp.
        QString fields = extra;
        const int tp = fields.contains(QStringLiteral(", \"tp\": 2")) ? 2 : 1;
        fields.remove(QStringLiteral(", \"tp\": 2"));
        const Outcome run = train(m_dir, name, dp, pp, micro, fields, tp);
        QVERIFY2(run.code == 0, qPrintable(run.output));
        QCOMPARE(run.params.size(), ref.params.size());
        QCOMPARE(run.grads.size(), ref.grads.size());
        QCOMPARE(run.losses.size(), size_t(kSteps));
        for (int i = 0; i < kSteps; ++i)
            QVERIFY2(std::abs(run.losses[i] - ref.losses[i]) <= (tp > 1 ? 1e-5 : 1e-6) * std::abs(ref.losses[i]),
                     qPrintable(QStringLiteral("step %1: loss %2 vs %3").arg(i + 1).arg(run.losses[i], 0, 'g', 17).arg(ref.losses[i], 0, 'g', 17)));
        const double params = relativeL2(run.params, ref.params);
        const double grads = relativeL2(run.grads, ref.grads);
        qInfo("%s: parameters %.3g, gradients %.3g relative L2 from the reference", QTest::currentDataTag(), params, grads);
        // 1e-6 for pipelines (fp32); with tensor parallelism inside, the issue's tp bound of 1e-5.
        const double bound = tp > 1 ? 1e-5 : 1e-6;
        QVERIFY2(params < bound, qPrintable(QStringLiteral("parameters differ by %1").arg(params)));
        QVERIFY2(grads < bound, qPrintable(QStringLiteral("gradients differ by %1").arg(grads)));
    }

    void tensorParallelMatchesReference_data()
    {
        QTest::addColumn<int>("tp");
        QTest::addColumn<int>("dp");
        QTest::addColumn<QString>("extra");
        QTest::newRow("tp2") << 2 << 1 << QString();
        QTest::newRow("tp4") << 4 << 1 << QString();
        QTest::newRow("dp2 tp2") << 2 << 2 << QString();
        QTest::newRow("tp2 recompute") << 2 << 1 << QStringLiteral(", \"recompute\": \"full\"");
        QTest::newRow("tp2 sequence parallel") << 2 << 1 << QStringLiteral(", \"sequence_parallel\": true");
        QTest::newRow("tp4 sequence parallel") << 4 << 1 << QStringLiteral(", \"sequence_parallel\": true");
        QTest::newRow("dp2 tp2 sequence parallel") << 2 << 2 << QStringLiteral(", \"sequence_parallel\": true");
        QTest::newRow("tp2 sequence parallel recompute")
            << 2 << 1 << QStringLiteral(", \"sequence_parallel\": true, \"recompute\": \"full\"");
        // Selective recompute (the attention probabilities redone in backward) with tp + SP.
        QTest::newRow("tp2 sequence parallel selective")
            << 2 << 1 << QStringLiteral(", \"sequence_parallel\": true, \"recompute\": \"selective\"");
        QTest::newRow("dp2 tp2 sequence parallel selective")
            << 2 << 2 << QStringLiteral(", \"sequence_parallel\": true, \"recompute\": \"selective\"");
        // ZeRO over the tp shards' models.
        QTest::newRow("dp2 tp2 zero1") << 2 << 2 << QStringLiteral(", \"zero\": 1");
        QTest::newRow("dp2 tp2 zero2") << 2 << 2 << QStringLiteral(", \"zero\": 2, \"sequence_parallel\": true");
        QTest::newRow("dp2 tp2 zero3") << 2 << 2 << QStringLiteral(", \"zero\": 3");
    }
    void tensorParallelMatchesReference()
    {
        QFETCH(int, tp);
        QFETCH(int, dp);
        QFETCH(QString, extra);
        const Outcome &ref = reference(dp, 2);
        QVERIFY2(ref.code == 0, qPrintable(ref.output));
        const QString name = QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('-'));
        const Outcome run = train(m_dir, name, dp, 1, 2, extra, tp);
        QVERIFY2(run.code == 0, qPrintable(run.output));
        QCOMPARE(run.params.size(), ref.params.size());
        QCOMPARE(run.losses.size(), size_t(kSteps));
        for (int i = 0; i < kSteps; ++i)
            QVERIFY2(std::abs(run.losses[i] - ref.losses[i]) <= 1e-5 * std::abs(ref.losses[i]),
                     qPrintable(QStringLiteral("step %1: loss %2 vs %3").arg(i + 1).arg(run.losses[i], 0, 'g', 17).arg(ref.losses[i], 0, 'g', 17)));
        const double params = relativeL2(run.params, ref.params);
        const double grads = relativeL2(run.grads, ref.grads);
        qInfo("%s: parameters %.3g, gradients %.3g relative L2 from the reference", QTest::currentDataTag(), params, grads);
        QVERIFY2(params < 1e-5, qPrintable(QStringLiteral("parameters differ by %1").arg(params)));
        QVERIFY2(grads < 1e-5, qPrintable(QStringLiteral("gradients differ by %1").arg(grads)));
        // Every rank ends with the same gathered model.
        for (int r = 1; r < dp * tp; ++r)
            QVERIFY(readDump<float>(m_dir.filePath(name + QStringLiteral(".params.rank%1").arg(r))) == run.params);
    }

    // The llama architecture (RMSNorm, SwiGLU, rotary positions, grouped-query attention, untied
    // head) under every kind of parallelism the trainer runs, against its own single rank.
    void llamaMatchesReference_data()
    {
        QTest::addColumn<int>("dp");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("tp");
        QTest::addColumn<QString>("extra");
        QTest::newRow("llama tp2") << 1 << 1 << 2 << QString();
        QTest::newRow("llama dp2 tp2 sequence parallel selective")
            << 2 << 1 << 2 << QStringLiteral(", \"sequence_parallel\": true, \"recompute\": \"selective\"");
        QTest::newRow("llama dp2 zero3") << 2 << 1 << 1 << QStringLiteral(", \"zero\": 3");
        QTest::newRow("llama 1f1b pp2 dp2 zero1") << 2 << 2 << 1 << QStringLiteral(", \"schedule\": \"1f1b\", \"zero\": 1");
        QTest::newRow("llama zb-h1 tp2 pp2 sequence parallel")
            << 1 << 2 << 2 << QStringLiteral(", \"schedule\": \"zb-h1\", \"sequence_parallel\": true");
        QTest::newRow("llama interleaved-1f1b pp2 recompute")
            << 1 << 2 << 1 << QStringLiteral(", \"schedule\": \"interleaved-1f1b\", \"virtual_stages\": 2, \"recompute\": \"full\"");
    }
    void llamaMatchesReference()
    {
        QFETCH(int, dp);
        QFETCH(int, pp);
        QFETCH(int, tp);
        QFETCH(QString, extra);
        const int micro = 2;
        const int key = dp * micro;
        const Outcome &ref = llamaReference(key);
        QVERIFY2(ref.code == 0, qPrintable(ref.output));
        const QString name = QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('-'));
        // As for gpt: 1e-6 relative in fp32 where the arithmetic is the same (dp, ZeRO, pipeline),
        // 1e-5 with tp (split GEMMs and all-reduced partial sums add in another order).
        const double bound = tp > 1 ? 1e-5 : 1e-6;
        compareWithReference(train(m_dir, name, dp, pp, micro, extra, tp, kLlamaModel), ref, bound, bound);
    }

    // Context parallelism (ring attention) alone and with every other parallelism, both layouts,
    // both architectures, against the single rank that runs the same sequences whole. The online
    // softmax merges blocks in another order than the reference's one softmax, and the dK/dV
    // partial sums add in ring order; measured ≤ 2e-7 relative (gradients) and ≤ 5e-8 (losses), so
    // the fp32 bound of 1e-6 holds, 1e-5 with tp inside as for tp alone. The parameters after 3
    // AdamW steps get 2e-6: gpt's key bias has an exactly zero gradient (softmax ignores a constant
    // added to every score of a row), so its computed gradient is rounding noise, which Adam's
    // normalisation turns into lr-sized steps (measured 8.7e-7 of the 7.9e-7 total, every other
    // tensor ≤ 2.3e-8).
    void contextParallelMatchesReference_data()
    {
        QTest::addColumn<int>("cp");
        QTest::addColumn<int>("dp");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("tp");
        QTest::addColumn<bool>("llama");
        QTest::addColumn<QString>("extra");
        const QString contiguous = QStringLiteral(", \"cp_layout\": \"contiguous\"");
        QTest::newRow("cp2") << 2 << 1 << 1 << 1 << false << QString();
        QTest::newRow("cp2 contiguous") << 2 << 1 << 1 << 1 << false << contiguous;
        QTest::newRow("cp4") << 4 << 1 << 1 << 1 << false << QString();
        QTest::newRow("cp4 contiguous") << 4 << 1 << 1 << 1 << false << contiguous;
        QTest::newRow("cp2 tp2") << 2 << 1 << 1 << 2 << false << QString();
        QTest::newRow("cp2 tp2 sequence parallel selective")
            << 2 << 1 << 1 << 2 << false << QStringLiteral(", \"sequence_parallel\": true, \"recompute\": \"selective\"");
        QTest::newRow("cp2 dp2 zero1") << 2 << 2 << 1 << 1 << false << QStringLiteral(", \"zero\": 1");
        QTest::newRow("cp2 dp2 zero3") << 2 << 2 << 1 << 1 << false << QStringLiteral(", \"zero\": 3");
        QTest::newRow("cp2 pp2 1f1b") << 2 << 1 << 2 << 1 << false << QStringLiteral(", \"schedule\": \"1f1b\"");
        QTest::newRow("cp2 recompute") << 2 << 1 << 1 << 1 << false << QStringLiteral(", \"recompute\": \"full\"");
        QTest::newRow("llama cp2 tp2") << 2 << 1 << 1 << 2 << true << QString();
        QTest::newRow("llama cp4 contiguous") << 4 << 1 << 1 << 1 << true << contiguous;
        QTest::newRow("llama cp2 pp2 zb-h1") << 2 << 1 << 2 << 1 << true << QStringLiteral(", \"schedule\": \"zb-h1\"");
    }
    void contextParallelMatchesReference()
    {
        QFETCH(int, cp);
        QFETCH(int, dp);
        QFETCH(int, pp);
        QFETCH(int, tp);
        QFETCH(bool, llama);
        QFETCH(QString, extra);
        const int micro = 2;
        // The reference: one rank over the same global batch (dp replicas' slices as consecutive
        // micro-batches), the whole sequences.
        const Outcome &ref = llama ? llamaReference(dp * micro) : reference(dp, micro);
        QVERIFY2(ref.code == 0, qPrintable(ref.output));
        const QString name = QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('-'));
        const double bound = tp > 1 ? 1e-5 : 1e-6;
        compareWithReference(train(m_dir, name, dp, pp, micro, extra, tp, llama ? kLlamaModel : kGptModel, cp), ref, bound,
                             std::max(bound, 2e-6));
    }

    // Mixtures of experts with expert parallelism against one rank holding every expert over the
    // same global batch. Routing, capacity and the load-balancing loss are per sequence, so the
    // objective does not depend on the split; an expert's rows arrive from the ep ranks in
    // another order than the reference's (their weight gradients add in another order), hence
    // rounding-level differences only.
    void expertParallelMatchesReference_data()
    {
        QTest::addColumn<int>("dp");
        QTest::addColumn<int>("ep");
        QTest::addColumn<int>("pp");
        QTest::addColumn<int>("tp");
        QTest::addColumn<QString>("moe");
        QTest::addColumn<QString>("extra");
        QTest::addColumn<bool>("llama");
        const QString top1 = QStringLiteral(R"("experts": 4, "top_k": 1)");
        const QString top2 = QStringLiteral(R"("experts": 4, "top_k": 2)");
        const QString top2Capacity = QStringLiteral(R"("experts": 4, "top_k": 2, "capacity_factor": 1.0)");
        const QString top1Capacity = QStringLiteral(R"("experts": 4, "top_k": 1, "capacity_factor": 1.0)");
        QTest::newRow("ep2 top-1") << 2 << 2 << 1 << 1 << top1 << QString() << false;
        QTest::newRow("ep2 top-2") << 2 << 2 << 1 << 1 << top2 << QString() << false;
        QTest::newRow("ep4 top-1") << 4 << 4 << 1 << 1 << top1 << QString() << false;
        QTest::newRow("ep4 top-2") << 4 << 4 << 1 << 1 << top2 << QString() << false;
        QTest::newRow("ep2 top-1 capacity") << 2 << 2 << 1 << 1 << top1Capacity << QString() << false;
        QTest::newRow("ep4 top-2 capacity") << 4 << 4 << 1 << 1 << top2Capacity << QString() << false;
        QTest::newRow("ep2 dp4 top-2") << 4 << 2 << 1 << 1 << top2 << QString() << false;
        QTest::newRow("ep2 dp2 pp2 1f1b") << 2 << 2 << 2 << 1 << top2 << QStringLiteral(R"(, "schedule": "1f1b")") << false;
        QTest::newRow("ep2 dp4 pp2 interleaved capacity")
            << 4 << 2 << 2 << 1 << top2Capacity << QStringLiteral(R"(, "schedule": "interleaved-1f1b", "virtual_stages": 2)") << false;
        QTest::newRow("ep2 tp2 top-2") << 2 << 2 << 1 << 2 << top2 << QString() << false;
        QTest::newRow("ep2 tp2 sequence parallel capacity")
            << 2 << 2 << 1 << 2 << top2Capacity << QStringLiteral(R"(, "sequence_parallel": true)") << false;
        QTest::newRow("ep2 full recompute") << 2 << 2 << 1 << 1 << top2 << QStringLiteral(R"(, "recompute": "full")") << false;
        QTest::newRow("moe dp2 zero3 (ep 1)") << 2 << 1 << 1 << 1 << top2 << QStringLiteral(R"(, "zero": 3)") << false;
        QTest::newRow("llama ep2 top-2") << 2 << 2 << 1 << 1 << top2 << QString() << true;
        QTest::newRow("llama ep2 tp2 capacity") << 2 << 2 << 1 << 2 << top1Capacity << QString() << true;
    }
    void expertParallelMatchesReference()
    {
        QFETCH(int, dp);
        QFETCH(int, ep);
        QFETCH(int, pp);
        QFETCH(int, tp);
        QFETCH(QString, moe);
        QFETCH(QString, extra);
        QFETCH(bool, llama);
        const int micro = pp > 1 ? 2 * pp : 2;
        // 4 layers (2 chunks a stage at pp 2 × 2 virtual stages), 4 experts.
        const QString model = (llama ? QStringLiteral(R"("arch": "llama", "kv_heads": 2, )") : QString()) +
                              QStringLiteral(R"("layers": 4, "hidden": 32, "heads": 4, "ffn": 64, "seq_len": 16, "vocab": 256, "moe": {)") +
                              moe + QStringLiteral("}");
        const QString key = model + QString::number(dp * micro);
        auto it = m_moeReference.find(key);
        if (it == m_moeReference.end())
            it = m_moeReference
                     .emplace(key, train(m_dir, QStringLiteral("moe-ref-%1").arg(m_moeReference.size()), 1, 1, dp * micro, QString(), 1, model))
                     .first;
        const Outcome &ref = it->second;
        QVERIFY2(ref.code == 0, qPrintable(ref.output));
        const QString name = QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('-'));
        const double bound = tp > 1 ? 1e-5 : 1e-6;
        compareWithReference(train(m_dir, name, dp, pp, micro, QStringLiteral(R"(, "ep": %1)").arg(ep) + extra, tp, model), ref,
                             bound, std::max(bound, 2e-6));
    }

    // Sequence parallelism on equals off at the same tp: the same partial sums, reduce-scattered
    // and gathered instead of all-reduced.
    void sequenceParallelEqualsOff()
    {
        const Outcome off = train(m_dir, QStringLiteral("sp-off"), 1, 1, 2, QString(), 2);
        const Outcome on = train(m_dir, QStringLiteral("sp-on"), 1, 1, 2, QStringLiteral(", \"sequence_parallel\": true"), 2);
        QVERIFY2(off.code == 0 && on.code == 0, qPrintable(off.output + on.output));
        const double params = relativeL2(on.params, off.params), grads = relativeL2(on.grads, off.grads);
        qInfo("sequence parallel on vs off at tp 2: parameters %.3g, gradients %.3g relative L2", params, grads);
        QVERIFY(params < 1e-6);
        QVERIFY(grads < 1e-5);
        for (int i = 0; i < kSteps; ++i)
            QVERIFY(std::abs(on.losses[i] - off.losses[i]) <= 1e-6 * std::abs(off.losses[i]));
    }

    void refusesBadMicroBatchCount()
    {
        const Outcome run = train(m_dir, QStringLiteral("bad-m"), 1, 2, 3,
                                  QStringLiteral(", \"schedule\": \"interleaved-1f1b\", \"virtual_stages\": 2"));
        QCOMPARE(run.code, 3); // plan invalid: never run
        QVERIFY2(run.output.contains(QStringLiteral("parallel.micro_batches: 3 is not a multiple of parallel.pp (2)")),
                 qPrintable(run.output));
    }
};

QTEST_GUILESS_MAIN(TstParallelParity)
#include "tst_parallel_parity.moc"
