// GptModel's backward passes (see gpt_model.h): the fused backward of a stage, and the split one
// of the zero-bubble schedules — the input half (B) keeping each weight-bearing op's output
// gradient, the weight half (W) adding exactly what the fused backward would have. Walks the
// forward's graph in reverse with one running gradient of the residual stream.
#include "backend/trainer/model/gpt_model.h"

#include "kernels/ops.h"

#include <stdexcept>

namespace trellis::trainer {

namespace ops = kernels;

template <typename T>
T *GptModel<T>::stash(std::size_t slot, const T *data, std::size_t n)
{
    while (m_stash.size() <= slot)
        m_stash.emplace_back(*m_device);
    m_stash[slot].assignFromDevice(data, n);
    return m_stash[slot].data();
}

template <typename T>
void GptModel<T>::keepForWeights(BackwardPass &bp, const T *data, std::size_t n)
{
    if (!bp.weights)
        stash(bp.slot, data, n);
    ++bp.slot;
}

// With sequence parallelism a row-parallel layer's output gradient is gathered from every
// rank's rows, a column-parallel layer's input rows are gathered again for its weight
// gradient, and its input gradient's partial sums are reduce-scattered back to this rank's
// rows; without it the input gradient's partial sums are all-reduced.
template <typename T>
T *GptModel<T>::inputGradTarget()
{
    const std::size_t btc = static_cast<std::size_t>(m_batch * m_seqLen) * m_config.hidden;
    T *target = sp() ? m_partial.data() : m_dLn.data();
    zero(target, btc);
    return target;
}

template <typename T>
void GptModel<T>::finishInputGrad()
{
    const int BT = m_batch * m_seqLen;
    if (sp())
        scatterRows(m_partial.data(), m_dLn.data(), BT);
    else
        tpAllReduce(m_dLn.data(), static_cast<std::size_t>(BT) * m_config.hidden);
}

// The cross-entropy, the head and the final norm, into m_dResidual.
template <typename T>
void GptModel<T>::headBackward(BackwardPass &bp)
{
    const int BT = m_batch * m_seqLen, C = m_config.hidden, V = m_V, R = rows(BT);
    const std::size_t rc = static_cast<std::size_t>(R) * C;
    const int last = m_config.layers + 1;
    const std::size_t headw = tiedHead() ? m_wte : m_lmHead;
    if (tiedHead())
        acquire(0, bp.pass); // the tied head's gradient goes to wte
    acquire(last, bp.pass);
    // Mean over BT positions: each position's loss has weight lossScale / BT.
    if (m_fusedLoss)
        ops::crossEntropyLseBackward(stream(), m_dLogits.data(), m_logits, m_probs, m_targets.data(),
                                     bp.lossScale / static_cast<G>(BT), BT, V);
    else if (m_config.tp == 1)
        ops::crossEntropyBackward(stream(), m_dLogits.data(), m_probs, m_targets.data(), bp.lossScale / static_cast<G>(BT), BT, V);
    else // softmax over the whole vocabulary minus the one-hot target, this rank's columns
        ops::crossEntropyRangeBackward(stream(), m_dLogits.data(), m_probs, m_targets.data(), m_config.tpRank * V,
                                       bp.lossScale / static_cast<G>(BT), BT, V);
    ops::linearBackward<T>(stream(), inputGradTarget(), weightGrad(bp, headw), nullptr, m_dLogits.data(), m_lnf, param(headw), BT,
                           C, V);
    finishInputGrad();
    zero(m_dResidual.data(), rc);
    keepForWeights(bp, m_dLn.data(), rc);
    normBackward(m_dResidual.data(), m_lnfw, m_lnfb, m_dLn.data(), output(), m_lnfMean, m_lnfRstd, R, bp.weights);
    release(last, bp.pass);
    if (!m_stage.embed && tiedHead())
        release(0, bp.pass);
    if (m_ready)
        m_ready(m_lnfw);
}

// MLP branch: residual3 = residual2 + fcproj(gelu(fc(ln2(residual2)))).
template <typename T>
void GptModel<T>::mlpBackward(int l, BackwardPass &bp)
{
    const int BT = m_batch * m_seqLen, C = m_config.hidden, F = m_F, R = rows(BT);
    const std::size_t btc = static_cast<std::size_t>(BT) * C;
    const std::size_t rc = static_cast<std::size_t>(R) * C;
    const std::size_t btf = static_cast<std::size_t>(BT) * F;
    const std::size_t btfIn = static_cast<std::size_t>(BT) * m_Fin;
    const Layer &L = m_layers[l];
    const LayerActs &a = m_layerActs[l];
    T *dx = m_dResidual.data();
    if (moe()) {
        // Computes its weight gradients here too (no split backward: refused with weights = false).
        T *target = inputGradTarget();
        moeBackward(l, target, gatheredRows(dx, BT), a.ln2, bp.lossScale);
        finishInputGrad();
        keepForWeights(bp, m_dLn.data(), rc);
        normBackward(dx, L.ln2w, L.ln2b, m_dLn.data(), a.residual2, a.ln2Mean, a.ln2Rstd, R, bp.weights);
        return;
    }
    zero(m_dFchGelu.data(), btf);
    const T *dOut3 = gatheredRows(dx, BT);
    keepForWeights(bp, dOut3, btc);
    ops::linearBackward(stream(), m_dFchGelu.data(), weightGrad(bp, L.fcprojw), weightGrad(bp, L.fcprojb), dOut3, a.fchGelu,
                        param(L.fcprojw), BT, F, C);
    zero(m_dFch.data(), btfIn);
    if (m_config.llama)
        ops::swigluBackward(stream(), m_dFch.data(), a.fch, m_dFchGelu.data(), BT, F);
    else
        ops::geluBackward(stream(), m_dFch.data(), a.fch, m_dFchGelu.data(), static_cast<std::int64_t>(btf));
    keepForWeights(bp, m_dFch.data(), btfIn);
    const T *ln2 = gatheredRows(a.ln2, BT);
    ops::linearBackward(stream(), inputGradTarget(), weightGrad(bp, L.fcw), weightGrad(bp, L.fcb), m_dFch.data(), ln2,
                        param(L.fcw), BT, C, m_Fin);
    finishInputGrad(); // column-parallel input: the group adds its partial gradients
    keepForWeights(bp, m_dLn.data(), rc);
    normBackward(dx, L.ln2w, L.ln2b, m_dLn.data(), a.residual2, a.ln2Mean, a.ln2Rstd, R, bp.weights);
}

// Attention branch: residual2 = x + proj(attn(qkv(ln1(x)))).
template <typename T>
void GptModel<T>::attentionBranchBackward(int l, const T *x, BackwardPass &bp)
{
    const int B = m_batch, Tn = m_seqLen, BT = B * Tn, C = m_config.hidden, NH = m_NH, Cq = m_Cq, R = rows(BT);
    const std::size_t btc = static_cast<std::size_t>(BT) * C;
    const std::size_t rc = static_cast<std::size_t>(R) * C;
    const std::size_t btq = static_cast<std::size_t>(BT) * Cq;
    const std::size_t btqkv = static_cast<std::size_t>(BT) * m_QKV;
    const Layer &L = m_layers[l];
    const LayerActs &a = m_layerActs[l];
    T *dx = m_dResidual.data();
    zero(m_dAtty.data(), btq);
    const T *dOut2 = gatheredRows(dx, BT);
    keepForWeights(bp, dOut2, btc);
    ops::linearBackward(stream(), m_dAtty.data(), weightGrad(bp, L.projw), weightGrad(bp, L.projb), dOut2, a.atty, param(L.projw),
                        BT, Cq, C);
    if (!m_fusedAttention) // the fused backward writes every column
        zero(m_dQkv.data(), btqkv);
    if (cp()) {
        ringAttentionBackward(m_dQkv.data(), m_dAtty.data(), a.atty, a.lse, a.qkv);
    } else if (m_fusedAttention) {
        ops::flashAttentionBackward(stream(), m_dQkv.data(), m_dAtty.data(), a.atty, a.qkv, a.lse, B, Tn, Cq, NH, m_KVH);
    } else {
        if (m_recompute == Recompute::Selective) // this layer's probabilities (a.atty comes out the same)
            ops::attentionForward(stream(), a.atty, a.att, a.qkv, B, Tn, Cq, NH, m_KVH);
        ops::attentionBackward(stream(), m_dQkv.data(), m_dAttScratch.data(), m_dAtty.data(), a.qkv, a.att, B, Tn, Cq, NH,
                               m_KVH);
    }
    if (m_config.llama) // back through the rotation of q and k
        applyRope(m_dQkv.data(), true);
    keepForWeights(bp, m_dQkv.data(), btqkv);
    const T *ln1 = gatheredRows(a.ln1, BT);
    ops::linearBackward(stream(), inputGradTarget(), weightGrad(bp, L.qkvw), weightGrad(bp, L.qkvb), m_dQkv.data(), ln1,
                        param(L.qkvw), BT, C, m_QKV);
    finishInputGrad();
    keepForWeights(bp, m_dLn.data(), rc);
    normBackward(dx, L.ln1w, L.ln1b, m_dLn.data(), x, a.ln1Mean, a.ln1Rstd, R, bp.weights);
}

template <typename T>
void GptModel<T>::backwardStage(const T *dOutput, G lossScale, bool weights)
{
    if (m_batch == 0)
        throw std::logic_error("GptModel::backward called before forward");
    if (!weights && m_recompute == Recompute::Full)
        throw std::logic_error("GptModel::backward: a split backward keeps every layer's activations; no recompute");
    if (!weights && moe())
        throw std::logic_error("GptModel::backward: the mixture-of-experts layers have no split backward");
    const int BT = m_batch * m_seqLen, C = m_config.hidden, R = rows(BT);
    const std::size_t btc = static_cast<std::size_t>(BT) * C;
    const std::size_t rc = static_cast<std::size_t>(R) * C;
    // Weight gradients now (fused) or later from stashed output gradients (split: backwardWeights).
    BackwardPass bp{weights, weights ? Pass::Backward : Pass::BackwardInput, lossScale, 0};
    if (m_stage.head)
        headBackward(bp);
    else
        ops::copy(stream(), m_dResidual.data(), dOutput, static_cast<std::int64_t>(rc));
    if (m_stage.embed && (!m_stage.head || !tiedHead())) // else the tied head acquired it
        acquire(0, bp.pass);

    // One running gradient: of residual3, becomes that of residual2, then of the layer's input.
    for (int l = m_stage.endLayer - 1; l >= m_stage.firstLayer; --l) {
        const T *x = l == m_stage.firstLayer ? m_encoded : m_layerActs[l - 1].residual3;
        acquire(l + 1, bp.pass);
        if (m_recompute == Recompute::Full) {
            m_recomputing = true; // the routing is counted once, in the first forward
            layerForward(l, x);   // refill the shared inner activations for this layer
            m_recomputing = false;
        }
        mlpBackward(l, bp);
        attentionBranchBackward(l, x, bp);
        release(l + 1, bp.pass);
        if (m_ready)
            m_ready(m_layers[l].ln1w); // this layer's tensors start at ln1.weight
    }
    if (m_stage.embed) {
        const T *dEncoded = gatheredRows(m_dResidual.data(), BT);
        keepForWeights(bp, dEncoded, btc);
        if (weights)
            embeddingBackward(dEncoded);
        release(0, bp.pass);
        if (m_ready)
            m_ready(0);
    }
    m_weightsPending = !weights;
}

template <typename T>
void GptModel<T>::backwardWeights()
{
    if (!m_weightsPending)
        throw std::logic_error("GptModel::backwardWeights without a split backward before it");
    m_weightsPending = false;
    const int BT = m_batch * m_seqLen, C = m_config.hidden, F = m_F, V = m_V, Cq = m_Cq, R = rows(BT);
    // Inputs of column-parallel layers are gathered again with sequence parallelism (every tp
    // rank runs the same W actions, so the collectives pair up).
    auto allRows = [&](const T *local) { return gatheredRows(local, BT); };
    // The stash slots in the order backwardStage filled them.
    std::size_t slot = 0;
    auto next = [&] { return m_stash[slot++].data(); };
    const int last = m_config.layers + 1;
    const std::size_t headw = tiedHead() ? m_wte : m_lmHead;
    if (m_stage.head) {
        if (tiedHead())
            acquire(0, Pass::Backward);
        acquire(last, Pass::Backward);
        ops::linearBackward<T>(stream(), nullptr, grad(headw), nullptr, m_dLogits.data(), m_lnf, param(headw), BT, C, V);
        normBackward(nullptr, m_lnfw, m_lnfb, next(), output(), m_lnfMean, m_lnfRstd, R, true);
        release(last, Pass::Backward);
        if (!m_stage.embed && tiedHead())
            release(0, Pass::Backward);
    }
    if (m_stage.embed && (!m_stage.head || !tiedHead())) // else the tied head acquired it
        acquire(0, Pass::Backward);
    for (int l = m_stage.endLayer - 1; l >= m_stage.firstLayer; --l) {
        const Layer &L = m_layers[l];
        const LayerActs &a = m_layerActs[l];
        const T *x = l == m_stage.firstLayer ? m_encoded : m_layerActs[l - 1].residual3;
        acquire(l + 1, Pass::Backward);
        if (!moe()) {
            ops::linearBackward<T>(stream(), nullptr, grad(L.fcprojw), gradOrNull(L.fcprojb), next(), a.fchGelu, param(L.fcprojw), BT, F, C);
            const T *dFch = next();
            ops::linearBackward<T>(stream(), nullptr, grad(L.fcw), gradOrNull(L.fcb), dFch, allRows(a.ln2), param(L.fcw), BT, C, m_Fin);
        }
        normBackward(nullptr, L.ln2w, L.ln2b, next(), a.residual2, a.ln2Mean, a.ln2Rstd, R, true);
        ops::linearBackward<T>(stream(), nullptr, grad(L.projw), gradOrNull(L.projb), next(), a.atty, param(L.projw), BT, Cq, C);
        const T *dQkv = next();
        ops::linearBackward<T>(stream(), nullptr, grad(L.qkvw), gradOrNull(L.qkvb), dQkv, allRows(a.ln1), param(L.qkvw), BT, C, m_QKV);
        normBackward(nullptr, L.ln1w, L.ln1b, next(), x, a.ln1Mean, a.ln1Rstd, R, true);
        release(l + 1, Pass::Backward);
    }
    if (m_stage.embed) {
        embeddingBackward(next());
        release(0, Pass::Backward);
    }
}

#define TRELLIS_GPT_BACKWARD_MEMBERS(T)                                                                            \
    template T *GptModel<T>::stash(std::size_t, const T *, std::size_t);                                            \
    template void GptModel<T>::backwardStage(const T *, typename GptModel<T>::G, bool);                             \
    template void GptModel<T>::keepForWeights(typename GptModel<T>::BackwardPass &, const T *, std::size_t);        \
    template T *GptModel<T>::inputGradTarget();                                                                     \
    template void GptModel<T>::finishInputGrad();                                                                   \
    template void GptModel<T>::headBackward(typename GptModel<T>::BackwardPass &);                                  \
    template void GptModel<T>::mlpBackward(int, typename GptModel<T>::BackwardPass &);                              \
    template void GptModel<T>::attentionBranchBackward(int, const T *, typename GptModel<T>::BackwardPass &);       \
    template void GptModel<T>::backwardWeights();
TRELLIS_GPT_BACKWARD_MEMBERS(float)
TRELLIS_GPT_BACKWARD_MEMBERS(double)
TRELLIS_GPT_BACKWARD_MEMBERS(kernels::bf16)
TRELLIS_GPT_BACKWARD_MEMBERS(kernels::f16)
#undef TRELLIS_GPT_BACKWARD_MEMBERS

} // namespace trellis::trainer
