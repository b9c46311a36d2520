// LayerNorm forward and backward; see ops.h. Float rows are normalised by the vector kernels
// (simd_impl.h) in chunks of rows spread over the kernel threads. The backward's dGamma/dBeta
// are summed per chunk of a fixed 32 rows and the chunk sums added in chunk order, so they do
// not depend on the thread count, and dOut and the input are read only once.
#include "kernels/cpu/cpu_ops.h"

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

namespace trellis::kernels::cpu {
namespace {

constexpr int kRowsPerChunk = 32;

void layerNormForwardFloat(float *out, float *mean, float *rstd, const float *in, const float *gamma,
                           const float *beta, int N, int C, float eps)
{
    const auto &k = simd::active();
    const int chunks = (N + kRowsPerChunk - 1) / kRowsPerChunk;
    parallelFor(chunks, [&](int c) {
        const int r0 = c * kRowsPerChunk, rows = std::min(kRowsPerChunk, N - r0);
        const std::int64_t at = static_cast<std::int64_t>(r0) * C;
        k.layerNormForward(out + at, mean + r0, rstd + r0, in + at, gamma, beta, rows, C, eps);
    });
}

void layerNormBackwardFloat(float *dIn, float *dGamma, float *dBeta, const float *dOut, const float *in,
                            const float *gamma, const float *mean, const float *rstd, int N, int C)
{
    const auto &k = simd::active();
    const int chunks = (N + kRowsPerChunk - 1) / kRowsPerChunk;
    const bool params = dGamma || dBeta;
    // Per chunk: C partial dGamma sums, then C partial dBeta sums.
    thread_local std::vector<float> partial;
    if (params)
        partial.assign(static_cast<std::size_t>(chunks) * 2 * C, 0.0f);
    float *part = partial.data();
    parallelFor(chunks, [&](int c) {
        const int r0 = c * kRowsPerChunk, rows = std::min(kRowsPerChunk, N - r0);
        const std::int64_t at = static_cast<std::int64_t>(r0) * C;
        float *pg = params && dGamma ? part + static_cast<std::int64_t>(c) * 2 * C : nullptr;
        float *pb = params && dBeta ? part + static_cast<std::int64_t>(c) * 2 * C + C : nullptr;
        k.layerNormBackward(dIn ? dIn + at : nullptr, pg, pb, dOut + at, in + at, gamma, mean + r0, rstd + r0, rows,
                            C);
    });
    if (!params)
        return;
    // dGamma and dBeta += Σ over chunks, in chunk order (the column sum of the partials).
    if (dGamma)
        k.columnSum(dGamma, part, chunks, 2 * static_cast<std::int64_t>(C), C);
    if (dBeta)
        k.columnSum(dBeta, part + C, chunks, 2 * static_cast<std::int64_t>(C), C);
}

} // namespace

template <typename T>
void layerNormForward(T *out, acc_t<T> *mean, acc_t<T> *rstd, const T *in, const T *gamma, const T *beta, int N, int C,
                      acc_t<T> eps)
{
    if constexpr (std::is_same_v<T, float>) {
        layerNormForwardFloat(out, mean, rstd, in, gamma, beta, N, C, eps);
        return;
    }
    for (int i = 0; i < N; ++i) {
        const T *x = in + static_cast<std::int64_t>(i) * C;
        T m = 0;
        for (int c = 0; c < C; ++c)
            m += x[c];
        m /= C;
        T v = 0;
        for (int c = 0; c < C; ++c)
            v += (x[c] - m) * (x[c] - m);
        v /= C;
        const T s = T(1) / std::sqrt(v + eps);
        T *y = out + static_cast<std::int64_t>(i) * C;
        for (int c = 0; c < C; ++c)
            y[c] = (x[c] - m) * s * gamma[c] + beta[c];
        mean[i] = m;
        rstd[i] = s;
    }
}

template <typename T>
void layerNormBackward(T *dIn, acc_t<T> *dGamma, acc_t<T> *dBeta, const T *dOut, const T *in, const T *gamma,
                       const acc_t<T> *mean, const acc_t<T> *rstd, int N, int C)
{
    if constexpr (std::is_same_v<T, float>) {
        layerNormBackwardFloat(dIn, dGamma, dBeta, dOut, in, gamma, mean, rstd, N, C);
        return;
    }
    for (int i = 0; i < N; ++i) {
        const T *x = in + static_cast<std::int64_t>(i) * C;
        const T *dy = dOut + static_cast<std::int64_t>(i) * C;
        const T m = mean[i], s = rstd[i];
        if (dGamma || dBeta) {
            for (int c = 0; c < C; ++c) {
                const T norm = (x[c] - m) * s;
                if (dBeta)
                    dBeta[c] += dy[c];
                if (dGamma)
                    dGamma[c] += norm * dy[c];
            }
        }
        if (!dIn)
            continue;
        T *dx = dIn + static_cast<std::int64_t>(i) * C;
        T meanD = 0, meanDNorm = 0;
        for (int c = 0; c < C; ++c) {
            const T norm = (x[c] - m) * s;
            const T d = dy[c] * gamma[c];
            meanD += d;
            meanDNorm += d * norm;
        }
        meanD /= C;
        meanDNorm /= C;
        for (int c = 0; c < C; ++c) {
            const T norm = (x[c] - m) * s;
            const T d = dy[c] * gamma[c];
            dx[c] += s * (d - meanD - norm * meanDNorm);
        }
    }
}

template void layerNormForward<float>(float *, float *, float *, const float *, const float *, const float *, int,
                                      int, float);
template void layerNormForward<double>(double *, double *, double *, const double *, const double *,
                                       const double *, int, int, double);
template void layerNormBackward<float>(float *, float *, float *, const float *, const float *, const float *,
                                       const float *, const float *, int, int);
template void layerNormBackward<double>(double *, double *, double *, const double *, const double *,
                                        const double *, const double *, const double *, int, int);

} // namespace trellis::kernels::cpu
