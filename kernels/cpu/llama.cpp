// The llama architecture's kernels: RMSNorm, SwiGLU and rotary position embeddings; see ops.h.
// Plain loops for every element type (rows spread over the kernel threads); per-row results do
// not depend on the thread count, and dGamma is summed over rows in row order. The 16-bit types
// compute in fp32 (kernels/dtype.h).
#include "kernels/cpu/cpu_ops.h"

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

// Loads widen to A = acc_t<T> and stores round back (identities for float and double).
template <typename T>
void rmsNormForward(T *out, acc_t<T> *rstd, const T *in, const T *gamma, int N, int C, acc_t<T> eps)
{
    using A = acc_t<T>;
    forRows(N, [&](int i) {
        const T *x = in + static_cast<std::int64_t>(i) * C;
        A ss = 0;
        for (int c = 0; c < C; ++c)
            ss += toAcc(x[c]) * toAcc(x[c]);
        const A s = A(1) / std::sqrt(ss / static_cast<A>(C) + eps);
        T *y = out + static_cast<std::int64_t>(i) * C;
        for (int c = 0; c < C; ++c)
            y[c] = fromAcc<T>(toAcc(x[c]) * s * toAcc(gamma[c]));
        rstd[i] = s;
    });
}

template <typename T>
void rmsNormBackward(T *dIn, acc_t<T> *dGamma, const T *dOut, const T *in, const T *gamma, const acc_t<T> *rstd, int N, int C)
{
    using A = acc_t<T>;
    if (dGamma)
        for (int i = 0; i < N; ++i) {
            const T *x = in + static_cast<std::int64_t>(i) * C;
            const T *dy = dOut + static_cast<std::int64_t>(i) * C;
            for (int c = 0; c < C; ++c)
                dGamma[c] += toAcc(dy[c]) * toAcc(x[c]) * rstd[i];
        }
    if (!dIn)
        return;
    // y = x·s·g with s = (mean(x²) + eps)^(−1/2): dx = s·(g⊙dy) − x·s³·mean(x·g⊙dy).
    forRows(N, [&](int i) {
        const T *x = in + static_cast<std::int64_t>(i) * C;
        const T *dy = dOut + static_cast<std::int64_t>(i) * C;
        const A s = rstd[i];
        A dot = 0;
        for (int c = 0; c < C; ++c)
            dot += toAcc(dy[c]) * toAcc(gamma[c]) * toAcc(x[c]);
        const A k = s * s * s * dot / static_cast<A>(C);
        T *dx = dIn + static_cast<std::int64_t>(i) * C;
        for (int c = 0; c < C; ++c)
            dx[c] = fromAcc<T>(toAcc(dx[c]) + (s * toAcc(dy[c]) * toAcc(gamma[c]) - toAcc(x[c]) * k));
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
            y[j] = fromAcc<T>(toAcc(g[j]) * sigmoid(toAcc(g[j])) * toAcc(u[j]));
    });
}

template <typename T>
void swigluBackward(T *dIn, const T *in, const T *dOut, int N, int F)
{
    using A = acc_t<T>;
    forRows(N, [&](int i) {
        const T *g = in + static_cast<std::int64_t>(i) * 2 * F;
        const T *u = g + F;
        const T *dy = dOut + static_cast<std::int64_t>(i) * F;
        T *dg = dIn + static_cast<std::int64_t>(i) * 2 * F;
        T *du = dg + F;
        for (int j = 0; j < F; ++j) {
            const A gj = toAcc(g[j]), uj = toAcc(u[j]), dyj = toAcc(dy[j]);
            const A sg = sigmoid(gj);
            const A silu = gj * sg;
            dg[j] = fromAcc<T>(toAcc(dg[j]) + dyj * uj * sg * (A(1) + gj * (A(1) - sg)));
            du[j] = fromAcc<T>(toAcc(du[j]) + dyj * silu);
        }
    });
}

template <typename T>
void rope(T *x, const acc_t<T> *cosTable, const acc_t<T> *sinTable, int N, int seqLen, int firstPos, int ld, int heads,
          int hs, bool inverse)
{
    using A = acc_t<T>;
    const int half = hs / 2;
    const A sign = inverse ? A(-1) : A(1);
    forRows(N, [&](int i) {
        const std::int64_t pos = firstPos + i % seqLen;
        const A *cs = cosTable + pos * half;
        const A *sn = sinTable + pos * half;
        T *row = x + static_cast<std::int64_t>(i) * ld;
        for (int h = 0; h < heads; ++h) {
            T *a = row + static_cast<std::int64_t>(h) * hs;
            T *b = a + half;
            for (int j = 0; j < half; ++j) {
                const A c = cs[j], s = sign * sn[j];
                const A x1 = toAcc(a[j]), x2 = toAcc(b[j]);
                a[j] = fromAcc<T>(x1 * c - x2 * s);
                b[j] = fromAcc<T>(x2 * c + x1 * s);
            }
        }
    });
}

#define TRELLIS_LLAMA_KERNELS(T)                                                                                    \
    template void rmsNormForward<T>(T *, acc_t<T> *, const T *, const T *, int, int, acc_t<T>);                     \
    template void rmsNormBackward<T>(T *, acc_t<T> *, const T *, const T *, const T *, const acc_t<T> *, int, int); \
    template void swigluForward<T>(T *, const T *, int, int);                                                       \
    template void swigluBackward<T>(T *, const T *, const T *, int, int);                                           \
    template void rope<T>(T *, const acc_t<T> *, const acc_t<T> *, int, int, int, int, int, int, bool);
TRELLIS_LLAMA_KERNELS(float)
TRELLIS_LLAMA_KERNELS(double)
TRELLIS_LLAMA_KERNELS(bf16)
TRELLIS_LLAMA_KERNELS(f16)
#undef TRELLIS_LLAMA_KERNELS

} // namespace trellis::kernels::cpu
