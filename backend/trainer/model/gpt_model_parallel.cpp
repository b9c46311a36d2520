// GptModel's tensor- and sequence-parallel pieces (Megatron-LM's layout): which tensors a rank
// shards and how, gathering a whole model from the shards, the vocabulary-parallel embedding
// backward and cross-entropy, the row gathers and reduce-scatters of sequence parallelism and the
// norm gradients summed over the group. See gpt_model.h.
#include "backend/trainer/model/gpt_model.h"

#include "kernels/ops.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>

namespace trellis::trainer {

namespace ops = kernels;

template <typename T>
bool GptModel<T>::isReplicated(std::size_t tensor) const
{
    const std::string &n = m_tensors[tensor].name;
    return !(n == "wte" || n == "lm_head.weight" || n.ends_with("attn.qkv.weight") || n.ends_with("attn.qkv.bias") ||
             n.ends_with("attn.proj.weight") || n.ends_with("mlp.fc.weight") || n.ends_with("mlp.fc.bias") ||
             n.ends_with("mlp.proj.weight") || n.ends_with("experts.fc.weight") || n.ends_with("experts.fc.bias") ||
             n.ends_with("experts.proj.weight"));
}

template <typename T>
std::vector<std::pair<std::size_t, std::size_t>> GptModel<T>::shardRuns(std::size_t tensor, int rank) const
{
    const ParamTensor &t = m_tensors[tensor];
    const std::size_t C = static_cast<std::size_t>(m_config.hidden), Cq = static_cast<std::size_t>(m_Cq),
                      Ckv = static_cast<std::size_t>(m_Ckv), tp = static_cast<std::size_t>(m_config.tp),
                      F = static_cast<std::size_t>(m_config.ffn), Fl = static_cast<std::size_t>(m_F),
                      r = static_cast<std::size_t>(rank);
    const std::string &n = t.name;
    std::vector<std::pair<std::size_t, std::size_t>> runs;
    // The whole model's qkv rows: q (C), k (kv width), v (kv width); this rank's heads of each.
    const std::size_t qkvStarts[3] = {r * Cq, C + r * Ckv, C + tp * Ckv + r * Ckv}, qkvSizes[3] = {Cq, Ckv, Ckv};
    if (isExpert(tensor)) {
        // Stacked experts: this ep rank's experts are experts epRank·El … of the whole tensor, and
        // each is split over tp like the dense MLP (fc rows, proj columns; proj bias whole).
        const bool fcw = n.ends_with("experts.fc.weight"), fcb = n.ends_with("experts.fc.bias"),
                   projw = n.ends_with("experts.proj.weight");
        const std::size_t El = static_cast<std::size_t>(m_El);
        const std::size_t whole = fcw ? (m_config.llama ? 2 : 1) * F * C : fcb ? F : projw ? C * F : C; // one expert
        for (std::size_t e = 0; e < El; ++e) {
            const std::size_t base = (static_cast<std::size_t>(m_config.epRank) * El + e) * whole;
            if (tp == 1 || !(fcw || fcb || projw)) {
                runs.emplace_back(base, whole);
            } else if (fcw && m_config.llama) {
                runs.emplace_back(base + r * Fl * C, Fl * C);
                runs.emplace_back(base + (F + r * Fl) * C, Fl * C);
            } else if (fcw || fcb) {
                const std::size_t width = fcw ? C : 1;
                runs.emplace_back(base + r * Fl * width, Fl * width);
            } else {
                for (std::size_t o = 0; o < C; ++o)
                    runs.emplace_back(base + o * F + r * Fl, Fl);
            }
        }
    } else if (m_config.tp == 1 || isReplicated(tensor)) {
        runs.emplace_back(0, t.size);
    } else if (n == "wte" || n == "lm_head.weight") {
        runs.emplace_back(r * t.size, t.size); // rows of the vocabulary
    } else if (n.ends_with("attn.qkv.weight")) {
        for (std::size_t j = 0; j < 3; ++j)
            runs.emplace_back(qkvStarts[j] * C, qkvSizes[j] * C);
    } else if (n.ends_with("attn.qkv.bias")) {
        for (std::size_t j = 0; j < 3; ++j)
            runs.emplace_back(qkvStarts[j], qkvSizes[j]);
    } else if (n.ends_with("attn.proj.weight")) {
        for (std::size_t o = 0; o < C; ++o) // columns of every output row
            runs.emplace_back(o * C + r * Cq, Cq);
    } else if (m_config.llama && n.ends_with("mlp.fc.weight")) {
        runs.emplace_back(r * Fl * C, Fl * C);       // gate rows
        runs.emplace_back((F + r * Fl) * C, Fl * C); // up rows
    } else if (n.ends_with("mlp.fc.weight") || n.ends_with("mlp.fc.bias")) {
        runs.emplace_back(r * t.size, t.size);
    } else { // mlp.proj.weight
        for (std::size_t o = 0; o < C; ++o)
            runs.emplace_back(o * F + r * Fl, Fl);
    }
    return runs;
}

template <typename T>
GptConfig GptModel<T>::wholeConfig() const
{
    GptConfig whole = m_config;
    whole.tp = 1;
    whole.tpRank = 0;
    whole.cp = 1;
    whole.cpRank = 0;
    whole.ep = 1;
    whole.epRank = 0;
    return whole;
}

template <typename T>
std::vector<T> GptModel<T>::gatherWhole(const T *local)
{
    if (m_config.ep > 1)
        throw std::logic_error("GptModel::gatherWhole gathers over tp only (ep = 1)");
    if (m_config.tp == 1)
        return {local, local + m_count};
    if (!m_tpHost)
        throw std::logic_error("GptModel::gatherWhole needs the host tensor-parallel group");
    const GptModel<T> whole(wholeConfig(), false);
    std::vector<T> out(whole.parameterCount());
    std::vector<T> all;
    for (std::size_t i = 0; i < m_tensors.size(); ++i) {
        const ParamTensor &t = m_tensors[i];
        all.resize(t.size * static_cast<std::size_t>(m_config.tp));
        m_tpHost->hostAllGather(local + t.offset, all.data(), t.size, dataTypeOf<T>());
        for (int r = 0; r < m_config.tp; ++r) {
            std::size_t at = static_cast<std::size_t>(r) * t.size;
            for (const auto &[offset, n] : shardRuns(i, r)) {
                std::copy_n(all.begin() + static_cast<long>(at), n, out.begin() + static_cast<long>(whole.tensors()[i].offset + offset));
                at += n;
            }
        }
    }
    return out;
}

template <typename T>
std::vector<T> GptModel<T>::sliceOfWhole(const T *whole) const
{
    if (m_config.tp == 1 && m_config.ep == 1)
        return {whole, whole + m_count};
    const GptModel<T> layout(wholeConfig(), false);
    std::vector<T> out(m_count);
    for (std::size_t i = 0; i < m_tensors.size(); ++i) {
        std::size_t at = m_tensors[i].offset;
        for (const auto &[offset, n] : shardRuns(i, m_config.tpRank)) {
            std::copy_n(whole + layout.tensors()[i].offset + offset, n, out.begin() + static_cast<long>(at));
            at += n;
        }
    }
    return out;
}

template <typename T>
void GptModel<T>::normForward(T *out, G *mean, G *rstd, const T *in, std::size_t w, std::size_t b, int n)
{
    if (m_config.llama)
        ops::rmsNormForward(stream(), out, rstd, in, param(w), n, m_config.hidden);
    else
        ops::layerNormForward(stream(), out, mean, rstd, in, param(w), param(b), n, m_config.hidden);
}

template <typename T>
void GptModel<T>::normBackward(T *dx, std::size_t w, std::size_t b, const T *dOut, const T *in, const G *mean,
                               const G *rstd, int n, bool weights)
{
    const int C = m_config.hidden;
    const bool rms = m_config.llama;
    auto run = [&](G *dGamma, G *dBeta) {
        if (rms)
            ops::rmsNormBackward(stream(), dx, dGamma, dOut, in, param(w), rstd, n, C);
        else
            ops::layerNormBackward(stream(), dx, dGamma, dBeta, dOut, in, param(w), mean, rstd, n, C);
    };
    if (!weights || !sp()) {
        run(weights ? grad(w) : nullptr, weights ? gradOrNull(b) : nullptr);
        return;
    }
    // This rank saw only its rows: the norm's gain (and bias) gradients are summed over the group.
    const std::size_t count = rms ? 1 : 2;
    m_normGrads.assign(count * static_cast<std::size_t>(C));
    run(m_normGrads.data(), rms ? nullptr : m_normGrads.data() + C);
    tpAllReduce(m_normGrads.data(), m_normGrads.size());
    ops::accumulate(stream(), grad(w), m_normGrads.data(), C);
    if (!rms)
        ops::accumulate(stream(), grad(b), m_normGrads.data() + C, C);
}

template <typename T>
const T *GptModel<T>::gatheredRows(const T *local, int BT)
{
    if (!sp())
        return local;
    gatherRows(local, m_gathered.data(), BT);
    return m_gathered.data();
}

template <typename T>
void GptModel<T>::gatherRows(const T *local, T *full, int BT)
{
    m_tpGroup->allGather(local, full, static_cast<std::size_t>(rows(BT)) * m_config.hidden);
}

template <typename T>
void GptModel<T>::scatterRows(T *full, T *local, int BT)
{
    m_tpGroup->reduceScatter(full, local, static_cast<std::size_t>(rows(BT)) * m_config.hidden, ReduceOp::Sum);
}

template <typename T>
void GptModel<T>::setTensorParallelGroup(DeviceCommunicator *group, HostCommunicator *host)
{
    if (m_config.tp > 1 && (!group || group->size() != m_config.tp || group->rank() != m_config.tpRank))
        throw std::invalid_argument("GptModel: the tensor-parallel group does not match tp / tpRank");
    m_tpGroup = group;
    m_tpHost = host;
}

template <typename T>
template <typename U>
void GptModel<T>::tpAllReduce(U *data, std::size_t n)
{
    if (m_config.tp == 1)
        return;
    m_tpGroup->allReduce(data, data, n, ReduceOp::Sum);
}

template <typename T>
void GptModel<T>::embeddingBackward(const T *dEncoded)
{
    const int B = m_batch, Tn = m_seqLen, C = m_config.hidden;
    if (m_config.tp == 1 && !m_config.llama && !cp()) {
        ops::encoderBackward(stream(), grad(m_wte), grad(m_wpe), dEncoded, m_tokens.data(), B, Tn, C, m_config.vocab);
        return;
    }
    // Rows of this rank's vocabulary range only; positions (gpt) as without tensor parallelism, or
    // with context parallelism each run of rows into the positions it holds.
    ops::embeddingRangeBackward(stream(), grad(m_wte), cp() ? nullptr : gradOrNull(m_wpe), dEncoded, m_tokens.data(),
                                m_config.tpRank * m_V, m_V, B * Tn, Tn, C);
    if (cp() && m_wpe != kNone)
        forEachPositionRun(0, B * Tn, [&](int row, int pos, int count) {
            ops::accumulate(stream(), grad(m_wpe) + static_cast<std::int64_t>(pos) * C, dEncoded + static_cast<std::int64_t>(row) * C,
                            static_cast<std::int64_t>(count) * C);
        });
}

template <typename T>
void GptModel<T>::vocabParallelCrossEntropy(int BT)
{
    // Logits are split by vocabulary: the row maximum, the sum of exponentials and the target's
    // logit each come from the whole group (Megatron-LM's vocabulary-parallel cross-entropy).
    const int V = m_V, tp = m_config.tp, from = m_config.tpRank * V;
    const auto n = static_cast<std::size_t>(BT);
    m_ceMax.ensure(n);
    m_ceAllMax.ensure(n * static_cast<std::size_t>(tp));
    m_ceGlobalMax.ensure(n);
    m_ceSums.ensure(2 * n);
    ops::rowMax(stream(), m_ceMax.data(), m_logits, BT, V);
    m_tpGroup->allGather(m_ceMax.data(), m_ceAllMax.data(), n);
    ops::maxOverBlocks(stream(), m_ceGlobalMax.data(), m_ceAllMax.data(), tp, BT);
    ops::softmaxPartials(stream(), m_probs, m_ceSums.data(), m_logits, m_ceGlobalMax.data(), m_targets.data(), from, BT, V);
    tpAllReduce(m_ceSums.data(), m_ceSums.size());
    ops::softmaxFinish(stream(), m_probs, m_losses, m_ceSums.data(), m_ceGlobalMax.data(), BT, V);
}

// The members defined here, for the two element types gpt_model.cpp instantiates the class with.
#define TRELLIS_GPT_PARALLEL_MEMBERS(T)                                                                          \
    template bool GptModel<T>::isReplicated(std::size_t) const;                                                   \
    template std::vector<std::pair<std::size_t, std::size_t>> GptModel<T>::shardRuns(std::size_t, int) const;     \
    template GptConfig GptModel<T>::wholeConfig() const;                                                          \
    template std::vector<T> GptModel<T>::gatherWhole(const T *);                                                   \
    template std::vector<T> GptModel<T>::sliceOfWhole(const T *) const;                                            \
    template void GptModel<T>::normForward(T *, typename GptModel<T>::G *, typename GptModel<T>::G *, const T *,   \
                                           std::size_t, std::size_t, int);                                        \
    template void GptModel<T>::normBackward(T *, std::size_t, std::size_t, const T *, const T *,                   \
                                            const typename GptModel<T>::G *, const typename GptModel<T>::G *, int, bool); \
    template const T *GptModel<T>::gatheredRows(const T *, int);                                                   \
    template void GptModel<T>::gatherRows(const T *, T *, int);                                                    \
    template void GptModel<T>::scatterRows(T *, T *, int);                                                         \
    template void GptModel<T>::setTensorParallelGroup(DeviceCommunicator *, HostCommunicator *);                   \
    template void GptModel<T>::tpAllReduce<T>(T *, std::size_t);                                                   \
    template void GptModel<T>::embeddingBackward(const T *);                                                       \
    template void GptModel<T>::vocabParallelCrossEntropy(int);
TRELLIS_GPT_PARALLEL_MEMBERS(float)
TRELLIS_GPT_PARALLEL_MEMBERS(double)
TRELLIS_GPT_PARALLEL_MEMBERS(kernels::bf16)
TRELLIS_GPT_PARALLEL_MEMBERS(kernels::f16)
template void GptModel<kernels::bf16>::tpAllReduce<float>(float *, std::size_t);
template void GptModel<kernels::f16>::tpAllReduce<float>(float *, std::size_t);
#undef TRELLIS_GPT_PARALLEL_MEMBERS

} // namespace trellis::trainer
