// CPU kernels for the GPT trainer: row-major, templated on the scalar (float for training,
// double for finite-difference gradient checks). GEMMs go through OpenBLAS. The float kernels are
// vectorised (SSE2/AVX2/AVX-512 picked at run time, simd.h) and spread over the kernel threads
// (parallel.h); the double ones are the plain reference loops (the CUDA kernels, kernels/cuda/, are
// checked against these). 16-bit GEMMs and conversions: half_gemm.h, half_ops.h. "Accumulate" outputs are added to, so gradients of several micro-batches sum
// without extra buffers. Results are deterministic (the same inputs and thread count give
// bit-identical outputs); the kernels other than GEMM give the same bits for any thread count.
#pragma once

#include "kernels/dtype.h"

#include <cstdint>

namespace trellis::kernels::cpu {

// C[M,N] = alpha·op(A)·op(B) + beta·C for contiguous row-major matrices: op(A) is [M,K] (A is
// [K,M] when transA), op(B) is [K,N] (B is [N,K] when transB); leading dimensions follow.
template <typename T>
void gemm(bool transA, bool transB, int M, int N, int K, T alpha, const T *A, const T *B, T beta, T *C);
// The same with explicit leading dimensions, for strided views (attention reads q, k, v in place
// out of qkv[B,T,3C] with leading dimension 3C).
template <typename T>
void gemm(bool transA, bool transB, int M, int N, int K, T alpha, const T *A, int lda, const T *B, int ldb, T beta,
          T *C, int ldc);

// out[BT,OC] = in[BT,C]·W[OC,C]ᵀ + bias[OC] (bias may be null).
template <typename T>
void linearForward(T *out, const T *in, const T *weight, const T *bias, int BT, int C, int OC);
// dIn[BT,C] += dOut·W; dWeight[OC,C] += dOutᵀ·in; dBias[OC] += Σ dOut (dIn, dBias may be null).
template <typename T>
void linearBackward(T *dIn, acc_t<T> *dWeight, acc_t<T> *dBias, const T *dOut, const T *in, const T *weight, int BT, int C,
                    int OC);

// out[N,C] = (in[N,C] − mean)·rstd·gamma[C] + beta[C] per row, rstd = 1/sqrt(var + eps) with the
// biased variance; keeps mean[N] and rstd[N] for backward.
template <typename T>
void layerNormForward(T *out, acc_t<T> *mean, acc_t<T> *rstd, const T *in, const T *gamma, const T *beta, int N, int C,
                      acc_t<T> eps = acc_t<T>(1e-5));
// dIn[N,C], dGamma[C], dBeta[C] accumulate; dOut, in [N,C]; mean, rstd [N] from the forward.
template <typename T>
void layerNormBackward(T *dIn, acc_t<T> *dGamma, acc_t<T> *dBeta, const T *dOut, const T *in, const T *gamma,
                       const acc_t<T> *mean, const acc_t<T> *rstd, int N, int C);

// out[n] = GELU(in[n]), tanh approximation (as GPT-2).
template <typename T>
void geluForward(T *out, const T *in, std::int64_t n);
// dIn[n] += GELU'(in[n])·dOut[n].
template <typename T>
void geluBackward(T *dIn, const T *in, const T *dOut, std::int64_t n);

// Causal attention with NH query heads of C/NH each over KVH key/value heads (KVH divides NH;
// KVH = NH is multi-head attention, fewer is grouped-query attention: query head h uses kv head
// h/(NH/KVH)). qkv[B,T,C+2·KVH·C/NH] holds q, k, v side by side; out[B,T,C]; att[B,NH,T,T]
// keeps the softmax probabilities (zero above the diagonal) for backward.
template <typename T>
void attentionForward(T *out, T *att, const T *qkv, int B, int T_, int C, int NH, int KVH);
// dqkv (qkv's shape) accumulates; dOut[B,T,C]; att as left by the forward. scratch needs T·T
// elements (one (batch, head) pair's dpreatt at a time: the softmax gradient is formed in place).
template <typename T>
void attentionBackward(T *dqkv, acc_t<T> *scratch, const T *dOut, const T *qkv, const T *att, int B, int T_, int C,
                       int NH, int KVH);

// Ring attention (context parallelism, Liu et al. 2023): causal attention of this rank's queries
// against one block of keys and values at a time, the blocks merged by the online-softmax rule
// (Milakov & Gimelshein 2018). Queries are B·Tq rows of ldq elements, query head h at columns
// h·hs (the q part of qkv rows); kv holds B·Tk rows of 2·KVH·hs: the block's keys, then its values.
// qPos[Tq] and kPos[Tk] are the rows' positions in the whole sequence: query t sees key u when
// kPos[u] ≤ qPos[t]. out[B,Tq,NH·hs] accumulates the unnormalised sum of values, rowMax and
// rowSum[B,NH,Tq] the running maximum score (start −inf) and sum of exponentials (start 0).
// The accumulators are acc_t<T>.
template <typename T>
void ringAttentionBlockForward(acc_t<T> *out, acc_t<T> *rowMax, acc_t<T> *rowSum, const T *q, int ldq, const T *kv,
                               const std::int32_t *qPos, const std::int32_t *kPos, int B, int Tq, int Tk, int NH, int KVH,
                               int hs);
// After the last block: out = acc / rowSum (acc may be out itself when the types agree),
// lse = rowMax + log(rowSum) (kept for backward instead of the probabilities).
template <typename T>
void ringAttentionFinish(T *out, acc_t<T> *lse, const acc_t<T> *acc, const acc_t<T> *rowMax, const acc_t<T> *rowSum, int B,
                         int Tq, int NH, int hs);
// delta[B,NH,Tq] = Σ over a head's columns of dOut·out (the softmax backward's row term).
template <typename T>
void ringAttentionDelta(acc_t<T> *delta, const T *dOut, const T *out, int B, int Tq, int NH, int hs);
// One block's gradients, added: dq (rows of ldq) and dkv (kv's shape), both acc_t<T>, from
// dOut[B,Tq,NH·hs], the forward's lse and delta; the probabilities are recomputed from q, k and lse.
template <typename T>
void ringAttentionBlockBackward(acc_t<T> *dq, int ldq, acc_t<T> *dkv, const T *dOut, const T *q, const T *kv,
                                const acc_t<T> *lse, const acc_t<T> *delta, const std::int32_t *qPos,
                                const std::int32_t *kPos, int B, int Tq, int Tk, int NH, int KVH, int hs);

// dst[r, 0:cols) = src[r, 0:cols) for `rows` rows of leading dimensions ldDst and ldSrc (the k and
// v columns of qkv rows to and from a ring block).
template <typename T>
void copyColumns(T *dst, int ldDst, const T *src, int ldSrc, int rows, int cols);

// Mixture of experts (kernels/cpu/moe.cpp). Rows are C wide; a slot index < 0 means none.
// probs[N,E] = softmax of each row of logits (the router).
template <typename T>
void softmaxRows(T *probs, const T *logits, int N, int E);
// dLogits[N,E] = probs ⊙ (dProbs − Σ_e probs·dProbs) per row.
template <typename T>
void softmaxRowsBackward(T *dLogits, const T *probs, const T *dProbs, int N, int E);
// dst[i] = src[rowOf[i]] for i < n, a zero row where rowOf[i] < 0 (dispatch into expert slots).
template <typename T>
void selectRows(T *dst, const T *src, const std::int32_t *rowOf, int n, int C);
// out[t] = Σ_j gates[t,j]·rows[slot[t,j]] over the k choices of each of N rows (combine).
template <typename T>
void combineRows(T *out, const T *rows, const std::int32_t *slot, const acc_t<T> *gates, int N, int k, int C);
// The combine's backward: dRows[slot[t,j]] = gates[t,j]·dOut[t] (other rows untouched) and
// dGates[t,j] = dOut[t]·rows[slot[t,j]] (0 where dropped).
template <typename T>
void combineRowsBackward(T *dRows, acc_t<T> *dGates, const T *dOut, const T *rows, const std::int32_t *slot,
                         const acc_t<T> *gates, int N, int k, int C);
// dx[t] += Σ_j rows[slot[t,j]] (the dispatch's backward).
template <typename T>
void addSelectedRows(T *dx, const T *rows, const std::int32_t *slot, int N, int k, int C);

// RMSNorm (Zhang & Sennrich 2019, llama): out[N,C] = in·rstd·gamma[C], rstd = 1/sqrt(mean(in²) +
// eps) per row, kept in rstd[N] for backward.
template <typename T>
void rmsNormForward(T *out, acc_t<T> *rstd, const T *in, const T *gamma, int N, int C, acc_t<T> eps = acc_t<T>(1e-5));
// dIn[N,C] and dGamma[C] accumulate (either may be null); rows are summed into dGamma in order.
template <typename T>
void rmsNormBackward(T *dIn, acc_t<T> *dGamma, const T *dOut, const T *in, const T *gamma, const acc_t<T> *rstd, int N, int C);

// SwiGLU (Shazeer 2020): in[N,2F] holds the gate (columns 0..F) and the up projection (F..2F);
// out[N,F] = silu(gate)·up, silu(x) = x·sigmoid(x).
template <typename T>
void swigluForward(T *out, const T *in, int N, int F);
// dIn[N,2F] accumulates.
template <typename T>
void swigluBackward(T *dIn, const T *in, const T *dOut, int N, int F);

// Rotary position embeddings (Su et al. 2021) in the rotate-half layout (Hugging Face's llama):
// in each of `heads` heads of hs columns (starting at column 0 of rows of ld elements), the pair
// (i, i + hs/2) turns by angle pos·theta^(−2i/hs), pos = firstPos + row mod seqLen; cos/sin
// tables [maxPos, hs/2]. In place; inverse = true turns back (the backward of the forward).
template <typename T>
void rope(T *x, const acc_t<T> *cosTable, const acc_t<T> *sinTable, int N, int seqLen, int firstPos, int ld, int heads,
          int hs, bool inverse);

// out[n] = a[n] + b[n] (the residual connection; its backward is a plain copy of dOut).
template <typename T>
void residualForward(T *out, const T *a, const T *b, std::int64_t n);

// Softmax of logits[BT,V] into probs[BT,V] (max-subtracted, so stable for large logits);
// losses[i] = −log probs[i, targets[i]] = logsumexp(logits[i]) − logits[i, targets[i]].
template <typename T>
void crossEntropyForward(acc_t<T> *losses, acc_t<T> *probs, const T *logits, const std::int32_t *targets, int BT, int V);
// dLogits[BT,V] = (probs − onehot(target))·scale (overwritten).
template <typename T>
void crossEntropyBackward(T *dLogits, const acc_t<T> *probs, const std::int32_t *targets, acc_t<T> scale, int BT, int V);

// out[B,T,C]: out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]; wte[V,C], wpe[maxT,C], tokens[B,T].
// A token outside [0, V) is refused (std::out_of_range naming it and its position), never read.
template <typename T>
void encoderForward(T *out, const std::int32_t *tokens, const T *wte, const T *wpe, int B, int T_, int C, int V);
// dwte[V,C], dwpe[maxT,C] accumulate the rows picked by the forward (tokens outside [0, V) refused).
template <typename T>
void encoderBackward(acc_t<T> *dwte, acc_t<T> *dwpe, const T *dOut, const std::int32_t *tokens, int B, int T_, int C, int V);

// Threads for the float kernels, GEMMs included: above 1, a GEMM is split into single-threaded
// OpenBLAS calls on the kernel threads. 0, the default, follows openblas_get_num_threads() (i.e.
// OPENBLAS_NUM_THREADS, which is what the launcher sets per rank).
void setKernelThreads(int threads);
int kernelThreads();
// The vector instruction set of the float kernels: "avx512", "avx2" or "sse2" (the widest this
// CPU supports, or TRELLIS_KERNELS_ISA). setKernelIsa switches if the CPU supports the one named.
const char *kernelIsa();
bool setKernelIsa(const char *name);

} // namespace trellis::kernels::cpu
