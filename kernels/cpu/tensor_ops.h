// CPU reference kernels for the element-wise and bookkeeping passes the model and the optimizer
// make besides the layer kernels of ops.h: fills, copies, sums and norms, the vocabulary-parallel
// embedding and cross-entropy pieces (Megatron-LM's), and the AdamW update. Templated on the scalar
// like ops.h; the CUDA kernels beside them (kernels/cuda/) are checked against these.
#pragma once

#include "kernels/dtype.h"

#include <cstdint>

namespace trellis::kernels::cpu {

template <typename T>
void fill(T *data, std::int64_t n, T value);
template <typename T>
void copy(T *dst, const T *src, std::int64_t n);
// dst[i] += src[i]
template <typename T>
void accumulate(T *dst, const T *src, std::int64_t n);
template <typename T>
void scale(T *data, std::int64_t n, T factor);
// Σ data[i] and Σ data[i]², accumulated in double.
template <typename T>
double sum(const T *data, std::int64_t n);
template <typename T>
double sumSquares(const T *data, std::int64_t n);

// Vocabulary-parallel embedding: out[i,:] = wte[tokens[i] − first, :] where the token lies in this
// rank's rows [first, first + V), zero elsewhere (the group's sum is the embedding).
template <typename T>
void embeddingRangeForward(T *out, const std::int32_t *tokens, const T *wte, int first, int V, int BT, int C);
// out[i,:] += wpe[(firstRow + i) mod seqLen, :] for `rows` rows.
template <typename T>
void addPositions(T *out, const T *wpe, int firstRow, int rows, int seqLen, int C);
// dwte rows of this rank's vocabulary range and dwpe (may be null: no learned positions) accumulate
// the picked rows of dOut[BT,C].
template <typename T>
void embeddingRangeBackward(acc_t<T> *dwte, acc_t<T> *dwpe, const T *dOut, const std::int32_t *tokens, int first, int V,
                            int BT, int seqLen, int C);

// Vocabulary-parallel cross-entropy over logits[BT,V] holding vocabulary columns [first, first+V):
// rowMax[i] = max over the row; then with the group's maximum `globalMax`, probs = exp(logit −
// max) and partial[i] = (Σ probs, the target's logit or 0 when another rank holds it); then with
// the group's sums, probs /= Σ and losses[i] = log Σ + max − target logit.
template <typename T>
void rowMax(acc_t<T> *out, const T *logits, int BT, int V);
// out[i] = max over the `blocks` rows of blocks[b·BT + i].
template <typename T>
void maxOverBlocks(T *out, const T *blocks, int count, int BT);
template <typename T>
void softmaxPartials(acc_t<T> *probs, acc_t<T> *partial, const T *logits, const acc_t<T> *globalMax,
                     const std::int32_t *targets, int first, int BT, int V);
template <typename T>
void softmaxFinish(T *probs, T *losses, const T *sums, const T *globalMax, int BT, int V);
// dLogits = (probs − onehot(target, this rank's columns))·scale (overwritten).
template <typename T>
void crossEntropyRangeBackward(T *dLogits, const acc_t<T> *probs, const std::int32_t *targets, int first, acc_t<T> scale,
                               int BT, int V);

// AdamW on n elements (decoupled weight decay where decay[i] != 0, or everywhere when decay is
// null): m = β1 m + (1−β1) g; v = β2 v + (1−β2) g²; p −= lr·wd·p; p −= stepSize·m / (√v·c2 + eps)
// with stepSize = lr / (1 − β1ᵗ) and c2 = 1/√(1 − β2ᵗ).
struct AdamWStep {
    float beta1, beta2, eps, decay, stepSize, invSqrtCorrection2;
};
void adamw(float *params, const float *grads, float *m, float *v, const std::uint8_t *decay, std::int64_t n,
           const AdamWStep &step);

} // namespace trellis::kernels::cpu
