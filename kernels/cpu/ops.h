// CPU reference kernels for the GPT trainer: row-major, templated on the scalar (float for
// training, double for finite-difference gradient checks). GEMMs go through OpenBLAS; the rest
// are straightforward loops. "Accumulate" outputs are added to, so gradients of several
// micro-batches sum without extra buffers. Future CUDA kernels are checked against these.
#pragma once

#include <cstdint>

namespace trellis::kernels::cpu {

// C[M,N] = alpha·op(A)·op(B) + beta·C with explicit leading dimensions (row-major).
template <typename T>
void gemm(bool transA, bool transB, int M, int N, int K, T alpha, const T *A, int lda, const T *B, int ldb, T beta,
          T *C, int ldc);

// out[BT,OC] = in[BT,C]·W[OC,C]ᵀ + bias[OC] (bias may be null).
template <typename T>
void linearForward(T *out, const T *in, const T *weight, const T *bias, int BT, int C, int OC);
// dIn[BT,C] += dOut·W; dWeight[OC,C] += dOutᵀ·in; dBias[OC] += Σ dOut (dIn, dBias may be null).
template <typename T>
void linearBackward(T *dIn, T *dWeight, T *dBias, const T *dOut, const T *in, const T *weight, int BT, int C, int OC);

// out[N,C] = (in − mean)·rstd·gamma + beta per row; keeps mean[N] and rstd[N] for backward.
template <typename T>
void layerNormForward(T *out, T *mean, T *rstd, const T *in, const T *gamma, const T *beta, int N, int C);
// dIn, dGamma, dBeta accumulate.
template <typename T>
void layerNormBackward(T *dIn, T *dGamma, T *dBeta, const T *dOut, const T *in, const T *gamma, const T *mean,
                       const T *rstd, int N, int C);

// GELU, tanh approximation (as GPT-2).
template <typename T>
void geluForward(T *out, const T *in, std::int64_t n);
template <typename T>
void geluBackward(T *dIn, const T *in, const T *dOut, std::int64_t n); // dIn accumulates

// Causal multi-head attention. qkv[B,T,3C] holds q, k, v side by side; out[B,T,C];
// att[B,NH,T,T] keeps the softmax probabilities (zero above the diagonal) for backward.
template <typename T>
void attentionForward(T *out, T *att, const T *qkv, int B, int T_, int C, int NH);
// dqkv accumulates; scratch needs T·T elements.
template <typename T>
void attentionBackward(T *dqkv, T *scratch, const T *dOut, const T *qkv, const T *att, int B, int T_, int C, int NH);

// out[n] = a[n] + b[n].
template <typename T>
void residualForward(T *out, const T *a, const T *b, std::int64_t n);

// Softmax of logits[BT,V] into probs, losses[i] = −log probs[i, target[i]].
template <typename T>
void crossEntropyForward(T *losses, T *probs, const T *logits, const std::int32_t *targets, int BT, int V);
// dLogits[BT,V] = (probs − onehot(target))·scale (overwritten).
template <typename T>
void crossEntropyBackward(T *dLogits, const T *probs, const std::int32_t *targets, T scale, int BT, int V);

// out[b,t,:] = wte[token[b,t],:] + wpe[t,:].
template <typename T>
void encoderForward(T *out, const std::int32_t *tokens, const T *wte, const T *wpe, int B, int T_, int C);
// dwte, dwpe accumulate.
template <typename T>
void encoderBackward(T *dwte, T *dwpe, const T *dOut, const std::int32_t *tokens, int B, int T_, int C);

} // namespace trellis::kernels::cpu
