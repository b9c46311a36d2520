// CPU reference kernels; see ops.h. Attention runs per (batch, head) as two GEMMs over strided
// views of qkv (leading dimension 3C), so no gather copies are needed.
#include "kernels/cpu/ops.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace trellis::kernels::cpu {
namespace {

void blasGemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, float alpha, const float *A, int lda,
              const float *B, int ldb, float beta, float *C, int ldc)
{
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void blasGemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, double alpha, const double *A, int lda,
              const double *B, int ldb, double beta, double *C, int ldc)
{
    cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

} // namespace

template <typename T>
void gemm(bool transA, bool transB, int M, int N, int K, T alpha, const T *A, int lda, const T *B, int ldb, T beta,
          T *C, int ldc)
{
    if (M == 0 || N == 0)
        return;
    blasGemm(transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B, ldb,
             beta, C, ldc);
}

template <typename T>
void gemm(bool transA, bool transB, int M, int N, int K, T alpha, const T *A, const T *B, T beta, T *C)
{
    gemm<T>(transA, transB, M, N, K, alpha, A, transA ? M : K, B, transB ? K : N, beta, C, N);
}

template <typename T>
void linearForward(T *out, const T *in, const T *weight, const T *bias, int BT, int C, int OC)
{
    gemm<T>(false, true, BT, OC, C, T(1), in, C, weight, C, T(0), out, OC);
    if (bias)
        for (int i = 0; i < BT; ++i)
            for (int o = 0; o < OC; ++o)
                out[static_cast<std::int64_t>(i) * OC + o] += bias[o];
}

template <typename T>
void linearBackward(T *dIn, T *dWeight, T *dBias, const T *dOut, const T *in, const T *weight, int BT, int C, int OC)
{
    if (dIn)
        gemm<T>(false, false, BT, C, OC, T(1), dOut, OC, weight, C, T(1), dIn, C);
    if (dWeight)
        gemm<T>(true, false, OC, C, BT, T(1), dOut, OC, in, C, T(1), dWeight, C);
    if (dBias)
        for (int i = 0; i < BT; ++i)
            for (int o = 0; o < OC; ++o)
                dBias[o] += dOut[static_cast<std::int64_t>(i) * OC + o];
}

template <typename T>
void layerNormForward(T *out, T *mean, T *rstd, const T *in, const T *gamma, const T *beta, int N, int C, T eps)
{
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
void layerNormBackward(T *dIn, T *dGamma, T *dBeta, const T *dOut, const T *in, const T *gamma, const T *mean,
                       const T *rstd, int N, int C)
{
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

template <typename T>
void geluForward(T *out, const T *in, std::int64_t n)
{
    const T k = std::sqrt(T(2) / std::numbers::pi_v<T>);
    for (std::int64_t i = 0; i < n; ++i) {
        const T x = in[i];
        out[i] = T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
    }
}

template <typename T>
void geluBackward(T *dIn, const T *in, const T *dOut, std::int64_t n)
{
    const T k = std::sqrt(T(2) / std::numbers::pi_v<T>);
    for (std::int64_t i = 0; i < n; ++i) {
        const T x = in[i];
        const T u = k * (x + T(0.044715) * x * x * x);
        const T t = std::tanh(u);
        const T sech2 = T(1) - t * t;
        const T local = T(0.5) * (T(1) + t) + T(0.5) * x * sech2 * k * (T(1) + T(3) * T(0.044715) * x * x);
        dIn[i] += local * dOut[i];
    }
}

template <typename T>
void attentionForward(T *out, T *att, const T *qkv, int B, int T_, int C, int NH)
{
    const int hs = C / NH;
    const T scale = T(1) / std::sqrt(static_cast<T>(hs));
    const int ld = 3 * C;
    for (int b = 0; b < B; ++b) {
        const T *base = qkv + static_cast<std::int64_t>(b) * T_ * ld;
        for (int h = 0; h < NH; ++h) {
            const T *q = base + h * hs;
            const T *k = base + C + h * hs;
            const T *v = base + 2 * C + h * hs;
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
void attentionBackward(T *dqkv, T *scratch, const T *dOut, const T *qkv, const T *att, int B, int T_, int C, int NH)
{
    const int hs = C / NH;
    const T scale = T(1) / std::sqrt(static_cast<T>(hs));
    const int ld = 3 * C;
    for (int b = 0; b < B; ++b) {
        const T *base = qkv + static_cast<std::int64_t>(b) * T_ * ld;
        T *dbase = dqkv + static_cast<std::int64_t>(b) * T_ * ld;
        const T *dO = dOut + static_cast<std::int64_t>(b) * T_ * C;
        for (int h = 0; h < NH; ++h) {
            const T *q = base + h * hs;
            const T *k = base + C + h * hs;
            const T *v = base + 2 * C + h * hs;
            const T *p = att + (static_cast<std::int64_t>(b) * NH + h) * T_ * T_;
            const T *dOh = dO + h * hs;
            T *dS = scratch;
            // dP = dO·Vᵀ, dV += Pᵀ·dO
            gemm<T>(false, true, T_, T_, hs, T(1), dOh, C, v, ld, T(0), dS, T_);
            gemm<T>(true, false, T_, hs, T_, T(1), p, T_, dOh, C, T(1), dbase + 2 * C + h * hs, ld);
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
            gemm<T>(true, false, T_, hs, T_, scale, dS, T_, q, ld, T(1), dbase + C + h * hs, ld);
        }
    }
}

template <typename T>
void residualForward(T *out, const T *a, const T *b, std::int64_t n)
{
    for (std::int64_t i = 0; i < n; ++i)
        out[i] = a[i] + b[i];
}

template <typename T>
void crossEntropyForward(T *losses, T *probs, const T *logits, const std::int32_t *targets, int BT, int V)
{
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

template <typename T>
void crossEntropyBackward(T *dLogits, const T *probs, const std::int32_t *targets, T scale, int BT, int V)
{
    for (int i = 0; i < BT; ++i) {
        const T *p = probs + static_cast<std::int64_t>(i) * V;
        T *d = dLogits + static_cast<std::int64_t>(i) * V;
        for (int j = 0; j < V; ++j)
            d[j] = p[j] * scale;
        d[targets[i]] -= scale;
    }
}

template <typename T>
void encoderForward(T *out, const std::int32_t *tokens, const T *wte, const T *wpe, int B, int T_, int C)
{
    for (int b = 0; b < B; ++b)
        for (int t = 0; t < T_; ++t) {
            const std::int64_t i = static_cast<std::int64_t>(b) * T_ + t;
            const T *e = wte + static_cast<std::int64_t>(tokens[i]) * C;
            const T *p = wpe + static_cast<std::int64_t>(t) * C;
            for (int c = 0; c < C; ++c)
                out[i * C + c] = e[c] + p[c];
        }
}

template <typename T>
void encoderBackward(T *dwte, T *dwpe, const T *dOut, const std::int32_t *tokens, int B, int T_, int C)
{
    for (int b = 0; b < B; ++b)
        for (int t = 0; t < T_; ++t) {
            const std::int64_t i = static_cast<std::int64_t>(b) * T_ + t;
            T *e = dwte + static_cast<std::int64_t>(tokens[i]) * C;
            T *p = dwpe + static_cast<std::int64_t>(t) * C;
            for (int c = 0; c < C; ++c) {
                e[c] += dOut[i * C + c];
                p[c] += dOut[i * C + c];
            }
        }
}

#define TRELLIS_INSTANTIATE(T)                                                                                   \
    template void gemm<T>(bool, bool, int, int, int, T, const T *, const T *, T, T *);                           \
    template void gemm<T>(bool, bool, int, int, int, T, const T *, int, const T *, int, T, T *, int);            \
    template void linearForward<T>(T *, const T *, const T *, const T *, int, int, int);                         \
    template void linearBackward<T>(T *, T *, T *, const T *, const T *, const T *, int, int, int);              \
    template void layerNormForward<T>(T *, T *, T *, const T *, const T *, const T *, int, int, T);              \
    template void layerNormBackward<T>(T *, T *, T *, const T *, const T *, const T *, const T *, const T *, int, \
                                       int);                                                                     \
    template void geluForward<T>(T *, const T *, std::int64_t);                                                  \
    template void geluBackward<T>(T *, const T *, const T *, std::int64_t);                                      \
    template void attentionForward<T>(T *, T *, const T *, int, int, int, int);                                  \
    template void attentionBackward<T>(T *, T *, const T *, const T *, const T *, int, int, int, int);           \
    template void residualForward<T>(T *, const T *, const T *, std::int64_t);                                   \
    template void crossEntropyForward<T>(T *, T *, const T *, const std::int32_t *, int, int);                   \
    template void crossEntropyBackward<T>(T *, const T *, const std::int32_t *, T, int, int);                    \
    template void encoderForward<T>(T *, const std::int32_t *, const T *, const T *, int, int, int);             \
    template void encoderBackward<T>(T *, T *, const T *, const std::int32_t *, int, int, int);

TRELLIS_INSTANTIATE(float)
TRELLIS_INSTANTIATE(double)
#undef TRELLIS_INSTANTIATE

} // namespace trellis::kernels::cpu
