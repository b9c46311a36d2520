// Element-wise and bookkeeping kernels (CPU references: kernels/cpu/tensor_ops.cpp): fills, copies,
// accumulation, scaling, sums to a host value, the AdamW update.
#include "kernels/cuda/common.cuh"

#include <cstring>

namespace trellis::kernels::cuda {
namespace {

template <typename E>
__global__ void fillKernel(E *data, std::int64_t n, E value)
{
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
        data[i] = value;
}

template <typename D, typename S>
__global__ void accumulateKernel(D *dst, const S *src, std::int64_t n)
{
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
        dst[i] = st<D>(ld(dst[i]) + ld(src[i]));
}

template <typename D, typename S>
__global__ void convertKernel(D *dst, const S *src, std::int64_t n)
{
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
        dst[i] = st<D>(ld(src[i]));
}

template <typename D, typename S>
void accumulateAny(const Stream &s, D *dst, const S *src, std::int64_t n)
{
    if (n <= 0)
        return;
    accumulateKernel<<<gridFor(n, 256), 256, 0, native(s)>>>(dst, src, n);
    TRELLIS_CUDA_LAUNCHED(accumulateKernel);
}

template <typename D, typename S>
void convertAny(const Stream &s, D *dst, const S *src, std::int64_t n)
{
    if (n <= 0)
        return;
    convertKernel<<<gridFor(n, 256), 256, 0, native(s)>>>(dst, src, n);
    TRELLIS_CUDA_LAUNCHED(convertKernel);
}

__global__ void scaleKernel(float *data, std::int64_t n, float factor)
{
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
        data[i] *= factor;
}

// Fixed grid, grid-stride: each block's partial (in double) lands in partial[blockIdx.x]; the
// second pass adds them in order, so the result depends only on n.
constexpr int kSumBlocks = 1024;
template <bool Squares>
__global__ void sumPartials(double *partial, const float *data, std::int64_t n)
{
    __shared__ double shared[32];
    double acc = 0.0;
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const double v = data[i];
        acc += Squares ? v * v : v;
    }
    acc = blockReduce(acc, shared, Add{});
    if (threadIdx.x == 0)
        partial[blockIdx.x] = acc;
}
__global__ void sumFinish(double *out, const double *partial, int count)
{
    __shared__ double shared[32];
    double acc = 0.0;
    for (int i = threadIdx.x; i < count; i += blockDim.x)
        acc += partial[i];
    acc = blockReduce(acc, shared, Add{});
    if (threadIdx.x == 0)
        *out = acc;
}

template <bool Squares>
double reduce(const Stream &s, const float *data, std::int64_t n)
{
    if (n <= 0)
        return 0.0;
    double *partial = static_cast<double *>(scratch(native(s), (kSumBlocks + 1) * sizeof(double)));
    const unsigned grid = gridFor(n, 256, kSumBlocks);
    sumPartials<Squares><<<grid, 256, 0, native(s)>>>(partial, data, n);
    TRELLIS_CUDA_LAUNCHED(sumPartials);
    sumFinish<<<1, 1024, 0, native(s)>>>(partial + kSumBlocks, partial, static_cast<int>(grid));
    TRELLIS_CUDA_LAUNCHED(sumFinish);
    double host = 0.0;
    toHost(s, &host, partial + kSumBlocks, sizeof(double));
    return host;
}

__global__ void adamwKernel(float *params, const float *grads, float *m, float *v, const std::uint8_t *decay,
                            std::int64_t n, cpu::AdamWStep st)
{
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const float g = grads[i];
        const float mi = st.beta1 * m[i] + (1.0f - st.beta1) * g;
        const float vi = st.beta2 * v[i] + (1.0f - st.beta2) * g * g;
        m[i] = mi;
        v[i] = vi;
        float p = params[i];
        if (!decay || decay[i])
            p -= st.decay * p;
        params[i] = p - st.stepSize * mi / (sqrtf(vi) * st.invSqrtCorrection2 + st.eps);
    }
}

} // namespace

void fillBytes(const Stream &s, void *data, std::int64_t n, const void *value, std::size_t elementSize)
{
    if (n <= 0)
        return;
    const unsigned grid = gridFor(n, 256);
    switch (elementSize) {
    case 1: {
        std::uint8_t v;
        std::memcpy(&v, value, 1);
        TRELLIS_CUDA_CHECK(cudaMemsetAsync(data, v, static_cast<std::size_t>(n), native(s)));
        return;
    }
    case 2: {
        std::uint16_t v;
        std::memcpy(&v, value, 2);
        fillKernel<<<grid, 256, 0, native(s)>>>(static_cast<std::uint16_t *>(data), n, v);
        break;
    }
    case 4: {
        std::uint32_t v;
        std::memcpy(&v, value, 4);
        fillKernel<<<grid, 256, 0, native(s)>>>(static_cast<std::uint32_t *>(data), n, v);
        break;
    }
    case 8: {
        std::uint64_t v;
        std::memcpy(&v, value, 8);
        fillKernel<<<grid, 256, 0, native(s)>>>(static_cast<std::uint64_t *>(data), n, v);
        break;
    }
    default:
        fail(__FILE__, __LINE__, "fill", "unsupported element size");
    }
    TRELLIS_CUDA_LAUNCHED(fillKernel);
}

void copyBytes(const Stream &s, void *dst, const void *src, std::size_t bytes)
{
    if (bytes && dst != src)
        TRELLIS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, native(s)));
}

void accumulate(const Stream &s, float *dst, const float *src, std::int64_t n) { accumulateAny(s, dst, src, n); }
void accumulate(const Stream &s, float *dst, const bf16 *src, std::int64_t n) { accumulateAny(s, dst, src, n); }
void accumulate(const Stream &s, bf16 *dst, const bf16 *src, std::int64_t n) { accumulateAny(s, dst, src, n); }
void convert(const Stream &s, bf16 *dst, const float *src, std::int64_t n) { convertAny(s, dst, src, n); }
void convert(const Stream &s, float *dst, const bf16 *src, std::int64_t n) { convertAny(s, dst, src, n); }

void scale(const Stream &s, float *data, std::int64_t n, float factor)
{
    if (n <= 0)
        return;
    scaleKernel<<<gridFor(n, 256), 256, 0, native(s)>>>(data, n, factor);
    TRELLIS_CUDA_LAUNCHED(scaleKernel);
}

double sum(const Stream &s, const float *data, std::int64_t n) { return reduce<false>(s, data, n); }
double sumSquares(const Stream &s, const float *data, std::int64_t n) { return reduce<true>(s, data, n); }

void adamw(const Stream &s, float *params, const float *grads, float *m, float *v, const std::uint8_t *decay,
           std::int64_t n, const cpu::AdamWStep &step)
{
    if (n <= 0)
        return;
    adamwKernel<<<gridFor(n, 256), 256, 0, native(s)>>>(params, grads, m, v, decay, n, step);
    TRELLIS_CUDA_LAUNCHED(adamwKernel);
}

} // namespace trellis::kernels::cuda
