// Shared pieces of the CUDA kernels: error checks that name the call and where it was made,
// launch sizes, warp and block reductions, each stream's scratch memory and the row-major GEMM over
// cuBLASLt (device_state.cu).
#pragma once

#include "kernels/cuda/cuda_ops.h"
#include "kernels/stream.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace trellis::kernels::cuda {

[[noreturn]] void fail(const char *file, int line, const char *call, const char *error);
const char *statusName(cublasStatus_t status); // cuBLAS's own is in libcublas, which we do not link

#define TRELLIS_CUDA_CHECK(call)                                                                                   \
    do {                                                                                                           \
        const cudaError_t trellisError = (call);                                                                   \
        if (trellisError != cudaSuccess)                                                                           \
            ::trellis::kernels::cuda::fail(__FILE__, __LINE__, #call, cudaGetErrorString(trellisError));          \
    } while (0)
#define TRELLIS_CUBLAS_CHECK(call)                                                                                 \
    do {                                                                                                           \
        const cublasStatus_t trellisStatus = (call);                                                               \
        if (trellisStatus != CUBLAS_STATUS_SUCCESS)                                                                \
            ::trellis::kernels::cuda::fail(__FILE__, __LINE__, #call, statusName(trellisStatus));               \
    } while (0)
// After a <<<...>>> launch: a bad configuration is reported here, a fault at the next sync.
#define TRELLIS_CUDA_LAUNCHED(kernel)                                                                              \
    do {                                                                                                           \
        const cudaError_t trellisError = cudaGetLastError();                                                       \
        if (trellisError != cudaSuccess)                                                                           \
            ::trellis::kernels::cuda::fail(__FILE__, __LINE__, #kernel "<<<>>>", cudaGetErrorString(trellisError)); \
    } while (0)

inline cudaStream_t native(const Stream &s) { return static_cast<cudaStream_t>(s.handle); }

inline unsigned gridFor(std::int64_t n, int threads, std::int64_t cap = 65535LL * 32)
{
    std::int64_t g = (n + threads - 1) / threads;
    if (g > cap)
        g = cap;
    return static_cast<unsigned>(g < 1 ? 1 : g);
}

__device__ inline float warpSum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ inline double warpSum(double v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ inline float warpMax(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
// Sum (or max) over the block, in a fixed order (deterministic); every thread gets the result.
// `shared` holds 32 values; blockDim.x is a multiple of 32.
template <typename V, typename Op>
__device__ V blockReduce(V v, V *shared, Op op)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    for (int o = 16; o > 0; o >>= 1)
        v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    __syncthreads(); // shared may still be read by an earlier call
    if (lane == 0)
        shared[warp] = v;
    __syncthreads();
    V r = shared[0];
    for (int w = 1; w < warps; ++w)
        r = op(r, shared[w]);
    return r;
}
struct Add {
    template <typename V>
    __device__ V operator()(V a, V b) const { return a + b; }
};
struct Max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// Loads any element type as float and stores a float back rounded (kernels/dtype.h: the CPU's
// rounding, bit for bit): the templated kernels compute in fp32 for float and bf16 alike.
template <typename T>
__device__ __forceinline__ float ld(T x)
{
    return toAcc(x);
}
template <typename T>
__device__ __forceinline__ T st(float v)
{
    return fromAcc<T>(v);
}

// 16 bytes of elements (4 float, 8 bf16): kernels load and store whole packs where every pointer
// is 16-byte aligned and the row length a multiple of the pack, else element by element.
template <typename T>
struct alignas(16) Pack {
    static constexpr int kSize = 16 / sizeof(T);
    T v[kSize];
};

// cuBLASLt's name for an element type.
template <typename T>
constexpr cudaDataType_t cudaType()
{
    if constexpr (std::is_same_v<T, bf16>)
        return CUDA_R_16BF;
    else
        return CUDA_R_32F;
}

// Scratch device memory of `stream`, at least `bytes`, valid until the next call on that stream
// (its ops run one after another, so an op may use it freely; growing it is stream-ordered, no
// other stream waits). The cuBLASLt workspace of the stream, workspaceBytes() large.
void *scratch(cudaStream_t stream, std::size_t bytes);
// A token outside [0, V) the encoder met (it reads and writes nothing for it) is noted on the
// device (embedding.cu) and raised, naming it and its position, by the next host call that waits
// for the stream (toHost, synchronize): checkBadTokens, after the wait.
void noteBadTokens(const Stream &s, const std::int32_t *tokens, std::int64_t n, int V);
void checkBadTokens();
void *workspace(cudaStream_t stream);
std::size_t workspaceBytes();

// Row-major C[M,N] = alpha·op(A)·op(B) + beta·C (+ bias[N] on every row), `batch` times with
// element strides sA, sB, sC between the matrices; op(A) is [M,K] (A is [K,M] when transA).
// A and B are of type `ab`, C (and the bias) of type `c`: fp32 or bf16, accumulated in fp32
// (bf16 on tensor cores; fp32 with TF32 tensor cores when setTf32).
void gemm(cudaStream_t stream, bool transA, bool transB, int M, int N, int K, float alpha, const void *A, int lda,
          long long sA, const void *B, int ldb, long long sB, float beta, void *C, int ldc, long long sC, int batch,
          const void *bias = nullptr, cudaDataType_t ab = CUDA_R_32F, cudaDataType_t c = CUDA_R_32F);

// out[c] += Σ over rows r < N of value(r, c), for c < C, in a fixed order (deterministic).
// Used for bias, gain and shift gradients.
template <typename F>
__global__ void columnPartials(float *partial, int N, int C, int rowsPerChunk, F value)
{
    __shared__ float tile[8][33];
    const int c = blockIdx.x * 32 + threadIdx.x;
    const int r0 = blockIdx.y * rowsPerChunk;
    const int r1 = min(N, r0 + rowsPerChunk);
    float acc = 0.0f;
    if (c < C)
        for (int r = r0 + threadIdx.y; r < r1; r += 8)
            acc += value(r, c);
    tile[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
        float s = tile[0][threadIdx.x];
        for (int y = 1; y < 8; ++y)
            s += tile[y][threadIdx.x];
        partial[static_cast<std::int64_t>(blockIdx.y) * C + c] = s;
    }
}
// out[c] += Σ over k < chunks of partial[k·ld + c], for c < C: a block of 32×32 threads per 32
// columns, each thread a fixed stride of the chunks, then the 32 in order (deterministic).
void columnFinish(cudaStream_t stream, float *out, const float *partial, int chunks, int C, long long ld);

template <typename F>
void columnSum(cudaStream_t stream, float *out, int N, int C, F value)
{
    if (!out || N <= 0 || C <= 0)
        return;
    const int rowsPerChunk = 256;
    const int chunks = (N + rowsPerChunk - 1) / rowsPerChunk;
    float *partial = static_cast<float *>(scratch(stream, static_cast<std::size_t>(chunks) * C * sizeof(float)));
    columnPartials<<<dim3((C + 31) / 32, chunks), dim3(32, 8), 0, stream>>>(partial, N, C, rowsPerChunk, value);
    TRELLIS_CUDA_LAUNCHED(columnPartials);
    columnFinish(stream, out, partial, chunks, C, C);
}

} // namespace trellis::kernels::cuda
