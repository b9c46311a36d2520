// Element-wise layer kernels (CPU references: kernels/cpu/activations.cpp, llama.cpp): GELU (tanh
// approximation), SwiGLU, the residual sum and rotary position embeddings.
#include "kernels/cuda/common.cuh"

namespace trellis::kernels::cuda {
namespace {

constexpr float kGeluC = 0.7978845608028654f; // sqrt(2/pi)

#define TRELLIS_GRID_STRIDE(i, n)                                                                                  \
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < (n);              \
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

__global__ void geluForwardKernel(float *out, const float *in, std::int64_t n)
{
    TRELLIS_GRID_STRIDE(i, n)
    {
        const float x = in[i];
        out[i] = 0.5f * x * (1.0f + tanhf(kGeluC * (x + 0.044715f * x * x * x)));
    }
}

__global__ void geluBackwardKernel(float *dIn, const float *in, const float *dOut, std::int64_t n)
{
    TRELLIS_GRID_STRIDE(i, n)
    {
        const float x = in[i];
        const float t = tanhf(kGeluC * (x + 0.044715f * x * x * x));
        const float local = 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * kGeluC * (1.0f + 3.0f * 0.044715f * x * x);
        dIn[i] += local * dOut[i];
    }
}

__global__ void residualKernel(float *out, const float *a, const float *b, std::int64_t n)
{
    TRELLIS_GRID_STRIDE(i, n) out[i] = a[i] + b[i];
}

__global__ void swigluForwardKernel(float *out, const float *in, int N, int F)
{
    const std::int64_t n = static_cast<std::int64_t>(N) * F;
    TRELLIS_GRID_STRIDE(i, n)
    {
        const std::int64_t r = i / F, f = i % F;
        const float g = in[r * 2 * F + f], u = in[r * 2 * F + F + f];
        out[i] = g / (1.0f + expf(-g)) * u;
    }
}

__global__ void swigluBackwardKernel(float *dIn, const float *in, const float *dOut, int N, int F)
{
    const std::int64_t n = static_cast<std::int64_t>(N) * F;
    TRELLIS_GRID_STRIDE(i, n)
    {
        const std::int64_t r = i / F, f = i % F;
        const float g = in[r * 2 * F + f], u = in[r * 2 * F + F + f];
        const float sig = 1.0f / (1.0f + expf(-g));
        const float d = dOut[i];
        dIn[r * 2 * F + f] += d * u * sig * (1.0f + g * (1.0f - sig));
        dIn[r * 2 * F + F + f] += d * g * sig;
    }
}

__global__ void ropeKernel(float *x, const float *cosT, const float *sinT, int N, int seqLen, int firstPos, int ld,
                           int heads, int hs, float sign)
{
    const int half = hs / 2;
    const std::int64_t n = static_cast<std::int64_t>(N) * heads * half;
    TRELLIS_GRID_STRIDE(i, n)
    {
        const int k = static_cast<int>(i % half);
        const int h = static_cast<int>(i / half % heads);
        const std::int64_t row = i / half / heads;
        const int pos = firstPos + static_cast<int>(row % seqLen);
        const float c = cosT[static_cast<std::int64_t>(pos) * half + k];
        const float s = sign * sinT[static_cast<std::int64_t>(pos) * half + k];
        float *p = x + row * ld + static_cast<std::int64_t>(h) * hs;
        const float a = p[k], b = p[k + half];
        p[k] = a * c - b * s;
        p[k + half] = b * c + a * s;
    }
}

} // namespace

void geluForward(const Stream &s, float *out, const float *in, std::int64_t n)
{
    if (n <= 0)
        return;
    geluForwardKernel<<<gridFor(n, 256), 256, 0, native(s)>>>(out, in, n);
    TRELLIS_CUDA_LAUNCHED(geluForwardKernel);
}

void geluBackward(const Stream &s, float *dIn, const float *in, const float *dOut, std::int64_t n)
{
    if (n <= 0)
        return;
    geluBackwardKernel<<<gridFor(n, 256), 256, 0, native(s)>>>(dIn, in, dOut, n);
    TRELLIS_CUDA_LAUNCHED(geluBackwardKernel);
}

void residualForward(const Stream &s, float *out, const float *a, const float *b, std::int64_t n)
{
    if (n <= 0)
        return;
    residualKernel<<<gridFor(n, 256), 256, 0, native(s)>>>(out, a, b, n);
    TRELLIS_CUDA_LAUNCHED(residualKernel);
}

void swigluForward(const Stream &s, float *out, const float *in, int N, int F)
{
    if (N <= 0)
        return;
    swigluForwardKernel<<<gridFor(static_cast<std::int64_t>(N) * F, 256), 256, 0, native(s)>>>(out, in, N, F);
    TRELLIS_CUDA_LAUNCHED(swigluForwardKernel);
}

void swigluBackward(const Stream &s, float *dIn, const float *in, const float *dOut, int N, int F)
{
    if (N <= 0)
        return;
    swigluBackwardKernel<<<gridFor(static_cast<std::int64_t>(N) * F, 256), 256, 0, native(s)>>>(dIn, in, dOut, N, F);
    TRELLIS_CUDA_LAUNCHED(swigluBackwardKernel);
}

void rope(const Stream &s, float *x, const float *cosTable, const float *sinTable, int N, int seqLen, int firstPos,
          int ld, int heads, int hs, bool inverse)
{
    if (N <= 0)
        return;
    ropeKernel<<<gridFor(static_cast<std::int64_t>(N) * heads * (hs / 2), 256), 256, 0, native(s)>>>(
        x, cosTable, sinTable, N, seqLen, firstPos, ld, heads, hs, inverse ? -1.0f : 1.0f);
    TRELLIS_CUDA_LAUNCHED(ropeKernel);
}

} // namespace trellis::kernels::cuda
