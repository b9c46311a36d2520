// The CPU kernels for the 16-bit element types (bf16, fp16; kernels/dtype.h): storage in 16 bits,
// arithmetic in fp32, one rounding on store — the numerics of mixed-precision training on tensor
// cores and AVX512-BF16. Where the float kernels are vectorised (GEMMs, LayerNorm, GELU,
// attention, cross-entropy, the residual add) the 16-bit ones convert rows in chunks into fp32
// scratch, run the float kernel there and convert back; the plain-loop kernels of ops.h and
// tensor_ops.h take 16-bit types directly (their loads widen, their stores round) and are
// re-exported here. Statistics (mean, rstd), probabilities, losses and weight gradients are fp32.
// GEMMs (16-bit inputs, fp32 accumulation) go through gemm16 (half_gemm.h): oneDNN's bf16 matmul
// where the CPU has AVX512-BF16/AMX, else fp32 GEMMs on the converted operands.
// Results do not depend on the thread count (chunk bounds are fixed), except GEMMs as in ops.h.
#pragma once

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/tensor_ops.h"
#include "kernels/dtype.h"

#include <cstdint>

namespace trellis::kernels::cpu::half {

// out[BT,OC] = in·Wᵀ + bias, rounded once.
template <typename T>
void linearForward(T *out, const T *in, const T *weight, const T *bias, int BT, int C, int OC);
// dIn += dOut·W (rounded once), dWeight += dOutᵀ·in and dBias += Σ dOut in fp32.
template <typename T>
void linearBackward(T *dIn, float *dWeight, float *dBias, const T *dOut, const T *in, const T *weight, int BT, int C,
                    int OC);
template <typename T>
void layerNormForward(T *out, float *mean, float *rstd, const T *in, const T *gamma, const T *beta, int N, int C);
template <typename T>
void layerNormBackward(T *dIn, float *dGamma, float *dBeta, const T *dOut, const T *in, const T *gamma,
                       const float *mean, const float *rstd, int N, int C);
template <typename T>
void geluForward(T *out, const T *in, std::int64_t n);
template <typename T>
void geluBackward(T *dIn, const T *in, const T *dOut, std::int64_t n);
// Softmax in fp32; the probabilities are kept in T (as the value GEMM of a fused attention uses them).
template <typename T>
void attentionForward(T *out, T *att, const T *qkv, int B, int T_, int C, int NH, int KVH);
template <typename T>
void attentionBackward(T *dqkv, float *scratch, const T *dOut, const T *qkv, const T *att, int B, int T_, int C, int NH,
                       int KVH);
template <typename T>
void residualForward(T *out, const T *a, const T *b, std::int64_t n);
template <typename T>
void crossEntropyForward(float *losses, float *probs, const T *logits, const std::int32_t *targets, int BT, int V);
template <typename T>
void crossEntropyBackward(T *dLogits, const float *probs, const std::int32_t *targets, float scale, int BT, int V);

// dst += src (a 16-bit source into fp32, or 16-bit into 16-bit through fp32).
template <typename D, typename S>
void accumulate(D *dst, const S *src, std::int64_t n);
// dst = src converted (to a 16-bit type: rounded to nearest even).
template <typename D, typename S>
void convert(D *dst, const S *src, std::int64_t n);
template <typename D, typename S>
void copyColumns(D *dst, int ldDst, const S *src, int ldSrc, int rows, int cols);

// The plain-loop kernels, instantiated for 16-bit types where they are defined. (scale,
// maxOverBlocks, softmaxFinish and the router's softmaxes are fp32-only: named here so the op
// dispatch compiles, never instantiated for a 16-bit type.)
using cpu::addPositions;
using cpu::maxOverBlocks;
using cpu::scale;
using cpu::softmaxFinish;
using cpu::softmaxRows;
using cpu::softmaxRowsBackward;
using cpu::addSelectedRows;
using cpu::combineRows;
using cpu::combineRowsBackward;
using cpu::crossEntropyRangeBackward;
using cpu::embeddingRangeBackward;
using cpu::embeddingRangeForward;
using cpu::encoderBackward;
using cpu::encoderForward;
using cpu::ringAttentionBlockBackward;
using cpu::ringAttentionBlockForward;
using cpu::ringAttentionDelta;
using cpu::ringAttentionFinish;
using cpu::rmsNormBackward;
using cpu::rmsNormForward;
using cpu::rope;
using cpu::rowMax;
using cpu::selectRows;
using cpu::softmaxPartials;
using cpu::sum;
using cpu::sumSquares;
using cpu::swigluBackward;
using cpu::swigluForward;

} // namespace trellis::kernels::cpu::half
