// The vectorised float kernels (see simd.h), written once with GCC vector extensions and compiled
// by simd_sse2.cpp, simd_avx2.cpp and simd_avx512.cpp at 4, 8 and 16 floats a vector. Include it
// only from those files, after defining TRELLIS_SIMD_WIDTH. Everything here has internal linkage
// and calls no standard-library function templates, so no code built for a wider ISA can leak
// into the rest of the program through the linker's choice of one inline copy.
#pragma once

#include "kernels/cpu/simd.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

#include <cstdint>
#include <utility>

#ifndef TRELLIS_SIMD_WIDTH
#error "define TRELLIS_SIMD_WIDTH before including simd_impl.h"
#endif

namespace {

constexpr int W = TRELLIS_SIMD_WIDTH;
typedef float vf __attribute__((vector_size(W * sizeof(float))));
typedef std::int32_t vi __attribute__((vector_size(W * sizeof(float))));
using i64 = std::int64_t;

inline vf load(const float *p)
{
    vf v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}
inline void store(float *p, vf v) { __builtin_memcpy(p, &v, sizeof v); }
inline vf splat(float x) { return x - vf{}; } // x − 0 is x for every x, so this folds to a broadcast
inline vi iota()
{
    vi v;
    for (int i = 0; i < W; ++i)
        v[i] = i;
    return v;
}
// v rotated by S lanes: lane i holds v[(i + S) mod W].
template <int S, int... I>
inline vf rotate(vf v, std::integer_sequence<int, I...>)
{
    return __builtin_shufflevector(v, v, ((I + S) % W)...);
}
template <int S>
inline vf rotate(vf v)
{
    return rotate<S>(v, std::make_integer_sequence<int, W>{});
}
// Lanes summed pairwise, halves first (a fixed order, so results are reproducible).
inline float hsum(vf v)
{
    if constexpr (W >= 16)
        v += rotate<8>(v);
    if constexpr (W >= 8)
        v += rotate<4>(v);
    v += rotate<2>(v);
    v += rotate<1>(v);
    return v[0];
}
inline vf vmax(vf a, vf b) { return a > b ? a : b; }
inline float hmax(vf v)
{
    if constexpr (W >= 16)
        v = vmax(v, rotate<8>(v));
    if constexpr (W >= 8)
        v = vmax(v, rotate<4>(v));
    v = vmax(v, rotate<2>(v));
    v = vmax(v, rotate<1>(v));
    return v[0];
}

// exp(x) for float: x = n·ln2 + r with |r| ≤ ln2/2, e^r by the Cephes polynomial (about 1 ulp),
// 2^n built in the exponent bits. Arguments are clamped to [-87.3, 88.3] (the normal range; below
// it the result is ~1e-38 instead of a denormal or zero); NaN stays NaN.
constexpr float kExpHi = 88.3762626647949f, kExpLo = -87.3365447504f;
inline vf vexp(vf x)
{
    x = x > kExpHi ? splat(kExpHi) : x;
    x = x < kExpLo ? splat(kExpLo) : x;
    const float magic = 12582912.0f; // 1.5·2^23: adding it rounds to an integer in the low bits
    const vf t = x * 1.44269504088896341f + magic;
    const vf n = t - magic;
    vf r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    vf p = splat(1.9875691500e-4f);
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    const vf y = p * r * r + r + 1.0f;
    const vi bits = ((vi)t << 23) + (127 << 23); // (t's bits) << 23 keeps only n << 23
    return y * (vf)bits;
}
// The same for one float (the tails of rows), lane for lane identical to vexp.
inline float sexp(float x)
{
    vf v = splat(x);
    return vexp(v)[0];
}

// ---------------------------------------------------------------------------------------------
// GELU, tanh approximation: 0.5·x·(1 + tanh(u)), u = k·(x + a·x³). With e = exp(−2u),
// 0.5·(1 + tanh(u)) = 1/(1 + e) = s, so GELU(x) = x·s, and
// GELU'(x) = s + 2k·x·s·(1 − s)·(1 + 3a·x²) with 1 − s = e·s (no cancellation anywhere).
constexpr float kGeluK = 0.7978845608028654f, kGeluA = 0.044715f;

inline vf geluExp(vf x)
{
    vf m2u = (x + kGeluA * x * x * x) * (-2.0f * kGeluK);
    m2u = m2u > 80.0f ? splat(80.0f) : m2u; // keeps s a normal float
    return vexp(m2u);
}

void geluForward(float *out, const float *in, i64 n)
{
    i64 i = 0;
    for (; i + W <= n; i += W) {
        const vf x = load(in + i);
        store(out + i, x / (1.0f + geluExp(x)));
    }
    for (; i < n; ++i) {
        const float x = in[i];
        out[i] = x / (1.0f + geluExp(splat(x))[0]);
    }
}

inline vf geluGrad(vf x)
{
    const vf e = geluExp(x);
    const vf s = 1.0f / (1.0f + e);
    return s + (2.0f * kGeluK) * x * (e * s) * s * (1.0f + (3.0f * kGeluA) * x * x);
}

void geluBackward(float *dIn, const float *in, const float *dOut, i64 n)
{
    i64 i = 0;
    for (; i + W <= n; i += W)
        store(dIn + i, load(dIn + i) + geluGrad(load(in + i)) * load(dOut + i));
    for (; i < n; ++i)
        dIn[i] += geluGrad(splat(in[i]))[0] * dOut[i];
}

void add(float *out, const float *a, const float *b, i64 n)
{
    i64 i = 0;
    for (; i + W <= n; i += W)
        store(out + i, load(a + i) + load(b + i));
    for (; i < n; ++i)
        out[i] = a[i] + b[i];
}

void columnSum(float *dst, const float *src, int rows, i64 ld, int n)
{
    int c = 0;
    for (; c + 4 * W <= n; c += 4 * W) {
        vf s0 = load(dst + c), s1 = load(dst + c + W), s2 = load(dst + c + 2 * W), s3 = load(dst + c + 3 * W);
        for (int r = 0; r < rows; ++r) {
            const float *p = src + r * ld + c;
            s0 += load(p);
            s1 += load(p + W);
            s2 += load(p + 2 * W);
            s3 += load(p + 3 * W);
        }
        store(dst + c, s0);
        store(dst + c + W, s1);
        store(dst + c + 2 * W, s2);
        store(dst + c + 3 * W, s3);
    }
    for (; c + W <= n; c += W) {
        vf s = load(dst + c);
        for (int r = 0; r < rows; ++r)
            s += load(src + r * ld + c);
        store(dst + c, s);
    }
    for (; c < n; ++c) {
        float s = dst[c];
        for (int r = 0; r < rows; ++r)
            s += src[r * ld + c];
        dst[c] = s;
    }
}

// ---------------------------------------------------------------------------------------------
// LayerNorm. A row is short (C floats, in L1), so the two-pass mean and variance cost no memory
// traffic and keep the variance accurate.
float rowSum(const float *x, int C)
{
    vf a0 = {}, a1 = {};
    int c = 0;
    for (; c + 2 * W <= C; c += 2 * W) {
        a0 += load(x + c);
        a1 += load(x + c + W);
    }
    for (; c + W <= C; c += W)
        a0 += load(x + c);
    float s = hsum(a0 + a1);
    for (; c < C; ++c)
        s += x[c];
    return s;
}

void layerNormForward(float *out, float *mean, float *rstd, const float *in, const float *gamma, const float *beta,
                      int rows, int C, float eps)
{
    for (int r = 0; r < rows; ++r) {
        const float *x = in + static_cast<i64>(r) * C;
        float *y = out + static_cast<i64>(r) * C;
        const float m = rowSum(x, C) / static_cast<float>(C);
        vf v0 = {}, v1 = {};
        int c = 0;
        for (; c + 2 * W <= C; c += 2 * W) {
            const vf d0 = load(x + c) - m, d1 = load(x + c + W) - m;
            v0 += d0 * d0;
            v1 += d1 * d1;
        }
        for (; c + W <= C; c += W) {
            const vf d = load(x + c) - m;
            v0 += d * d;
        }
        float var = hsum(v0 + v1);
        for (; c < C; ++c)
            var += (x[c] - m) * (x[c] - m);
        var /= static_cast<float>(C);
        const float s = 1.0f / __builtin_sqrtf(var + eps);
        c = 0;
        for (; c + W <= C; c += W)
            store(y + c, (load(x + c) - m) * s * load(gamma + c) + load(beta + c));
        for (; c < C; ++c)
            y[c] = (x[c] - m) * s * gamma[c] + beta[c];
        mean[r] = m;
        rstd[r] = s;
    }
}

void layerNormBackward(float *dIn, float *dGamma, float *dBeta, const float *dOut, const float *in, const float *gamma,
                       const float *mean, const float *rstd, int rows, int C)
{
    for (int r = 0; r < rows; ++r) {
        const float *x = in + static_cast<i64>(r) * C;
        const float *dy = dOut + static_cast<i64>(r) * C;
        const float m = mean[r], s = rstd[r];
        if (dGamma || dBeta) {
            int c = 0;
            for (; c + W <= C; c += W) {
                const vf g = load(dy + c);
                if (dBeta)
                    store(dBeta + c, load(dBeta + c) + g);
                if (dGamma)
                    store(dGamma + c, load(dGamma + c) + (load(x + c) - m) * s * g);
            }
            for (; c < C; ++c) {
                if (dBeta)
                    dBeta[c] += dy[c];
                if (dGamma)
                    dGamma[c] += (x[c] - m) * s * dy[c];
            }
        }
        if (!dIn)
            continue;
        float *dx = dIn + static_cast<i64>(r) * C;
        vf sd = {}, sdn = {};
        int c = 0;
        for (; c + W <= C; c += W) {
            const vf d = load(dy + c) * load(gamma + c);
            sd += d;
            sdn += d * ((load(x + c) - m) * s);
        }
        float meanD = hsum(sd), meanDNorm = hsum(sdn);
        for (; c < C; ++c) {
            const float d = dy[c] * gamma[c];
            meanD += d;
            meanDNorm += d * ((x[c] - m) * s);
        }
        meanD /= static_cast<float>(C);
        meanDNorm /= static_cast<float>(C);
        c = 0;
        for (; c + W <= C; c += W) {
            const vf norm = (load(x + c) - m) * s;
            const vf d = load(dy + c) * load(gamma + c);
            store(dx + c, load(dx + c) + s * (d - meanD - norm * meanDNorm));
        }
        for (; c < C; ++c) {
            const float norm = (x[c] - m) * s;
            const float d = dy[c] * gamma[c];
            dx[c] += s * (d - meanD - norm * meanDNorm);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Cross-entropy: max, exp and sum, normalise; one row (V floats) at a time, in L1.
void crossEntropyForward(float *losses, float *probs, const float *logits, const std::int32_t *targets, int rows, int V)
{
    for (int r = 0; r < rows; ++r) {
        const float *z = logits + static_cast<i64>(r) * V;
        float *p = probs + static_cast<i64>(r) * V;
        float maxv = z[0];
        int j = 0;
        if (V >= W) {
            vf mv = load(z);
            for (j = W; j + W <= V; j += W) {
                const vf x = load(z + j);
                mv = x > mv ? x : mv;
            }
            maxv = hmax(mv);
        }
        for (; j < V; ++j)
            maxv = z[j] > maxv ? z[j] : maxv;
        vf sv = {};
        j = 0;
        for (; j + W <= V; j += W) {
            const vf e = vexp(load(z + j) - maxv);
            store(p + j, e);
            sv += e;
        }
        float sum = hsum(sv);
        for (; j < V; ++j) {
            p[j] = sexp(z[j] - maxv);
            sum += p[j];
        }
        const float inv = 1.0f / sum;
        j = 0;
        for (; j + W <= V; j += W)
            store(p + j, load(p + j) * inv);
        for (; j < V; ++j)
            p[j] *= inv;
        losses[r] = -(z[targets[r]] - maxv - __builtin_logf(sum));
    }
}

// ---------------------------------------------------------------------------------------------
// Small GEMM blocks for attention, where the matrices are at most T×T (T = sequence length) and
// the causal structure lets whole blocks be skipped. C[i, j] (+)= alpha·Σ_k A[i·rsA + k·csA]·B[k·ldB + j]
// for i < MR and j < NV·W: MR·NV accumulators in registers, A broadcast, B rows loaded.
template <int MR, int NV>
inline void microKernel(int K, const float *A, i64 rsA, i64 csA, const float *B, i64 ldB, float *C, i64 ldC,
                        float alpha, bool accumulate)
{
    vf acc[MR][NV] = {};
    for (int k = 0; k < K; ++k) {
        vf b[NV];
        for (int v = 0; v < NV; ++v)
            b[v] = load(B + k * ldB + v * W);
        for (int i = 0; i < MR; ++i) {
            const vf a = splat(A[i * rsA + k * csA]);
            for (int v = 0; v < NV; ++v)
                acc[i][v] += a * b[v];
        }
    }
    for (int i = 0; i < MR; ++i)
        for (int v = 0; v < NV; ++v) {
            float *c = C + i * ldC + v * W;
            const vf r = acc[i][v] * alpha;
            store(c, accumulate ? load(c) + r : r);
        }
}

// MR rows of C, columns [0, N): vector blocks, then the remaining columns one at a time.
template <int MR>
void rowBlock(int N, int K, const float *A, i64 rsA, i64 csA, const float *B, i64 ldB, float *C, i64 ldC, float alpha,
              bool accumulate)
{
    int j = 0;
    for (; j + 2 * W <= N; j += 2 * W)
        microKernel<MR, 2>(K, A, rsA, csA, B + j, ldB, C + j, ldC, alpha, accumulate);
    for (; j + W <= N; j += W)
        microKernel<MR, 1>(K, A, rsA, csA, B + j, ldB, C + j, ldC, alpha, accumulate);
    for (; j < N; ++j)
        for (int i = 0; i < MR; ++i) {
            float s = 0;
            for (int k = 0; k < K; ++k)
                s += A[i * rsA + k * csA] * B[k * ldB + j];
            float *c = C + i * ldC + j;
            *c = accumulate ? *c + alpha * s : alpha * s;
        }
}

constexpr int MR = 4; // rows per register block

inline int roundUp(int x, int m) { return (x + m - 1) / m * m; }
inline int minInt(int a, int b) { return a < b ? a : b; }

// dst[d·T + u] = src[u·ld + d]: a T×hs slice of qkv, transposed so that its rows are contiguous.
void transpose(float *dst, const float *src, i64 ld, int T, int hs)
{
    for (int u = 0; u < T; ++u)
        for (int d = 0; d < hs; ++d)
            dst[static_cast<i64>(d) * T + u] = src[u * ld + d];
}

// Causal softmax of row t in place: columns [0, t] become probabilities, the rest of the row
// (up to T) zeros. Columns [0, ncol) hold finite scores (ncol > t); whole vectors among them are
// processed with the lanes past t masked, the columns after the last whole vector one by one.
void causalSoftmaxRow(float *row, int t, int ncol, int T)
{
    const vi lane = iota();
    const vf minusInf = splat(-__builtin_inff());
    const int full = ncol / W * W;
    vf mv = minusInf;
    for (int u = 0; u < full; u += W) {
        const vf x = load(row + u);
        const vf m = (lane + u) <= t ? x : minusInf;
        mv = m > mv ? m : mv;
    }
    float maxv = hmax(mv);
    for (int u = full; u <= t; ++u)
        maxv = row[u] > maxv ? row[u] : maxv;
    vf sv = {};
    for (int u = 0; u < full; u += W) {
        const vf e = vexp(load(row + u) - maxv);
        const vf m = (lane + u) <= t ? e : vf{};
        store(row + u, m);
        sv += m;
    }
    float sum = hsum(sv);
    for (int u = full; u <= t; ++u) {
        row[u] = sexp(row[u] - maxv);
        sum += row[u];
    }
    const float inv = 1.0f / sum;
    for (int u = 0; u < full; u += W)
        store(row + u, load(row + u) * inv);
    for (int u = full; u <= t; ++u)
        row[u] *= inv;
    for (int u = full > t + 1 ? full : t + 1; u < T; ++u)
        row[u] = 0;
}

void attentionForward(float *out, i64 ldo, float *att, const float *q, const float *k, const float *v, i64 ld, int T,
                      int hs, float scale, float *work)
{
    float *kt = work; // [hs, T]
    transpose(kt, k, ld, T, hs);
    auto block = [&]<int R>(int t0) {
        // Scores of rows t0..t0+R-1 against keys 0..t0+R-1 (rounded up to whole vectors).
        const int ncol = minInt(T, roundUp(t0 + R, W));
        float *p = att + static_cast<i64>(t0) * T;
        rowBlock<R>(ncol, hs, q + t0 * ld, ld, 1, kt, T, p, T, scale, false);
        for (int i = 0; i < R; ++i)
            causalSoftmaxRow(p + static_cast<i64>(i) * T, t0 + i, ncol, T);
        // out rows = P·V over keys 0..t0+R-1 (P is zero past each row's diagonal).
        rowBlock<R>(hs, t0 + R, p, T, 1, v, ld, out + t0 * ldo, ldo, 1.0f, false);
    };
    int t0 = 0;
    for (; t0 + MR <= T; t0 += MR)
        block.template operator()<MR>(t0);
    for (; t0 < T; ++t0)
        block.template operator()<1>(t0);
}

void attentionBackward(float *dq, float *dk, float *dv, const float *dOut, i64 ldo, const float *att, const float *q,
                       const float *k, const float *v, i64 ld, int T, int hs, float scale, float *work)
{
    float *vt = work;                           // [hs, T]
    float *ds = work + static_cast<i64>(hs) * T; // [T, T]
    transpose(vt, v, ld, T, hs);
    const vi lane = iota();
    // Rows t: dP = dO·Vᵀ, dS = P ⊙ (dP − Σ_u P·dP), dQ += scale·dS·K.
    auto rows = [&]<int R>(int t0) {
        const int ncol = minInt(T, roundUp(t0 + R, W));
        float *d = ds + static_cast<i64>(t0) * T;
        rowBlock<R>(ncol, hs, dOut + t0 * ldo, ldo, 1, vt, T, d, T, 1.0f, false);
        for (int i = 0; i < R; ++i) {
            const int t = t0 + i;
            const float *pr = att + static_cast<i64>(t) * T;
            float *dr = d + static_cast<i64>(i) * T;
            // P is exactly zero past the diagonal, so whole vectors up to ncol need no mask; the
            // mask only guards against non-finite values there.
            const int full = ncol / W * W;
            vf dotv = {};
            for (int u = 0; u < full; u += W) {
                const vf pd = load(pr + u) * load(dr + u);
                dotv += (lane + u) <= t ? pd : vf{};
            }
            float dot = hsum(dotv);
            for (int u = full; u <= t; ++u)
                dot += pr[u] * dr[u];
            for (int u = 0; u < full; u += W) {
                const vf g = load(pr + u) * (load(dr + u) - dot);
                store(dr + u, (lane + u) <= t ? g : vf{});
            }
            for (int u = full; u <= t; ++u)
                dr[u] = pr[u] * (dr[u] - dot);
            for (int u = full > t + 1 ? full : t + 1; u < T; ++u)
                dr[u] = 0;
        }
        rowBlock<R>(hs, t0 + R, d, T, 1, k, ld, dq + t0 * ld, ld, scale, true);
    };
    // Columns u: dV += Pᵀ·dO and dK += scale·dSᵀ·Q over rows t ≥ u.
    auto cols = [&]<int R>(int u0) {
        const int K = T - u0;
        const float *p = att + static_cast<i64>(u0) * T + u0;
        const float *d = ds + static_cast<i64>(u0) * T + u0;
        rowBlock<R>(hs, K, p, 1, T, dOut + u0 * ldo, ldo, dv + u0 * ld, ld, 1.0f, true);
        rowBlock<R>(hs, K, d, 1, T, q + u0 * ld, ld, dk + u0 * ld, ld, scale, true);
    };
    int t0 = 0;
    for (; t0 + MR <= T; t0 += MR)
        rows.template operator()<MR>(t0);
    for (; t0 < T; ++t0)
        rows.template operator()<1>(t0);
    int u0 = 0;
    for (; u0 + MR <= T; u0 += MR)
        cols.template operator()<MR>(u0);
    for (; u0 < T; ++u0)
        cols.template operator()<1>(u0);
}

// 16-bit conversions. bf16 is fp32's upper half: widening is a shift, narrowing adds the
// round-to-nearest-even bias before the shift (NaN made quiet instead). fp16 uses F16C where the
// file is built with it (avx2, avx512), else the scalar conversions below.
typedef std::uint32_t vu __attribute__((vector_size(W * sizeof(float))));
typedef std::uint16_t vh __attribute__((vector_size(W * sizeof(std::uint16_t))));

// Scalar conversions, kept here (internal linkage) rather than taken from kernels/dtype.h: an
// inline function of a shared header compiled with -mavx512f could be the copy the linker keeps.
inline float bitsToFloat(std::uint32_t u)
{
    float f;
    __builtin_memcpy(&f, &u, sizeof f);
    return f;
}
inline std::uint32_t floatToBits(float f)
{
    std::uint32_t u;
    __builtin_memcpy(&u, &f, sizeof u);
    return u;
}
inline std::uint16_t scalarToBf16(float f)
{
    const std::uint32_t u = floatToBits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return static_cast<std::uint16_t>((u >> 16) | 0x40u);
    return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
inline float scalarF16ToFloat(std::uint16_t h)
{
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f)
        return bitsToFloat(sign | 0x7f800000u | (man << 13) | (man ? 0x400000u : 0u));
    if (exp != 0)
        return bitsToFloat(sign | ((exp + 112u) << 23) | (man << 13));
    const float v = static_cast<float>(man) * 5.9604644775390625e-8f;
    return sign ? -v : v;
}
inline std::uint16_t scalarToF16(float f)
{
    const std::uint32_t u = floatToBits(f);
    const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    const std::uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
        return static_cast<std::uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u)
        return static_cast<std::uint16_t>(sign | 0x7c00u);
    if (a >= 0x38800000u)
        return static_cast<std::uint16_t>(sign | ((a + 0xfffu + ((a >> 13) & 1u) - (112u << 23)) >> 13));
    if (a < 0x33000000u)
        return sign;
    const std::uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, shift = 126u - e;
    const std::uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    return static_cast<std::uint16_t>(sign | (q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u)));
}

void bf16ToFloat(float *dst, const std::uint16_t *src, i64 n)
{
    i64 i = 0;
    for (; i + W <= n; i += W) {
        vh h;
        __builtin_memcpy(&h, src + i, sizeof h);
        const vu u = __builtin_convertvector(h, vu) << 16;
        __builtin_memcpy(dst + i, &u, sizeof u);
    }
    for (; i < n; ++i)
        dst[i] = bitsToFloat(static_cast<std::uint32_t>(src[i]) << 16);
}

void floatToBf16(std::uint16_t *dst, const float *src, i64 n)
{
    i64 i = 0;
    for (; i + W <= n; i += W) {
        vu u;
        __builtin_memcpy(&u, src + i, sizeof u);
        const vu rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
        const vu quiet = (u >> 16) | 0x40u;
        const vu isNan = (vu)((u & 0x7fffffffu) > 0x7f800000u); // all ones where NaN
        const vh h = __builtin_convertvector((quiet & isNan) | (rounded & ~isNan), vh);
        __builtin_memcpy(dst + i, &h, sizeof h);
    }
    for (; i < n; ++i)
        dst[i] = scalarToBf16(src[i]);
}

void f16ToFloat(float *dst, const std::uint16_t *src, i64 n)
{
    i64 i = 0;
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i))));
#endif
    for (; i < n; ++i)
        dst[i] = scalarF16ToFloat(src[i]);
}

void floatToF16(std::uint16_t *dst, const float *src, i64 n)
{
    i64 i = 0;
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
#endif
    for (; i < n; ++i)
        dst[i] = scalarToF16(src[i]);
}

trellis::kernels::cpu::simd::Kernels makeTable(const char *name)
{
    return {name,
            W,
            geluForward,
            geluBackward,
            add,
            columnSum,
            layerNormForward,
            layerNormBackward,
            crossEntropyForward,
            attentionForward,
            attentionBackward,
            bf16ToFloat,
            floatToBf16,
            f16ToFloat,
            floatToF16};
}

} // namespace
