// Backward kernels in double against central finite differences of their own forward (objective
// Σ w ⊙ out for a random w, i.e. dOut = w), including the accumulate contract: linear, layer norm,
// GELU, attention, cross-entropy and the encoder. (The llama kernels', and float against double:
// tst_cpu_backward.)
#include "tests/support/cpu_kernel_cases.h"

#include <QTest>

#include <vector>

using namespace trellis::kernels::cpu;
using namespace trellis::test;

class TstCpuFiniteDifferences : public QObject {
    Q_OBJECT
private slots:
    // ---- double precision against finite differences

    void linearFiniteDifferences()
    {
        auto c = linearCase(5, 7, 6, 10);
        const Outputs g = runLinear<double>(c);
        auto objective = [&] { return dot(runLinear<double>(c)[0], c.dOut); };
        QVERIFY(matchesFiniteDifferences(c.in, minus(g[1], c.prior), objective, "dIn"));
        QVERIFY(matchesFiniteDifferences(c.weight, minus(g[2], c.prior), objective, "dWeight"));
        QVERIFY(matchesFiniteDifferences(c.bias, minus(g[3], c.prior), objective, "dBias"));
    }

    void layerNormFiniteDifferences()
    {
        auto c = normCase(4, 19, 20);
        const Outputs g = runNorm<double>(c);
        auto objective = [&] { return dot(runNorm<double>(c)[0], c.dOut); };
        const Vec priorG(c.prior.begin(), c.prior.begin() + c.C), priorB(c.prior.begin() + c.C, c.prior.begin() + 2 * c.C);
        QVERIFY(matchesFiniteDifferences(c.in, minus(g[3], c.prior), objective, "dIn"));
        QVERIFY(matchesFiniteDifferences(c.gamma, minus(g[4], priorG), objective, "dGamma"));
        QVERIFY(matchesFiniteDifferences(c.beta, minus(g[5], priorB), objective, "dBeta"));
    }

    void geluFiniteDifferences()
    {
        auto c = geluCase(200, 30);
        c.in.push_back(0.0);
        c.in.push_back(-12.0);
        c.in.push_back(12.0);
        for (int i = 0; i < 3; ++i) {
            c.dOut.push_back(0.5);
            c.prior.push_back(0.25);
        }
        const Outputs g = runGelu<double>(c);
        auto objective = [&] { return dot(runGelu<double>(c)[0], c.dOut); };
        QVERIFY(matchesFiniteDifferences(c.in, minus(g[1], c.prior), objective, "dIn"));
    }

    void attentionFiniteDifferences_data()
    {
        QTest::addColumn<int>("B");
        QTest::addColumn<int>("T");
        QTest::addColumn<int>("C");
        QTest::addColumn<int>("NH");
        QTest::addColumn<int>("KVH");
        QTest::newRow("B2 T7 C8 NH2") << 2 << 7 << 8 << 2 << 2;
        QTest::newRow("B1 T13 C12 NH3") << 1 << 13 << 12 << 3 << 3;
        QTest::newRow("B1 T1 C4 NH1") << 1 << 1 << 4 << 1 << 1;
        QTest::newRow("GQA B2 T6 C16 NH4 KVH2") << 2 << 6 << 16 << 4 << 2;
        QTest::newRow("MQA B1 T9 C12 NH3 KVH1") << 1 << 9 << 12 << 3 << 1;
    }
    void attentionFiniteDifferences()
    {
        QFETCH(int, B);
        QFETCH(int, T);
        QFETCH(int, C);
        QFETCH(int, NH);
        QFETCH(int, KVH);
        auto c = attentionCase(B, T, C, NH, 40, KVH);
        const Outputs g = runAttention<double>(c);
        auto objective = [&] { return dot(runAttention<double>(c)[0], c.dOut); };
        QVERIFY(matchesFiniteDifferences(c.qkv, minus(g[2], c.prior), objective, "dqkv"));
    }

    void crossEntropyFiniteDifferences()
    {
        auto c = crossEntropyCase(6, 37, 50);
        const Outputs g = runCrossEntropy<double>(c);
        // dLogits is the gradient of scale·Σ losses.
        auto objective = [&] {
            const Vec losses = runCrossEntropy<double>(c)[0];
            double s = 0;
            for (double l : losses)
                s += l;
            return c.scale * s;
        };
        QVERIFY(matchesFiniteDifferences(c.logits, g[2], objective, "dLogits"));
    }

    void encoderFiniteDifferences()
    {
        auto c = encoderCase(2, 5, 19, 4, 60); // 10 tokens from a vocabulary of 4: repeats
        const Outputs g = runEncoder<double>(c);
        auto objective = [&] { return dot(runEncoder<double>(c)[0], c.dOut); };
        QVERIFY(matchesFiniteDifferences(c.wte, minus(g[1], Vec(c.prior.begin(), c.prior.begin() + long(c.wte.size()))),
                                         objective, "dwte"));
        QVERIFY(matchesFiniteDifferences(c.wpe, minus(g[2], Vec(c.prior.begin(), c.prior.begin() + long(c.wpe.size()))),
                                         objective, "dwpe"));
    }
};

QTEST_GUILESS_MAIN(TstCpuFiniteDifferences)
#include "tst_cpu_finite_differences.moc"
