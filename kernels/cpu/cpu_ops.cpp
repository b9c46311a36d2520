// GEMM (OpenBLAS), the linear layer and the residual add; see ops.h. With several kernel threads
// a float GEMM is split into single-threaded OpenBLAS calls on the kernel pool. The float linear
// layer adds its bias by starting C from the broadcast bias with beta = 1 (OpenBLAS would
// otherwise clear C for beta = 0 and a second pass would add the bias), and sums its bias
// gradient with the vector column sums, split by columns so that the row order of the sums never
// depends on the thread count.
#include "kernels/cpu/cpu_ops.h"

#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

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

// Rows per chunk for element-wise work over [rows, width] arrays: about 16K floats a chunk.
int rowGrain(int width)
{
    return std::max(1, 16384 / std::max(1, width));
}

// With several kernel threads the float GEMMs are split over them, each part a single-threaded
// OpenBLAS call: one set of threads (the pool's) runs everything, instead of OpenBLAS's workers
// spinning between GEMMs on the cores the other kernels need. OpenBLAS's own count is set to 1
// for the duration and restored.
class OpenblasSingleThreaded {
public:
    OpenblasSingleThreaded() : m_saved(openblas_get_num_threads())
    {
        if (m_saved != 1)
            openblas_set_num_threads(1);
    }
    ~OpenblasSingleThreaded()
    {
        if (m_saved != 1)
            openblas_set_num_threads(m_saved);
    }
    OpenblasSingleThreaded(const OpenblasSingleThreaded &) = delete;
    OpenblasSingleThreaded &operator=(const OpenblasSingleThreaded &) = delete;

private:
    int m_saved;
};

void splitGemm(int threads, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, float alpha, const float *A,
               int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    OpenblasSingleThreaded single;
    // Below ~1 MFLOP a split costs more than it gains.
    if (static_cast<double>(M) * N * K < (1 << 19)) {
        blasGemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    // Split C by rows when op(B) (packed again by every part) is the smaller operand, else by
    // columns (then op(A) is packed by every part); parts are whole multiples of 16.
    const bool byRows = static_cast<std::int64_t>(N) <= M;
    const int extent = byRows ? M : N;
    const int parts = std::max(1, std::min(threads, extent / 16));
    // Parts of a multiple of 16 that together cover the extent (rounding the floor of
    // extent/parts up to 16 could fall short: 97 rows in 6 parts of 16 dropped row 96).
    const int step = ((extent + parts - 1) / parts + 15) / 16 * 16;
    parallelFor(threads, parts, [&](int p) {
        const int from = p * step, to = std::min(extent, from + step);
        if (from >= to)
            return;
        if (byRows)
            blasGemm(ta, tb, to - from, N, K, alpha, ta == CblasTrans ? A + from : A + static_cast<std::int64_t>(from) * lda,
                     lda, B, ldb, beta, C + static_cast<std::int64_t>(from) * ldc, ldc);
        else
            blasGemm(ta, tb, M, to - from, K, alpha, A, lda, tb == CblasTrans ? B + static_cast<std::int64_t>(from) * ldb : B + from,
                     ldb, beta, C + from, ldc);
    });
}

} // namespace

template <typename T>
void gemm(bool transA, bool transB, int M, int N, int K, T alpha, const T *A, int lda, const T *B, int ldb, T beta,
          T *C, int ldc)
{
    if (M == 0 || N == 0)
        return;
    const CBLAS_TRANSPOSE ta = transA ? CblasTrans : CblasNoTrans, tb = transB ? CblasTrans : CblasNoTrans;
    if constexpr (std::is_same_v<T, float>) {
        if (const int threads = kernelThreads(); threads > 1) {
            splitGemm(threads, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
            return;
        }
    }
    blasGemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <typename T>
void gemm(bool transA, bool transB, int M, int N, int K, T alpha, const T *A, const T *B, T beta, T *C)
{
    gemm<T>(transA, transB, M, N, K, alpha, A, transA ? M : K, B, transB ? K : N, beta, C, N);
}

template <typename T>
void linearForward(T *out, const T *in, const T *weight, const T *bias, int BT, int C, int OC)
{
    if constexpr (std::is_same_v<T, float>) {
        if (bias) {
            parallelRange(BT, rowGrain(OC), [&](std::int64_t r0, std::int64_t r1) {
                for (std::int64_t i = r0; i < r1; ++i)
                    std::memcpy(out + i * OC, bias, sizeof(float) * static_cast<std::size_t>(OC));
            });
        }
        gemm<T>(false, true, BT, OC, C, T(1), in, C, weight, C, bias ? T(1) : T(0), out, OC);
    } else {
        gemm<T>(false, true, BT, OC, C, T(1), in, C, weight, C, T(0), out, OC);
        if (bias)
            for (int i = 0; i < BT; ++i)
                for (int o = 0; o < OC; ++o)
                    out[static_cast<std::int64_t>(i) * OC + o] += bias[o];
    }
}

template <typename T>
void linearBackward(T *dIn, acc_t<T> *dWeight, acc_t<T> *dBias, const T *dOut, const T *in, const T *weight, int BT, int C,
                    int OC)
{
    if (dIn)
        gemm<T>(false, false, BT, C, OC, T(1), dOut, OC, weight, C, T(1), dIn, C);
    if (dWeight)
        gemm<T>(true, false, OC, C, BT, T(1), dOut, OC, in, C, T(1), dWeight, C);
    if (!dBias)
        return;
    if constexpr (std::is_same_v<T, float>) {
        // Column slices of 64: each sums all rows in order.
        const int slice = 64;
        const auto &k = simd::active();
        parallelFor((OC + slice - 1) / slice, [&](int s) {
            const int c0 = s * slice;
            k.columnSum(dBias + c0, dOut + c0, BT, OC, std::min(slice, OC - c0));
        });
    } else {
        for (int i = 0; i < BT; ++i)
            for (int o = 0; o < OC; ++o)
                dBias[o] += dOut[static_cast<std::int64_t>(i) * OC + o];
    }
}

template <typename T>
void residualForward(T *out, const T *a, const T *b, std::int64_t n)
{
    if constexpr (std::is_same_v<T, float>) {
        const auto &k = simd::active();
        parallelRange(n, 16384, [&](std::int64_t i0, std::int64_t i1) { k.add(out + i0, a + i0, b + i0, i1 - i0); });
    } else {
        for (std::int64_t i = 0; i < n; ++i)
            out[i] = a[i] + b[i];
    }
}

#define TRELLIS_INSTANTIATE(T)                                                                              \
    template void gemm<T>(bool, bool, int, int, int, T, const T *, const T *, T, T *);                      \
    template void gemm<T>(bool, bool, int, int, int, T, const T *, int, const T *, int, T, T *, int);       \
    template void linearForward<T>(T *, const T *, const T *, const T *, int, int, int);                    \
    template void linearBackward<T>(T *, acc_t<T> *, acc_t<T> *, const T *, const T *, const T *, int, int, int); \
    template void residualForward<T>(T *, const T *, const T *, std::int64_t);

TRELLIS_INSTANTIATE(float)
TRELLIS_INSTANTIATE(double)
#undef TRELLIS_INSTANTIATE

} // namespace trellis::kernels::cpu
