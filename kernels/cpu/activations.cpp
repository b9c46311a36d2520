// GELU (tanh approximation) forward and backward; see ops.h. Float: one vectorised pass with a
// polynomial exp (GELU(x) = x·sigmoid(2u), simd_impl.h), in chunks over the kernel threads.
// Double: the reference formulas with std::tanh, for the gradient checks.
#include "kernels/cpu/cpu_ops.h"

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd.h"

#include <cmath>
#include <numbers>
#include <type_traits>

namespace trellis::kernels::cpu {
namespace {
constexpr std::int64_t kGrain = 16384;
} // namespace

template <typename T>
void geluForward(T *out, const T *in, std::int64_t n)
{
    if constexpr (std::is_same_v<T, float>) {
        const auto &k = simd::active();
        parallelRange(n, kGrain, [&](std::int64_t i0, std::int64_t i1) { k.geluForward(out + i0, in + i0, i1 - i0); });
    } else {
        const T c = std::sqrt(T(2) / std::numbers::pi_v<T>);
        for (std::int64_t i = 0; i < n; ++i) {
            const T x = in[i];
            out[i] = T(0.5) * x * (T(1) + std::tanh(c * (x + T(0.044715) * x * x * x)));
        }
    }
}

template <typename T>
void geluBackward(T *dIn, const T *in, const T *dOut, std::int64_t n)
{
    if constexpr (std::is_same_v<T, float>) {
        const auto &k = simd::active();
        parallelRange(n, kGrain,
                      [&](std::int64_t i0, std::int64_t i1) { k.geluBackward(dIn + i0, in + i0, dOut + i0, i1 - i0); });
    } else {
        const T c = std::sqrt(T(2) / std::numbers::pi_v<T>);
        for (std::int64_t i = 0; i < n; ++i) {
            const T x = in[i];
            const T u = c * (x + T(0.044715) * x * x * x);
            const T t = std::tanh(u);
            const T sech2 = T(1) - t * t;
            const T local = T(0.5) * (T(1) + t) + T(0.5) * x * sech2 * c * (T(1) + T(3) * T(0.044715) * x * x);
            dIn[i] += local * dOut[i];
        }
    }
}

template void geluForward<float>(float *, const float *, std::int64_t);
template void geluForward<double>(double *, const double *, std::int64_t);
template void geluBackward<float>(float *, const float *, const float *, std::int64_t);
template void geluBackward<double>(double *, const double *, const double *, std::int64_t);

} // namespace trellis::kernels::cpu
