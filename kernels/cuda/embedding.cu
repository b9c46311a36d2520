// Token and position embeddings (CPU references: kernels/cpu/embedding.cpp, tensor_ops.cpp). The
// token-row gradient is a scatter-add with repeated tokens: atomicAdd, so its last bits may vary
// from run to run; the position gradient adds rows in order (deterministic).
#include "kernels/cuda/common.cuh"

namespace trellis::kernels::cuda {
namespace {

#define TRELLIS_GRID_STRIDE(i, n)                                                                                  \
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < (n);              \
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)

template <typename E>
__global__ void embedKernel(E *out, const std::int32_t *tokens, const E *wte, const E *wpe, int first,
                            int V, std::int64_t BT, int T, int C)
{
    TRELLIS_GRID_STRIDE(i, BT * C)
    {
        const std::int64_t row = i / C;
        const int c = static_cast<int>(i % C);
        const int tok = tokens[row] - first;
        float v = tok >= 0 && tok < V ? ld(wte[static_cast<std::int64_t>(tok) * C + c]) : 0.0f;
        if (wpe)
            v += ld(wpe[(row % T) * C + c]);
        out[i] = st<E>(v);
    }
}

template <typename T>
__global__ void addPositionsKernel(T *out, const T *wpe, int firstRow, int rows, int seqLen, int C)
{
    TRELLIS_GRID_STRIDE(i, static_cast<std::int64_t>(rows) * C)
    {
        const std::int64_t row = i / C;
        const int c = static_cast<int>(i % C);
        out[i] = st<T>(ld(out[i]) + ld(wpe[((firstRow + row) % seqLen) * C + c]));
    }
}

template <typename T>
__global__ void tokenGradKernel(float *dwte, const T *dOut, const std::int32_t *tokens, int first, int V,
                                std::int64_t BT, int C)
{
    TRELLIS_GRID_STRIDE(i, BT * C)
    {
        const std::int64_t row = i / C;
        const int tok = tokens[row] - first;
        if (tok >= 0 && tok < V)
            atomicAdd(dwte + static_cast<std::int64_t>(tok) * C + i % C, ld(dOut[i]));
    }
}

// dwpe[t, c] += Σ over rows i ≡ t (mod seqLen) of dOut[i, c], in row order.
template <typename T>
__global__ void positionGradKernel(float *dwpe, const T *dOut, std::int64_t BT, int seqLen, int C)
{
    const std::int64_t positions = BT < seqLen ? BT : seqLen;
    TRELLIS_GRID_STRIDE(i, positions * C)
    {
        const std::int64_t t = i / C;
        const int c = static_cast<int>(i % C);
        float acc = 0.0f;
        for (std::int64_t r = t; r < BT; r += seqLen)
            acc += ld(dOut[r * C + c]);
        dwpe[t * C + c] += acc;
    }
}

// The first position (and its token) outside [0, V), in host-mapped memory: {-1, 0} while none.
__global__ void badTokenKernel(int *first, const std::int32_t *tokens, std::int64_t n, int V)
{
    TRELLIS_GRID_STRIDE(i, n)
    {
        const int tok = tokens[i];
        if ((tok < 0 || tok >= V) && atomicCAS(first, -1, static_cast<int>(i)) == -1)
            first[1] = tok;
    }
}

int *badTokenSlot(bool device)
{
    static int *host = nullptr, *mapped = nullptr;
    if (!host) {
        TRELLIS_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&host), 2 * sizeof(int), cudaHostAllocMapped));
        host[0] = -1;
        host[1] = 0;
        TRELLIS_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void **>(&mapped), host, 0));
    }
    return device ? mapped : host;
}

} // namespace

void noteBadTokens(const Stream &s, const std::int32_t *tokens, std::int64_t n, int V)
{
    if (n <= 0)
        return;
    badTokenKernel<<<gridFor(n, 256), 256, 0, native(s)>>>(badTokenSlot(true), tokens, n, V);
    TRELLIS_CUDA_LAUNCHED(badTokenKernel);
}

void checkBadTokens()
{
    volatile int *slot = badTokenSlot(false);
    if (slot[0] < 0)
        return;
    const std::string why = "token id " + std::to_string(slot[1]) + " at position " + std::to_string(slot[0]) +
                            " is outside the model's vocabulary (its embedding was not read)";
    slot[0] = -1;
    fail(__FILE__, __LINE__, "encoderForward", why.c_str());
}

template <typename E>
void encoderForward(const Stream &s, E *out, const std::int32_t *tokens, const E *wte, const E *wpe, int B, int T, int C, int V)
{
    const std::int64_t BT = static_cast<std::int64_t>(B) * T;
    if (BT <= 0)
        return;
    embedKernel<<<gridFor(BT * C, 256), 256, 0, native(s)>>>(out, tokens, wte, wpe, 0, V, BT, T, C);
    noteBadTokens(s, tokens, BT, V);
    TRELLIS_CUDA_LAUNCHED(embedKernel);
}

template <typename E>
void encoderBackward(const Stream &s, float *dwte, float *dwpe, const E *dOut, const std::int32_t *tokens, int B, int T,
                     int C, int V)
{
    embeddingRangeBackward(s, dwte, dwpe, dOut, tokens, 0, V, B * T, T, C);
}

template <typename E>
void embeddingRangeForward(const Stream &s, E *out, const std::int32_t *tokens, const E *wte, int first, int V, int BT,
                           int C)
{
    if (BT <= 0)
        return;
    embedKernel<<<gridFor(static_cast<std::int64_t>(BT) * C, 256), 256, 0, native(s)>>>(
        out, tokens, wte, static_cast<const E *>(nullptr), first, V, BT, 1, C);
    TRELLIS_CUDA_LAUNCHED(embedKernel);
}

template <typename E>
void addPositions(const Stream &s, E *out, const E *wpe, int firstRow, int rows, int seqLen, int C)
{
    if (rows <= 0)
        return;
    addPositionsKernel<<<gridFor(static_cast<std::int64_t>(rows) * C, 256), 256, 0, native(s)>>>(out, wpe, firstRow,
                                                                                                  rows, seqLen, C);
    TRELLIS_CUDA_LAUNCHED(addPositionsKernel);
}

template <typename E>
void embeddingRangeBackward(const Stream &s, float *dwte, float *dwpe, const E *dOut, const std::int32_t *tokens,
                            int first, int V, int BT, int seqLen, int C)
{
    if (BT <= 0)
        return;
    tokenGradKernel<<<gridFor(static_cast<std::int64_t>(BT) * C, 256), 256, 0, native(s)>>>(dwte, dOut, tokens, first,
                                                                                             V, BT, C);
    TRELLIS_CUDA_LAUNCHED(tokenGradKernel);
    if (dwpe) {
        positionGradKernel<<<gridFor(static_cast<std::int64_t>(seqLen) * C, 256), 256, 0, native(s)>>>(dwpe, dOut, BT,
                                                                                                        seqLen, C);
        TRELLIS_CUDA_LAUNCHED(positionGradKernel);
    }
}

#define TRELLIS_INSTANTIATE(E)                                                                                     \
    template void encoderForward<E>(const Stream &, E *, const std::int32_t *, const E *, const E *, int, int, int, int); \
    template void encoderBackward<E>(const Stream &, float *, float *, const E *, const std::int32_t *, int, int, int, int); \
    template void embeddingRangeForward<E>(const Stream &, E *, const std::int32_t *, const E *, int, int, int, int); \
    template void addPositions<E>(const Stream &, E *, const E *, int, int, int, int);                            \
    template void embeddingRangeBackward<E>(const Stream &, float *, float *, const E *, const std::int32_t *, int, int, \
                                            int, int, int);
TRELLIS_INSTANTIATE(float)
TRELLIS_INSTANTIATE(bf16)
#undef TRELLIS_INSTANTIATE

} // namespace trellis::kernels::cuda
