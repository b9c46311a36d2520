// The cases and checks the CPU kernel tests share (tst_cpu_backward, tst_cpu_finite_differences):
// random inputs, each kernel's forward and backward run in float or double, finite differences,
// float-against-double and bit-identity comparisons, and the loop over this CPU's vector ISAs.
#pragma once

#include "kernels/cpu/cpu_ops.h"

#include <QTest>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace trellis::test {

// The kernels under test are called as their own namespace calls them.
using namespace trellis::kernels::cpu;

using Vec = std::vector<double>;
using Outputs = std::vector<Vec>; // every output array of one run, forward and backward

inline Vec randomVector(std::size_t n, unsigned seed, double lo = -1, double hi = 1)
{
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(lo, hi);
    Vec v(n);
    for (auto &x : v)
        x = dist(gen);
    return v;
}

inline std::vector<std::int32_t> randomTokens(std::size_t n, int V, unsigned seed)
{
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> dist(0, V - 1);
    std::vector<std::int32_t> v(n);
    for (auto &x : v)
        x = dist(gen);
    return v;
}

// Values exactly representable in float, so the float and double runs see the same inputs.
inline Vec floatRounded(Vec v)
{
    for (auto &x : v)
        x = static_cast<float>(x);
    return v;
}

template <typename T>
std::vector<T> as(const Vec &v)
{
    return std::vector<T>(v.begin(), v.end());
}

template <typename T>
Vec toDouble(const std::vector<T> &v)
{
    return Vec(v.begin(), v.end());
}

inline double dot(const Vec &a, const Vec &b)
{
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        s += a[i] * b[i];
    return s;
}

// Central differences of objective() in every element of x, compared with the analytic gradient.
inline bool matchesFiniteDifferences(Vec &x, const Vec &analytic, const std::function<double()> &objective,
                              const std::string &what, double tol = 1e-7)
{
    const double h = 1e-5;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double saved = x[i];
        x[i] = saved + h;
        const double up = objective();
        x[i] = saved - h;
        const double down = objective();
        x[i] = saved;
        const double numeric = (up - down) / (2 * h);
        if (std::abs(numeric - analytic[i]) > tol * std::max(1.0, std::abs(numeric))) {
            qWarning("%s[%zu]: analytic %.12g, finite differences %.12g", what.c_str(), i, analytic[i], numeric);
            return false;
        }
    }
    return true;
}

// |float − double| ≤ tol·max|double| for every element of every output array.
inline bool floatMatchesDouble(const Outputs &f, const Outputs &d, double tol, const char *what)
{
    for (std::size_t a = 0; a < d.size(); ++a) {
        double scale = 1e-30;
        for (double x : d[a])
            scale = std::max(scale, std::abs(x));
        for (std::size_t i = 0; i < d[a].size(); ++i)
            if (!(std::abs(f[a][i] - d[a][i]) <= tol * scale)) {
                qWarning("%s (%s) output %zu [%zu]: float %.9g, double %.9g (scale %.3g)", what, kernelIsa(), a, i,
                         f[a][i], d[a][i], scale);
                return false;
            }
    }
    return true;
}

inline bool bitIdentical(const Outputs &a, const Outputs &b, const char *what)
{
    for (std::size_t k = 0; k < a.size(); ++k)
        for (std::size_t i = 0; i < a[k].size(); ++i)
            if (std::memcmp(&a[k][i], &b[k][i], sizeof(double)) != 0) {
                qWarning("%s (%s) output %zu [%zu]: %.9g vs %.9g", what, kernelIsa(), k, i, a[k][i], b[k][i]);
                return false;
            }
    return true;
}

// ---- One run of each kernel pair at scalar T: forward outputs, then the backward's. Gradient
// outputs start from `prior` (the accumulate contract) unless a kernel overwrites them.

struct LinearCase {
    int BT, C, OC;
    Vec in, weight, bias, dOut, prior;
};

template <typename T>
Outputs runLinear(const LinearCase &c)
{
    std::vector<T> out(std::size_t(c.BT) * c.OC);
    const auto in = as<T>(c.in), w = as<T>(c.weight), b = as<T>(c.bias), dOut = as<T>(c.dOut);
    linearForward(out.data(), in.data(), w.data(), b.data(), c.BT, c.C, c.OC);
    auto dIn = as<T>(Vec(c.prior.begin(), c.prior.begin() + long(in.size())));
    auto dW = as<T>(Vec(c.prior.begin(), c.prior.begin() + long(w.size())));
    auto dB = as<T>(Vec(c.prior.begin(), c.prior.begin() + long(b.size())));
    linearBackward(dIn.data(), dW.data(), dB.data(), dOut.data(), in.data(), w.data(), c.BT, c.C, c.OC);
    return {toDouble(out), toDouble(dIn), toDouble(dW), toDouble(dB)};
}

struct NormCase {
    int N, C;
    Vec in, gamma, beta, dOut, prior;
};

template <typename T>
Outputs runNorm(const NormCase &c)
{
    std::vector<T> out(c.in.size()), mean(c.N), rstd(c.N);
    const auto in = as<T>(c.in), g = as<T>(c.gamma), b = as<T>(c.beta), dOut = as<T>(c.dOut);
    layerNormForward(out.data(), mean.data(), rstd.data(), in.data(), g.data(), b.data(), c.N, c.C);
    auto dIn = as<T>(Vec(c.prior.begin(), c.prior.begin() + long(in.size())));
    auto dG = as<T>(Vec(c.prior.begin(), c.prior.begin() + c.C));
    auto dB = as<T>(Vec(c.prior.begin() + c.C, c.prior.begin() + 2 * c.C));
    layerNormBackward(dIn.data(), dG.data(), dB.data(), dOut.data(), in.data(), g.data(), mean.data(), rstd.data(),
                      c.N, c.C);
    return {toDouble(out), toDouble(mean), toDouble(rstd), toDouble(dIn), toDouble(dG), toDouble(dB)};
}

struct GeluCase {
    Vec in, dOut, prior;
};

template <typename T>
Outputs runGelu(const GeluCase &c)
{
    const auto n = static_cast<std::int64_t>(c.in.size());
    std::vector<T> out(c.in.size());
    const auto in = as<T>(c.in), dOut = as<T>(c.dOut);
    geluForward(out.data(), in.data(), n);
    auto dIn = as<T>(c.prior);
    geluBackward(dIn.data(), in.data(), dOut.data(), n);
    return {toDouble(out), toDouble(dIn)};
}

struct AttentionCase {
    int B, T, C, NH, KVH;
    Vec qkv, dOut, prior;
};

template <typename T>
Outputs runAttention(const AttentionCase &c)
{
    std::vector<T> out(std::size_t(c.B) * c.T * c.C), att(std::size_t(c.B) * c.NH * c.T * c.T);
    std::vector<T> scratch(std::size_t(c.T) * c.T);
    const auto qkv = as<T>(c.qkv), dOut = as<T>(c.dOut);
    attentionForward(out.data(), att.data(), qkv.data(), c.B, c.T, c.C, c.NH, c.KVH);
    auto dqkv = as<T>(c.prior);
    attentionBackward(dqkv.data(), scratch.data(), dOut.data(), qkv.data(), att.data(), c.B, c.T, c.C, c.NH, c.KVH);
    return {toDouble(out), toDouble(att), toDouble(dqkv)};
}

struct CrossEntropyCase {
    int BT, V;
    double scale;
    Vec logits;
    std::vector<std::int32_t> targets;
};

template <typename T>
Outputs runCrossEntropy(const CrossEntropyCase &c)
{
    std::vector<T> losses(c.BT), probs(c.logits.size()), dLogits(c.logits.size(), T(7)); // overwritten
    const auto logits = as<T>(c.logits);
    crossEntropyForward(losses.data(), probs.data(), logits.data(), c.targets.data(), c.BT, c.V);
    crossEntropyBackward(dLogits.data(), probs.data(), c.targets.data(), static_cast<T>(c.scale), c.BT, c.V);
    return {toDouble(losses), toDouble(probs), toDouble(dLogits)};
}

struct EncoderCase {
    int B, T, C, V;
    std::vector<std::int32_t> tokens;
    Vec wte, wpe, dOut, prior;
};

template <typename T>
Outputs runEncoder(const EncoderCase &c)
{
    std::vector<T> out(std::size_t(c.B) * c.T * c.C);
    const auto wte = as<T>(c.wte), wpe = as<T>(c.wpe), dOut = as<T>(c.dOut);
    encoderForward(out.data(), c.tokens.data(), wte.data(), wpe.data(), c.B, c.T, c.C, c.V);
    auto dwte = as<T>(Vec(c.prior.begin(), c.prior.begin() + long(wte.size())));
    auto dwpe = as<T>(Vec(c.prior.begin(), c.prior.begin() + long(wpe.size())));
    encoderBackward(dwte.data(), dwpe.data(), dOut.data(), c.tokens.data(), c.B, c.T, c.C, c.V);
    return {toDouble(out), toDouble(dwte), toDouble(dwpe)};
}

// Gradient = backward output − prior.
inline Vec minus(const Vec &a, const Vec &prior)
{
    Vec r(a.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        r[i] = a[i] - prior[i];
    return r;
}

inline LinearCase linearCase(int BT, int C, int OC, unsigned seed)
{
    const std::size_t big = std::size_t(std::max(BT, OC)) * std::max(C, OC);
    return {BT,
            C,
            OC,
            floatRounded(randomVector(std::size_t(BT) * C, seed)),
            floatRounded(randomVector(std::size_t(OC) * C, seed + 1)),
            floatRounded(randomVector(OC, seed + 2)),
            floatRounded(randomVector(std::size_t(BT) * OC, seed + 3)),
            floatRounded(randomVector(big, seed + 4))};
}

inline NormCase normCase(int N, int C, unsigned seed)
{
    // Rows with an offset and a spread unlike 0 and 1, so mean and rstd matter.
    Vec in = randomVector(std::size_t(N) * C, seed, -2, 3);
    return {N,
            C,
            floatRounded(in),
            floatRounded(randomVector(C, seed + 1, 0.5, 1.5)),
            floatRounded(randomVector(C, seed + 2)),
            floatRounded(randomVector(std::size_t(N) * C, seed + 3)),
            floatRounded(randomVector(std::size_t(N) * C + 2 * C, seed + 4))};
}

inline GeluCase geluCase(std::size_t n, unsigned seed)
{
    return {floatRounded(randomVector(n, seed, -6, 6)), floatRounded(randomVector(n, seed + 1)),
            floatRounded(randomVector(n, seed + 2))};
}

inline AttentionCase attentionCase(int B, int T, int C, int NH, unsigned seed, int KVH = 0)
{
    // q·k scores of a few units: the softmax is neither uniform nor one-hot. KVH < NH: grouped-query.
    if (KVH == 0)
        KVH = NH;
    const std::size_t width = std::size_t(C) + 2 * std::size_t(KVH) * (C / NH);
    return {B,
            T,
            C,
            NH,
            KVH,
            floatRounded(randomVector(std::size_t(B) * T * width, seed, -1.5, 1.5)),
            floatRounded(randomVector(std::size_t(B) * T * C, seed + 1)),
            floatRounded(randomVector(std::size_t(B) * T * width, seed + 2))};
}

inline CrossEntropyCase crossEntropyCase(int BT, int V, unsigned seed)
{
    return {BT, V, 1.0 / BT, floatRounded(randomVector(std::size_t(BT) * V, seed, -4, 4)), randomTokens(BT, V, seed + 1)};
}

inline EncoderCase encoderCase(int B, int T, int C, int V, unsigned seed)
{
    const std::size_t big = std::size_t(std::max(V, T)) * C;
    return {B,
            T,
            C,
            V,
            randomTokens(std::size_t(B) * T, V, seed),
            floatRounded(randomVector(std::size_t(V) * C, seed + 1)),
            floatRounded(randomVector(std::size_t(T) * C, seed + 2)),
            floatRounded(randomVector(std::size_t(B) * T * C, seed + 3)),
            floatRounded(randomVector(big, seed + 4))};
}

inline std::vector<const char *> isas()
{
    std::vector<const char *> r;
    const std::string original = kernelIsa();
    for (const char *name : {"sse2", "avx2", "avx512"})
        if (setKernelIsa(name))
            r.push_back(name);
    setKernelIsa(original.c_str());
    return r;
}

// Runs f for every ISA this CPU has, then restores the original one.
template <typename F>
void forEachIsa(F &&f)
{
    const std::string original = kernelIsa();
    for (const char *name : isas()) {
        QVERIFY(setKernelIsa(name));
        f();
    }
    setKernelIsa(original.c_str());
}

} // namespace trellis::test
