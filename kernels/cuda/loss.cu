// Softmax cross-entropy, whole and vocabulary-parallel (CPU references: kernels/cpu/loss.cpp,
// tensor_ops.cpp): one block per row (the gradients too, which may overwrite the probabilities
// in place).
#include "kernels/cuda/common.cuh"

#include <cfloat>

namespace trellis::kernels::cuda {
namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void rowMaxKernel(float *out, const T *logits, int V)
{
    __shared__ float shared[32];
    const T *row = logits + static_cast<std::int64_t>(blockIdx.x) * V;
    float m = -FLT_MAX;
    for (int v = threadIdx.x; v < V; v += blockDim.x)
        m = fmaxf(m, ld(row[v]));
    m = blockReduce(m, shared, Max{});
    if (threadIdx.x == 0)
        out[blockIdx.x] = m;
}

// A vocabulary block of the cross-entropy (tensor parallelism): probs = exp(logit − the global
// max), partial = (Σ probs, the target logit or 0); softmaxFinish normalises.
template <typename T>
__global__ void softmaxRowKernel(float *probs, float *partial, const T *logits, const float *globalMax,
                                 const std::int32_t *targets, int first, int V)
{
    __shared__ float shared[32];
    const std::int64_t at = static_cast<std::int64_t>(blockIdx.x) * V;
    const T *row = logits + at;
    float *prob = probs + at;
    const float m = globalMax[blockIdx.x];
    float sum = 0.0f;
    for (int v = threadIdx.x; v < V; v += blockDim.x) {
        const float e = expf(ld(row[v]) - m);
        prob[v] = e;
        sum += e;
    }
    sum = blockReduce(sum, shared, Add{});
    const int t = targets[blockIdx.x] - first;
    if (threadIdx.x == 0) {
        partial[2 * blockIdx.x] = sum;
        partial[2 * blockIdx.x + 1] = t >= 0 && t < V ? ld(row[t]) : 0.0f;
    }
}

// The whole-vocabulary cross-entropy in two reads of the logits and one write of the
// probabilities: each thread keeps a running (max, Σ exp(x − max)) over its columns, the block
// combines them (in a fixed order), then writes exp(x − max) / Σ.
struct MaxSum {
    float m, s;
};
__device__ inline MaxSum combine(MaxSum a, MaxSum b)
{
    const float m = fmaxf(a.m, b.m);
    return {m, (a.s == 0.0f ? 0.0f : a.s * expf(a.m - m)) + (b.s == 0.0f ? 0.0f : b.s * expf(b.m - m))};
}
template <typename T>
__global__ void crossEntropyRowKernel(float *probs, float *losses, const T *logits, const std::int32_t *targets, int V)
{
    __shared__ float sharedM[32], sharedS[32];
    const std::int64_t at = static_cast<std::int64_t>(blockIdx.x) * V;
    const T *row = logits + at;
    MaxSum acc{-FLT_MAX, 0.0f};
    for (int v = threadIdx.x; v < V; v += blockDim.x) {
        const float x = ld(row[v]);
        if (x > acc.m) {
            acc.s = acc.s * expf(acc.m - x) + 1.0f;
            acc.m = x;
        } else {
            acc.s += expf(x - acc.m);
        }
    }
    for (int o = 16; o > 0; o >>= 1)
        acc = combine(acc, {__shfl_xor_sync(0xffffffffu, acc.m, o), __shfl_xor_sync(0xffffffffu, acc.s, o)});
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    if (lane == 0) {
        sharedM[warp] = acc.m;
        sharedS[warp] = acc.s;
    }
    __syncthreads();
    MaxSum total{sharedM[0], sharedS[0]};
    for (int w = 1; w < warps; ++w)
        total = combine(total, {sharedM[w], sharedS[w]});
    const float inv = 1.0f / total.s;
    float *prob = probs + at;
    for (int v = threadIdx.x; v < V; v += blockDim.x)
        prob[v] = expf(ld(row[v]) - total.m) * inv;
    if (threadIdx.x == 0) {
        const int t = targets[blockIdx.x];
        losses[blockIdx.x] = logf(total.s) + total.m - (t >= 0 && t < V ? ld(row[t]) : 0.0f);
    }
}

// The cross-entropy without probabilities: one read of the logits (a running max and sum),
// each row's loss and log-sum-exp out.
template <typename T>
__global__ void crossEntropyLseKernel(float *losses, float *lse, const T *logits, const std::int32_t *targets, int V)
{
    __shared__ float sharedM[32], sharedS[32];
    const T *row = logits + static_cast<std::int64_t>(blockIdx.x) * V;
    MaxSum acc{-FLT_MAX, 0.0f};
    for (int v = threadIdx.x; v < V; v += blockDim.x) {
        const float x = ld(row[v]);
        if (x > acc.m) {
            acc.s = acc.s * expf(acc.m - x) + 1.0f;
            acc.m = x;
        } else {
            acc.s += expf(x - acc.m);
        }
    }
    for (int o = 16; o > 0; o >>= 1)
        acc = combine(acc, {__shfl_xor_sync(0xffffffffu, acc.m, o), __shfl_xor_sync(0xffffffffu, acc.s, o)});
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    if (lane == 0) {
        sharedM[warp] = acc.m;
        sharedS[warp] = acc.s;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        MaxSum total{sharedM[0], sharedS[0]};
        for (int w = 1; w < warps; ++w)
            total = combine(total, {sharedM[w], sharedS[w]});
        const float l = logf(total.s) + total.m;
        const int t = targets[blockIdx.x];
        lse[blockIdx.x] = l;
        losses[blockIdx.x] = l - (t >= 0 && t < V ? ld(row[t]) : 0.0f);
    }
}

// dLogits[r, v] = (exp(logits[r, v] − lse[r]) − [v is r's target]) · scale, a block per row; may
// write over the logits.
template <typename T>
__global__ void crossEntropyLseGradKernel(T *dLogits, const T *logits, const float *lse, const std::int32_t *targets,
                                          float scale, int V)
{
    const std::int64_t at = static_cast<std::int64_t>(blockIdx.x) * V;
    const int t = targets[blockIdx.x];
    const float l = lse[blockIdx.x];
    for (int v = threadIdx.x; v < V; v += blockDim.x)
        dLogits[at + v] = st<T>((expf(ld(logits[at + v]) - l) - (v == t ? 1.0f : 0.0f)) * scale);
}

// dLogits[r, v] = (probs[r, v] − [v + first is r's target]) · scale, a block per row.
template <typename T>
__global__ void crossEntropyGradRowKernel(T *dLogits, const float *probs, const std::int32_t *targets, int first,
                                          float scale, int V)
{
    const std::int64_t at = static_cast<std::int64_t>(blockIdx.x) * V;
    const int t = targets[blockIdx.x] - first;
    for (int v = threadIdx.x; v < V; v += blockDim.x)
        dLogits[at + v] = st<T>((probs[at + v] - (v == t ? 1.0f : 0.0f)) * scale);
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

template <typename T>
void crossEntropyForward(const Stream &s, float *losses, float *probs, const T *logits, const std::int32_t *targets,
                         int BT, int V)
{
    if (BT <= 0)
        return;
    crossEntropyRowKernel<<<BT, kThreads, 0, native(s)>>>(probs, losses, logits, targets, V);
    TRELLIS_CUDA_LAUNCHED(crossEntropyRowKernel);
}

template <typename T>
void crossEntropyBackward(const Stream &s, T *dLogits, const float *probs, const std::int32_t *targets, float scale,
                          int BT, int V)
{
    crossEntropyRangeBackward(s, dLogits, probs, targets, 0, scale, BT, V);
}

template <typename T>
void rowMax(const Stream &s, float *out, const T *logits, int BT, int V)
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

template <typename T>
void softmaxPartials(const Stream &s, float *probs, float *partial, const T *logits, const float *globalMax,
                     const std::int32_t *targets, int first, int BT, int V)
{
    if (BT <= 0)
        return;
    softmaxRowKernel<<<BT, kThreads, 0, native(s)>>>(probs, partial, logits, globalMax, targets, first, V);
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

template <typename T>
void crossEntropyRangeBackward(const Stream &s, T *dLogits, const float *probs, const std::int32_t *targets, int first,
                               float scale, int BT, int V)
{
    const std::int64_t n = static_cast<std::int64_t>(BT) * V;
    if (n <= 0)
        return;
    crossEntropyGradRowKernel<<<BT, kThreads, 0, native(s)>>>(dLogits, probs, targets, first, scale, V);
    TRELLIS_CUDA_LAUNCHED(crossEntropyGradRowKernel);
}

template <typename T>
void crossEntropyLseForward(const Stream &s, float *losses, float *lse, const T *logits, const std::int32_t *targets,
                            int BT, int V)
{
    if (BT <= 0)
        return;
    crossEntropyLseKernel<<<BT, kThreads, 0, native(s)>>>(losses, lse, logits, targets, V);
    TRELLIS_CUDA_LAUNCHED(crossEntropyLseKernel);
}

template <typename T>
void crossEntropyLseBackward(const Stream &s, T *dLogits, const T *logits, const float *lse,
                             const std::int32_t *targets, float scale, int BT, int V)
{
    if (BT <= 0)
        return;
    crossEntropyLseGradKernel<<<BT, kThreads, 0, native(s)>>>(dLogits, logits, lse, targets, scale, V);
    TRELLIS_CUDA_LAUNCHED(crossEntropyLseGradKernel);
}

#define TRELLIS_INSTANTIATE(T)                                                                                     \
    template void crossEntropyForward<T>(const Stream &, float *, float *, const T *, const std::int32_t *, int, int); \
    template void crossEntropyLseForward<T>(const Stream &, float *, float *, const T *, const std::int32_t *, int,    \
                                            int);                                                                  \
    template void crossEntropyLseBackward<T>(const Stream &, T *, const T *, const float *, const std::int32_t *,     \
                                             float, int, int);                                                     \
    template void crossEntropyBackward<T>(const Stream &, T *, const float *, const std::int32_t *, float, int, int); \
    template void rowMax<T>(const Stream &, float *, const T *, int, int);                                        \
    template void softmaxPartials<T>(const Stream &, float *, float *, const T *, const float *, const std::int32_t *, \
                                     int, int, int);                                                               \
    template void crossEntropyRangeBackward<T>(const Stream &, T *, const float *, const std::int32_t *, int, float,  \
                                               int, int);
TRELLIS_INSTANTIATE(float)
TRELLIS_INSTANTIATE(bf16)
#undef TRELLIS_INSTANTIATE

} // namespace trellis::kernels::cuda
