// Backward kernels: the llama kernels in double against central finite differences of their own
// forward (the other kernels': tst_cpu_finite_differences); the float instantiation (every vector ISA this CPU has) against the double one on the same
// inputs; float results reproducible, and bit-identical for 1 and 3 kernel threads outside GEMMs.
#include "tests/support/cpu_kernel_cases.h"

#include <QTest>

#include <array>
#include <cmath>
#include <thread>
#include <vector>

using namespace trellis::kernels::cpu;
using namespace trellis::test;


class TstCpuBackward : public QObject {
    Q_OBJECT
private slots:
    void cleanup()
    {
        setKernelThreads(0);
    }

    // Which vector ISAs the float checks below ran for: each one this CPU lacks is reported as
    // skipped (ctest's summary and test.sh list it), never left out silently.
    void vectorIsasChecked_data()
    {
        QTest::addColumn<QString>("isa");
        for (const char *name : {"sse2", "avx2", "avx512"})
            QTest::newRow(name) << QString::fromLatin1(name);
    }
    void vectorIsasChecked()
    {
        QFETCH(QString, isa);
        const std::vector<const char *> here = isas();
        const bool has = std::any_of(here.begin(), here.end(), [&](const char *n) { return isa == QLatin1String(n); });
        if (!has)
            QSKIP(qPrintable(QStringLiteral("this CPU has no %1: the float kernels were checked for the other ISAs only")
                                 .arg(isa)));
        const std::string original = kernelIsa();
        QVERIFY(setKernelIsa(isa.toLatin1().constData()));
        QCOMPARE(QString::fromLatin1(kernelIsa()), isa);
        setKernelIsa(original.c_str());
    }

    // The llama kernels in double against central differences, and float against double.
    void llamaKernelsFiniteDifferences()
    {
        const int N = 5, C = 12, F = 7, T = 5, hs = 6, heads = 2, ld = 14;
        // RMSNorm: dIn and dGamma of dot(out, dOut).
        Vec in = floatRounded(randomVector(std::size_t(N) * C, 60, -2, 2)), gamma = floatRounded(randomVector(C, 61, 0.5, 1.5)),
            dOut = floatRounded(randomVector(std::size_t(N) * C, 62));
        auto rms = [&](auto zero) {
            using T_ = decltype(zero);
            const auto x = as<T_>(in), g = as<T_>(gamma), d = as<T_>(dOut);
            std::vector<T_> out(x.size()), rstd(N), dx(x.size(), T_(0)), dg(C, T_(0));
            rmsNormForward(out.data(), rstd.data(), x.data(), g.data(), N, C);
            rmsNormBackward(dx.data(), dg.data(), d.data(), x.data(), g.data(), rstd.data(), N, C);
            return Outputs{toDouble(out), toDouble(dx), toDouble(dg)};
        };
        const Outputs r = rms(0.0);
        auto rmsObjective = [&] { return dot(rms(0.0)[0], dOut); };
        QVERIFY(matchesFiniteDifferences(in, r[1], rmsObjective, "rmsnorm dIn"));
        QVERIFY(matchesFiniteDifferences(gamma, r[2], rmsObjective, "rmsnorm dGamma"));
        forEachIsa([&] { QVERIFY(floatMatchesDouble(rms(0.0f), r, 2e-6, "rmsnorm")); });
        // SwiGLU: dIn of dot(out, dOut).
        Vec gin = floatRounded(randomVector(std::size_t(N) * 2 * F, 63, -4, 4)), gout = floatRounded(randomVector(std::size_t(N) * F, 64));
        auto swiglu = [&](auto zero) {
            using T_ = decltype(zero);
            const auto x = as<T_>(gin), d = as<T_>(gout);
            std::vector<T_> out(std::size_t(N) * F), dx(x.size(), T_(0));
            swigluForward(out.data(), x.data(), N, F);
            swigluBackward(dx.data(), x.data(), d.data(), N, F);
            return Outputs{toDouble(out), toDouble(dx)};
        };
        const Outputs s = swiglu(0.0);
        QVERIFY(matchesFiniteDifferences(gin, s[1], [&] { return dot(swiglu(0.0)[0], gout); }, "swiglu dIn"));
        forEachIsa([&] { QVERIFY(floatMatchesDouble(swiglu(0.0f), s, 2e-6, "swiglu")); });
        // RoPE: a rotation, so its backward (the inverse turn) is the gradient of dot(rope(x), d),
        // and inverse after forward gives x back. Rows of ld columns, two heads, two spare columns.
        const int half = hs / 2;
        std::vector<double> cosT(std::size_t(T) * half), sinT(cosT.size());
        for (int t = 0; t < T; ++t)
            for (int j = 0; j < half; ++j) {
                const double a = t * std::pow(10000.0, -2.0 * j / hs);
                cosT[std::size_t(t) * half + j] = std::cos(a);
                sinT[std::size_t(t) * half + j] = std::sin(a);
            }
        Vec rx = randomVector(std::size_t(2) * T * ld, 65), rd = randomVector(rx.size(), 66);
        auto turned = [&] {
            Vec y = rx;
            rope(y.data(), cosT.data(), sinT.data(), 2 * T, T, 0, ld, heads, hs, false);
            return y;
        };
        Vec back = rd;
        rope(back.data(), cosT.data(), sinT.data(), 2 * T, T, 0, ld, heads, hs, true);
        for (std::size_t i = 0; i < back.size(); ++i)
            if (i % ld >= std::size_t(heads * hs))
                back[i] = 0; // columns past the heads are left alone: no gradient through them
        QVERIFY(matchesFiniteDifferences(rx, back, [&] {
            Vec y = turned();
            for (std::size_t i = 0; i < y.size(); ++i)
                if (i % ld >= std::size_t(heads * hs))
                    y[i] = 0;
            return dot(y, rd);
        }, "rope"));
        Vec round = turned();
        rope(round.data(), cosT.data(), sinT.data(), 2 * T, T, 0, ld, heads, hs, true);
        double worst = 0;
        for (std::size_t i = 0; i < rx.size(); ++i)
            worst = std::max(worst, std::abs(round[i] - rx[i]));
        QVERIFY(worst < 1e-14);
        QVERIFY(turned()[std::size_t(ld) * 0] == rx[0]);  // position 0 does not turn
        QVERIFY(turned()[std::size_t(ld) * 1] != rx[ld]); // position 1 does
    }

    // ---- float (each vector ISA) against double on the same inputs

    void floatLinearMatchesDouble()
    {
        for (auto shape : {std::array{5, 7, 6}, std::array{70, 33, 130}, std::array{64, 64, 192}}) {
            const auto c = linearCase(shape[0], shape[1], shape[2], 11);
            const Outputs d = runLinear<double>(c);
            forEachIsa([&] { QVERIFY(floatMatchesDouble(runLinear<float>(c), d, 2e-6, "linear")); });
        }
    }

    void floatLayerNormMatchesDouble()
    {
        for (auto shape : {std::array{4, 19}, std::array{70, 64}, std::array{33, 200}}) {
            const auto c = normCase(shape[0], shape[1], 21);
            const Outputs d = runNorm<double>(c);
            forEachIsa([&] { QVERIFY(floatMatchesDouble(runNorm<float>(c), d, 2e-6, "layerNorm")); });
        }
    }

    void floatGeluMatchesDouble()
    {
        auto c = geluCase(40000, 31);
        const Outputs d = runGelu<double>(c);
        forEachIsa([&] { QVERIFY(floatMatchesDouble(runGelu<float>(c), d, 1e-6, "gelu")); });
    }

    // Element by element, relative, against GELU written without cancellation (x·sigmoid(2u)) in
    // long double: the tails are tiny numbers that the float kernels must still get to a few ulp
    // (0.5·x·(1 + tanh u), as in the double reference, loses them below x ≈ −3 in float, and
    // below x ≈ −6 even in double). Allowed: 8 ulp, plus what rounding u to float costs through
    // exp(−2u): u = k·(x + a·x³) takes four roundings, each worth up to 2|u|·2⁻²⁴ of relative
    // error in exp(−2u) (inherent to evaluating u in float at all); for GELU' relative to the sum of
    // its two terms' magnitudes (they cancel where it crosses zero).
    void floatGeluRelativeAccuracy()
    {
        Vec x;
        for (double v = -9; v <= 9; v += 1.0 / 1024)
            x.push_back(v);
        const long double k = std::sqrt(2.0L / 3.14159265358979323846264338327950288L), a = 0.044715L;
        Vec gelu(x.size()), grad(x.size()), tol(x.size()), gradScale(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
            const long double v = x[i], u = k * (v + a * v * v * v), e = std::exp(-2 * u), s = 1 / (1 + e);
            tol[i] = static_cast<double>((8 + 8 * std::abs(u)) * 0x1p-24L);
            gelu[i] = static_cast<double>(v * s);
            const long double second = 2 * k * v * e * s * s * (1 + 3 * a * v * v);
            grad[i] = static_cast<double>(s + second);
            gradScale[i] = static_cast<double>(s + std::abs(second)); // GELU' is a difference near x = −0.75
        }
        GeluCase c{x, Vec(x.size(), 1.0), Vec(x.size(), 0.0)};
        forEachIsa([&] {
            const Outputs f = runGelu<float>(c);
            for (int which = 0; which < 2; ++which)
                for (std::size_t i = 0; i < x.size(); ++i) {
                    const double ref = which ? grad[i] : gelu[i], err = std::abs(f[which][i] - ref);
                    if (!(err <= tol[i] * (which ? gradScale[i] : std::abs(ref)))) {
                        qWarning("%s: %s(%g) = %.9g, exact %.12g", kernelIsa(), which ? "gelu'" : "gelu", x[i],
                                 f[which][i], ref);
                        QFAIL("relative error above 8 ulp + 8|u| ulp");
                    }
                }
        });
    }

    void floatAttentionMatchesDouble_data()
    {
        QTest::addColumn<int>("B");
        QTest::addColumn<int>("T");
        QTest::addColumn<int>("C");
        QTest::addColumn<int>("NH");
        QTest::addColumn<int>("KVH");
        QTest::newRow("B2 T7 C8 NH2") << 2 << 7 << 8 << 2 << 2;
        QTest::newRow("B1 T37 C36 NH3") << 1 << 37 << 36 << 3 << 3; // rows and columns not whole vectors
        QTest::newRow("B2 T128 C128 NH4") << 2 << 128 << 128 << 4 << 4; // the benchmark's small model
        QTest::newRow("B1 T64 C128 NH2") << 1 << 64 << 128 << 2 << 2;   // head size 64
        QTest::newRow("GQA B2 T37 C64 NH8 KVH2") << 2 << 37 << 64 << 8 << 2;
    }
    void floatAttentionMatchesDouble()
    {
        QFETCH(int, B);
        QFETCH(int, T);
        QFETCH(int, C);
        QFETCH(int, NH);
        QFETCH(int, KVH);
        const auto c = attentionCase(B, T, C, NH, 41, KVH);
        const Outputs d = runAttention<double>(c);
        forEachIsa([&] { QVERIFY(floatMatchesDouble(runAttention<float>(c), d, 2e-6, "attention")); });
    }

    void floatCrossEntropyMatchesDouble()
    {
        for (auto shape : {std::array{6, 37}, std::array{40, 256}, std::array{3, 5}}) {
            const auto c = crossEntropyCase(shape[0], shape[1], 51);
            const Outputs d = runCrossEntropy<double>(c);
            forEachIsa([&] { QVERIFY(floatMatchesDouble(runCrossEntropy<float>(c), d, 2e-6, "crossEntropy")); });
        }
    }

    void floatEncoderMatchesDouble()
    {
        const auto c = encoderCase(3, 17, 130, 7, 61);
        const Outputs d = runEncoder<double>(c);
        forEachIsa([&] { QVERIFY(floatMatchesDouble(runEncoder<float>(c), d, 1e-6, "encoder")); });
    }

    // ---- float results are reproducible, and those of the kernels other than the GEMMs do not
    // depend on the kernel thread count (a split GEMM is a set of smaller OpenBLAS calls, which
    // OpenBLAS may serve with other inner kernels)

    void floatReproducibleAndIndependentOfThreads()
    {
        const auto lin = linearCase(300, 64, 200, 12);
        const auto norm = normCase(300, 96, 22);
        const auto gelu = geluCase(100000, 32);
        const auto att = attentionCase(3, 50, 48, 3, 42);
        const auto ce = crossEntropyCase(300, 256, 52);
        const auto enc = encoderCase(4, 64, 160, 50, 62);
        auto nonGemm = [&] {
            Outputs r{runLinear<float>(lin)[3]}; // the bias gradient: a column sum, no GEMM
            for (const Outputs &o : {runNorm<float>(norm), runGelu<float>(gelu), runAttention<float>(att),
                                     runCrossEntropy<float>(ce), runEncoder<float>(enc)})
                r.insert(r.end(), o.begin(), o.end());
            return r;
        };
        forEachIsa([&] {
            setKernelThreads(1);
            QCOMPARE(kernelThreads(), 1);
            const Outputs one = nonGemm();
            setKernelThreads(3);
            QCOMPARE(kernelThreads(), 3);
            const Outputs three = nonGemm();
            QVERIFY(bitIdentical(one, three, "1 vs 3 threads"));
            QVERIFY(bitIdentical(three, nonGemm(), "repeated run"));
            const Outputs linear = runLinear<float>(lin);
            QVERIFY(bitIdentical(linear, runLinear<float>(lin), "repeated linear, 3 threads"));
            setKernelThreads(1);
            QVERIFY(floatMatchesDouble(linear, runLinear<double>(lin), 2e-6, "linear, 3 threads"));
        });
    }

    // A split GEMM covers every row and column whatever the extent: odd sizes (a vocabulary of
    // 97 split over 2..16 threads once lost its last row of the weight gradient).
    void splitGemmCoversEverything_data()
    {
        QTest::addColumn<int>("BT");
        QTest::addColumn<int>("C");
        QTest::addColumn<int>("OC");
        QTest::newRow("vocab 97") << 144 << 96 << 97;
        QTest::newRow("odd everywhere") << 203 << 67 << 131;
        QTest::newRow("just over 16 parts") << 161 << 48 << 273;
    }
    void splitGemmCoversEverything()
    {
        QFETCH(int, BT);
        QFETCH(int, C);
        QFETCH(int, OC);
        const auto lin = linearCase(BT, C, OC, 14);
        const Outputs reference = runLinear<double>(lin);
        for (int threads : {2, 3, 7, 16}) {
            setKernelThreads(threads);
            const Outputs split = runLinear<float>(lin);
            setKernelThreads(1);
            QVERIFY2(floatMatchesDouble(split, reference, 2e-6, "split linear"),
                     qPrintable(QStringLiteral("%1 threads").arg(threads)));
        }
    }

    // Two threads calling the kernels at once: one gets the pool, the other runs its chunks
    // inline; both get the single-caller results.
    void concurrentCallers()
    {
        const auto norm = normCase(300, 96, 23);
        const auto att = attentionCase(3, 50, 48, 3, 43);
        const auto lin = linearCase(200, 64, 160, 13);
        setKernelThreads(2);
        const Outputs refNorm = runNorm<float>(norm), refAtt = runAttention<float>(att), refLin = runLinear<float>(lin);
        bool ok[2] = {true, true};
        auto work = [&](int who) {
            for (int i = 0; i < 20; ++i) {
                ok[who] = ok[who] && bitIdentical(runNorm<float>(norm), refNorm, "concurrent layerNorm");
                ok[who] = ok[who] && bitIdentical(runAttention<float>(att), refAtt, "concurrent attention");
                ok[who] = ok[who] && floatMatchesDouble(runLinear<float>(lin), refLin, 1e-6, "concurrent linear");
            }
        };
        std::thread other(work, 1);
        work(0);
        other.join();
        QVERIFY(ok[0]);
        QVERIFY(ok[1]);
    }
};

QTEST_GUILESS_MAIN(TstCpuBackward)
#include "tst_cpu_backward.moc"
