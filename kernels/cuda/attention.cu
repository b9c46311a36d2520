// Causal (grouped-query) attention (CPU reference: kernels/cpu/attention.cpp) as batched cuBLASLt
// GEMMs over head-major copies of q, k, v and a fused causal softmax, keeping the probabilities
// att[B,NH,T,T] the contract asks for. The GEMMs compute the full T×T scores (twice the work of
// the causal half); a flash-style fused kernel is the next step (README, GPU section).
#include "kernels/cuda/common.cuh"

#include <cfloat>

namespace trellis::kernels::cuda {
namespace {

// Element i of a head-major [B, NH, T, hs] tensor.
struct HeadIndex {
    std::int64_t b;
    int h, t, d;
    __device__ HeadIndex(std::int64_t i, int T, int NH, int hs)
        : b(i / hs / T / NH), h(static_cast<int>(i / hs / T % NH)), t(static_cast<int>(i / hs % T)),
          d(static_cast<int>(i % hs))
    {
    }
};

// Head-major copies: q[B,NH,T,hs], and k, v repeated to NH heads (query head h reads kv head
// h/group), from qkv[B,T,C + 2·KVH·hs].
__global__ void splitHeadsKernel(float *q, float *k, float *v, const float *qkv, int B, int T, int NH, int KVH,
                                 int hs)
{
    const int C = NH * hs, ld = C + 2 * KVH * hs, group = NH / KVH;
    const std::int64_t n = static_cast<std::int64_t>(B) * NH * T * hs;
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const HeadIndex x(i, T, NH, hs);
        const float *row = qkv + (x.b * T + x.t) * ld;
        const int g = x.h / group;
        q[i] = row[x.h * hs + x.d];
        k[i] = row[C + g * hs + x.d];
        v[i] = row[C + KVH * hs + g * hs + x.d];
    }
}

// out[B,T,C] ← y[B,NH,T,hs] (forward) or dy[B,NH,T,hs] ← dOut[B,T,C] (backward).
__global__ void mergeHeadsKernel(float *dst, const float *src, int B, int T, int NH, int hs, bool toRows)
{
    const int C = NH * hs;
    const std::int64_t n = static_cast<std::int64_t>(B) * NH * T * hs;
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const HeadIndex x(i, T, NH, hs);
        const std::int64_t rowAt = (x.b * T + x.t) * C + x.h * hs + x.d;
        if (toRows)
            dst[rowAt] = src[i];
        else
            dst[i] = src[rowAt];
    }
}

// dqkv += the head-major dq, dk, dv; a kv head sums its group's query heads in order.
__global__ void addHeadGradsKernel(float *dqkv, const float *dq, const float *dk, const float *dv, int B, int T,
                                   int NH, int KVH, int hs)
{
    const int C = NH * hs, ld = C + 2 * KVH * hs, group = NH / KVH;
    const std::int64_t n = static_cast<std::int64_t>(B) * T * ld;
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const int col = static_cast<int>(i % ld);
        const int t = static_cast<int>(i / ld % T);
        const std::int64_t b = i / ld / T;
        auto at = [&](int h, int d) { return ((b * NH + h) * T + t) * hs + d; };
        if (col < C) {
            dqkv[i] += dq[at(col / hs, col % hs)];
            continue;
        }
        const bool isK = col < C + KVH * hs;
        const int kc = isK ? col - C : col - C - KVH * hs;
        const int g = kc / hs, d = kc % hs;
        const float *src = isK ? dk : dv;
        float acc = 0.0f;
        for (int h = g * group; h < (g + 1) * group; ++h)
            acc += src[at(h, d)];
        dqkv[i] += acc;
    }
}

// In place over rows of T scores: row t keeps softmax(scores[0..t]) and zeros after t.
__global__ void causalSoftmaxKernel(float *att, int T, std::int64_t rows)
{
    const std::int64_t row = blockIdx.x * static_cast<std::int64_t>(blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows)
        return;
    const int t = static_cast<int>(row % T);
    float *p = att + row * T;
    float m = -FLT_MAX;
    for (int u = lane; u <= t; u += 32)
        m = fmaxf(m, p[u]);
    m = warpMax(m);
    float s = 0.0f;
    for (int u = lane; u <= t; u += 32)
        s += expf(p[u] - m);
    const float inv = 1.0f / warpSum(s);
    for (int u = lane; u < T; u += 32)
        p[u] = u <= t ? expf(p[u] - m) * inv : 0.0f;
}

// In place: dS = P ⊙ (dP − Σ P·dP) on and below the diagonal, 0 above.
__global__ void causalSoftmaxBackwardKernel(float *dP, const float *P, int T, std::int64_t rows)
{
    const std::int64_t row = blockIdx.x * static_cast<std::int64_t>(blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= rows)
        return;
    const int t = static_cast<int>(row % T);
    float *d = dP + row * T;
    const float *p = P + row * T;
    float dot = 0.0f;
    for (int u = lane; u <= t; u += 32)
        dot += p[u] * d[u];
    dot = warpSum(dot);
    for (int u = lane; u < T; u += 32)
        d[u] = u <= t ? p[u] * (d[u] - dot) : 0.0f;
}

unsigned rowWarps(std::int64_t rows) { return static_cast<unsigned>((rows + 7) / 8); }

} // namespace

void attentionForward(const Stream &s, float *out, float *att, const float *qkv, int B, int T, int C, int NH, int KVH)
{
    if (B <= 0 || T <= 0)
        return;
    const int hs = C / NH, batch = B * NH;
    const std::int64_t headElems = static_cast<std::int64_t>(batch) * T * hs;
    const long long sH = static_cast<long long>(T) * hs, sTT = static_cast<long long>(T) * T;
    float *q = static_cast<float *>(scratch(native(s), static_cast<std::size_t>(headElems) * 4 * sizeof(float)));
    float *k = q + headElems, *v = k + headElems, *y = v + headElems;
    cudaStream_t st = native(s);
    splitHeadsKernel<<<gridFor(headElems, 256), 256, 0, st>>>(q, k, v, qkv, B, T, NH, KVH, hs);
    TRELLIS_CUDA_LAUNCHED(splitHeadsKernel);
    const float scale = 1.0f / sqrtf(static_cast<float>(hs));
    gemm(st, false, true, T, T, hs, scale, q, hs, sH, k, hs, sH, 0.0f, att, T, sTT, batch); // scores
    const std::int64_t rows = static_cast<std::int64_t>(batch) * T;
    causalSoftmaxKernel<<<rowWarps(rows), 256, 0, st>>>(att, T, rows);
    TRELLIS_CUDA_LAUNCHED(causalSoftmaxKernel);
    gemm(st, false, false, T, hs, T, 1.0f, att, T, sTT, v, hs, sH, 0.0f, y, hs, sH, batch); // y = P·V
    mergeHeadsKernel<<<gridFor(headElems, 256), 256, 0, st>>>(out, y, B, T, NH, hs, true);
    TRELLIS_CUDA_LAUNCHED(mergeHeadsKernel);
}

void attentionBackward(const Stream &s, float *dqkv, float *, const float *dOut, const float *qkv, const float *att,
                       int B, int T, int C, int NH, int KVH)
{
    if (B <= 0 || T <= 0)
        return;
    const int hs = C / NH, batch = B * NH;
    const std::int64_t headElems = static_cast<std::int64_t>(batch) * T * hs;
    const std::int64_t scoreElems = static_cast<std::int64_t>(batch) * T * T;
    const long long sH = static_cast<long long>(T) * hs, sTT = static_cast<long long>(T) * T;
    float *q = static_cast<float *>(
        scratch(native(s), static_cast<std::size_t>(headElems * 7 + scoreElems) * sizeof(float)));
    float *k = q + headElems, *v = k + headElems, *dy = v + headElems;
    float *dq = dy + headElems, *dk = dq + headElems, *dv = dk + headElems, *dS = dv + headElems;
    cudaStream_t st = native(s);
    splitHeadsKernel<<<gridFor(headElems, 256), 256, 0, st>>>(q, k, v, qkv, B, T, NH, KVH, hs);
    TRELLIS_CUDA_LAUNCHED(splitHeadsKernel);
    mergeHeadsKernel<<<gridFor(headElems, 256), 256, 0, st>>>(dy, dOut, B, T, NH, hs, false);
    TRELLIS_CUDA_LAUNCHED(mergeHeadsKernel);
    const float scale = 1.0f / sqrtf(static_cast<float>(hs));
    gemm(st, false, true, T, T, hs, 1.0f, dy, hs, sH, v, hs, sH, 0.0f, dS, T, sTT, batch);   // dP = dY·Vᵀ
    gemm(st, true, false, T, hs, T, 1.0f, att, T, sTT, dy, hs, sH, 0.0f, dv, hs, sH, batch); // dV = Pᵀ·dY
    const std::int64_t rows = static_cast<std::int64_t>(batch) * T;
    causalSoftmaxBackwardKernel<<<rowWarps(rows), 256, 0, st>>>(dS, att, T, rows);
    TRELLIS_CUDA_LAUNCHED(causalSoftmaxBackwardKernel);
    gemm(st, false, false, T, hs, T, scale, dS, T, sTT, k, hs, sH, 0.0f, dq, hs, sH, batch); // dQ = s·dS·K
    gemm(st, true, false, T, hs, T, scale, dS, T, sTT, q, hs, sH, 0.0f, dk, hs, sH, batch);  // dK = s·dSᵀ·Q
    addHeadGradsKernel<<<gridFor(static_cast<std::int64_t>(B) * T * (C + 2 * KVH * hs), 256), 256, 0, st>>>(
        dqkv, dq, dk, dv, B, T, NH, KVH, hs);
    TRELLIS_CUDA_LAUNCHED(addHeadGradsKernel);
}

} // namespace trellis::kernels::cuda
