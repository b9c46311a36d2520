// Ring attention blocks (context parallelism); see ops.h. One item per (batch, head) in forward
// and per (batch, kv head) in backward, so items write disjoint rows and columns; the work of a
// block is only its visible (query, key) pairs, so a rank whose keys all lie after its queries
// (contiguous layout, later ranks' blocks) does nothing but pass them on.
#include "kernels/cpu/cpu_ops.h"

#include "kernels/cpu/parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace trellis::kernels::cpu {
namespace {

template <typename T>
T *rowScratch(std::size_t n)
{
    thread_local std::vector<T> buffer;
    if (buffer.size() < n)
        buffer.resize(n);
    return buffer.data();
}

// Keys of the block visible to a query at position p: kPos ascending within each chunk but not
// across chunks (zigzag), so every key is tested.
inline bool visible(std::int32_t keyPos, std::int32_t queryPos) { return keyPos <= queryPos; }

// The block's first position: queries before it see none of the block.
std::int32_t earliest(const std::int32_t *kPos, int Tk)
{
    return Tk > 0 ? *std::min_element(kPos, kPos + Tk) : std::numeric_limits<std::int32_t>::max();
}

} // namespace

// Every element type: q, k, v and dOut load widened to A = acc_t<T>; accumulators are A.
template <typename T>
void ringAttentionBlockForward(acc_t<T> *out, acc_t<T> *rowMax, acc_t<T> *rowSum, const T *q, int ldq, const T *kv,
                               const std::int32_t *qPos, const std::int32_t *kPos, int B, int Tq, int Tk, int NH, int KVH,
                               int hs)
{
    using A = acc_t<T>;
    const int group = NH / KVH, ldkv = 2 * KVH * hs, C = NH * hs;
    const A scale = A(1) / std::sqrt(static_cast<A>(hs));
    const std::int32_t firstKey = earliest(kPos, Tk);
    parallelFor(B * NH, [&](int item) {
        const int b = item / NH, h = item % NH, g = h / group;
        A *s = rowScratch<A>(static_cast<std::size_t>(Tk));
        const T *kBase = kv + static_cast<std::int64_t>(b) * Tk * ldkv + g * hs;
        const T *vBase = kBase + KVH * hs;
        for (int t = 0; t < Tq; ++t) {
            if (qPos[t] < firstKey)
                continue; // the whole block lies in this query's future
            const std::int64_t row = static_cast<std::int64_t>(b) * Tq + t;
            const T *qr = q + row * ldq + h * hs;
            A best = -std::numeric_limits<A>::infinity();
            for (int u = 0; u < Tk; ++u) {
                if (!visible(kPos[u], qPos[t])) {
                    s[u] = -std::numeric_limits<A>::infinity();
                    continue;
                }
                const T *kr = kBase + static_cast<std::int64_t>(u) * ldkv;
                A dot = 0;
                for (int d = 0; d < hs; ++d)
                    dot += toAcc(qr[d]) * toAcc(kr[d]);
                s[u] = dot * scale;
                best = std::max(best, s[u]);
            }
            const std::int64_t stat = (static_cast<std::int64_t>(b) * NH + h) * Tq + t;
            const A previous = rowMax[stat];
            const A m = std::max(previous, best);
            const A alpha = previous == -std::numeric_limits<A>::infinity() ? A(0) : std::exp(previous - m);
            A *o = out + row * C + h * hs;
            for (int d = 0; d < hs; ++d)
                o[d] *= alpha;
            A sum = rowSum[stat] * alpha;
            for (int u = 0; u < Tk; ++u) {
                if (s[u] == -std::numeric_limits<A>::infinity())
                    continue;
                const A p = std::exp(s[u] - m);
                sum += p;
                const T *vr = vBase + static_cast<std::int64_t>(u) * ldkv;
                for (int d = 0; d < hs; ++d)
                    o[d] += p * toAcc(vr[d]);
            }
            rowMax[stat] = m;
            rowSum[stat] = sum;
        }
    });
}

template <typename T>
void ringAttentionFinish(T *out, acc_t<T> *lse, const acc_t<T> *acc, const acc_t<T> *rowMax, const acc_t<T> *rowSum, int B,
                         int Tq, int NH, int hs)
{
    using A = acc_t<T>;
    const int C = NH * hs;
    parallelFor(B * NH, [&](int item) {
        const int b = item / NH, h = item % NH;
        for (int t = 0; t < Tq; ++t) {
            const std::int64_t stat = (static_cast<std::int64_t>(b) * NH + h) * Tq + t;
            const std::int64_t at = (static_cast<std::int64_t>(b) * Tq + t) * C + h * hs;
            const A inv = A(1) / rowSum[stat];
            for (int d = 0; d < hs; ++d)
                out[at + d] = fromAcc<T>(acc[at + d] * inv); // acc may be out (same type): read before write
            lse[stat] = rowMax[stat] + std::log(rowSum[stat]);
        }
    });
}

template <typename T>
void ringAttentionDelta(acc_t<T> *delta, const T *dOut, const T *out, int B, int Tq, int NH, int hs)
{
    using A = acc_t<T>;
    const int C = NH * hs;
    parallelFor(B * NH, [&](int item) {
        const int b = item / NH, h = item % NH;
        for (int t = 0; t < Tq; ++t) {
            const std::int64_t at = (static_cast<std::int64_t>(b) * Tq + t) * C + h * hs;
            A dot = 0;
            for (int d = 0; d < hs; ++d)
                dot += toAcc(dOut[at + d]) * toAcc(out[at + d]);
            delta[(static_cast<std::int64_t>(b) * NH + h) * Tq + t] = dot;
        }
    });
}

template <typename T>
void ringAttentionBlockBackward(acc_t<T> *dq, int ldq, acc_t<T> *dkv, const T *dOut, const T *q, const T *kv,
                                const acc_t<T> *lse, const acc_t<T> *delta, const std::int32_t *qPos,
                                const std::int32_t *kPos, int B, int Tq, int Tk, int NH, int KVH, int hs)
{
    using A = acc_t<T>;
    const int group = NH / KVH, ldkv = 2 * KVH * hs, C = NH * hs;
    const A scale = A(1) / std::sqrt(static_cast<A>(hs));
    const std::int32_t firstKey = earliest(kPos, Tk);
    parallelFor(B * KVH, [&](int item) {
        const int b = item / KVH, g = item % KVH;
        const std::int64_t kvRows = static_cast<std::int64_t>(b) * Tk * ldkv + g * hs;
        const T *kBase = kv + kvRows, *vBase = kBase + KVH * hs;
        A *dkBase = dkv + kvRows, *dvBase = dkBase + KVH * hs;
        for (int h = g * group; h < (g + 1) * group; ++h) {
            for (int t = 0; t < Tq; ++t) {
                if (qPos[t] < firstKey)
                    continue;
                const std::int64_t row = static_cast<std::int64_t>(b) * Tq + t;
                const std::int64_t stat = (static_cast<std::int64_t>(b) * NH + h) * Tq + t;
                const T *qr = q + row * ldq + h * hs;
                const T *dor = dOut + row * C + h * hs;
                A *dqr = dq + row * ldq + h * hs;
                const A rowLse = lse[stat], rowDelta = delta[stat];
                for (int u = 0; u < Tk; ++u) {
                    if (!visible(kPos[u], qPos[t]))
                        continue;
                    const T *kr = kBase + static_cast<std::int64_t>(u) * ldkv;
                    const T *vr = vBase + static_cast<std::int64_t>(u) * ldkv;
                    A dot = 0, dp = 0;
                    for (int d = 0; d < hs; ++d) {
                        dot += toAcc(qr[d]) * toAcc(kr[d]);
                        dp += toAcc(dor[d]) * toAcc(vr[d]);
                    }
                    const A p = std::exp(dot * scale - rowLse);
                    const A ds = p * (dp - rowDelta) * scale;
                    A *dkr = dkBase + static_cast<std::int64_t>(u) * ldkv;
                    A *dvr = dvBase + static_cast<std::int64_t>(u) * ldkv;
                    for (int d = 0; d < hs; ++d) {
                        dvr[d] += p * toAcc(dor[d]);
                        dqr[d] += ds * toAcc(kr[d]);
                        dkr[d] += ds * toAcc(qr[d]);
                    }
                }
            }
        }
    });
}

template <typename T>
void copyColumns(T *dst, int ldDst, const T *src, int ldSrc, int rows, int cols)
{
    for (int r = 0; r < rows; ++r)
        std::copy_n(src + static_cast<std::int64_t>(r) * ldSrc, cols, dst + static_cast<std::int64_t>(r) * ldDst);
}

#define TRELLIS_RING_KERNELS(T)                                                                                        \
    template void ringAttentionBlockForward<T>(acc_t<T> *, acc_t<T> *, acc_t<T> *, const T *, int, const T *,         \
                                               const std::int32_t *, const std::int32_t *, int, int, int, int, int, int); \
    template void ringAttentionFinish<T>(T *, acc_t<T> *, const acc_t<T> *, const acc_t<T> *, const acc_t<T> *, int,  \
                                         int, int, int);                                                              \
    template void ringAttentionDelta<T>(acc_t<T> *, const T *, const T *, int, int, int, int);                         \
    template void ringAttentionBlockBackward<T>(acc_t<T> *, int, acc_t<T> *, const T *, const T *, const T *,         \
                                                const acc_t<T> *, const acc_t<T> *, const std::int32_t *,              \
                                                const std::int32_t *, int, int, int, int, int, int);                   \
    template void copyColumns<T>(T *, int, const T *, int, int, int);
TRELLIS_RING_KERNELS(float)
TRELLIS_RING_KERNELS(double)
TRELLIS_RING_KERNELS(bf16)
TRELLIS_RING_KERNELS(f16)
#undef TRELLIS_RING_KERNELS

} // namespace trellis::kernels::cpu
