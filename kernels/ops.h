// The one op interface the model and the optimizer call (DESIGN.md §5, §10). Every op runs on the
// device of the Stream it is given and has the contract of its CPU reference (kernels/cpu/ops.h
// for the layer kernels, kernels/cpu/tensor_ops.h for the rest); the CUDA kernels (float) sit in
// kernels/cuda/, each family beside its CPU reference and tested against it (tst_cuda_kernels).
// Pointers are device pointers of that device. In a build without CUDA (TRELLIS_ENABLE_CUDA off),
// or for double on a GPU, an op on a CUDA stream throws std::runtime_error naming the op (the
// trainer reports it as an Event and an exit code).
// Threading: an op runs on the calling thread (CPU) or is queued on the stream (CUDA).
#pragma once

#include "kernels/cpu/ops.h"
#include "kernels/cpu/tensor_ops.h"
#if defined(TRELLIS_HAVE_CUDA)
#include "kernels/cuda/cuda_ops.h"
#endif

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

namespace trellis::kernels {

enum class Device { Cpu, Cuda };

// A failed CUDA or cuBLASLt call (kernels/cuda), its message naming where and which call.
struct DeviceError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Stream {
    Device device = Device::Cpu;
    int index = 0;            // which GPU
    void *handle = nullptr;   // cudaStream_t on CUDA
};

// Whether ops can run on `device` in this build (CUDA kernels compiled in).
bool available(Device device);
[[noreturn]] void unavailable(const Stream &stream, const char *op);

#if defined(TRELLIS_HAVE_CUDA)
#define TRELLIS_CUDA_DISPATCH(name, ...)                                                                          \
    if constexpr (std::is_same_v<T, float>) {                                                                     \
        cuda::name(stream, __VA_ARGS__);                                                                          \
        return;                                                                                                   \
    } else {                                                                                                      \
        unavailable(stream, #name " (double)");                                                                   \
    }
#else
#define TRELLIS_CUDA_DISPATCH(name, ...) unavailable(stream, #name);
#endif

#define TRELLIS_KERNEL_OP(name, params, args)                                                                     \
    template <typename T>                                                                                         \
    void name(const Stream &stream, params)                                                                       \
    {                                                                                                             \
        if (stream.device != Device::Cpu) {                                                                       \
            TRELLIS_CUDA_DISPATCH(name, args)                                                                     \
        }                                                                                                         \
        cpu::name(args);                                                                                          \
    }
#define TRELLIS_P(...) __VA_ARGS__

// Layer kernels (kernels/cpu/ops.h).
TRELLIS_KERNEL_OP(linearForward, TRELLIS_P(T *out, const T *in, const T *weight, const T *bias, int BT, int C, int OC),
                  TRELLIS_P(out, in, weight, bias, BT, C, OC))
TRELLIS_KERNEL_OP(linearBackward,
                  TRELLIS_P(T *dIn, T *dWeight, T *dBias, const T *dOut, const T *in, const T *weight, int BT, int C, int OC),
                  TRELLIS_P(dIn, dWeight, dBias, dOut, in, weight, BT, C, OC))
TRELLIS_KERNEL_OP(layerNormForward,
                  TRELLIS_P(T *out, T *mean, T *rstd, const T *in, const T *gamma, const T *beta, int N, int C),
                  TRELLIS_P(out, mean, rstd, in, gamma, beta, N, C))
TRELLIS_KERNEL_OP(layerNormBackward,
                  TRELLIS_P(T *dIn, T *dGamma, T *dBeta, const T *dOut, const T *in, const T *gamma, const T *mean,
                            const T *rstd, int N, int C),
                  TRELLIS_P(dIn, dGamma, dBeta, dOut, in, gamma, mean, rstd, N, C))
TRELLIS_KERNEL_OP(geluForward, TRELLIS_P(T *out, const T *in, std::int64_t n), TRELLIS_P(out, in, n))
TRELLIS_KERNEL_OP(geluBackward, TRELLIS_P(T *dIn, const T *in, const T *dOut, std::int64_t n), TRELLIS_P(dIn, in, dOut, n))
TRELLIS_KERNEL_OP(attentionForward,
                  TRELLIS_P(T *out, T *att, const T *qkv, int B, int T_, int C, int NH, int KVH),
                  TRELLIS_P(out, att, qkv, B, T_, C, NH, KVH))
TRELLIS_KERNEL_OP(attentionBackward,
                  TRELLIS_P(T *dqkv, T *scratch, const T *dOut, const T *qkv, const T *att, int B, int T_, int C, int NH,
                            int KVH),
                  TRELLIS_P(dqkv, scratch, dOut, qkv, att, B, T_, C, NH, KVH))
TRELLIS_KERNEL_OP(rmsNormForward, TRELLIS_P(T *out, T *rstd, const T *in, const T *gamma, int N, int C),
                  TRELLIS_P(out, rstd, in, gamma, N, C))
TRELLIS_KERNEL_OP(rmsNormBackward,
                  TRELLIS_P(T *dIn, T *dGamma, const T *dOut, const T *in, const T *gamma, const T *rstd, int N, int C),
                  TRELLIS_P(dIn, dGamma, dOut, in, gamma, rstd, N, C))
TRELLIS_KERNEL_OP(swigluForward, TRELLIS_P(T *out, const T *in, int N, int F), TRELLIS_P(out, in, N, F))
TRELLIS_KERNEL_OP(swigluBackward, TRELLIS_P(T *dIn, const T *in, const T *dOut, int N, int F), TRELLIS_P(dIn, in, dOut, N, F))
TRELLIS_KERNEL_OP(rope,
                  TRELLIS_P(T *x, const T *cosTable, const T *sinTable, int N, int seqLen, int firstPos, int ld, int heads,
                            int hs, bool inverse),
                  TRELLIS_P(x, cosTable, sinTable, N, seqLen, firstPos, ld, heads, hs, inverse))
TRELLIS_KERNEL_OP(residualForward, TRELLIS_P(T *out, const T *a, const T *b, std::int64_t n), TRELLIS_P(out, a, b, n))
TRELLIS_KERNEL_OP(crossEntropyForward,
                  TRELLIS_P(T *losses, T *probs, const T *logits, const std::int32_t *targets, int BT, int V),
                  TRELLIS_P(losses, probs, logits, targets, BT, V))
TRELLIS_KERNEL_OP(crossEntropyBackward,
                  TRELLIS_P(T *dLogits, const T *probs, const std::int32_t *targets, T scale, int BT, int V),
                  TRELLIS_P(dLogits, probs, targets, scale, BT, V))
TRELLIS_KERNEL_OP(encoderForward,
                  TRELLIS_P(T *out, const std::int32_t *tokens, const T *wte, const T *wpe, int B, int T_, int C),
                  TRELLIS_P(out, tokens, wte, wpe, B, T_, C))
TRELLIS_KERNEL_OP(encoderBackward,
                  TRELLIS_P(T *dwte, T *dwpe, const T *dOut, const std::int32_t *tokens, int B, int T_, int C),
                  TRELLIS_P(dwte, dwpe, dOut, tokens, B, T_, C))

// Element-wise and bookkeeping kernels (kernels/cpu/tensor_ops.h).
template <typename T>
void fill(const Stream &stream, T *data, std::int64_t n, T value)
{
    if (stream.device != Device::Cpu) {
#if defined(TRELLIS_HAVE_CUDA)
        cuda::fillBytes(stream, data, n, &value, sizeof(T));
        return;
#else
        unavailable(stream, "fill");
#endif
    }
    cpu::fill(data, n, value);
}
template <typename T>
void copy(const Stream &stream, T *dst, const T *src, std::int64_t n)
{
    if (stream.device != Device::Cpu) {
#if defined(TRELLIS_HAVE_CUDA)
        cuda::copyBytes(stream, dst, src, static_cast<std::size_t>(n) * sizeof(T));
        return;
#else
        unavailable(stream, "copy");
#endif
    }
    cpu::copy(dst, src, n);
}
TRELLIS_KERNEL_OP(accumulate, TRELLIS_P(T *dst, const T *src, std::int64_t n), TRELLIS_P(dst, src, n))
TRELLIS_KERNEL_OP(scale, TRELLIS_P(T *data, std::int64_t n, T factor), TRELLIS_P(data, n, factor))
TRELLIS_KERNEL_OP(embeddingRangeForward,
                  TRELLIS_P(T *out, const std::int32_t *tokens, const T *wte, int first, int V, int BT, int C),
                  TRELLIS_P(out, tokens, wte, first, V, BT, C))
TRELLIS_KERNEL_OP(addPositions, TRELLIS_P(T *out, const T *wpe, int firstRow, int rows, int seqLen, int C),
                  TRELLIS_P(out, wpe, firstRow, rows, seqLen, C))
TRELLIS_KERNEL_OP(embeddingRangeBackward,
                  TRELLIS_P(T *dwte, T *dwpe, const T *dOut, const std::int32_t *tokens, int first, int V, int BT,
                            int seqLen, int C),
                  TRELLIS_P(dwte, dwpe, dOut, tokens, first, V, BT, seqLen, C))
TRELLIS_KERNEL_OP(rowMax, TRELLIS_P(T *out, const T *logits, int BT, int V), TRELLIS_P(out, logits, BT, V))
TRELLIS_KERNEL_OP(maxOverBlocks, TRELLIS_P(T *out, const T *blocks, int count, int BT), TRELLIS_P(out, blocks, count, BT))
TRELLIS_KERNEL_OP(softmaxPartials,
                  TRELLIS_P(T *probs, T *partial, const T *logits, const T *globalMax, const std::int32_t *targets,
                            int first, int BT, int V),
                  TRELLIS_P(probs, partial, logits, globalMax, targets, first, BT, V))
TRELLIS_KERNEL_OP(softmaxFinish, TRELLIS_P(T *probs, T *losses, const T *sums, const T *globalMax, int BT, int V),
                  TRELLIS_P(probs, losses, sums, globalMax, BT, V))
TRELLIS_KERNEL_OP(crossEntropyRangeBackward,
                  TRELLIS_P(T *dLogits, const T *probs, const std::int32_t *targets, int first, T scale, int BT, int V),
                  TRELLIS_P(dLogits, probs, targets, first, scale, BT, V))

// CPU-only kernels (no CUDA kernel yet): refused by name on a GPU stream.
#define TRELLIS_CPU_KERNEL_OP(name, params, args)                                                                 \
    template <typename T>                                                                                         \
    void name(const Stream &stream, params)                                                                       \
    {                                                                                                             \
        if (stream.device != Device::Cpu)                                                                         \
            unavailable(stream, #name);                                                                           \
        cpu::name(args);                                                                                          \
    }
TRELLIS_CPU_KERNEL_OP(ringAttentionBlockForward,
                      TRELLIS_P(T *out, T *rowMax, T *rowSum, const T *q, int ldq, const T *kv, const std::int32_t *qPos,
                                const std::int32_t *kPos, int B, int Tq, int Tk, int NH, int KVH, int hs),
                      TRELLIS_P(out, rowMax, rowSum, q, ldq, kv, qPos, kPos, B, Tq, Tk, NH, KVH, hs))
TRELLIS_CPU_KERNEL_OP(ringAttentionFinish,
                      TRELLIS_P(T *out, T *lse, const T *rowMax, const T *rowSum, int B, int Tq, int NH, int hs),
                      TRELLIS_P(out, lse, rowMax, rowSum, B, Tq, NH, hs))
TRELLIS_CPU_KERNEL_OP(ringAttentionDelta, TRELLIS_P(T *delta, const T *dOut, const T *out, int B, int Tq, int NH, int hs),
                      TRELLIS_P(delta, dOut, out, B, Tq, NH, hs))
TRELLIS_CPU_KERNEL_OP(ringAttentionBlockBackward,
                      TRELLIS_P(T *dq, int ldq, T *dkv, const T *dOut, const T *q, const T *kv, const T *lse, const T *delta,
                                const std::int32_t *qPos, const std::int32_t *kPos, int B, int Tq, int Tk, int NH, int KVH,
                                int hs),
                      TRELLIS_P(dq, ldq, dkv, dOut, q, kv, lse, delta, qPos, kPos, B, Tq, Tk, NH, KVH, hs))
TRELLIS_CPU_KERNEL_OP(copyColumns, TRELLIS_P(T *dst, int ldDst, const T *src, int ldSrc, int rows, int cols),
                      TRELLIS_P(dst, ldDst, src, ldSrc, rows, cols))
TRELLIS_CPU_KERNEL_OP(softmaxRows, TRELLIS_P(T *probs, const T *logits, int N, int E), TRELLIS_P(probs, logits, N, E))
TRELLIS_CPU_KERNEL_OP(softmaxRowsBackward, TRELLIS_P(T *dLogits, const T *probs, const T *dProbs, int N, int E),
                      TRELLIS_P(dLogits, probs, dProbs, N, E))
TRELLIS_CPU_KERNEL_OP(selectRows, TRELLIS_P(T *dst, const T *src, const std::int32_t *rowOf, int n, int C),
                      TRELLIS_P(dst, src, rowOf, n, C))
TRELLIS_CPU_KERNEL_OP(combineRows,
                      TRELLIS_P(T *out, const T *rows, const std::int32_t *slot, const T *gates, int N, int k, int C),
                      TRELLIS_P(out, rows, slot, gates, N, k, C))
TRELLIS_CPU_KERNEL_OP(combineRowsBackward,
                      TRELLIS_P(T *dRows, T *dGates, const T *dOut, const T *rows, const std::int32_t *slot, const T *gates,
                                int N, int k, int C),
                      TRELLIS_P(dRows, dGates, dOut, rows, slot, gates, N, k, C))
TRELLIS_CPU_KERNEL_OP(addSelectedRows, TRELLIS_P(T *dx, const T *rows, const std::int32_t *slot, int N, int k, int C),
                      TRELLIS_P(dx, rows, slot, N, k, C))
#undef TRELLIS_CPU_KERNEL_OP

#undef TRELLIS_KERNEL_OP
#undef TRELLIS_CUDA_DISPATCH
#undef TRELLIS_P

// Reductions to a host value (they synchronise the stream).
template <typename T>
double sum(const Stream &stream, const T *data, std::int64_t n)
{
    if (stream.device != Device::Cpu) {
#if defined(TRELLIS_HAVE_CUDA)
        if constexpr (std::is_same_v<T, float>)
            return cuda::sum(stream, data, n);
#endif
        unavailable(stream, "sum");
    }
    return cpu::sum(data, n);
}
template <typename T>
double sumSquares(const Stream &stream, const T *data, std::int64_t n)
{
    if (stream.device != Device::Cpu) {
#if defined(TRELLIS_HAVE_CUDA)
        if constexpr (std::is_same_v<T, float>)
            return cuda::sumSquares(stream, data, n);
#endif
        unavailable(stream, "sumSquares");
    }
    return cpu::sumSquares(data, n);
}

using AdamWStep = cpu::AdamWStep;
inline void adamw(const Stream &stream, float *params, const float *grads, float *m, float *v, const std::uint8_t *decay,
                  std::int64_t n, const AdamWStep &step)
{
    if (stream.device != Device::Cpu) {
#if defined(TRELLIS_HAVE_CUDA)
        cuda::adamw(stream, params, grads, m, v, decay, n, step);
        return;
#else
        unavailable(stream, "adamw");
#endif
    }
    cpu::adamw(params, grads, m, v, decay, n, step);
}

} // namespace trellis::kernels
