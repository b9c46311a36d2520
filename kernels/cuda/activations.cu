// Element-wise layer kernels (CPU references: kernels/cpu/activations.cpp, llama.cpp): GELU (tanh
// approximation), SwiGLU, the residual sum and rotary position embeddings.
#include "kernels/cuda/common.cuh"

namespace trellis::kernels::cuda {
namespace {

constexpr float kGeluC = 0.7978845608028654f; // sqrt(2/pi)

#define TRELLIS_GRID_STRIDE(i, n)                                                                                  \
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < (n);              \
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

__device__ inline float gelu(float x) { return 0.5f * x * (1.0f + tanhf(kGeluC * (x + 0.044715f * x * x * x))); }
__device__ inline float geluGrad(float x)
{
    const float t = tanhf(kGeluC * (x + 0.044715f * x * x * x));
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * kGeluC * (1.0f + 3.0f * 0.044715f * x * x);
}

// Whether the element-wise kernels can take whole packs (common.cuh): every pointer 16-byte aligned
// and n a multiple of the pack. The arithmetic per element is the same either way.
template <typename T, typename... P>
bool vectorised(std::int64_t n, const P *...pointers)
{
    return n % Pack<T>::kSize == 0 && ((reinterpret_cast<std::uintptr_t>(pointers) % 16 == 0) && ...);
}

template <typename T>
__global__ void geluForwardPacked(T *out, const T *in, std::int64_t packs)
{
    TRELLIS_GRID_STRIDE(i, packs)
    {
        const Pack<T> x = reinterpret_cast<const Pack<T> *>(in)[i];
        Pack<T> y;
        for (int k = 0; k < Pack<T>::kSize; ++k)
            y.v[k] = st<T>(gelu(ld(x.v[k])));
        reinterpret_cast<Pack<T> *>(out)[i] = y;
    }
}

template <typename T>
__global__ void geluBackwardPacked(T *dIn, const T *in, const T *dOut, std::int64_t packs)
{
    TRELLIS_GRID_STRIDE(i, packs)
    {
        const Pack<T> x = reinterpret_cast<const Pack<T> *>(in)[i], d = reinterpret_cast<const Pack<T> *>(dOut)[i];
        Pack<T> g = reinterpret_cast<Pack<T> *>(dIn)[i];
        for (int k = 0; k < Pack<T>::kSize; ++k)
            g.v[k] = st<T>(ld(g.v[k]) + geluGrad(ld(x.v[k])) * ld(d.v[k]));
        reinterpret_cast<Pack<T> *>(dIn)[i] = g;
    }
}

template <typename T>
__global__ void residualPacked(T *out, const T *a, const T *b, std::int64_t packs)
{
    TRELLIS_GRID_STRIDE(i, packs)
    {
        const Pack<T> x = reinterpret_cast<const Pack<T> *>(a)[i], y = reinterpret_cast<const Pack<T> *>(b)[i];
        Pack<T> z;
        for (int k = 0; k < Pack<T>::kSize; ++k)
            z.v[k] = st<T>(ld(x.v[k]) + ld(y.v[k]));
        reinterpret_cast<Pack<T> *>(out)[i] = z;
    }
}

template <typename T>
__global__ void geluForwardKernel(T *out, const T *in, std::int64_t n)
{
    TRELLIS_GRID_STRIDE(i, n)
    {
        out[i] = st<T>(gelu(ld(in[i])));
    }
}

template <typename T>
__global__ void geluBackwardKernel(T *dIn, const T *in, const T *dOut, std::int64_t n)
{
    TRELLIS_GRID_STRIDE(i, n)
    {
        dIn[i] = st<T>(ld(dIn[i]) + geluGrad(ld(in[i])) * ld(dOut[i]));
    }
}

template <typename T>
__global__ void residualKernel(T *out, const T *a, const T *b, std::int64_t n)
{
    TRELLIS_GRID_STRIDE(i, n) out[i] = st<T>(ld(a[i]) + ld(b[i]));
}

template <typename T>
__global__ void swigluForwardKernel(T *out, const T *in, int N, int F)
{
    const std::int64_t n = static_cast<std::int64_t>(N) * F;
    TRELLIS_GRID_STRIDE(i, n)
    {
        const std::int64_t r = i / F, f = i % F;
        const float g = ld(in[r * 2 * F + f]), u = ld(in[r * 2 * F + F + f]);
        out[i] = st<T>(g / (1.0f + expf(-g)) * u);
    }
}

template <typename T>
__global__ void swigluBackwardKernel(T *dIn, const T *in, const T *dOut, int N, int F)
{
    const std::int64_t n = static_cast<std::int64_t>(N) * F;
    TRELLIS_GRID_STRIDE(i, n)
    {
        const std::int64_t r = i / F, f = i % F;
        const float g = ld(in[r * 2 * F + f]), u = ld(in[r * 2 * F + F + f]);
        const float sig = 1.0f / (1.0f + expf(-g));
        const float d = ld(dOut[i]);
        T &dg = dIn[r * 2 * F + f], &du = dIn[r * 2 * F + F + f];
        dg = st<T>(ld(dg) + d * u * sig * (1.0f + g * (1.0f - sig)));
        du = st<T>(ld(du) + d * g * sig);
    }
}

template <typename T>
__global__ void ropeKernel(T *x, const float *cosT, const float *sinT, int N, int seqLen, int firstPos, int ldx,
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
        T *p = x + row * ldx + static_cast<std::int64_t>(h) * hs;
        const float a = ld(p[k]), b = ld(p[k + half]);
        p[k] = st<T>(a * c - b * s);
        p[k + half] = st<T>(b * c + a * s);
    }
}

} // namespace

template <typename T>
void geluForward(const Stream &s, T *out, const T *in, std::int64_t n)
{
    if (n <= 0)
        return;
    if (vectorised<T>(n, out, in)) {
        const std::int64_t packs = n / Pack<T>::kSize;
        geluForwardPacked<<<gridFor(packs, 256), 256, 0, native(s)>>>(out, in, packs);
        TRELLIS_CUDA_LAUNCHED(geluForwardPacked);
        return;
    }
    geluForwardKernel<<<gridFor(n, 256), 256, 0, native(s)>>>(out, in, n);
    TRELLIS_CUDA_LAUNCHED(geluForwardKernel);
}

template <typename T>
void geluBackward(const Stream &s, T *dIn, const T *in, const T *dOut, std::int64_t n)
{
    if (n <= 0)
        return;
    if (vectorised<T>(n, dIn, in, dOut)) {
        const std::int64_t packs = n / Pack<T>::kSize;
        geluBackwardPacked<<<gridFor(packs, 256), 256, 0, native(s)>>>(dIn, in, dOut, packs);
        TRELLIS_CUDA_LAUNCHED(geluBackwardPacked);
        return;
    }
    geluBackwardKernel<<<gridFor(n, 256), 256, 0, native(s)>>>(dIn, in, dOut, n);
    TRELLIS_CUDA_LAUNCHED(geluBackwardKernel);
}

template <typename T>
void residualForward(const Stream &s, T *out, const T *a, const T *b, std::int64_t n)
{
    if (n <= 0)
        return;
    if (vectorised<T>(n, out, a, b)) {
        const std::int64_t packs = n / Pack<T>::kSize;
        residualPacked<<<gridFor(packs, 256), 256, 0, native(s)>>>(out, a, b, packs);
        TRELLIS_CUDA_LAUNCHED(residualPacked);
        return;
    }
    residualKernel<<<gridFor(n, 256), 256, 0, native(s)>>>(out, a, b, n);
    TRELLIS_CUDA_LAUNCHED(residualKernel);
}

template <typename T>
void swigluForward(const Stream &s, T *out, const T *in, int N, int F)
{
    if (N <= 0)
        return;
    swigluForwardKernel<<<gridFor(static_cast<std::int64_t>(N) * F, 256), 256, 0, native(s)>>>(out, in, N, F);
    TRELLIS_CUDA_LAUNCHED(swigluForwardKernel);
}

template <typename T>
void swigluBackward(const Stream &s, T *dIn, const T *in, const T *dOut, int N, int F)
{
    if (N <= 0)
        return;
    swigluBackwardKernel<<<gridFor(static_cast<std::int64_t>(N) * F, 256), 256, 0, native(s)>>>(dIn, in, dOut, N, F);
    TRELLIS_CUDA_LAUNCHED(swigluBackwardKernel);
}

template <typename T>
void rope(const Stream &s, T *x, const float *cosTable, const float *sinTable, int N, int seqLen, int firstPos,
          int ld, int heads, int hs, bool inverse)
{
    if (N <= 0)
        return;
    ropeKernel<<<gridFor(static_cast<std::int64_t>(N) * heads * (hs / 2), 256), 256, 0, native(s)>>>(
        x, cosTable, sinTable, N, seqLen, firstPos, ld, heads, hs, inverse ? -1.0f : 1.0f);
    TRELLIS_CUDA_LAUNCHED(ropeKernel);
}

#define TRELLIS_INSTANTIATE(T)                                                                                     \
    template void geluForward<T>(const Stream &, T *, const T *, std::int64_t);                                   \
    template void geluBackward<T>(const Stream &, T *, const T *, const T *, std::int64_t);                       \
    template void residualForward<T>(const Stream &, T *, const T *, const T *, std::int64_t);                    \
    template void swigluForward<T>(const Stream &, T *, const T *, int, int);                                     \
    template void swigluBackward<T>(const Stream &, T *, const T *, const T *, int, int);                         \
    template void rope<T>(const Stream &, T *, const float *, const float *, int, int, int, int, int, int, bool);
TRELLIS_INSTANTIATE(float)
TRELLIS_INSTANTIATE(bf16)
#undef TRELLIS_INSTANTIATE

} // namespace trellis::kernels::cuda
