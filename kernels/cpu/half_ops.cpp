// The 16-bit CPU kernels; see half_ops.h. Each converts fixed chunks of rows (or of elements)
// into per-thread fp32 scratch, runs the vectorised float kernel of simd.h on them and rounds the
// outputs back, so a chunk stays in cache and the arithmetic is exactly the float kernel's.
#include "kernels/cpu/half_ops.h"

#include "kernels/cpu/half_gemm.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

namespace trellis::kernels::cpu::half {
namespace {

using i64 = std::int64_t;

// Per-thread fp32 scratch. Slots 0–5 belong to a chunk (any thread runs chunks), slots 6–9 to the
// calling thread for buffers every chunk reads (converted gains, partial sums).
enum Slot { kChunk0 = 0, kChunk1, kChunk2, kChunk3, kChunk4, kChunk5, kShared0, kShared1, kShared2, kShared3, kSlots };
float *scratch(int slot, std::size_t n)
{
    thread_local std::array<std::vector<float>, kSlots> buffers;
    auto &b = buffers[static_cast<std::size_t>(slot)];
    if (b.size() < n)
        b.resize(n);
    return b.data();
}

template <typename T>
void toFloat(float *dst, const T *src, i64 n)
{
    if constexpr (std::is_same_v<T, float>)
        std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(float));
    else if constexpr (std::is_same_v<T, bf16>)
        simd::active().bf16ToFloat(dst, reinterpret_cast<const std::uint16_t *>(src), n);
    else
        simd::active().f16ToFloat(dst, reinterpret_cast<const std::uint16_t *>(src), n);
}

template <typename T>
void fromFloat(T *dst, const float *src, i64 n)
{
    if constexpr (std::is_same_v<T, float>)
        std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(float));
    else if constexpr (std::is_same_v<T, bf16>)
        simd::active().floatToBf16(reinterpret_cast<std::uint16_t *>(dst), src, n);
    else
        simd::active().floatToF16(reinterpret_cast<std::uint16_t *>(dst), src, n);
}

// A small vector (gains, biases) converted once on the calling thread.
template <typename T>
const float *shared(int slot, const T *src, i64 n)
{
    if (!src)
        return nullptr;
    float *f = scratch(slot, static_cast<std::size_t>(n));
    toFloat(f, src, n);
    return f;
}

constexpr int kNormRows = 32;       // rows per chunk of the norms (as the float kernels)
constexpr i64 kElementGrain = 16384; // elements per chunk of element-wise work
int rowGrain(int width) { return std::max(1, 16384 / std::max(1, width)); }

} // namespace

template <typename T>
void linearForward(T *out, const T *in, const T *weight, const T *bias, int BT, int C, int OC)
{
    gemm16<T, T>(false, true, BT, OC, C, in, C, weight, C, out, OC, false, bias);
}

template <typename T>
void linearBackward(T *dIn, float *dWeight, float *dBias, const T *dOut, const T *in, const T *weight, int BT, int C,
                    int OC)
{
    if (dIn)
        gemm16<T, T>(false, false, BT, C, OC, dOut, OC, weight, C, dIn, C, true, nullptr);
    if (dWeight)
        gemm16<T, float>(true, false, OC, C, BT, dOut, OC, in, C, dWeight, C, true, nullptr);
    if (!dBias)
        return;
    // Column slices of 64, each summing every row in order (independent of the thread count).
    const int slice = 64;
    parallelFor((OC + slice - 1) / slice, [&](int s) {
        const int c0 = s * slice, n = std::min(slice, OC - c0);
        float *row = scratch(kChunk0, static_cast<std::size_t>(n));
        float acc[64];
        std::copy_n(dBias + c0, n, acc);
        for (int r = 0; r < BT; ++r) {
            toFloat(row, dOut + static_cast<i64>(r) * OC + c0, n);
            for (int c = 0; c < n; ++c)
                acc[c] += row[c];
        }
        std::copy_n(acc, n, dBias + c0);
    });
}

template <typename T>
void layerNormForward(T *out, float *mean, float *rstd, const T *in, const T *gamma, const T *beta, int N, int C)
{
    const auto &k = simd::active();
    const float *g = shared(kShared0, gamma, C), *b = shared(kShared1, beta, C);
    const int chunks = (N + kNormRows - 1) / kNormRows;
    parallelFor(chunks, [&](int c) {
        const int r0 = c * kNormRows, rows = std::min(kNormRows, N - r0);
        const i64 at = static_cast<i64>(r0) * C, n = static_cast<i64>(rows) * C;
        float *x = scratch(kChunk0, static_cast<std::size_t>(n)), *y = scratch(kChunk1, static_cast<std::size_t>(n));
        toFloat(x, in + at, n);
        k.layerNormForward(y, mean + r0, rstd + r0, x, g, b, rows, C, 1e-5f);
        fromFloat(out + at, y, n);
    });
}

template <typename T>
void layerNormBackward(T *dIn, float *dGamma, float *dBeta, const T *dOut, const T *in, const T *gamma,
                       const float *mean, const float *rstd, int N, int C)
{
    const auto &k = simd::active();
    const float *g = shared(kShared0, gamma, C);
    const int chunks = (N + kNormRows - 1) / kNormRows;
    const bool params = dGamma || dBeta;
    float *part = params ? scratch(kShared1, static_cast<std::size_t>(chunks) * 2 * C) : nullptr;
    if (params)
        std::fill(part, part + static_cast<std::size_t>(chunks) * 2 * C, 0.0f);
    parallelFor(chunks, [&](int c) {
        const int r0 = c * kNormRows, rows = std::min(kNormRows, N - r0);
        const i64 at = static_cast<i64>(r0) * C, n = static_cast<i64>(rows) * C;
        float *x = scratch(kChunk0, static_cast<std::size_t>(n)), *dy = scratch(kChunk1, static_cast<std::size_t>(n));
        float *dx = dIn ? scratch(kChunk2, static_cast<std::size_t>(n)) : nullptr;
        toFloat(x, in + at, n);
        toFloat(dy, dOut + at, n);
        if (dx)
            toFloat(dx, dIn + at, n);
        float *pg = params && dGamma ? part + static_cast<i64>(c) * 2 * C : nullptr;
        float *pb = params && dBeta ? part + static_cast<i64>(c) * 2 * C + C : nullptr;
        k.layerNormBackward(dx, pg, pb, dy, x, g, mean + r0, rstd + r0, rows, C);
        if (dx)
            fromFloat(dIn + at, dx, n);
    });
    if (dGamma)
        k.columnSum(dGamma, part, chunks, 2 * static_cast<i64>(C), C);
    if (dBeta)
        k.columnSum(dBeta, part + C, chunks, 2 * static_cast<i64>(C), C);
}

template <typename T>
void geluForward(T *out, const T *in, i64 n)
{
    const auto &k = simd::active();
    parallelRange(n, kElementGrain, [&](i64 i0, i64 i1) {
        const i64 m = i1 - i0;
        float *x = scratch(kChunk0, static_cast<std::size_t>(m)), *y = scratch(kChunk1, static_cast<std::size_t>(m));
        toFloat(x, in + i0, m);
        k.geluForward(y, x, m);
        fromFloat(out + i0, y, m);
    });
}

template <typename T>
void geluBackward(T *dIn, const T *in, const T *dOut, i64 n)
{
    const auto &k = simd::active();
    parallelRange(n, kElementGrain, [&](i64 i0, i64 i1) {
        const i64 m = i1 - i0;
        float *x = scratch(kChunk0, static_cast<std::size_t>(m)), *dy = scratch(kChunk1, static_cast<std::size_t>(m));
        float *dx = scratch(kChunk2, static_cast<std::size_t>(m));
        toFloat(x, in + i0, m);
        toFloat(dy, dOut + i0, m);
        toFloat(dx, dIn + i0, m);
        k.geluBackward(dx, x, dy, m);
        fromFloat(dIn + i0, dx, m);
    });
}

template <typename T>
void residualForward(T *out, const T *a, const T *b, i64 n)
{
    const auto &k = simd::active();
    parallelRange(n, kElementGrain, [&](i64 i0, i64 i1) {
        const i64 m = i1 - i0;
        float *x = scratch(kChunk0, static_cast<std::size_t>(m)), *y = scratch(kChunk1, static_cast<std::size_t>(m));
        toFloat(x, a + i0, m);
        toFloat(y, b + i0, m);
        k.add(x, x, y, m);
        fromFloat(out + i0, x, m);
    });
}

namespace {
// The head-size columns [col, col + hs) of T rows of leading dimension ld, to and from a
// contiguous [T, hs] fp32 block.
template <typename T>
void gatherHead(float *dst, const T *src, i64 ld, int rows, int hs)
{
    for (int t = 0; t < rows; ++t)
        toFloat(dst + static_cast<i64>(t) * hs, src + t * ld, hs);
}
template <typename T>
void scatterHead(T *dst, const float *src, i64 ld, int rows, int hs)
{
    for (int t = 0; t < rows; ++t)
        fromFloat(dst + t * ld, src + static_cast<i64>(t) * hs, hs);
}
} // namespace

template <typename T>
void attentionForward(T *out, T *att, const T *qkv, int B, int T_, int C, int NH, int KVH)
{
    const int hs = C / NH, group = NH / KVH;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
    const i64 ld = C + 2 * KVH * hs, kAt = C, vAt = C + KVH * hs;
    const auto &k = simd::active();
    const auto block = static_cast<std::size_t>(T_) * hs, square = static_cast<std::size_t>(T_) * T_;
    parallelFor(B * NH, [&](int item) {
        const int b = item / NH, h = item % NH, g = h / group;
        const T *base = qkv + static_cast<i64>(b) * T_ * ld;
        float *q = scratch(kChunk0, block), *kk = scratch(kChunk1, block), *v = scratch(kChunk2, block);
        float *o = scratch(kChunk3, block), *p = scratch(kChunk4, square), *work = scratch(kChunk5, block);
        gatherHead(q, base + h * hs, ld, T_, hs);
        gatherHead(kk, base + kAt + g * hs, ld, T_, hs);
        gatherHead(v, base + vAt + g * hs, ld, T_, hs);
        k.attentionForward(o, hs, p, q, kk, v, hs, T_, hs, scale, work);
        scatterHead(out + static_cast<i64>(b) * T_ * C + h * hs, o, C, T_, hs);
        fromFloat(att + static_cast<i64>(item) * static_cast<i64>(square), p, static_cast<i64>(square));
    });
}

template <typename T>
void attentionBackward(T *dqkv, float *, const T *dOut, const T *qkv, const T *att, int B, int T_, int C, int NH, int KVH)
{
    const int hs = C / NH, group = NH / KVH;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
    const i64 ld = C + 2 * KVH * hs, kAt = C, vAt = C + KVH * hs;
    const auto &k = simd::active();
    const auto block = static_cast<std::size_t>(T_) * hs, square = static_cast<std::size_t>(T_) * T_;
    // One item per (batch, kv head): its group's q heads in order, dK and dV summed in fp32 over
    // them and rounded once.
    parallelFor(B * KVH, [&](int item) {
        const int b = item / KVH, g = item % KVH;
        const i64 rowsAt = static_cast<i64>(b) * T_ * ld;
        const T *base = qkv + rowsAt;
        T *dbase = dqkv + rowsAt;
        float *kk = scratch(kChunk0, block), *v = scratch(kChunk1, block), *dk = scratch(kChunk2, block);
        float *dv = scratch(kChunk3, block);
        float *q = scratch(kChunk4, 3 * block + square), *dq = q + block, *dO = dq + block, *p = dO + block;
        float *work = scratch(kChunk5, block + square);
        gatherHead(kk, base + kAt + g * hs, ld, T_, hs);
        gatherHead(v, base + vAt + g * hs, ld, T_, hs);
        gatherHead(dk, dbase + kAt + g * hs, ld, T_, hs);
        gatherHead(dv, dbase + vAt + g * hs, ld, T_, hs);
        for (int h = g * group; h < (g + 1) * group; ++h) {
            gatherHead(q, base + h * hs, ld, T_, hs);
            gatherHead(dq, dbase + h * hs, ld, T_, hs);
            gatherHead(dO, dOut + static_cast<i64>(b) * T_ * C + h * hs, C, T_, hs);
            toFloat(p, att + (static_cast<i64>(b) * NH + h) * static_cast<i64>(square), static_cast<i64>(square));
            k.attentionBackward(dq, dk, dv, dO, hs, p, q, kk, v, hs, T_, hs, scale, work);
            scatterHead(dbase + h * hs, dq, ld, T_, hs);
        }
        scatterHead(dbase + kAt + g * hs, dk, ld, T_, hs);
        scatterHead(dbase + vAt + g * hs, dv, ld, T_, hs);
    });
}

template <typename T>
void crossEntropyForward(float *losses, float *probs, const T *logits, const std::int32_t *targets, int BT, int V)
{
    const auto &k = simd::active();
    parallelRange(BT, rowGrain(V), [&](i64 r0, i64 r1) {
        const i64 n = (r1 - r0) * V;
        float *z = scratch(kChunk0, static_cast<std::size_t>(n));
        toFloat(z, logits + r0 * V, n);
        k.crossEntropyForward(losses + r0, probs + r0 * V, z, targets + r0, static_cast<int>(r1 - r0), V);
    });
}

template <typename T>
void crossEntropyBackward(T *dLogits, const float *probs, const std::int32_t *targets, float scale, int BT, int V)
{
    parallelRange(BT, rowGrain(V), [&](i64 r0, i64 r1) {
        float *d = scratch(kChunk0, static_cast<std::size_t>(V));
        for (i64 i = r0; i < r1; ++i) {
            const float *p = probs + i * V;
            for (int j = 0; j < V; ++j)
                d[j] = p[j] * scale;
            d[targets[i]] -= scale;
            fromFloat(dLogits + i * V, d, V);
        }
    });
}

template <typename D, typename S>
void accumulate(D *dst, const S *src, i64 n)
{
    parallelRange(n, kElementGrain, [&](i64 i0, i64 i1) {
        const i64 m = i1 - i0;
        float *s = scratch(kChunk0, static_cast<std::size_t>(m));
        toFloat(s, src + i0, m);
        if constexpr (std::is_same_v<D, float>) {
            for (i64 i = 0; i < m; ++i)
                dst[i0 + i] += s[i];
        } else {
            float *d = scratch(kChunk1, static_cast<std::size_t>(m));
            toFloat(d, dst + i0, m);
            for (i64 i = 0; i < m; ++i)
                d[i] += s[i];
            fromFloat(dst + i0, d, m);
        }
    });
}

template <typename D, typename S>
void convert(D *dst, const S *src, i64 n)
{
    parallelRange(n, kElementGrain, [&](i64 i0, i64 i1) {
        const i64 m = i1 - i0;
        if constexpr (std::is_same_v<D, float>) {
            toFloat(dst + i0, src + i0, m);
        } else if constexpr (std::is_same_v<S, float>) {
            fromFloat(dst + i0, src + i0, m);
        } else {
            float *f = scratch(kChunk0, static_cast<std::size_t>(m));
            toFloat(f, src + i0, m);
            fromFloat(dst + i0, f, m);
        }
    });
}

template <typename D, typename S>
void copyColumns(D *dst, int ldDst, const S *src, int ldSrc, int rows, int cols)
{
    float *f = scratch(kShared0, static_cast<std::size_t>(cols));
    for (int r = 0; r < rows; ++r) {
        toFloat(f, src + static_cast<i64>(r) * ldSrc, cols);
        fromFloat(dst + static_cast<i64>(r) * ldDst, f, cols);
    }
}

#define TRELLIS_HALF_KERNELS(T)                                                                                         \
    template void linearForward<T>(T *, const T *, const T *, const T *, int, int, int);                                \
    template void linearBackward<T>(T *, float *, float *, const T *, const T *, const T *, int, int, int);            \
    template void layerNormForward<T>(T *, float *, float *, const T *, const T *, const T *, int, int);               \
    template void layerNormBackward<T>(T *, float *, float *, const T *, const T *, const T *, const float *,          \
                                       const float *, int, int);                                                        \
    template void geluForward<T>(T *, const T *, i64);                                                                  \
    template void geluBackward<T>(T *, const T *, const T *, i64);                                                      \
    template void attentionForward<T>(T *, T *, const T *, int, int, int, int, int);                                    \
    template void attentionBackward<T>(T *, float *, const T *, const T *, const T *, int, int, int, int, int);         \
    template void residualForward<T>(T *, const T *, const T *, i64);                                                   \
    template void crossEntropyForward<T>(float *, float *, const T *, const std::int32_t *, int, int);                  \
    template void crossEntropyBackward<T>(T *, const float *, const std::int32_t *, float, int, int);                   \
    template void accumulate<float, T>(float *, const T *, i64);                                                        \
    template void accumulate<T, T>(T *, const T *, i64);                                                                \
    template void convert<float, T>(float *, const T *, i64);                                                           \
    template void convert<T, float>(T *, const float *, i64);                                                           \
    template void copyColumns<T, float>(T *, int, const float *, int, int, int);                                        \
    template void copyColumns<float, T>(float *, int, const T *, int, int, int);
TRELLIS_HALF_KERNELS(bf16)
TRELLIS_HALF_KERNELS(f16)
#undef TRELLIS_HALF_KERNELS
template void convert<bf16, f16>(bf16 *, const f16 *, i64);
template void convert<f16, bf16>(f16 *, const bf16 *, i64);

} // namespace trellis::kernels::cpu::half
