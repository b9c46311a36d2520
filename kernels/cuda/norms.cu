// LayerNorm and RMSNorm forward and backward (CPU references: kernels/cpu/norms.cpp, llama.cpp):
// one warp per row. The backward reads each row once: the input gradient and the row's share of
// the gain and shift gradients together, each warp adding the latter into its own shared-memory
// sums; the blocks' sums are then added in block order (deterministic). Rows too wide for shared
// memory fall back to separate column sums (columnSum).
#include "kernels/cuda/common.cuh"

#include <algorithm>

namespace trellis::kernels::cuda {
namespace {

constexpr float kEps = 1e-5f;
constexpr int kRowsPerBlock = 8; // warps of 32

template <typename T>
__global__ void layerNormForwardKernel(T *out, float *mean, float *rstd, const T *in, const T *gamma, const T *beta,
                                       int N, int C)
{
    const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N)
        return;
    const T *x = in + static_cast<std::int64_t>(row) * C;
    float s = 0.0f;
    for (int c = lane; c < C; c += 32)
        s += ld(x[c]);
    const float m = warpSum(s) / C;
    float v = 0.0f;
    for (int c = lane; c < C; c += 32) {
        const float d = ld(x[c]) - m;
        v += d * d;
    }
    const float r = 1.0f / sqrtf(warpSum(v) / C + kEps);
    T *y = out + static_cast<std::int64_t>(row) * C;
    for (int c = lane; c < C; c += 32)
        y[c] = st<T>((ld(x[c]) - m) * r * ld(gamma[c]) + (beta ? ld(beta[c]) : 0.0f));
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = r;
    }
}

// dIn += rstd·(g·dy − mean(g·dy) − x̂·mean(g·dy·x̂)), x̂ = (x − mean)·rstd.
template <typename T>
__global__ void layerNormBackwardKernel(T *dIn, const T *dOut, const T *in, const T *gamma, const float *mean,
                                        const float *rstd, int N, int C)
{
    const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N)
        return;
    const std::int64_t at = static_cast<std::int64_t>(row) * C;
    const float m = mean[row], r = rstd[row];
    float a = 0.0f, b = 0.0f;
    for (int c = lane; c < C; c += 32) {
        const float dn = ld(gamma[c]) * ld(dOut[at + c]);
        a += dn;
        b += dn * (ld(in[at + c]) - m) * r;
    }
    a = warpSum(a) / C;
    b = warpSum(b) / C;
    for (int c = lane; c < C; c += 32) {
        const float xh = (ld(in[at + c]) - m) * r;
        dIn[at + c] = st<T>(ld(dIn[at + c]) + r * (ld(gamma[c]) * ld(dOut[at + c]) - a - xh * b));
    }
}

template <typename T>
__global__ void rmsNormForwardKernel(T *out, float *rstd, const T *in, const T *gamma, int N, int C)
{
    const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N)
        return;
    const T *x = in + static_cast<std::int64_t>(row) * C;
    float s = 0.0f;
    for (int c = lane; c < C; c += 32)
        s += ld(x[c]) * ld(x[c]);
    const float r = 1.0f / sqrtf(warpSum(s) / C + kEps);
    T *y = out + static_cast<std::int64_t>(row) * C;
    for (int c = lane; c < C; c += 32)
        y[c] = st<T>(ld(x[c]) * r * ld(gamma[c]));
    if (lane == 0)
        rstd[row] = r;
}

// dIn += rstd·(g·dy − x̂·mean(g·dy·x̂)), x̂ = x·rstd.
template <typename T>
__global__ void rmsNormBackwardKernel(T *dIn, const T *dOut, const T *in, const T *gamma, const float *rstd, int N,
                                      int C)
{
    const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N)
        return;
    const std::int64_t at = static_cast<std::int64_t>(row) * C;
    const float r = rstd[row];
    float b = 0.0f;
    for (int c = lane; c < C; c += 32)
        b += ld(gamma[c]) * ld(dOut[at + c]) * ld(in[at + c]) * r;
    b = warpSum(b) / C;
    for (int c = lane; c < C; c += 32)
        dIn[at + c] = st<T>(ld(dIn[at + c]) + r * (ld(gamma[c]) * ld(dOut[at + c]) - ld(in[at + c]) * r * b));
}

// K elements at p into floats (K = 1, or a whole 16-byte pack), and back.
template <typename T, int K>
__device__ inline void loadRun(float (&f)[K], const T *p)
{
    if constexpr (K == 1) {
        f[0] = ld(*p);
    } else {
        const Pack<T> v = *reinterpret_cast<const Pack<T> *>(p);
        for (int k = 0; k < K; ++k)
            f[k] = ld(v.v[k]);
    }
}
template <typename T, int K>
__device__ inline void storeRun(T *p, const float (&f)[K])
{
    if constexpr (K == 1) {
        *p = st<T>(f[0]);
    } else {
        Pack<T> v;
        for (int k = 0; k < K; ++k)
            v.v[k] = st<T>(f[k]);
        *reinterpret_cast<Pack<T> *>(p) = v;
    }
}

// The fused backward: a block of `warps` warps takes rowsPerBlock consecutive rows, a warp a row at a
// time, each lane K consecutive columns at a time (K = 1, or 16-byte packs where rows allow). Each
// warp keeps Σ dy·x̂ and Σ dy over its rows per column in shared memory ([warps][2C]); the block
// writes their sum (warps in order) to partial[block][2C]. Rms: no mean, no shift.
template <typename T, bool Rms, int K>
__global__ void normBackwardFused(T *dIn, float *partial, const T *dOut, const T *in, const T *gamma,
                                  const float *mean, const float *rstd, int N, int C, int rowsPerBlock)
{
    extern __shared__ float sums[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    float *mine = sums + static_cast<std::int64_t>(warp) * 2 * C;
    for (int c = lane; c < 2 * C; c += 32)
        mine[c] = 0.0f;
    __syncwarp();
    const int r0 = blockIdx.x * rowsPerBlock, r1 = min(N, r0 + rowsPerBlock);
    for (int row = r0 + warp; row < r1; row += warps) {
        const std::int64_t at = static_cast<std::int64_t>(row) * C;
        const float m = Rms ? 0.0f : mean[row], r = rstd[row];
        float a = 0.0f, b = 0.0f;
        for (int c0 = lane * K; c0 < C; c0 += 32 * K) {
            float dy[K], x[K], g[K];
            loadRun<T, K>(dy, dOut + at + c0);
            loadRun<T, K>(x, in + at + c0);
            loadRun<T, K>(g, gamma + c0);
            for (int k = 0; k < K; ++k) {
                const float xh = (x[k] - m) * r, dn = g[k] * dy[k];
                a += dn;
                b += dn * xh;
                mine[c0 + k] += dy[k] * xh;
                mine[C + c0 + k] += dy[k];
            }
        }
        if (!dIn)
            continue;
        a = Rms ? 0.0f : warpSum(a) / C;
        b = warpSum(b) / C;
        for (int c0 = lane * K; c0 < C; c0 += 32 * K) {
            float dy[K], x[K], g[K], d[K];
            loadRun<T, K>(dy, dOut + at + c0);
            loadRun<T, K>(x, in + at + c0);
            loadRun<T, K>(g, gamma + c0);
            loadRun<T, K>(d, dIn + at + c0);
            for (int k = 0; k < K; ++k)
                d[k] += r * (g[k] * dy[k] - a - (x[k] - m) * r * b);
            storeRun<T, K>(dIn + at + c0, d);
        }
    }
    __syncthreads();
    for (int c = threadIdx.x; c < 2 * C; c += blockDim.x) {
        float total = 0.0f;
        for (int w = 0; w < warps; ++w)
            total += sums[static_cast<std::int64_t>(w) * 2 * C + c];
        partial[static_cast<std::int64_t>(blockIdx.x) * 2 * C + c] = total;
    }
}

bool aligned16(const void *p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Runs the fused backward; false when a warp's 2·C sums do not fit in 48 KiB of shared memory.
template <typename T, bool Rms>
bool normBackwardFusedLaunch(cudaStream_t stream, T *dIn, float *dGamma, float *dBeta, const T *dOut, const T *in,
                             const T *gamma, const float *mean, const float *rstd, int N, int C)
{
    const std::size_t perWarp = 2 * static_cast<std::size_t>(C) * sizeof(float);
    const int warps = static_cast<int>(std::min<std::size_t>(8, (48u << 10) / perWarp));
    if (warps < 1)
        return false;
    const int maxBlocks = 512;
    int rowsPerBlock = (N + maxBlocks - 1) / maxBlocks;
    rowsPerBlock = std::max(warps, (rowsPerBlock + warps - 1) / warps * warps);
    const int blocks = (N + rowsPerBlock - 1) / rowsPerBlock;
    float *partial = static_cast<float *>(scratch(stream, static_cast<std::size_t>(blocks) * 2 * C * sizeof(float)));
    constexpr int K = Pack<T>::kSize;
    const bool packed = C % K == 0 && aligned16(dIn) && aligned16(dOut) && aligned16(in) && aligned16(gamma);
    if (packed)
        normBackwardFused<T, Rms, K><<<blocks, 32 * warps, warps * perWarp, stream>>>(dIn, partial, dOut, in, gamma, mean,
                                                                                      rstd, N, C, rowsPerBlock);
    else
        normBackwardFused<T, Rms, 1><<<blocks, 32 * warps, warps * perWarp, stream>>>(dIn, partial, dOut, in, gamma, mean,
                                                                                      rstd, N, C, rowsPerBlock);
    TRELLIS_CUDA_LAUNCHED(normBackwardFused);
    columnFinish(stream, dGamma, partial, blocks, C, 2LL * C);
    columnFinish(stream, dBeta, partial + C, blocks, C, 2LL * C);
    return true;
}

template <typename T>
struct LayerNormGain {
    const T *dOut, *in;
    const float *mean, *rstd;
    int C;
    __device__ float operator()(int r, int c) const
    {
        const std::int64_t at = static_cast<std::int64_t>(r) * C + c;
        return ld(dOut[at]) * (ld(in[at]) - mean[r]) * rstd[r];
    }
};
template <typename T>
struct RmsNormGain {
    const T *dOut, *in;
    const float *rstd;
    int C;
    __device__ float operator()(int r, int c) const
    {
        const std::int64_t at = static_cast<std::int64_t>(r) * C + c;
        return ld(dOut[at]) * ld(in[at]) * rstd[r];
    }
};
template <typename T>
struct Column {
    const T *data;
    int C;
    __device__ float operator()(int r, int c) const { return ld(data[static_cast<std::int64_t>(r) * C + c]); }
};

unsigned rowBlocks(int N) { return static_cast<unsigned>((N + kRowsPerBlock - 1) / kRowsPerBlock); }

} // namespace

template <typename T>
void columnSumOf(cudaStream_t stream, float *out, const T *data, int N, int C)
{
    columnSum(stream, out, N, C, Column<T>{data, C});
}

template <typename T>
void layerNormForward(const Stream &s, T *out, float *mean, float *rstd, const T *in, const T *gamma, const T *beta,
                      int N, int C)
{
    if (N <= 0)
        return;
    layerNormForwardKernel<<<rowBlocks(N), 32 * kRowsPerBlock, 0, native(s)>>>(out, mean, rstd, in, gamma, beta, N, C);
    TRELLIS_CUDA_LAUNCHED(layerNormForwardKernel);
}

template <typename T>
void layerNormBackward(const Stream &s, T *dIn, float *dGamma, float *dBeta, const T *dOut, const T *in, const T *gamma,
                       const float *mean, const float *rstd, int N, int C)
{
    if (N <= 0)
        return;
    if (normBackwardFusedLaunch<T, false>(native(s), dIn, dGamma, dBeta, dOut, in, gamma, mean, rstd, N, C))
        return;
    if (dIn) {
        layerNormBackwardKernel<<<rowBlocks(N), 32 * kRowsPerBlock, 0, native(s)>>>(dIn, dOut, in, gamma, mean, rstd,
                                                                                      N, C);
        TRELLIS_CUDA_LAUNCHED(layerNormBackwardKernel);
    }
    columnSum(native(s), dGamma, N, C, LayerNormGain<T>{dOut, in, mean, rstd, C});
    columnSum(native(s), dBeta, N, C, Column<T>{dOut, C});
}

template <typename T>
void rmsNormForward(const Stream &s, T *out, float *rstd, const T *in, const T *gamma, int N, int C)
{
    if (N <= 0)
        return;
    rmsNormForwardKernel<<<rowBlocks(N), 32 * kRowsPerBlock, 0, native(s)>>>(out, rstd, in, gamma, N, C);
    TRELLIS_CUDA_LAUNCHED(rmsNormForwardKernel);
}

template <typename T>
void rmsNormBackward(const Stream &s, T *dIn, float *dGamma, const T *dOut, const T *in, const T *gamma,
                     const float *rstd, int N, int C)
{
    if (N <= 0)
        return;
    if (normBackwardFusedLaunch<T, true>(native(s), dIn, dGamma, static_cast<float *>(nullptr), dOut, in, gamma,
                                         static_cast<const float *>(nullptr), rstd, N, C))
        return;
    if (dIn) {
        rmsNormBackwardKernel<<<rowBlocks(N), 32 * kRowsPerBlock, 0, native(s)>>>(dIn, dOut, in, gamma, rstd, N, C);
        TRELLIS_CUDA_LAUNCHED(rmsNormBackwardKernel);
    }
    columnSum(native(s), dGamma, N, C, RmsNormGain<T>{dOut, in, rstd, C});
}

#define TRELLIS_INSTANTIATE(T)                                                                                     \
    template void columnSumOf<T>(cudaStream_t, float *, const T *, int, int);                                     \
    template void layerNormForward<T>(const Stream &, T *, float *, float *, const T *, const T *, const T *, int, int); \
    template void layerNormBackward<T>(const Stream &, T *, float *, float *, const T *, const T *, const T *,      \
                                       const float *, const float *, int, int);                                    \
    template void rmsNormForward<T>(const Stream &, T *, float *, const T *, const T *, int, int);                 \
    template void rmsNormBackward<T>(const Stream &, T *, float *, const T *, const T *, const T *, const float *, int, \
                                     int);
TRELLIS_INSTANTIATE(float)
TRELLIS_INSTANTIATE(bf16)
#undef TRELLIS_INSTANTIATE

} // namespace trellis::kernels::cuda
