// Softmax cross-entropy, whole and vocabulary-parallel (CPU references: kernels/cpu/loss.cpp,
// tensor_ops.cpp): one block per row for the row reductions, element-wise for the gradients (which
// may overwrite the probabilities in place).
#include "kernels/cuda/common.cuh"

#include <cfloat>

namespace trellis::kernels::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void rowMaxKernel(float *out, const float *logits, int V)
{
    __shared__ float shared[32];
    const float *row = logits + static_cast<std::int64_t>(blockIdx.x) * V;
    float m = -FLT_MAX;
    for (int v = threadIdx.x; v < V; v += blockDim.x)
        m = fmaxf(m, row[v]);
    m = blockReduce(m, shared, Max{});
    if (threadIdx.x == 0)
        out[blockIdx.x] = m;
}

// probs = exp(logit − max); partial = (Σ probs, target logit or 0); with finish = true also
// normalises and writes the loss (the whole-vocabulary cross-entropy).
__global__ void softmaxRowKernel(float *probs, float *partial, float *losses, const float *logits,
                                 const float *globalMax, const std::int32_t *targets, int first, int V, bool finish)
{
    __shared__ float shared[32];
    const std::int64_t at = static_cast<std::int64_t>(blockIdx.x) * V;
    const float *row = logits + at;
    float *prob = probs + at;
    float m;
    if (globalMax) {
        m = globalMax[blockIdx.x];
    } else {
        m = -FLT_MAX;
        for (int v = threadIdx.x; v < V; v += blockDim.x)
            m = fmaxf(m, row[v]);
        m = blockReduce(m, shared, Max{});
    }
    float sum = 0.0f;
    for (int v = threadIdx.x; v < V; v += blockDim.x) {
        const float e = expf(row[v] - m);
        prob[v] = e;
        sum += e;
    }
    sum = blockReduce(sum, shared, Add{});
    const int t = targets[blockIdx.x] - first;
    const float targetLogit = t >= 0 && t < V ? row[t] : 0.0f;
    if (finish) {
        const float inv = 1.0f / sum;
        for (int v = threadIdx.x; v < V; v += blockDim.x)
            prob[v] *= inv;
        if (threadIdx.x == 0)
            losses[blockIdx.x] = logf(sum) + m - targetLogit;
    } else if (threadIdx.x == 0) {
        partial[2 * blockIdx.x] = sum;
        partial[2 * blockIdx.x + 1] = targetLogit;
    }
}

__global__ void softmaxFinishKernel(float *probs, float *losses, const float *sums, const float *globalMax, int V)
{
    const float s = sums[2 * blockIdx.x];
    const float inv = 1.0f / s;
    float *prob = probs + static_cast<std::int64_t>(blockIdx.x) * V;
    for (int v = threadIdx.x; v < V; v += blockDim.x)
        prob[v] *= inv;
    if (threadIdx.x == 0)
        losses[blockIdx.x] = logf(s) + globalMax[blockIdx.x] - sums[2 * blockIdx.x + 1];
}

__global__ void crossEntropyGradKernel(float *dLogits, const float *probs, const std::int32_t *targets, int first,
                                       float scale, std::int64_t BT, int V)
{
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < BT * V;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const std::int64_t r = i / V;
        const int v = static_cast<int>(i % V);
        dLogits[i] = (probs[i] - (targets[r] == first + v ? 1.0f : 0.0f)) * scale;
    }
}

__global__ void maxOverBlocksKernel(float *out, const float *blocks, int count, int BT)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= BT)
        return;
    float m = blocks[i];
    for (int b = 1; b < count; ++b)
        m = fmaxf(m, blocks[static_cast<std::int64_t>(b) * BT + i]);
    out[i] = m;
}

} // namespace

void crossEntropyForward(const Stream &s, float *losses, float *probs, const float *logits,
                         const std::int32_t *targets, int BT, int V)
{
    if (BT <= 0)
        return;
    softmaxRowKernel<<<BT, kThreads, 0, native(s)>>>(probs, nullptr, losses, logits, nullptr, targets, 0, V, true);
    TRELLIS_CUDA_LAUNCHED(softmaxRowKernel);
}

void crossEntropyBackward(const Stream &s, float *dLogits, const float *probs, const std::int32_t *targets,
                          float scale, int BT, int V)
{
    crossEntropyRangeBackward(s, dLogits, probs, targets, 0, scale, BT, V);
}

void rowMax(const Stream &s, float *out, const float *logits, int BT, int V)
{
    if (BT <= 0)
        return;
    rowMaxKernel<<<BT, kThreads, 0, native(s)>>>(out, logits, V);
    TRELLIS_CUDA_LAUNCHED(rowMaxKernel);
}

void maxOverBlocks(const Stream &s, float *out, const float *blocks, int count, int BT)
{
    if (BT <= 0)
        return;
    maxOverBlocksKernel<<<gridFor(BT, 256), 256, 0, native(s)>>>(out, blocks, count, BT);
    TRELLIS_CUDA_LAUNCHED(maxOverBlocksKernel);
}

void softmaxPartials(const Stream &s, float *probs, float *partial, const float *logits, const float *globalMax,
                     const std::int32_t *targets, int first, int BT, int V)
{
    if (BT <= 0)
        return;
    softmaxRowKernel<<<BT, kThreads, 0, native(s)>>>(probs, partial, nullptr, logits, globalMax, targets, first, V,
                                                     false);
    TRELLIS_CUDA_LAUNCHED(softmaxRowKernel);
}

void softmaxFinish(const Stream &s, float *probs, float *losses, const float *sums, const float *globalMax, int BT,
                   int V)
{
    if (BT <= 0)
        return;
    softmaxFinishKernel<<<BT, kThreads, 0, native(s)>>>(probs, losses, sums, globalMax, V);
    TRELLIS_CUDA_LAUNCHED(softmaxFinishKernel);
}

void crossEntropyRangeBackward(const Stream &s, float *dLogits, const float *probs, const std::int32_t *targets,
                               int first, float scale, int BT, int V)
{
    const std::int64_t n = static_cast<std::int64_t>(BT) * V;
    if (n <= 0)
        return;
    crossEntropyGradKernel<<<gridFor(n, 256), 256, 0, native(s)>>>(dLogits, probs, targets, first, scale, BT, V);
    TRELLIS_CUDA_LAUNCHED(crossEntropyGradKernel);
}

} // namespace trellis::kernels::cuda
