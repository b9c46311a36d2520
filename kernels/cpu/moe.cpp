// Mixture-of-experts kernels: the router's softmax and the row movements of dispatch and combine
// (see ops.h). Plain loops: their cost is linear in the rows, next to the experts' GEMMs.
#include "kernels/cpu/ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace trellis::kernels::cpu {

template <typename T>
void softmaxRows(T *probs, const T *logits, int N, int E)
{
    for (int t = 0; t < N; ++t) {
        const T *in = logits + static_cast<std::int64_t>(t) * E;
        T *out = probs + static_cast<std::int64_t>(t) * E;
        const T max = *std::max_element(in, in + E);
        T sum = 0;
        for (int e = 0; e < E; ++e) {
            out[e] = std::exp(in[e] - max);
            sum += out[e];
        }
        for (int e = 0; e < E; ++e)
            out[e] /= sum;
    }
}

template <typename T>
void softmaxRowsBackward(T *dLogits, const T *probs, const T *dProbs, int N, int E)
{
    for (int t = 0; t < N; ++t) {
        const std::int64_t at = static_cast<std::int64_t>(t) * E;
        T dot = 0;
        for (int e = 0; e < E; ++e)
            dot += probs[at + e] * dProbs[at + e];
        for (int e = 0; e < E; ++e)
            dLogits[at + e] = probs[at + e] * (dProbs[at + e] - dot);
    }
}

template <typename T>
void selectRows(T *dst, const T *src, const std::int32_t *rowOf, int n, int C)
{
    for (int i = 0; i < n; ++i) {
        T *out = dst + static_cast<std::int64_t>(i) * C;
        if (rowOf[i] < 0)
            std::fill(out, out + C, T(0));
        else
            std::copy_n(src + static_cast<std::int64_t>(rowOf[i]) * C, C, out);
    }
}

template <typename T>
void combineRows(T *out, const T *rows, const std::int32_t *slot, const T *gates, int N, int k, int C)
{
    for (int t = 0; t < N; ++t) {
        T *o = out + static_cast<std::int64_t>(t) * C;
        std::fill(o, o + C, T(0));
        for (int j = 0; j < k; ++j) {
            const std::int32_t s = slot[t * k + j];
            if (s < 0)
                continue;
            const T g = gates[t * k + j];
            const T *r = rows + static_cast<std::int64_t>(s) * C;
            for (int c = 0; c < C; ++c)
                o[c] += g * r[c];
        }
    }
}

template <typename T>
void combineRowsBackward(T *dRows, T *dGates, const T *dOut, const T *rows, const std::int32_t *slot, const T *gates,
                         int N, int k, int C)
{
    for (int t = 0; t < N; ++t) {
        const T *d = dOut + static_cast<std::int64_t>(t) * C;
        for (int j = 0; j < k; ++j) {
            const std::int32_t s = slot[t * k + j];
            if (s < 0) {
                dGates[t * k + j] = T(0);
                continue;
            }
            const T g = gates[t * k + j];
            const T *r = rows + static_cast<std::int64_t>(s) * C;
            T *dr = dRows + static_cast<std::int64_t>(s) * C;
            T dot = 0;
            for (int c = 0; c < C; ++c) {
                dr[c] = g * d[c];
                dot += d[c] * r[c];
            }
            dGates[t * k + j] = dot;
        }
    }
}

template <typename T>
void addSelectedRows(T *dx, const T *rows, const std::int32_t *slot, int N, int k, int C)
{
    for (int t = 0; t < N; ++t) {
        T *o = dx + static_cast<std::int64_t>(t) * C;
        for (int j = 0; j < k; ++j) {
            const std::int32_t s = slot[t * k + j];
            if (s < 0)
                continue;
            const T *r = rows + static_cast<std::int64_t>(s) * C;
            for (int c = 0; c < C; ++c)
                o[c] += r[c];
        }
    }
}

#define TRELLIS_MOE_KERNELS(T)                                                                                       \
    template void softmaxRows<T>(T *, const T *, int, int);                                                          \
    template void softmaxRowsBackward<T>(T *, const T *, const T *, int, int);                                       \
    template void selectRows<T>(T *, const T *, const std::int32_t *, int, int);                                     \
    template void combineRows<T>(T *, const T *, const std::int32_t *, const T *, int, int, int);                    \
    template void combineRowsBackward<T>(T *, T *, const T *, const T *, const std::int32_t *, const T *, int, int, int); \
    template void addSelectedRows<T>(T *, const T *, const std::int32_t *, int, int, int);
TRELLIS_MOE_KERNELS(float)
TRELLIS_MOE_KERNELS(double)
#undef TRELLIS_MOE_KERNELS

} // namespace trellis::kernels::cpu
