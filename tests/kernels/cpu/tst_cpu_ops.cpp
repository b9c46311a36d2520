// CPU kernels against naive loops: GEMM in every transpose combination and odd sizes, LayerNorm's
// outputs and statistics with random gains and biases, softmax/cross-entropy, and attention's
// outputs and probabilities (multi-head and grouped-query, several batches) against the textbook
// formula, plus its causality.
#include "kernels/cpu/cpu_ops.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace trellis::kernels::cpu;

namespace {

std::vector<double> randomVector(std::size_t n, unsigned seed)
{
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(-1, 1);
    std::vector<double> v(n);
    for (auto &x : v)
        x = dist(gen);
    return v;
}

} // namespace

class TstCpuOps : public QObject {
    Q_OBJECT
private slots:
    void gemmMatchesNaive_data()
    {
        QTest::addColumn<bool>("ta");
        QTest::addColumn<bool>("tb");
        QTest::addColumn<int>("M");
        QTest::addColumn<int>("N");
        QTest::addColumn<int>("K");
        QTest::addColumn<bool>("strided"); // explicit leading dimensions vs the contiguous overload
        for (bool strided : {false, true})
            for (bool ta : {false, true})
                for (bool tb : {false, true}) {
                    const QString tag = QStringLiteral("%1%2 %3").arg(ta ? 'T' : 'N').arg(tb ? 'T' : 'N').arg(strided ? "ld" : "packed");
                    QTest::newRow(qPrintable(tag + QStringLiteral(" 7x5x3"))) << ta << tb << 7 << 5 << 3 << strided;
                    QTest::newRow(qPrintable(tag + QStringLiteral(" 1x13x17"))) << ta << tb << 1 << 13 << 17 << strided;
                    QTest::newRow(qPrintable(tag + QStringLiteral(" 33x1x9"))) << ta << tb << 33 << 1 << 9 << strided;
                }
    }
    void gemmMatchesNaive()
    {
        QFETCH(bool, ta);
        QFETCH(bool, tb);
        QFETCH(int, M);
        QFETCH(int, N);
        QFETCH(int, K);
        QFETCH(bool, strided);
        const auto A = randomVector(size_t(M) * K, 1), B = randomVector(size_t(K) * N, 2);
        auto C = randomVector(size_t(M) * N, 3);
        const auto C0 = C;
        if (strided)
            gemm<double>(ta, tb, M, N, K, 2.0, A.data(), ta ? M : K, B.data(), tb ? K : N, 0.5, C.data(), N);
        else
            gemm<double>(ta, tb, M, N, K, 2.0, A.data(), B.data(), 0.5, C.data());
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
                double s = 0;
                for (int k = 0; k < K; ++k)
                    s += (ta ? A[size_t(k) * M + i] : A[size_t(i) * K + k]) * (tb ? B[size_t(j) * K + k] : B[size_t(k) * N + j]);
                QVERIFY(std::abs(C[size_t(i) * N + j] - (2 * s + 0.5 * C0[size_t(i) * N + j])) < 1e-12);
            }
    }

    // out = (x − mean) · rstd · gamma + beta, rstd = 1 / sqrt(var + eps) with the biased variance,
    // for random gamma and beta (a gain or bias applied to the wrong element, or the unbiased
    // variance, fails), and the mean and rstd kept for backward.
    void layerNormMatchesNaive()
    {
        const int N = 5, C = 12;
        const double eps = 1e-5;
        const auto x = randomVector(N * C, 4), gamma = randomVector(C, 40), beta = randomVector(C, 41);
        std::vector<double> out(N * C), mean(N), rstd(N);
        layerNormForward(out.data(), mean.data(), rstd.data(), x.data(), gamma.data(), beta.data(), N, C, eps);
        for (int i = 0; i < N; ++i) {
            double m = 0, v = 0;
            for (int c = 0; c < C; ++c)
                m += x[i * C + c];
            m /= C;
            for (int c = 0; c < C; ++c)
                v += (x[i * C + c] - m) * (x[i * C + c] - m);
            const double r = 1.0 / std::sqrt(v / C + eps);
            QVERIFY(std::abs(mean[i] - m) < 1e-12);
            QVERIFY(std::abs(rstd[i] - r) < 1e-9);
            for (int c = 0; c < C; ++c) {
                const double expected = (x[i * C + c] - m) * r * gamma[c] + beta[c];
                QVERIFY2(std::abs(out[i * C + c] - expected) < 1e-12,
                         qPrintable(QStringLiteral("row %1 column %2: %3, expected %4").arg(i).arg(c).arg(out[i * C + c]).arg(expected)));
            }
        }
    }

    void crossEntropyIsLogSumExp()
    {
        const int BT = 4, V = 7;
        const auto logits = randomVector(BT * V, 5);
        std::vector<std::int32_t> targets{0, 3, 6, 2};
        std::vector<double> losses(BT), probs(BT * V);
        crossEntropyForward(losses.data(), probs.data(), logits.data(), targets.data(), BT, V);
        for (int i = 0; i < BT; ++i) {
            double sum = 0, lse = 0;
            for (int j = 0; j < V; ++j) {
                sum += probs[i * V + j];
                lse += std::exp(logits[i * V + j]);
            }
            QVERIFY(std::abs(sum - 1) < 1e-12);
            QVERIFY(std::abs(losses[i] - (std::log(lse) - logits[i * V + targets[i]])) < 1e-12);
        }
    }

    // Causal attention by the textbook: for query head h (kv head h / (NH/KVH)), scores
    // q·k / sqrt(hs) over the keys at or before the query, their softmax, and the weighted sum of
    // the values — every output value and every probability, multi-head and grouped-query.
    void attentionMatchesNaive_data()
    {
        QTest::addColumn<int>("B");
        QTest::addColumn<int>("T");
        QTest::addColumn<int>("NH");
        QTest::addColumn<int>("KVH");
        QTest::newRow("multi-head") << 2 << 7 << 4 << 4;
        QTest::newRow("grouped-query 4 over 2") << 2 << 5 << 4 << 2;
        QTest::newRow("multi-query") << 1 << 9 << 4 << 1;
    }
    void attentionMatchesNaive()
    {
        QFETCH(int, B);
        QFETCH(int, T);
        QFETCH(int, NH);
        QFETCH(int, KVH);
        const int hs = 3, C = NH * hs, ld = C + 2 * KVH * hs;
        const auto qkv = randomVector(size_t(B) * T * ld, 7);
        std::vector<double> out(size_t(B) * T * C), att(size_t(B) * NH * T * T);
        attentionForward(out.data(), att.data(), qkv.data(), B, T, C, NH, KVH);
        for (int b = 0; b < B; ++b)
            for (int h = 0; h < NH; ++h) {
                const int g = h / (NH / KVH);
                for (int t = 0; t < T; ++t) {
                    const double *q = &qkv[(size_t(b) * T + t) * ld + h * hs];
                    std::vector<double> p(T, 0.0);
                    double top = -INFINITY, sum = 0;
                    for (int u = 0; u <= t; ++u) {
                        const double *k = &qkv[(size_t(b) * T + u) * ld + C + g * hs];
                        double s = 0;
                        for (int i = 0; i < hs; ++i)
                            s += q[i] * k[i];
                        p[u] = s / std::sqrt(double(hs));
                        top = std::max(top, p[u]);
                    }
                    for (int u = 0; u <= t; ++u)
                        sum += (p[u] = std::exp(p[u] - top));
                    for (int u = 0; u < T; ++u) {
                        const double expected = u <= t ? p[u] / sum : 0.0;
                        QVERIFY(std::abs(att[((size_t(b) * NH + h) * T + t) * T + u] - expected) < 1e-12);
                    }
                    for (int i = 0; i < hs; ++i) {
                        double expected = 0;
                        for (int u = 0; u <= t; ++u)
                            expected += p[u] / sum * qkv[(size_t(b) * T + u) * ld + C + KVH * hs + g * hs + i];
                        const double got = out[(size_t(b) * T + t) * C + h * hs + i];
                        QVERIFY2(std::abs(got - expected) < 1e-12, qPrintable(QStringLiteral("batch %1 head %2 query %3 column %4: %5, expected %6")
                                                                           .arg(b).arg(h).arg(t).arg(i).arg(got).arg(expected)));
                    }
                }
            }
    }

    void attentionIsCausal()
    {
        const int B = 1, T = 6, C = 8, NH = 2;
        auto qkv = randomVector(size_t(B) * T * 3 * C, 6);
        std::vector<double> out(B * T * C), att(size_t(B) * NH * T * T), out2(out.size());
        attentionForward(out.data(), att.data(), qkv.data(), B, T, C, NH, NH);
        for (int c = 0; c < 3 * C; ++c)
            qkv[size_t(T - 1) * 3 * C + c] += 1.0; // change only the last position
        attentionForward(out2.data(), att.data(), qkv.data(), B, T, C, NH, NH);
        for (int t = 0; t < T - 1; ++t)
            for (int c = 0; c < C; ++c)
                QCOMPARE(out2[size_t(t) * C + c], out[size_t(t) * C + c]);
        bool lastChanged = false;
        for (int c = 0; c < C; ++c)
            lastChanged |= out2[size_t(T - 1) * C + c] != out[size_t(T - 1) * C + c];
        QVERIFY(lastChanged);
        for (int h = 0; h < NH; ++h)
            for (int t = 0; t < T; ++t) {
                double sum = 0;
                for (int u = 0; u < T; ++u)
                    sum += att[(size_t(h) * T + t) * T + u];
                QVERIFY(std::abs(sum - 1) < 1e-12);
            }
    }
};

QTEST_GUILESS_MAIN(TstCpuOps)
#include "tst_cpu_ops.moc"
