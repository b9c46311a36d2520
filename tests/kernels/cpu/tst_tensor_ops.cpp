// The element-wise and bookkeeping kernels (kernels/cpu/tensor_ops.h) against naive loops and
// against the whole-vocabulary kernels: the vocabulary-parallel embedding and cross-entropy,
// computed for each of 3 simulated ranks' column ranges and combined as the tp group combines
// them, equal the dense embedding and cross-entropy; AdamW equals the update written out in
// double; the dispatch layer refuses a CUDA stream in a CPU-only build, naming the op.
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/tensor_ops.h"
#include "kernels/ops.h"

#include <QTest>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

using namespace trellis::kernels;

namespace {

std::vector<double> randomVector(std::size_t n, unsigned seed, double scale = 1.0)
{
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(-scale, scale);
    std::vector<double> v(n);
    for (auto &x : v)
        x = dist(gen);
    return v;
}

double maxDiff(const std::vector<double> &a, const std::vector<double> &b)
{
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, std::abs(a[i] - b[i]));
    return worst;
}

} // namespace

class TstTensorOps : public QObject {
    Q_OBJECT
private slots:
    void elementwise_data()
    {
        QTest::addColumn<int>("n");
        for (int n : {0, 1, 7, 64, 1001})
            QTest::newRow(qPrintable(QString::number(n))) << n;
    }
    void elementwise()
    {
        QFETCH(int, n);
        const auto a = randomVector(static_cast<std::size_t>(n), 1), b = randomVector(static_cast<std::size_t>(n), 2);
        std::vector<double> x = a;
        cpu::accumulate(x.data(), b.data(), n);
        double s = 0, sq = 0;
        for (int i = 0; i < n; ++i) {
            QCOMPARE(x[static_cast<std::size_t>(i)], a[static_cast<std::size_t>(i)] + b[static_cast<std::size_t>(i)]);
            s += a[static_cast<std::size_t>(i)];
            sq += a[static_cast<std::size_t>(i)] * a[static_cast<std::size_t>(i)];
        }
        QCOMPARE(cpu::sum(a.data(), n), s);
        QCOMPARE(cpu::sumSquares(a.data(), n), sq);
        cpu::scale(x.data(), n, 0.5);
        cpu::copy(x.data(), a.data(), n);
        QVERIFY(x == a);
        cpu::fill(x.data(), n, 3.0);
        QVERIFY(std::all_of(x.begin(), x.end(), [](double v) { return v == 3.0; }));
    }

    // Three ranks of a vocabulary split in three: their lookups sum to the dense embedding, and
    // their gradient rows together are the dense gradient.
    void vocabularyParallelEmbedding()
    {
        const int V = 12, C = 5, B = 2, T = 4, BT = B * T, tp = 3, Vl = V / tp;
        const auto wte = randomVector(static_cast<std::size_t>(V * C), 3), wpe = randomVector(static_cast<std::size_t>(T * C), 4);
        const std::vector<std::int32_t> tokens{0, 11, 4, 5, 3, 8, 7, 1};
        std::vector<double> dense(static_cast<std::size_t>(BT * C));
        cpu::encoderForward(dense.data(), tokens.data(), wte.data(), wpe.data(), B, T, C, V);
        std::vector<double> summed(dense.size(), 0.0), part(dense.size());
        for (int r = 0; r < tp; ++r) {
            cpu::embeddingRangeForward(part.data(), tokens.data(), wte.data() + r * Vl * C, r * Vl, Vl, BT, C);
            cpu::accumulate(summed.data(), part.data(), static_cast<std::int64_t>(part.size()));
        }
        cpu::addPositions(summed.data(), wpe.data(), 0, BT, T, C);
        QVERIFY(maxDiff(summed, dense) < 1e-15);

        const auto dOut = randomVector(dense.size(), 5);
        std::vector<double> dwte(wte.size(), 0.0), dwpe(wpe.size(), 0.0);
        cpu::encoderBackward(dwte.data(), dwpe.data(), dOut.data(), tokens.data(), B, T, C, V);
        std::vector<double> dwteParts(wte.size(), 0.0), dwpeOnce(wpe.size(), 0.0), scratch(wpe.size());
        for (int r = 0; r < tp; ++r) {
            std::fill(scratch.begin(), scratch.end(), 0.0);
            cpu::embeddingRangeBackward(dwteParts.data() + r * Vl * C, scratch.data(), dOut.data(), tokens.data(), r * Vl, Vl,
                                        BT, T, C);
            if (r == 0)
                dwpeOnce = scratch; // every rank adds the same position gradient
            else
                QVERIFY(scratch == dwpeOnce);
        }
        QVERIFY(maxDiff(dwteParts, dwte) < 1e-15);
        QVERIFY(maxDiff(dwpeOnce, dwpe) < 1e-15);
    }

    // The vocabulary-parallel cross-entropy of three ranks, combined as the group combines it,
    // gives the dense softmax, losses and logit gradients.
    void vocabularyParallelCrossEntropy()
    {
        const int V = 12, BT = 6, tp = 3, Vl = V / tp;
        const auto logits = randomVector(static_cast<std::size_t>(BT * V), 6, 4.0);
        const std::vector<std::int32_t> targets{0, 11, 5, 6, 3, 9};
        std::vector<double> probs(logits.size()), losses(static_cast<std::size_t>(BT));
        cpu::crossEntropyForward(losses.data(), probs.data(), logits.data(), targets.data(), BT, V);
        std::vector<double> dense(logits.size());
        cpu::crossEntropyBackward(dense.data(), probs.data(), targets.data(), 0.25, BT, V);

        // Each rank's columns, contiguous.
        std::vector<std::vector<double>> local(tp);
        for (int r = 0; r < tp; ++r)
            for (int i = 0; i < BT; ++i)
                for (int v = 0; v < Vl; ++v)
                    local[static_cast<std::size_t>(r)].push_back(logits[static_cast<std::size_t>(i * V + r * Vl + v)]);
        std::vector<double> maxima(static_cast<std::size_t>(BT * tp)), globalMax(static_cast<std::size_t>(BT));
        for (int r = 0; r < tp; ++r)
            cpu::rowMax(maxima.data() + r * BT, local[static_cast<std::size_t>(r)].data(), BT, Vl); // the all-gather
        cpu::maxOverBlocks(globalMax.data(), maxima.data(), tp, BT);
        std::vector<std::vector<double>> localProbs(tp, std::vector<double>(static_cast<std::size_t>(BT * Vl)));
        std::vector<double> sums(static_cast<std::size_t>(2 * BT), 0.0), partial(sums.size());
        for (int r = 0; r < tp; ++r) {
            cpu::softmaxPartials(localProbs[static_cast<std::size_t>(r)].data(), partial.data(),
                                 local[static_cast<std::size_t>(r)].data(), globalMax.data(), targets.data(), r * Vl, BT, Vl);
            cpu::accumulate(sums.data(), partial.data(), static_cast<std::int64_t>(sums.size())); // the all-reduce
        }
        for (int r = 0; r < tp; ++r) {
            std::vector<double> rankLosses(static_cast<std::size_t>(BT)), grad(static_cast<std::size_t>(BT * Vl));
            cpu::softmaxFinish(localProbs[static_cast<std::size_t>(r)].data(), rankLosses.data(), sums.data(), globalMax.data(), BT, Vl);
            QVERIFY(maxDiff(rankLosses, losses) < 1e-13); // every rank has every row's loss
            cpu::crossEntropyRangeBackward(grad.data(), localProbs[static_cast<std::size_t>(r)].data(), targets.data(), r * Vl,
                                           0.25, BT, Vl);
            for (int i = 0; i < BT; ++i)
                for (int v = 0; v < Vl; ++v) {
                    const auto at = static_cast<std::size_t>(i * V + r * Vl + v), here = static_cast<std::size_t>(i * Vl + v);
                    QVERIFY(std::abs(localProbs[static_cast<std::size_t>(r)][here] - probs[at]) < 1e-15);
                    QVERIFY(std::abs(grad[here] - dense[at]) < 1e-15);
                }
        }
    }

    void adamwMatchesTheFormula()
    {
        const int n = 37;
        const auto p0 = randomVector(n, 7), g = randomVector(n, 8), m0 = randomVector(n, 9, 0.1), v0 = randomVector(n, 10, 0.1);
        std::vector<float> p(p0.begin(), p0.end()), gf(g.begin(), g.end()), m(m0.begin(), m0.end()), v(n);
        for (int i = 0; i < n; ++i)
            v[static_cast<std::size_t>(i)] = static_cast<float>(std::abs(v0[static_cast<std::size_t>(i)]));
        std::vector<std::uint8_t> decay(n);
        for (int i = 0; i < n; ++i)
            decay[static_cast<std::size_t>(i)] = i % 3 != 0;
        const double lr = 1e-2, b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1, t = 3;
        const double c1 = 1 - std::pow(b1, t), c2 = 1 - std::pow(b2, t);
        const std::vector<float> vIn = v;
        cpu::adamw(p.data(), gf.data(), m.data(), v.data(), decay.data(), n,
                   {float(b1), float(b2), float(eps), float(lr * wd), float(lr / c1), float(1 / std::sqrt(c2))});
        for (int i = 0; i < n; ++i) {
            const auto k = static_cast<std::size_t>(i);
            const double mm = b1 * m0[k] + (1 - b1) * double(gf[k]);
            const double vv = b2 * double(vIn[k]) + (1 - b2) * double(gf[k]) * gf[k];
            double pp = double(float(p0[k]));
            if (decay[k])
                pp -= lr * wd * pp;
            pp -= lr / c1 * mm / (std::sqrt(vv / c2) + eps);
            QVERIFY2(std::abs(p[k] - pp) < 1e-6 * std::max(1.0, std::abs(pp)),
                     qPrintable(QStringLiteral("element %1: %2 vs %3").arg(i).arg(p[k]).arg(pp)));
        }
    }

    void cudaStreamWithoutCudaKernels()
    {
        if (available(Device::Cuda))
            QSKIP("this build has CUDA kernels");
        Stream gpu{Device::Cuda, 1, nullptr};
        float x = 0;
        try {
            fill(gpu, &x, 1, 1.0f);
            QFAIL("no exception");
        } catch (const std::runtime_error &e) {
#if defined(TRELLIS_HAVE_CUDA)
            // A CUDA build without a GPU: the CUDA runtime refuses, named with the kernel.
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("fillKernel<<<>>> \u2192")), e.what());
#else
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("kernel fill on cuda:1")), e.what());
#endif
        }
    }
};

QTEST_GUILESS_MAIN(TstTensorOps)
#include "tst_tensor_ops.moc"
