// LayerNorm and RMSNorm forward and backward (CPU references: kernels/cpu/norms.cpp, llama.cpp):
// one warp per row; the gain and shift gradients are column sums in a fixed order (columnSum).
#include "kernels/cuda/common.cuh"

namespace trellis::kernels::cuda {
namespace {

constexpr float kEps = 1e-5f;
constexpr int kRowsPerBlock = 8; // warps of 32

__global__ void layerNormForwardKernel(float *out, float *mean, float *rstd, const float *in, const float *gamma,
                                       const float *beta, int N, int C)
{
    const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N)
        return;
    const float *x = in + static_cast<std::int64_t>(row) * C;
    float s = 0.0f;
    for (int c = lane; c < C; c += 32)
        s += x[c];
    const float m = warpSum(s) / C;
    float v = 0.0f;
    for (int c = lane; c < C; c += 32) {
        const float d = x[c] - m;
        v += d * d;
    }
    const float r = 1.0f / sqrtf(warpSum(v) / C + kEps);
    float *y = out + static_cast<std::int64_t>(row) * C;
    for (int c = lane; c < C; c += 32)
        y[c] = (x[c] - m) * r * gamma[c] + (beta ? beta[c] : 0.0f);
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = r;
    }
}

// dIn += rstd·(g·dy − mean(g·dy) − x̂·mean(g·dy·x̂)), x̂ = (x − mean)·rstd.
__global__ void layerNormBackwardKernel(float *dIn, const float *dOut, const float *in, const float *gamma,
                                        const float *mean, const float *rstd, int N, int C)
{
    const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N)
        return;
    const std::int64_t at = static_cast<std::int64_t>(row) * C;
    const float m = mean[row], r = rstd[row];
    float a = 0.0f, b = 0.0f;
    for (int c = lane; c < C; c += 32) {
        const float dn = gamma[c] * dOut[at + c];
        a += dn;
        b += dn * (in[at + c] - m) * r;
    }
    a = warpSum(a) / C;
    b = warpSum(b) / C;
    for (int c = lane; c < C; c += 32) {
        const float xh = (in[at + c] - m) * r;
        dIn[at + c] += r * (gamma[c] * dOut[at + c] - a - xh * b);
    }
}

__global__ void rmsNormForwardKernel(float *out, float *rstd, const float *in, const float *gamma, int N, int C)
{
    const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N)
        return;
    const float *x = in + static_cast<std::int64_t>(row) * C;
    float s = 0.0f;
    for (int c = lane; c < C; c += 32)
        s += x[c] * x[c];
    const float r = 1.0f / sqrtf(warpSum(s) / C + kEps);
    float *y = out + static_cast<std::int64_t>(row) * C;
    for (int c = lane; c < C; c += 32)
        y[c] = x[c] * r * gamma[c];
    if (lane == 0)
        rstd[row] = r;
}

// dIn += rstd·(g·dy − x̂·mean(g·dy·x̂)), x̂ = x·rstd.
__global__ void rmsNormBackwardKernel(float *dIn, const float *dOut, const float *in, const float *gamma,
                                      const float *rstd, int N, int C)
{
    const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N)
        return;
    const std::int64_t at = static_cast<std::int64_t>(row) * C;
    const float r = rstd[row];
    float b = 0.0f;
    for (int c = lane; c < C; c += 32)
        b += gamma[c] * dOut[at + c] * in[at + c] * r;
    b = warpSum(b) / C;
    for (int c = lane; c < C; c += 32)
        dIn[at + c] += r * (gamma[c] * dOut[at + c] - in[at + c] * r * b);
}

struct LayerNormGain {
    const float *dOut, *in, *mean, *rstd;
    int C;
    __device__ float operator()(int r, int c) const
    {
        const std::int64_t at = static_cast<std::int64_t>(r) * C + c;
        return dOut[at] * (in[at] - mean[r]) * rstd[r];
    }
};
struct RmsNormGain {
    const float *dOut, *in, *rstd;
    int C;
    __device__ float operator()(int r, int c) const
    {
        const std::int64_t at = static_cast<std::int64_t>(r) * C + c;
        return dOut[at] * in[at] * rstd[r];
    }
};
struct Column {
    const float *data;
    int C;
    __device__ float operator()(int r, int c) const { return data[static_cast<std::int64_t>(r) * C + c]; }
};

unsigned rowBlocks(int N) { return static_cast<unsigned>((N + kRowsPerBlock - 1) / kRowsPerBlock); }

} // namespace

void columnSumOf(cudaStream_t stream, float *out, const float *data, int N, int C)
{
    columnSum(stream, out, N, C, Column{data, C});
}

void layerNormForward(const Stream &s, float *out, float *mean, float *rstd, const float *in, const float *gamma,
                      const float *beta, int N, int C)
{
    if (N <= 0)
        return;
    layerNormForwardKernel<<<rowBlocks(N), 32 * kRowsPerBlock, 0, native(s)>>>(out, mean, rstd, in, gamma, beta, N, C);
    TRELLIS_CUDA_LAUNCHED(layerNormForwardKernel);
}

void layerNormBackward(const Stream &s, float *dIn, float *dGamma, float *dBeta, const float *dOut, const float *in,
                       const float *gamma, const float *mean, const float *rstd, int N, int C)
{
    if (N <= 0)
        return;
    if (dIn) {
        layerNormBackwardKernel<<<rowBlocks(N), 32 * kRowsPerBlock, 0, native(s)>>>(dIn, dOut, in, gamma, mean, rstd,
                                                                                      N, C);
        TRELLIS_CUDA_LAUNCHED(layerNormBackwardKernel);
    }
    columnSum(native(s), dGamma, N, C, LayerNormGain{dOut, in, mean, rstd, C});
    columnSum(native(s), dBeta, N, C, Column{dOut, C});
}

void rmsNormForward(const Stream &s, float *out, float *rstd, const float *in, const float *gamma, int N, int C)
{
    if (N <= 0)
        return;
    rmsNormForwardKernel<<<rowBlocks(N), 32 * kRowsPerBlock, 0, native(s)>>>(out, rstd, in, gamma, N, C);
    TRELLIS_CUDA_LAUNCHED(rmsNormForwardKernel);
}

void rmsNormBackward(const Stream &s, float *dIn, float *dGamma, const float *dOut, const float *in, const float *gamma,
                     const float *rstd, int N, int C)
{
    if (N <= 0)
        return;
    if (dIn) {
        rmsNormBackwardKernel<<<rowBlocks(N), 32 * kRowsPerBlock, 0, native(s)>>>(dIn, dOut, in, gamma, rstd, N, C);
        TRELLIS_CUDA_LAUNCHED(rmsNormBackwardKernel);
    }
    columnSum(native(s), dGamma, N, C, RmsNormGain{dOut, in, rstd, C});
}

} // namespace trellis::kernels::cuda
