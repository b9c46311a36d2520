// Mixture-of-experts kernels: the router's softmax and the row movements of dispatch and combine
// (see ops.h). Plain loops: their cost is linear in the rows, next to the experts' GEMMs.
#include "kernels/cpu/cpu_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

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

// A row summed in acc_t<T> before its one store (for float the same additions in the same order).
template <typename A>
A *rowAccumulator(int C)
{
    thread_local std::vector<A> row;
    if (row.size() < static_cast<std::size_t>(C))
        row.resize(static_cast<std::size_t>(C));
    return row.data();
}

template <typename T>
void combineRows(T *out, const T *rows, const std::int32_t *slot, const acc_t<T> *gates, int N, int k, int C)
{
    using A = acc_t<T>;
    A *o = rowAccumulator<A>(C);
    for (int t = 0; t < N; ++t) {
        std::fill(o, o + C, A(0));
        for (int j = 0; j < k; ++j) {
            const std::int32_t s = slot[t * k + j];
            if (s < 0)
                continue;
            const A g = gates[t * k + j];
            const T *r = rows + static_cast<std::int64_t>(s) * C;
            for (int c = 0; c < C; ++c)
                o[c] += g * toAcc(r[c]);
        }
        T *dst = out + static_cast<std::int64_t>(t) * C;
        for (int c = 0; c < C; ++c)
            dst[c] = fromAcc<T>(o[c]);
    }
}

template <typename T>
void combineRowsBackward(T *dRows, acc_t<T> *dGates, const T *dOut, const T *rows, const std::int32_t *slot,
                         const acc_t<T> *gates, int N, int k, int C)
{
    using A = acc_t<T>;
    for (int t = 0; t < N; ++t) {
        const T *d = dOut + static_cast<std::int64_t>(t) * C;
        for (int j = 0; j < k; ++j) {
            const std::int32_t s = slot[t * k + j];
            if (s < 0) {
                dGates[t * k + j] = A(0);
                continue;
            }
            const A g = gates[t * k + j];
            const T *r = rows + static_cast<std::int64_t>(s) * C;
            T *dr = dRows + static_cast<std::int64_t>(s) * C;
            A dot = 0;
            for (int c = 0; c < C; ++c) {
                dr[c] = fromAcc<T>(g * toAcc(d[c]));
                dot += toAcc(d[c]) * toAcc(r[c]);
            }
            dGates[t * k + j] = dot;
        }
    }
}

template <typename T>
void addSelectedRows(T *dx, const T *rows, const std::int32_t *slot, int N, int k, int C)
{
    using A = acc_t<T>;
    A *o = rowAccumulator<A>(C);
    for (int t = 0; t < N; ++t) {
        T *dst = dx + static_cast<std::int64_t>(t) * C;
        for (int c = 0; c < C; ++c)
            o[c] = toAcc(dst[c]);
        for (int j = 0; j < k; ++j) {
            const std::int32_t s = slot[t * k + j];
            if (s < 0)
                continue;
            const T *r = rows + static_cast<std::int64_t>(s) * C;
            for (int c = 0; c < C; ++c)
                o[c] += toAcc(r[c]);
        }
        for (int c = 0; c < C; ++c)
            dst[c] = fromAcc<T>(o[c]);
    }
}

// The router's softmax is fp32 (or double) only; the row movements take every element type.
#define TRELLIS_MOE_ROWS(T)                                                                                          \
    template void selectRows<T>(T *, const T *, const std::int32_t *, int, int);                                     \
    template void combineRows<T>(T *, const T *, const std::int32_t *, const acc_t<T> *, int, int, int);             \
    template void combineRowsBackward<T>(T *, acc_t<T> *, const T *, const T *, const std::int32_t *, const acc_t<T> *, \
                                         int, int, int);                                                             \
    template void addSelectedRows<T>(T *, const T *, const std::int32_t *, int, int, int);
#define TRELLIS_MOE_KERNELS(T)                                                                                       \
    template void softmaxRows<T>(T *, const T *, int, int);                                                          \
    template void softmaxRowsBackward<T>(T *, const T *, const T *, int, int);                                       \
    TRELLIS_MOE_ROWS(T)
TRELLIS_MOE_KERNELS(float)
TRELLIS_MOE_KERNELS(double)
TRELLIS_MOE_ROWS(bf16)
TRELLIS_MOE_ROWS(f16)
#undef TRELLIS_MOE_ROWS
#undef TRELLIS_MOE_KERNELS

} // namespace trellis::kernels::cpu
