// The llama architecture's kernels: RMSNorm, SwiGLU and rotary position embeddings; see ops.h.
// Plain loops for both scalars (float rows spread over the kernel threads); per-row results do
// not depend on the thread count, and dGamma is summed over rows in row order.
#include "kernels/cpu/ops.h"

#include "kernels/cpu/parallel.h"

#include <cmath>
#include <cstdint>

namespace trellis::kernels::cpu {
namespace {

template <typename F>
void forRows(int N, F &&f)
{
    constexpr int kRows = 16;
    const int chunks = (N + kRows - 1) / kRows;
    parallelFor(chunks, [&](int chunk) {
        const int end = std::min(N, (chunk + 1) * kRows);
        for (int i = chunk * kRows; i < end; ++i)
            f(i);
    });
}

template <typename T>
T sigmoid(T x)
{
    return T(1) / (T(1) + std::exp(-x));
}

} // namespace

template <typename T>
void rmsNormForward(T *out, T *rstd, const T *in, const T *gamma, int N, int C, T eps)
{
    forRows(N, [&](int i) {
        const T *x = in + static_cast<std::int64_t>(i) * C;
        T ss = 0;
        for (int c = 0; c < C; ++c)
            ss += x[c] * x[c];
        const T s = T(1) / std::sqrt(ss / static_cast<T>(C) + eps);
        T *y = out + static_cast<std::int64_t>(i) * C;
        for (int c = 0; c < C; ++c)
            y[c] = x[c] * s * gamma[c];
        rstd[i] = s;
    });
}

template <typename T>
void rmsNormBackward(T *dIn, T *dGamma, const T *dOut, const T *in, const T *gamma, const T *rstd, int N, int C)
{
    if (dGamma)
        for (int i = 0; i < N; ++i) {
            const T *x = in + static_cast<std::int64_t>(i) * C;
            const T *dy = dOut + static_cast<std::int64_t>(i) * C;
            for (int c = 0; c < C; ++c)
                dGamma[c] += dy[c] * x[c] * rstd[i];
        }
    if (!dIn)
        return;
    // y = x·s·g with s = (mean(x²) + eps)^(−1/2): dx = s·(g⊙dy) − x·s³·mean(x·g⊙dy).
    forRows(N, [&](int i) {
        const T *x = in + static_cast<std::int64_t>(i) * C;
        const T *dy = dOut + static_cast<std::int64_t>(i) * C;
        const T s = rstd[i];
        T dot = 0;
        for (int c = 0; c < C; ++c)
            dot += dy[c] * gamma[c] * x[c];
        const T k = s * s * s * dot / static_cast<T>(C);
        T *dx = dIn + static_cast<std::int64_t>(i) * C;
        for (int c = 0; c < C; ++c)
            dx[c] += s * dy[c] * gamma[c] - x[c] * k;
    });
}

template <typename T>
void swigluForward(T *out, const T *in, int N, int F)
{
    forRows(N, [&](int i) {
        const T *g = in + static_cast<std::int64_t>(i) * 2 * F;
        const T *u = g + F;
        T *y = out + static_cast<std::int64_t>(i) * F;
        for (int j = 0; j < F; ++j)
            y[j] = g[j] * sigmoid(g[j]) * u[j];
    });
}

template <typename T>
void swigluBackward(T *dIn, const T *in, const T *dOut, int N, int F)
{
    forRows(N, [&](int i) {
        const T *g = in + static_cast<std::int64_t>(i) * 2 * F;
        const T *u = g + F;
        const T *dy = dOut + static_cast<std::int64_t>(i) * F;
        T *dg = dIn + static_cast<std::int64_t>(i) * 2 * F;
        T *du = dg + F;
        for (int j = 0; j < F; ++j) {
            const T sg = sigmoid(g[j]);
            const T silu = g[j] * sg;
            dg[j] += dy[j] * u[j] * sg * (T(1) + g[j] * (T(1) - sg));
            du[j] += dy[j] * silu;
        }
    });
}

template <typename T>
void rope(T *x, const T *cosTable, const T *sinTable, int N, int seqLen, int firstPos, int ld, int heads, int hs,
          bool inverse)
{
    const int half = hs / 2;
    const T sign = inverse ? T(-1) : T(1);
    forRows(N, [&](int i) {
        const std::int64_t pos = firstPos + i % seqLen;
        const T *cs = cosTable + pos * half;
        const T *sn = sinTable + pos * half;
        T *row = x + static_cast<std::int64_t>(i) * ld;
        for (int h = 0; h < heads; ++h) {
            T *a = row + static_cast<std::int64_t>(h) * hs;
            T *b = a + half;
            for (int j = 0; j < half; ++j) {
                const T c = cs[j], s = sign * sn[j];
                const T x1 = a[j], x2 = b[j];
                a[j] = x1 * c - x2 * s;
                b[j] = x2 * c + x1 * s;
            }
        }
    });
}

#define TRELLIS_LLAMA_KERNELS(T)                                                                                    \
    template void rmsNormForward<T>(T *, T *, const T *, const T *, int, int, T);                                   \
    template void rmsNormBackward<T>(T *, T *, const T *, const T *, const T *, const T *, int, int);                \
    template void swigluForward<T>(T *, const T *, int, int);                                                       \
    template void swigluBackward<T>(T *, const T *, const T *, int, int);                                           \
    template void rope<T>(T *, const T *, const T *, int, int, int, int, int, int, bool);
TRELLIS_LLAMA_KERNELS(float)
TRELLIS_LLAMA_KERNELS(double)
#undef TRELLIS_LLAMA_KERNELS

} // namespace trellis::kernels::cpu
