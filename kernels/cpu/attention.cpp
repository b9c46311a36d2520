// Causal multi-head (and grouped-query) attention forward and backward; see ops.h. Float: one fused kernel per
// (batch, head) pair (simd_impl.h) that computes only the blocks on and below the diagonal,
// softmaxes each block of rows while it is in L1 and multiplies it by V straight away; the pairs
// are spread over the kernel threads. Double: the reference, two OpenBLAS GEMMs per pair over
// strided views of qkv and a scalar softmax.
#include "kernels/cpu/cpu_ops.h"

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

namespace trellis::kernels::cpu {
namespace {

// Per-thread scratch for the float kernels (grown, never shrunk).
float *scratch(std::size_t n)
{
    thread_local std::vector<float> buffer;
    if (buffer.size() < n)
        buffer.resize(n);
    return buffer.data();
}

} // namespace

template <typename T>
void attentionForward(T *out, T *att, const T *qkv, int B, int T_, int C, int NH, int KVH)
{
    const int hs = C / NH, group = NH / KVH;
    const T scale = T(1) / std::sqrt(static_cast<T>(hs));
    // qkv rows: q (NH heads), k (KVH heads), v (KVH heads); q head h reads kv head h / group.
    const int ld = C + 2 * KVH * hs, kAt = C, vAt = C + KVH * hs;
    if constexpr (std::is_same_v<T, float>) {
        const auto &k = simd::active();
        parallelFor(B * NH, [&](int item) {
            const int b = item / NH, h = item % NH, g = h / group;
            const float *base = qkv + static_cast<std::int64_t>(b) * T_ * ld;
            float *p = att + static_cast<std::int64_t>(item) * T_ * T_;
            k.attentionForward(out + static_cast<std::int64_t>(b) * T_ * C + h * hs, C, p, base + h * hs,
                               base + kAt + g * hs, base + vAt + g * hs, ld, T_, hs, scale,
                               scratch(static_cast<std::size_t>(hs) * T_));
        });
        return;
    }
    for (int b = 0; b < B; ++b) {
        const T *base = qkv + static_cast<std::int64_t>(b) * T_ * ld;
        for (int h = 0; h < NH; ++h) {
            const int g = h / group;
            const T *q = base + h * hs;
            const T *k = base + kAt + g * hs;
            const T *v = base + vAt + g * hs;
            T *p = att + (static_cast<std::int64_t>(b) * NH + h) * T_ * T_;
            gemm<T>(false, true, T_, T_, hs, scale, q, ld, k, ld, T(0), p, T_);
            for (int t = 0; t < T_; ++t) {
                T *row = p + static_cast<std::int64_t>(t) * T_;
                T maxv = -std::numeric_limits<T>::infinity();
                for (int u = 0; u <= t; ++u)
                    maxv = std::max(maxv, row[u]);
                T sum = 0;
                for (int u = 0; u <= t; ++u) {
                    row[u] = std::exp(row[u] - maxv);
                    sum += row[u];
                }
                const T inv = T(1) / sum;
                for (int u = 0; u <= t; ++u)
                    row[u] *= inv;
                for (int u = t + 1; u < T_; ++u)
                    row[u] = 0; // causal mask
            }
            gemm<T>(false, false, T_, hs, T_, T(1), p, T_, v, ld, T(0),
                    out + static_cast<std::int64_t>(b) * T_ * C + h * hs, C);
        }
    }
}

template <typename T>
void attentionBackward(T *dqkv, acc_t<T> *scratchTT, const T *dOut, const T *qkv, const T *att, int B, int T_, int C, int NH,
                       int KVH)
{
    const int hs = C / NH, group = NH / KVH;
    const T scale = T(1) / std::sqrt(static_cast<T>(hs));
    const int ld = C + 2 * KVH * hs, kAt = C, vAt = C + KVH * hs;
    if constexpr (std::is_same_v<T, float>) {
        // One item per (batch, kv head): its group's q heads run in order and add into the shared
        // dK, dV columns; items write disjoint columns of disjoint rows of dqkv.
        const auto &k = simd::active();
        parallelFor(B * KVH, [&](int item) {
            const int b = item / KVH, g = item % KVH;
            const std::int64_t rowsAt = static_cast<std::int64_t>(b) * T_ * ld;
            const float *base = qkv + rowsAt;
            float *dbase = dqkv + rowsAt;
            float *work = scratch(static_cast<std::size_t>(hs) * T_ + static_cast<std::size_t>(T_) * T_);
            for (int h = g * group; h < (g + 1) * group; ++h)
                k.attentionBackward(dbase + h * hs, dbase + kAt + g * hs, dbase + vAt + g * hs,
                                    dOut + static_cast<std::int64_t>(b) * T_ * C + h * hs, C,
                                    att + (static_cast<std::int64_t>(b) * NH + h) * T_ * T_, base + h * hs,
                                    base + kAt + g * hs, base + vAt + g * hs, ld, T_, hs, scale, work);
        });
        return;
    }
    for (int b = 0; b < B; ++b) {
        const T *base = qkv + static_cast<std::int64_t>(b) * T_ * ld;
        T *dbase = dqkv + static_cast<std::int64_t>(b) * T_ * ld;
        const T *dO = dOut + static_cast<std::int64_t>(b) * T_ * C;
        for (int h = 0; h < NH; ++h) {
            const int g = h / group;
            const T *q = base + h * hs;
            const T *k = base + kAt + g * hs;
            const T *v = base + vAt + g * hs;
            const T *p = att + (static_cast<std::int64_t>(b) * NH + h) * T_ * T_;
            const T *dOh = dO + h * hs;
            T *dS = scratchTT;
            // dP = dO·Vᵀ, dV += Pᵀ·dO
            gemm<T>(false, true, T_, T_, hs, T(1), dOh, C, v, ld, T(0), dS, T_);
            gemm<T>(true, false, T_, hs, T_, T(1), p, T_, dOh, C, T(1), dbase + vAt + g * hs, ld);
            // Softmax backward, row by row: dS = P ⊙ (dP − Σ P·dP)
            for (int t = 0; t < T_; ++t) {
                const T *pr = p + static_cast<std::int64_t>(t) * T_;
                T *dr = dS + static_cast<std::int64_t>(t) * T_;
                T dot = 0;
                for (int u = 0; u <= t; ++u)
                    dot += pr[u] * dr[u];
                for (int u = 0; u <= t; ++u)
                    dr[u] = pr[u] * (dr[u] - dot);
                for (int u = t + 1; u < T_; ++u)
                    dr[u] = 0;
            }
            // dQ += scale·dS·K, dK += scale·dSᵀ·Q
            gemm<T>(false, false, T_, hs, T_, scale, dS, T_, k, ld, T(1), dbase + h * hs, ld);
            gemm<T>(true, false, T_, hs, T_, scale, dS, T_, q, ld, T(1), dbase + kAt + g * hs, ld);
        }
    }
}

template void attentionForward<float>(float *, float *, const float *, int, int, int, int, int);
template void attentionForward<double>(double *, double *, const double *, int, int, int, int, int);
template void attentionBackward<float>(float *, float *, const float *, const float *, const float *, int, int, int,
                                       int, int);
template void attentionBackward<double>(double *, double *, const double *, const double *, const double *, int, int,
                                        int, int, int);

} // namespace trellis::kernels::cpu
