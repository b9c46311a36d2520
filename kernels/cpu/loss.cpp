// Softmax cross-entropy forward and backward over the vocabulary; see ops.h. Float rows go
// through the vectorised softmax (simd_impl.h) in chunks of rows over the kernel threads.
#include "kernels/cpu/cpu_ops.h"

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace trellis::kernels::cpu {

template <typename T>
void crossEntropyForward(acc_t<T> *losses, acc_t<T> *probs, const T *logits, const std::int32_t *targets, int BT, int V)
{
    if constexpr (std::is_same_v<T, float>) {
        const auto &k = simd::active();
        const int rows = std::max(1, 16384 / std::max(1, V));
        parallelRange(BT, rows, [&](std::int64_t r0, std::int64_t r1) {
            k.crossEntropyForward(losses + r0, probs + r0 * V, logits + r0 * V, targets + r0, static_cast<int>(r1 - r0),
                                  V);
        });
    } else {
        for (int i = 0; i < BT; ++i) {
            const T *z = logits + static_cast<std::int64_t>(i) * V;
            T *p = probs + static_cast<std::int64_t>(i) * V;
            T maxv = z[0];
            for (int j = 1; j < V; ++j)
                maxv = std::max(maxv, z[j]);
            T sum = 0;
            for (int j = 0; j < V; ++j) {
                p[j] = std::exp(z[j] - maxv);
                sum += p[j];
            }
            const T inv = T(1) / sum;
            for (int j = 0; j < V; ++j)
                p[j] *= inv;
            losses[i] = -(z[targets[i]] - maxv - std::log(sum));
        }
    }
}

template <typename T>
void crossEntropyBackward(T *dLogits, const acc_t<T> *probs, const std::int32_t *targets, acc_t<T> scale, int BT, int V)
{
    // A scaled copy: simple enough for the compiler to vectorise at the baseline ISA.
    const int rows = std::max(1, 16384 / std::max(1, V));
    auto run = [&](std::int64_t r0, std::int64_t r1) {
        for (std::int64_t i = r0; i < r1; ++i) {
            const T *p = probs + i * V;
            T *d = dLogits + i * V;
            for (int j = 0; j < V; ++j)
                d[j] = p[j] * scale;
            d[targets[i]] -= scale;
        }
    };
    if constexpr (std::is_same_v<T, float>)
        parallelRange(BT, rows, run);
    else
        run(0, BT);
}

template void crossEntropyForward<float>(float *, float *, const float *, const std::int32_t *, int, int);
template void crossEntropyForward<double>(double *, double *, const double *, const std::int32_t *, int, int);
template void crossEntropyBackward<float>(float *, const float *, const std::int32_t *, float, int, int);
template void crossEntropyBackward<double>(double *, const double *, const std::int32_t *, double, int, int);

} // namespace trellis::kernels::cpu
