// A small harness for the GPU tests (plain executables: the machine lent with a GPU has no Qt).
// CHECK_CLOSE compares a device result with its CPU reference; a test exits 77 (ctest: skipped)
// with a message when this machine has no GPU, 1 when a check failed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace trellis::test {

inline int &failures()
{
    static int n = 0;
    return n;
}

// Element by element: max over i of |got_i − ref_i| / (|ref_i| + rms(ref) + floor). Each element
// is held to its own size, with the tensor's root mean square as the floor for elements near zero
// (where an fp32 sum in another order differs by its terms' scale, not its own), so an error in a
// small element counts — dividing by the tensor's largest value would hide it. NaN fails.
inline double relativeError(const std::vector<float> &got, const std::vector<float> &ref, double floor = 1e-12)
{
    if (got.size() != ref.size())
        return INFINITY;
    double squares = 0.0;
    for (float r : ref)
        squares += static_cast<double>(r) * r;
    const double rms = ref.empty() ? 0.0 : std::sqrt(squares / static_cast<double>(ref.size()));
    double worst = 0.0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double d = std::abs(static_cast<double>(got[i]) - ref[i]);
        const double e = d / (std::abs(static_cast<double>(ref[i])) + rms + floor);
        if (!(e <= worst)) // NaN counts as a failure
            worst = std::isnan(e) ? INFINITY : e;
    }
    return worst;
}

// The metric itself, on the CPU (run before any GPU is looked for). A softmax row (one 1.0, the
// rest 1e-4): an element off by 100% of its own size must count — divided by the tensor's largest
// value it read 1e-4 and passed the attention bound; now 3e-3. NaN fails; equal tensors give 0.
// ‖got − ref‖₂ / ‖ref‖₂ (a tensor-wide error, for results where single elements may legitimately
// move far: parameters after AdamW steps, bf16 gradients); ∞ for a size mismatch or a NaN.
inline double normError(const std::vector<float> &got, const std::vector<float> &ref)
{
    if (got.size() != ref.size())
        return INFINITY;
    double d = 0.0, r = 0.0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double e = static_cast<double>(got[i]) - ref[i];
        d += e * e;
        r += static_cast<double>(ref[i]) * ref[i];
    }
    const double e = std::sqrt(d) / (std::sqrt(r) + 1e-30);
    return std::isnan(e) ? INFINITY : e;
}

// The largest |got − ref| (∞ for a size mismatch or a NaN).
inline double maxAbsError(const std::vector<float> &got, const std::vector<float> &ref)
{
    if (got.size() != ref.size())
        return INFINITY;
    double worst = 0.0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double e = std::abs(static_cast<double>(got[i]) - ref[i]);
        if (!(e <= worst))
            worst = e;
    }
    return worst;
}

inline bool relativeErrorSelfCheck()
{
    std::vector<float> ref(1000, 1e-4f);
    ref[0] = 1.0f;
    std::vector<float> got = ref;
    got[1] = 2e-4f;
    std::vector<float> withNan = ref;
    withNan[5] = NAN;
    return relativeError(got, ref) > 1e-3 && relativeError(ref, ref) == 0.0 && std::isinf(relativeError(withNan, ref));
}

inline void check(bool ok, const std::string &what, double value, double bound)
{
    std::printf("%-4s %-58s %.3g (bound %.1g)\n", ok ? "PASS" : "FAIL", what.c_str(), value, bound);
    if (!ok)
        ++failures();
}

inline void checkClose(const std::string &what, const std::vector<float> &got, const std::vector<float> &ref,
                       double bound)
{
    const double e = relativeError(got, ref);
    check(e <= bound, what, e, bound);
}

inline std::vector<float> randomVector(std::size_t n, std::mt19937 &rng, float lo = -1.0f, float hi = 1.0f)
{
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (auto &x : v)
        x = d(rng);
    return v;
}

inline int finish(const char *name)
{
    if (failures() == 0) {
        std::printf("%s: all checks passed\n", name);
        return 0;
    }
    std::printf("%s: %d check(s) failed\n", name, failures());
    return 1;
}

constexpr int kSkip = 77;

} // namespace trellis::test
