// The one op interface the model and the optimizer call (docs/architecture.md §12). Every op runs on
// the device of the Stream it is given and has the contract of its CPU reference (kernels/cpu/cpu_ops.h
// for the layer kernels, kernels/cpu/tensor_ops.h for the rest); the CUDA kernels (float) sit in
// kernels/cuda/, each family beside its CPU reference and tested against it (tst_cuda_kernels).
// Ops are typed (kernels/dtype.h): T is the element type of activations and parameters (float,
// double, bf16, f16), acc_t<T> the type of what is accumulated or kept at full precision —
// statistics, weight gradients, probabilities and the loss. The 16-bit CPU kernels
// (kernels/cpu/half_ops.h) compute in fp32 and round once on store.
// Pointers are device pointers of that device. In a program linked with the CPU-only kernels
// (trellis_kernels, not trellis_kernels_cuda), or for a type the CUDA kernels lack, an op on a CUDA
// stream throws std::runtime_error naming the
// op and the type (the trainer reports it as an Event and an exit code).
// Threading: an op runs on the calling thread (CPU) or is queued on the stream (CUDA).
#pragma once

#include "kernels/cpu/half_ops.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/tensor_ops.h"
#include "kernels/dtype.h"
#include "kernels/stream.h"
#if defined(TRELLIS_HAVE_CUDA)
#include "kernels/cuda/cuda_ops.h"
#endif

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

namespace trellis::kernels {

// Whether ops can run on `device` in this build (CUDA kernels compiled in).
bool available(Device device);
[[noreturn]] void unavailable(const Stream &stream, const char *op);
[[noreturn]] void unavailable(const Stream &stream, const char *op, DType type);

#if defined(TRELLIS_HAVE_CUDA)
// Float and bf16 ops on a CUDA stream (each timed when cuda::setOpTiming is on).
#define TRELLIS_CUDA_DISPATCH(name, ...)                                                                          \
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, bf16>) {                                          \
        cuda::OpTimer trellisTimer(stream, #name);                                                                \
        cuda::name<T>(stream, __VA_ARGS__);                                                                       \
        return;                                                                                                   \
    } else {                                                                                                      \
        unavailable(stream, #name, dtypeOf<T>());                                                                 \
    }
// Float-only ops on a CUDA stream.
#define TRELLIS_CUDA_DISPATCH_F32(name, ...)                                                                      \
    if constexpr (std::is_same_v<T, float>) {                                                                     \
        cuda::OpTimer trellisTimer(stream, #name);                                                                \
        cuda::name(stream, __VA_ARGS__);                                                                          \
        return;                                                                                                   \
    } else {                                                                                                      \
        unavailable(stream, #name, dtypeOf<T>());                                                                 \
    }
#else
#define TRELLIS_CUDA_DISPATCH(name, ...) unavailable(stream, #name, dtypeOf<T>());
#define TRELLIS_CUDA_DISPATCH_F32(name, ...) unavailable(stream, #name, dtypeOf<T>());
#endif

// The CPU kernel: the reference templates for float and double, the 16-bit ones for bf16/fp16.
#define TRELLIS_CPU_CALL(name, ...)                                                                               \
    if constexpr (is16Bit<T>)                                                                                     \
        cpu::half::name(__VA_ARGS__);                                                                             \
    else                                                                                                          \
        cpu::name(__VA_ARGS__);

#define TRELLIS_KERNEL_OP(name, params, args)                                                                     \
    template <typename T>                                                                                         \
    void name(const Stream &stream, params)                                                                       \
    {                                                                                                             \
        if (stream.device != Device::Cpu) {                                                                       \
            TRELLIS_CUDA_DISPATCH(name, args)                                                                     \
        }                                                                                                         \
        TRELLIS_CPU_CALL(name, args)                                                                              \
    }
#define TRELLIS_KERNEL_OP_F32(name, params, args)                                                                 \
    template <typename T>                                                                                         \
    void name(const Stream &stream, params)                                                                       \
    {                                                                                                             \
        if (stream.device != Device::Cpu) {                                                                       \
            TRELLIS_CUDA_DISPATCH_F32(name, args)                                                                 \
        }                                                                                                         \
        TRELLIS_CPU_CALL(name, args)                                                                              \
    }
#define TRELLIS_P(...) __VA_ARGS__

// Layer kernels (kernels/cpu/cpu_ops.h).
TRELLIS_KERNEL_OP(linearForward, TRELLIS_P(T *out, const T *in, const T *weight, const T *bias, int BT, int C, int OC),
                  TRELLIS_P(out, in, weight, bias, BT, C, OC))
TRELLIS_KERNEL_OP(linearBackward,
                  TRELLIS_P(T *dIn, acc_t<T> *dWeight, acc_t<T> *dBias, const T *dOut, const T *in, const T *weight, int BT, int C,
                            int OC),
                  TRELLIS_P(dIn, dWeight, dBias, dOut, in, weight, BT, C, OC))
TRELLIS_KERNEL_OP(layerNormForward,
                  TRELLIS_P(T *out, acc_t<T> *mean, acc_t<T> *rstd, const T *in, const T *gamma, const T *beta, int N, int C),
                  TRELLIS_P(out, mean, rstd, in, gamma, beta, N, C))
TRELLIS_KERNEL_OP(layerNormBackward,
                  TRELLIS_P(T *dIn, acc_t<T> *dGamma, acc_t<T> *dBeta, const T *dOut, const T *in, const T *gamma,
                            const acc_t<T> *mean, const acc_t<T> *rstd, int N, int C),
                  TRELLIS_P(dIn, dGamma, dBeta, dOut, in, gamma, mean, rstd, N, C))
TRELLIS_KERNEL_OP(geluForward, TRELLIS_P(T *out, const T *in, std::int64_t n), TRELLIS_P(out, in, n))
TRELLIS_KERNEL_OP(geluBackward, TRELLIS_P(T *dIn, const T *in, const T *dOut, std::int64_t n), TRELLIS_P(dIn, in, dOut, n))
TRELLIS_KERNEL_OP_F32(attentionForward,
                  TRELLIS_P(T *out, T *att, const T *qkv, int B, int T_, int C, int NH, int KVH),
                  TRELLIS_P(out, att, qkv, B, T_, C, NH, KVH))
TRELLIS_KERNEL_OP_F32(attentionBackward,
                  TRELLIS_P(T *dqkv, acc_t<T> *scratch, const T *dOut, const T *qkv, const T *att, int B, int T_, int C,
                            int NH, int KVH),
                  TRELLIS_P(dqkv, scratch, dOut, qkv, att, B, T_, C, NH, KVH))
TRELLIS_KERNEL_OP(rmsNormForward, TRELLIS_P(T *out, acc_t<T> *rstd, const T *in, const T *gamma, int N, int C),
                  TRELLIS_P(out, rstd, in, gamma, N, C))
TRELLIS_KERNEL_OP(rmsNormBackward,
                  TRELLIS_P(T *dIn, acc_t<T> *dGamma, const T *dOut, const T *in, const T *gamma, const acc_t<T> *rstd, int N,
                            int C),
                  TRELLIS_P(dIn, dGamma, dOut, in, gamma, rstd, N, C))
TRELLIS_KERNEL_OP(swigluForward, TRELLIS_P(T *out, const T *in, int N, int F), TRELLIS_P(out, in, N, F))
TRELLIS_KERNEL_OP(swigluBackward, TRELLIS_P(T *dIn, const T *in, const T *dOut, int N, int F), TRELLIS_P(dIn, in, dOut, N, F))
TRELLIS_KERNEL_OP(rope,
                  TRELLIS_P(T *x, const acc_t<T> *cosTable, const acc_t<T> *sinTable, int N, int seqLen, int firstPos,
                            int ld, int heads, int hs, bool inverse),
                  TRELLIS_P(x, cosTable, sinTable, N, seqLen, firstPos, ld, heads, hs, inverse))
TRELLIS_KERNEL_OP(residualForward, TRELLIS_P(T *out, const T *a, const T *b, std::int64_t n), TRELLIS_P(out, a, b, n))
TRELLIS_KERNEL_OP(crossEntropyForward,
                  TRELLIS_P(acc_t<T> *losses, acc_t<T> *probs, const T *logits, const std::int32_t *targets, int BT, int V),
                  TRELLIS_P(losses, probs, logits, targets, BT, V))
TRELLIS_KERNEL_OP(crossEntropyBackward,
                  TRELLIS_P(T *dLogits, const acc_t<T> *probs, const std::int32_t *targets, acc_t<T> scale, int BT, int V),
                  TRELLIS_P(dLogits, probs, targets, scale, BT, V))
TRELLIS_KERNEL_OP(encoderForward,
                  TRELLIS_P(T *out, const std::int32_t *tokens, const T *wte, const T *wpe, int B, int T_, int C, int V),
                  TRELLIS_P(out, tokens, wte, wpe, B, T_, C, V))
TRELLIS_KERNEL_OP(encoderBackward,
                  TRELLIS_P(acc_t<T> *dwte, acc_t<T> *dwpe, const T *dOut, const std::int32_t *tokens, int B, int T_, int C,
                            int V),
                  TRELLIS_P(dwte, dwpe, dOut, tokens, B, T_, C, V))

// Fused attention (cuDNN's scaled-dot-product attention; kernels/cuda/cuda_ops.h): whether a model
// of element type T on `stream`'s device uses it instead of attentionForward/Backward — bf16 on a
// CUDA device in a build with cuDNN's front end. Then it keeps each row's log-sum-exp lse[B,NH,T]
// (fp32) rather than the probabilities; the backward writes dqkv (it does not add to it).
template <typename T>
bool fusedAttention(const Stream &stream)
{
#if defined(TRELLIS_HAVE_CUDA)
    if constexpr (std::is_same_v<T, bf16>)
        return stream.device == Device::Cuda && cuda::fusedAttentionBuilt();
#endif
    (void)stream;
    return false;
}
template <typename T>
void flashAttentionForward(const Stream &stream, T *out, acc_t<T> *lse, const T *qkv, int B, int T_, int C, int NH,
                           int KVH)
{
#if defined(TRELLIS_HAVE_CUDA)
    if constexpr (std::is_same_v<T, bf16>) {
        if (stream.device == Device::Cuda) {
            cuda::OpTimer timer(stream, "flashAttentionForward");
            cuda::flashAttentionForward(stream, out, lse, qkv, B, T_, C, NH, KVH);
            return;
        }
    }
#endif
    (void)out, (void)lse, (void)qkv, (void)B, (void)T_, (void)C, (void)NH, (void)KVH;
    unavailable(stream, "flashAttentionForward", dtypeOf<T>());
}
template <typename T>
void flashAttentionBackward(const Stream &stream, T *dqkv, const T *dOut, const T *out, const T *qkv,
                            const acc_t<T> *lse, int B, int T_, int C, int NH, int KVH)
{
#if defined(TRELLIS_HAVE_CUDA)
    if constexpr (std::is_same_v<T, bf16>) {
        if (stream.device == Device::Cuda) {
            cuda::OpTimer timer(stream, "flashAttentionBackward");
            cuda::flashAttentionBackward(stream, dqkv, dOut, out, qkv, lse, B, T_, C, NH, KVH);
            return;
        }
    }
#endif
    (void)dqkv, (void)dOut, (void)out, (void)qkv, (void)lse, (void)B, (void)T_, (void)C, (void)NH, (void)KVH;
    unavailable(stream, "flashAttentionBackward", dtypeOf<T>());
}

// The cross-entropy without probabilities (kernels/cuda/cuda_ops.h): whether a model of element
// type T on `stream`'s device uses it (float and bf16 on a CUDA device): then it keeps each row's
// log-sum-exp lse[BT] instead of probs[BT, V], and the backward recomputes the softmax.
template <typename T>
bool fusedCrossEntropy(const Stream &stream)
{
#if defined(TRELLIS_HAVE_CUDA)
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, bf16>)
        return stream.device == Device::Cuda;
#endif
    (void)stream;
    return false;
}
template <typename T>
void crossEntropyLseForward(const Stream &stream, acc_t<T> *losses, acc_t<T> *lse, const T *logits,
                            const std::int32_t *targets, int BT, int V)
{
#if defined(TRELLIS_HAVE_CUDA)
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, bf16>) {
        if (stream.device == Device::Cuda) {
            cuda::OpTimer timer(stream, "crossEntropyForward");
            cuda::crossEntropyLseForward<T>(stream, losses, lse, logits, targets, BT, V);
            return;
        }
    }
#endif
    (void)losses, (void)lse, (void)logits, (void)targets, (void)BT, (void)V;
    unavailable(stream, "crossEntropyLseForward", dtypeOf<T>());
}
template <typename T>
void crossEntropyLseBackward(const Stream &stream, T *dLogits, const T *logits, const acc_t<T> *lse,
                             const std::int32_t *targets, acc_t<T> scale, int BT, int V)
{
#if defined(TRELLIS_HAVE_CUDA)
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, bf16>) {
        if (stream.device == Device::Cuda) {
            cuda::OpTimer timer(stream, "crossEntropyBackward");
            cuda::crossEntropyLseBackward<T>(stream, dLogits, logits, lse, targets, scale, BT, V);
            return;
        }
    }
#endif
    (void)dLogits, (void)logits, (void)lse, (void)targets, (void)scale, (void)BT, (void)V;
    unavailable(stream, "crossEntropyLseBackward", dtypeOf<T>());
}

// Element-wise and bookkeeping kernels (kernels/cpu/tensor_ops.h). fill and copy take any element type.
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
// dst[i] += src[i]: same types, or a 16-bit source into its accumulation type.
template <typename D, typename S>
void accumulate(const Stream &stream, D *dst, const S *src, std::int64_t n)
{
    if (stream.device != Device::Cpu) {
#if defined(TRELLIS_HAVE_CUDA)
        if constexpr ((std::is_same_v<D, float> && (std::is_same_v<S, float> || std::is_same_v<S, bf16>)) ||
                      (std::is_same_v<D, bf16> && std::is_same_v<S, bf16>)) {
            cuda::OpTimer timer(stream, "accumulate");
            cuda::accumulate(stream, dst, src, n);
            return;
        }
#endif
        unavailable(stream, "accumulate", dtypeOf<S>());
    }
    if constexpr (std::is_same_v<D, S> && !is16Bit<S>)
        cpu::accumulate(dst, src, n);
    else
        cpu::half::accumulate(dst, src, n);
}
// dst[i] = src[i] converted (rounded to nearest even into a 16-bit type).
template <typename D, typename S>
void convert(const Stream &stream, D *dst, const S *src, std::int64_t n)
{
    if constexpr (std::is_same_v<D, S>) {
        copy(stream, dst, src, n);
    } else {
        if (stream.device != Device::Cpu) {
#if defined(TRELLIS_HAVE_CUDA)
            if constexpr ((std::is_same_v<D, bf16> && std::is_same_v<S, float>) ||
                          (std::is_same_v<D, float> && std::is_same_v<S, bf16>)) {
                cuda::OpTimer timer(stream, "convert");
                cuda::convert(stream, dst, src, n);
                return;
            }
#endif
            unavailable(stream, "convert", dtypeOf<S>());
        }
        cpu::half::convert(dst, src, n);
    }
}
TRELLIS_KERNEL_OP_F32(scale, TRELLIS_P(T *data, std::int64_t n, T factor), TRELLIS_P(data, n, factor))
TRELLIS_KERNEL_OP(embeddingRangeForward,
                  TRELLIS_P(T *out, const std::int32_t *tokens, const T *wte, int first, int V, int BT, int C),
                  TRELLIS_P(out, tokens, wte, first, V, BT, C))
TRELLIS_KERNEL_OP(addPositions, TRELLIS_P(T *out, const T *wpe, int firstRow, int rows, int seqLen, int C),
                  TRELLIS_P(out, wpe, firstRow, rows, seqLen, C))
TRELLIS_KERNEL_OP(embeddingRangeBackward,
                  TRELLIS_P(acc_t<T> *dwte, acc_t<T> *dwpe, const T *dOut, const std::int32_t *tokens, int first, int V,
                            int BT, int seqLen, int C),
                  TRELLIS_P(dwte, dwpe, dOut, tokens, first, V, BT, seqLen, C))
TRELLIS_KERNEL_OP(rowMax, TRELLIS_P(acc_t<T> *out, const T *logits, int BT, int V), TRELLIS_P(out, logits, BT, V))
TRELLIS_KERNEL_OP_F32(maxOverBlocks, TRELLIS_P(T *out, const T *blocks, int count, int BT), TRELLIS_P(out, blocks, count, BT))
TRELLIS_KERNEL_OP(softmaxPartials,
                  TRELLIS_P(acc_t<T> *probs, acc_t<T> *partial, const T *logits, const acc_t<T> *globalMax,
                            const std::int32_t *targets, int first, int BT, int V),
                  TRELLIS_P(probs, partial, logits, globalMax, targets, first, BT, V))
TRELLIS_KERNEL_OP_F32(softmaxFinish, TRELLIS_P(T *probs, T *losses, const T *sums, const T *globalMax, int BT, int V),
                  TRELLIS_P(probs, losses, sums, globalMax, BT, V))
TRELLIS_KERNEL_OP(crossEntropyRangeBackward,
                  TRELLIS_P(T *dLogits, const acc_t<T> *probs, const std::int32_t *targets, int first, acc_t<T> scale, int BT,
                            int V),
                  TRELLIS_P(dLogits, probs, targets, first, scale, BT, V))

// CPU-only kernels (no CUDA kernel yet): refused by name on a GPU stream.
#define TRELLIS_CPU_KERNEL_OP(name, params, args)                                                                 \
    template <typename T>                                                                                         \
    void name(const Stream &stream, params)                                                                       \
    {                                                                                                             \
        if (stream.device != Device::Cpu)                                                                         \
            unavailable(stream, #name, dtypeOf<T>());                                                             \
        TRELLIS_CPU_CALL(name, args)                                                                              \
    }
TRELLIS_CPU_KERNEL_OP(ringAttentionBlockForward,
                      TRELLIS_P(acc_t<T> *out, acc_t<T> *rowMax, acc_t<T> *rowSum, const T *q, int ldq, const T *kv,
                                const std::int32_t *qPos, const std::int32_t *kPos, int B, int Tq, int Tk, int NH, int KVH,
                                int hs),
                      TRELLIS_P(out, rowMax, rowSum, q, ldq, kv, qPos, kPos, B, Tq, Tk, NH, KVH, hs))
TRELLIS_CPU_KERNEL_OP(ringAttentionFinish,
                      TRELLIS_P(T *out, acc_t<T> *lse, const acc_t<T> *acc, const acc_t<T> *rowMax, const acc_t<T> *rowSum,
                                int B, int Tq, int NH, int hs),
                      TRELLIS_P(out, lse, acc, rowMax, rowSum, B, Tq, NH, hs))
TRELLIS_CPU_KERNEL_OP(ringAttentionDelta,
                      TRELLIS_P(acc_t<T> *delta, const T *dOut, const T *out, int B, int Tq, int NH, int hs),
                      TRELLIS_P(delta, dOut, out, B, Tq, NH, hs))
TRELLIS_CPU_KERNEL_OP(ringAttentionBlockBackward,
                      TRELLIS_P(acc_t<T> *dq, int ldq, acc_t<T> *dkv, const T *dOut, const T *q, const T *kv,
                                const acc_t<T> *lse, const acc_t<T> *delta, const std::int32_t *qPos,
                                const std::int32_t *kPos, int B, int Tq, int Tk, int NH, int KVH, int hs),
                      TRELLIS_P(dq, ldq, dkv, dOut, q, kv, lse, delta, qPos, kPos, B, Tq, Tk, NH, KVH, hs))
// dst[r, 0:cols) = src[r, 0:cols), converted when the types differ.
template <typename D, typename S>
void copyColumns(const Stream &stream, D *dst, int ldDst, const S *src, int ldSrc, int rows, int cols)
{
    if (stream.device != Device::Cpu)
        unavailable(stream, "copyColumns", dtypeOf<S>());
    if constexpr (std::is_same_v<D, S>)
        cpu::copyColumns(dst, ldDst, src, ldSrc, rows, cols);
    else
        cpu::half::copyColumns(dst, ldDst, src, ldSrc, rows, cols);
}
TRELLIS_CPU_KERNEL_OP(softmaxRows, TRELLIS_P(T *probs, const T *logits, int N, int E), TRELLIS_P(probs, logits, N, E))
TRELLIS_CPU_KERNEL_OP(softmaxRowsBackward, TRELLIS_P(T *dLogits, const T *probs, const T *dProbs, int N, int E),
                      TRELLIS_P(dLogits, probs, dProbs, N, E))
TRELLIS_CPU_KERNEL_OP(selectRows, TRELLIS_P(T *dst, const T *src, const std::int32_t *rowOf, int n, int C),
                      TRELLIS_P(dst, src, rowOf, n, C))
TRELLIS_CPU_KERNEL_OP(combineRows,
                      TRELLIS_P(T *out, const T *rows, const std::int32_t *slot, const acc_t<T> *gates, int N, int k, int C),
                      TRELLIS_P(out, rows, slot, gates, N, k, C))
TRELLIS_CPU_KERNEL_OP(combineRowsBackward,
                      TRELLIS_P(T *dRows, acc_t<T> *dGates, const T *dOut, const T *rows, const std::int32_t *slot,
                                const acc_t<T> *gates, int N, int k, int C),
                      TRELLIS_P(dRows, dGates, dOut, rows, slot, gates, N, k, C))
TRELLIS_CPU_KERNEL_OP(addSelectedRows, TRELLIS_P(T *dx, const T *rows, const std::int32_t *slot, int N, int k, int C),
                      TRELLIS_P(dx, rows, slot, N, k, C))
#undef TRELLIS_CPU_KERNEL_OP

#undef TRELLIS_KERNEL_OP
#undef TRELLIS_KERNEL_OP_F32
#undef TRELLIS_CUDA_DISPATCH
#undef TRELLIS_CUDA_DISPATCH_F32
#undef TRELLIS_CPU_CALL
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
        unavailable(stream, "sum", dtypeOf<T>());
    }
    if constexpr (is16Bit<T>)
        return cpu::half::sum(data, n);
    else
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
        unavailable(stream, "sumSquares", dtypeOf<T>());
    }
    if constexpr (is16Bit<T>)
        return cpu::half::sumSquares(data, n);
    else
        return cpu::sumSquares(data, n);
}

using AdamWStep = cpu::AdamWStep;
inline void adamw(const Stream &stream, float *params, const float *grads, float *m, float *v, const std::uint8_t *decay,
                  std::int64_t n, const AdamWStep &step)
{
    if (stream.device != Device::Cpu) {
#if defined(TRELLIS_HAVE_CUDA)
        cuda::OpTimer timer(stream, "adamw");
        cuda::adamw(stream, params, grads, m, v, decay, n, step);
        return;
#else
        unavailable(stream, "adamw");
#endif
    }
    cpu::adamw(params, grads, m, v, decay, n, step);
}

} // namespace trellis::kernels
