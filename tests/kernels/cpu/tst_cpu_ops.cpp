// CPU kernels against naive loops: GEMM in every transpose combination and odd sizes, LayerNorm
// statistics, softmax/cross-entropy, and attention causality.
#include "kernels/cpu/cpu_ops.h"

#include <QTest>

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

    void layerNormStatistics()
    {
        const int N = 3, C = 10;
        const auto x = randomVector(N * C, 4);
        std::vector<double> gamma(C, 1), beta(C, 0), out(N * C), mean(N), rstd(N);
        layerNormForward(out.data(), mean.data(), rstd.data(), x.data(), gamma.data(), beta.data(), N, C);
        for (int i = 0; i < N; ++i) {
            double m = 0, v = 0;
            for (int c = 0; c < C; ++c)
                m += out[i * C + c];
            m /= C;
            for (int c = 0; c < C; ++c)
                v += (out[i * C + c] - m) * (out[i * C + c] - m);
            QVERIFY(std::abs(m) < 1e-12);
            QVERIFY(std::abs(v / C - 1) < 1e-3); // eps keeps it just below 1
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
