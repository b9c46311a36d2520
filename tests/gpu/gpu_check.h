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

namespace trellis::gpucheck {

inline int &failures()
{
    static int n = 0;
    return n;
}

// max |a − b| / max(max |ref|, floor): relative to the tensor's scale.
inline double relativeError(const std::vector<float> &got, const std::vector<float> &ref, double floor = 1e-6)
{
    if (got.size() != ref.size())
        return INFINITY;
    double diff = 0.0, scale = floor;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        const double d = std::abs(static_cast<double>(got[i]) - ref[i]);
        if (!(d <= diff)) // NaN counts as a failure
            diff = std::isnan(d) ? INFINITY : d;
        scale = std::max(scale, std::abs(static_cast<double>(ref[i])));
    }
    return diff / scale;
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

} // namespace trellis::gpucheck
