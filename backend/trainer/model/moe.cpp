// The mixture-of-experts MLP (Switch Transformer / GShard routing, Megatron-LM's expert-parallel
// layout) of GptModel; see gpt_model.h.
//
// Forward, on the gathered rows x of a micro-batch (every tp rank alike):
//   probs = softmax(x·routerᵀ); each row's top_k experts (ties to the lower index), gate = prob;
//   slots: the send buffer holds each expert's rows together, experts in order (so the rows for
//     ep rank r are one block): capacity — `capacity` slots per expert per sequence, filled by the
//     earliest positions (a token's drop never depends on later tokens), padding rows zero;
//     dropless — every choice, in row order;
//   dispatch: the rows go to the rank holding their expert (all-to-all over ep; the counts first
//     when dropless), each local expert runs its MLP on what it received (tp splits it like the
//     dense MLP: partial sums, bias on tp rank 0), the outputs come back (all-to-all);
//   combine: out[t] = Σ_j gate[t,j]·y[slot[t,j]] — partial sums over tp, which the layer adds
//     over the group like a row-parallel linear's output.
// Backward runs the same way back: dy = gate·dOut to the experts, their input gradients home,
// added into the rows' gradient; the gates' gradients (summed over tp) and the load-balancing
// loss's reach the router through its softmax.
//
// The load-balancing loss is per sequence (DeepSeek-V3's sequence-wise form of Switch's):
//   coef · E · Σₑ fₑ·Pₑ, fₑ = the sequence's choices of e / (T·k), Pₑ = its mean probability of e,
// averaged over the micro-batch's sequences like the cross-entropy over its tokens. Being per
// sequence it does not depend on how dp, ep or micro-batching cut the batch, so every parallel
// layout computes the single rank's objective exactly.
#include "backend/trainer/model/gpt_model.h"

#include "kernels/ops.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <type_traits>

namespace trellis::trainer {

namespace ops = kernels;

namespace {

template <typename Buffer>
void grow(Buffer &buffer, std::size_t n)
{
    if (buffer.size() < n)
        buffer.assign(n);
}

// Calls f(local expert, first row, rows) for each non-empty block of received rows, in their order
// ([source rank][local expert]).
template <typename F>
void forEachExpertBlock(const std::vector<std::size_t> &recvRows, int El, F f)
{
    std::size_t at = 0;
    for (std::size_t i = 0; i < recvRows.size(); ++i) {
        if (recvRows[i] > 0)
            f(static_cast<std::size_t>(static_cast<int>(i) % El), at, static_cast<int>(recvRows[i]));
        at += recvRows[i];
    }
}

// Each row's top-k experts (ties to the lower index) into `expert`, their probabilities (the
// gates) returned; probs: BT rows of E.
template <typename G>
std::vector<G> topKChoices(const std::vector<G> &probs, int BT, int E, int k, std::vector<std::int32_t> &expert)
{
    const auto btk = static_cast<std::size_t>(BT) * k;
    expert.assign(btk, 0);
    std::vector<G> gates(btk);
    std::vector<int> order(static_cast<std::size_t>(E));
    for (int t = 0; t < BT; ++t) {
        const G *p = probs.data() + static_cast<std::size_t>(t) * E;
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + k, order.end(),
                          [p](int i, int j) { return p[i] > p[j] || (p[i] == p[j] && i < j); });
        for (int j = 0; j < k; ++j) {
            expert[static_cast<std::size_t>(t) * k + j] = order[static_cast<std::size_t>(j)];
            gates[static_cast<std::size_t>(t) * k + j] = p[order[static_cast<std::size_t>(j)]];
        }
    }
    return gates;
}

// Where each choice goes in the send buffer, experts in order: capacity — `cap` slots per expert
// per sequence, filled by the earliest positions (the rest dropped, slot −1); dropless — every
// choice, in row order. perExpert: the buffer's rows per expert; choices: the choices per expert.
struct Slots {
    std::vector<std::int32_t> slot;
    std::vector<std::size_t> perExpert, choices;
    std::uint64_t dropped = 0;
};

Slots assignSlots(const std::vector<std::int32_t> &expert, int B, int Tn, int E, int k, int cap)
{
    const std::size_t btk = expert.size();
    Slots s;
    s.slot.assign(btk, -1);
    s.perExpert.assign(static_cast<std::size_t>(E), 0);
    s.choices = s.perExpert;
    for (std::size_t i = 0; i < btk; ++i)
        ++s.choices[static_cast<std::size_t>(expert[i])];
    if (cap > 0) {
        const std::size_t S = static_cast<std::size_t>(B) * cap;
        std::fill(s.perExpert.begin(), s.perExpert.end(), S);
        std::vector<int> used(static_cast<std::size_t>(E));
        for (int b = 0; b < B; ++b) {
            std::fill(used.begin(), used.end(), 0);
            for (std::size_t i = static_cast<std::size_t>(b) * Tn * k; i < static_cast<std::size_t>(b + 1) * Tn * k; ++i) {
                const auto e = static_cast<std::size_t>(expert[i]);
                if (used[e] < cap)
                    s.slot[i] = static_cast<std::int32_t>(e * S + static_cast<std::size_t>(b) * cap + used[e]++);
                else
                    ++s.dropped;
            }
        }
    } else {
        s.perExpert = s.choices;
        std::vector<std::size_t> next(static_cast<std::size_t>(E), 0);
        std::exclusive_scan(s.perExpert.begin(), s.perExpert.end(), next.begin(), std::size_t{0});
        for (std::size_t i = 0; i < btk; ++i)
            s.slot[i] = static_cast<std::int32_t>(next[static_cast<std::size_t>(expert[i])]++);
    }
    return s;
}

// The layer's load-balancing loss, per sequence, averaged over the micro-batch.
template <typename G>
double balanceLoss(const std::vector<G> &probs, const std::vector<std::int32_t> &expert, int B, int Tn, int E, int k, double coef)
{
    double aux = 0;
    std::vector<double> count(static_cast<std::size_t>(E)), mean(static_cast<std::size_t>(E));
    for (int b = 0; b < B; ++b) {
        std::fill(count.begin(), count.end(), 0.0);
        std::fill(mean.begin(), mean.end(), 0.0);
        for (int t = b * Tn; t < (b + 1) * Tn; ++t) {
            for (int j = 0; j < k; ++j)
                count[static_cast<std::size_t>(expert[static_cast<std::size_t>(t) * k + j])] += 1;
            for (int e = 0; e < E; ++e)
                mean[static_cast<std::size_t>(e)] += probs[static_cast<std::size_t>(t) * E + e];
        }
        for (int e = 0; e < E; ++e)
            aux += E * (count[static_cast<std::size_t>(e)] / (Tn * k)) * (mean[static_cast<std::size_t>(e)] / Tn);
    }
    aux *= coef / B;
    return aux;
}

} // namespace

void ExpertLoad::add(const ExpertLoad &other)
{
    if (other.tokens.empty())
        return;
    if (tokens.empty()) {
        *this = other;
        return;
    }
    if (tokens.size() != other.tokens.size())
        throw std::invalid_argument("ExpertLoad::add: statistics of different models");
    for (std::size_t i = 0; i < tokens.size(); ++i)
        tokens[i] += other.tokens[i];
    dropped += other.dropped;
    auxLoss += other.auxLoss;
    auxTerms += other.auxTerms;
}

template <typename T>
bool GptModel<T>::isExpert(std::size_t tensor) const
{
    return m_tensors[tensor].name.find(".mlp.experts.") != std::string::npos;
}

template <typename T>
void GptModel<T>::setExpertParallelGroup(DeviceCommunicator *group, HostCommunicator *host)
{
    if (m_config.ep > 1 && (!group || group->size() != m_config.ep || group->rank() != m_config.epRank || !host ||
                            host->size() != m_config.ep || host->rank() != m_config.epRank))
        throw std::invalid_argument("GptModel: the expert-parallel group does not match ep / epRank");
    m_epGroup = group;
    m_epHost = host;
}

template <typename T>
ExpertLoad GptModel<T>::takeExpertLoad()
{
    ExpertLoad out = std::move(m_expertLoad);
    m_expertLoad = {};
    return out;
}

template <typename T>
std::vector<std::int32_t> GptModel<T>::routing(int l) const
{
    const auto index = static_cast<std::size_t>(m_recompute == Recompute::Full ? m_stage.firstLayer : l);
    if (index >= m_moeActs.size() || !m_moeActs[index])
        return {};
    return m_moeActs[index]->expert;
}

template <typename T>
std::size_t GptModel<T>::activationBytes() const
{
    std::size_t bytes = m_acts.size() * sizeof(T) + m_stats.size() * sizeof(G);
    for (const auto &a : m_moeActs)
        if (a)
            bytes += (a->probs.size() + a->gates.size()) * sizeof(G) +
                     (a->xin.size() + a->h.size() + a->act.size() + a->ySent.size()) * sizeof(T) +
                     (a->slot.size() + a->expert.size()) * sizeof(std::int32_t);
    return bytes;
}

template <typename T>
typename GptModel<T>::MoeActs &GptModel<T>::moeActs(int l)
{
    // Full recompute refills one shared set per layer, like the other inner activations.
    const auto index = static_cast<std::size_t>(m_recompute == Recompute::Full ? m_stage.firstLayer : l);
    if (m_moeActs.size() < static_cast<std::size_t>(m_config.layers))
        m_moeActs.resize(static_cast<std::size_t>(m_config.layers));
    if (!m_moeActs[index])
        m_moeActs[index] = std::make_unique<MoeActs>(*m_device);
    return *m_moeActs[index];
}

template <typename T>
void GptModel<T>::moeExchange(const T *send, const std::vector<std::size_t> &sendRows, T *recv,
                              const std::vector<std::size_t> &recvRows)
{
    const int ep = m_config.ep, El = m_El;
    const auto C = static_cast<std::size_t>(m_config.hidden);
    if (m_config.capacity > 0) { // fixed blocks: El·(batch·capacity) rows for every peer
        m_epGroup->allToAll(send, recv, sendRows.front() * static_cast<std::size_t>(El) * C);
        return;
    }
    std::vector<std::size_t> sendCounts(static_cast<std::size_t>(ep), 0), recvCounts(sendCounts);
    for (int r = 0; r < ep; ++r)
        for (int e = 0; e < El; ++e) {
            sendCounts[static_cast<std::size_t>(r)] += sendRows[static_cast<std::size_t>(r * El + e)] * C;
            recvCounts[static_cast<std::size_t>(r)] += recvRows[static_cast<std::size_t>(r * El + e)] * C;
        }
    m_epGroup->allToAllV(send, sendCounts, recv, recvCounts);
}

// Router: softmax(x·routerᵀ) on the device (kept for backward) and on the host.
template <typename T>
std::vector<typename GptModel<T>::G> GptModel<T>::moeRouterProbs(int l, const T *x, MoeActs &a)
{
    const int BT = m_batch * m_seqLen, C = m_config.hidden, E = m_config.experts;
    const auto bte = static_cast<std::size_t>(BT) * E;
    grow(m_moeLogits, bte);
    grow(a.probs, bte);
    ops::linearForward<T>(stream(), m_moeLogits.data(), x, param(m_layers[l].router), nullptr, BT, C, E);
    // The router's softmax in G (the logits widened first when T is narrower).
    const G *logits = nullptr;
    if constexpr (std::is_same_v<T, G>) {
        logits = m_moeLogits.data();
    } else {
        grow(m_moeLogitsAcc, bte);
        ops::convert(stream(), m_moeLogitsAcc.data(), m_moeLogits.data(), static_cast<std::int64_t>(bte));
        logits = m_moeLogitsAcc.data();
    }
    ops::softmaxRows(stream(), a.probs.data(), logits, BT, E);
    std::vector<G> probs(bte);
    m_device->toHost(probs.data(), a.probs.data(), bte * sizeof(G));
    return probs;
}

// Statistics: the router's choices and the load-balancing loss (not again in a recompute).
template <typename T>
void GptModel<T>::recordExpertLoad(int l, const std::vector<std::size_t> &choices, std::uint64_t dropped, double aux)
{
    const int E = m_config.experts;
    m_lastAuxLoss += aux;
    if (m_expertLoad.tokens.empty()) {
        m_expertLoad.layers = m_config.layers;
        m_expertLoad.experts = E;
        m_expertLoad.tokens.assign(static_cast<std::size_t>(m_config.layers) * E, 0);
    }
    for (int e = 0; e < E; ++e)
        m_expertLoad.tokens[static_cast<std::size_t>(l) * E + e] += choices[static_cast<std::size_t>(e)];
    m_expertLoad.dropped += dropped;
    m_expertLoad.auxLoss += aux;
    ++m_expertLoad.auxTerms;
}

// Dispatch: this rank's rows into expert order, then to the experts' ranks (the counts first when
// dropless); a.xin gets the rows this rank's experts received.
template <typename T>
void GptModel<T>::moeDispatch(MoeActs &a, const T *x)
{
    const int C = m_config.hidden, ep = m_config.ep, cap = m_config.capacity;
    const auto Cz = static_cast<std::size_t>(C);
    if (ep == 1) {
        a.recvRows = a.sendRows;
        a.received = a.sent;
        grow(a.xin, a.received * Cz);
        ops::selectRows(stream(), a.xin.data(), x, m_moeRowOf.data(), static_cast<int>(a.sent), C);
        return;
    }
    grow(m_moeSend, a.sent * Cz);
    ops::selectRows(stream(), m_moeSend.data(), x, m_moeRowOf.data(), static_cast<int>(a.sent), C);
    a.recvRows.assign(a.sendRows.size(), 0);
    if (cap > 0) {
        std::fill(a.recvRows.begin(), a.recvRows.end(), a.sendRows.front());
    } else { // the counts first: El per peer
        const std::vector<std::int32_t> sendCounts(a.sendRows.begin(), a.sendRows.end());
        const std::vector<std::int32_t> recvCounts = m_epHost->allToAll(std::span<const std::int32_t>(sendCounts));
        for (std::size_t i = 0; i < recvCounts.size(); ++i)
            a.recvRows[i] = static_cast<std::size_t>(recvCounts[i]);
    }
    a.received = std::accumulate(a.recvRows.begin(), a.recvRows.end(), std::size_t{0});
    grow(a.xin, a.received * Cz);
    moeExchange(m_moeSend.data(), a.sendRows, a.xin.data(), a.recvRows);
}

// This rank's experts on the rows they received, block by block ([source][local expert]); their
// outputs go to a.ySent without expert parallelism, else to m_moeRecv to be sent back.
template <typename T>
void GptModel<T>::moeRunExperts(int l, MoeActs &a)
{
    const int C = m_config.hidden, El = m_El, ep = m_config.ep, F = m_F, Fin = m_Fin;
    const auto Cz = static_cast<std::size_t>(C);
    const Layer &L = m_layers[l];
    grow(a.h, a.received * static_cast<std::size_t>(Fin));
    grow(a.act, a.received * static_cast<std::size_t>(F));
    T *y = nullptr;
    if (ep == 1) {
        grow(a.ySent, a.sent * Cz);
        y = a.ySent.data();
    } else {
        grow(m_moeRecv, a.received * Cz);
        y = m_moeRecv.data();
    }
    forEachExpertBlock(a.recvRows, El, [&](std::size_t e, std::size_t at, int rows) {
        T *h = a.h.data() + at * Fin, *act = a.act.data() + at * F;
        const T *b1 = L.fcb == kNone ? nullptr : param(L.fcb) + e * F;
        const T *b2 = L.fcprojb == kNone || m_config.tpRank != 0 ? nullptr : param(L.fcprojb) + e * Cz;
        ops::linearForward<T>(stream(), h, a.xin.data() + at * Cz, param(L.fcw) + e * Fin * Cz, b1, rows, C, Fin);
        if (m_config.llama)
            ops::swigluForward(stream(), act, h, rows, F);
        else
            ops::geluForward(stream(), act, h, static_cast<std::int64_t>(rows) * F);
        ops::linearForward<T>(stream(), y + at * Cz, act, param(L.fcprojw) + e * Cz * F, b2, rows, F, C);
    });
}

template <typename T>
void GptModel<T>::moeForward(int l, T *out, const T *x)
{
    const int B = m_batch, Tn = m_seqLen, BT = B * Tn, C = m_config.hidden, E = m_config.experts, k = m_config.topK,
              ep = m_config.ep, cap = m_config.capacity;
    MoeActs &a = moeActs(l);
    const auto btk = static_cast<std::size_t>(BT) * k;

    const std::vector<G> probs = moeRouterProbs(l, x, a);
    const std::vector<G> gates = topKChoices(probs, BT, E, k, a.expert);

    // Slots in the send buffer, experts in order.
    const Slots s = assignSlots(a.expert, B, Tn, E, k, cap);
    a.sent = std::accumulate(s.perExpert.begin(), s.perExpert.end(), std::size_t{0});
    a.sendRows = s.perExpert; // (peer, local expert) is the expert's index
    std::vector<std::int32_t> rowOf(a.sent, -1);
    for (std::size_t i = 0; i < btk; ++i)
        if (s.slot[i] >= 0)
            rowOf[static_cast<std::size_t>(s.slot[i])] = static_cast<std::int32_t>(i / static_cast<std::size_t>(k));
    a.slot.assignFromHost(s.slot.data(), btk);
    grow(a.gates, btk);
    m_device->fromHost(a.gates.data(), gates.data(), btk * sizeof(G));
    m_moeRowOf.assignFromHost(rowOf.data(), rowOf.size());

    const double aux = balanceLoss(probs, a.expert, B, Tn, E, k, m_config.auxLossCoef);
    if (!m_recomputing)
        recordExpertLoad(l, s.choices, s.dropped, aux);

    moeDispatch(a, x);
    moeRunExperts(l, a);
    if (ep > 1) {
        grow(a.ySent, a.sent * static_cast<std::size_t>(C));
        moeExchange(m_moeRecv.data(), a.recvRows, a.ySent.data(), a.sendRows);
    }

    // Combine.
    ops::combineRows(stream(), out, a.ySent.data(), a.slot.data(), a.gates.data(), BT, k, C);
}

template <typename T>
void GptModel<T>::moeBackward(int l, T *dx, const T *dOut, const T *xLocal, G lossScale)
{
    const int BT = m_batch * m_seqLen, k = m_config.topK;
    MoeActs &a = moeActs(l);
    const auto btk = static_cast<std::size_t>(BT) * k;
    const auto Cz = static_cast<std::size_t>(m_config.hidden);
    const T *x = xLocal;
    if (sp()) {
        grow(m_moeX, static_cast<std::size_t>(BT) * Cz);
        gatherRows(xLocal, m_moeX.data(), BT);
        x = m_moeX.data();
    }

    // Combine backward: the experts' output gradients (send order; padding rows zero) and the
    // gates' (partial over tp, like the outputs they multiply: summed over the group).
    grow(m_moeSend, a.sent * Cz);
    zero(m_moeSend.data(), a.sent * Cz);
    grow(m_moeDGates, btk);
    ops::combineRowsBackward(stream(), m_moeSend.data(), m_moeDGates.data(), dOut, a.ySent.data(), a.slot.data(),
                             a.gates.data(), BT, k, m_config.hidden);
    tpAllReduce(m_moeDGates.data(), btk);

    // To the experts, back through them, and home.
    const T *dy = m_moeSend.data();
    if (m_config.ep > 1) {
        grow(m_moeRecv, a.received * Cz);
        moeExchange(m_moeSend.data(), a.sendRows, m_moeRecv.data(), a.recvRows);
        dy = m_moeRecv.data();
    }
    moeExpertsBackward(l, a, dy);
    const T *dxSent = m_moeDx.data();
    if (m_config.ep > 1) {
        moeExchange(m_moeDx.data(), a.recvRows, m_moeSend.data(), a.sendRows);
        dxSent = m_moeSend.data();
    }
    ops::addSelectedRows(stream(), dx, dxSent, a.slot.data(), BT, k, m_config.hidden);
    moeRouterBackward(l, a, dx, x, lossScale);
}

template <typename T>
void GptModel<T>::moeExpertsBackward(int l, MoeActs &a, const T *dy)
{
    const int C = m_config.hidden, F = m_F, Fin = m_Fin;
    const auto Cz = static_cast<std::size_t>(C);
    const Layer &L = m_layers[l];
    const std::size_t hidden = a.received * static_cast<std::size_t>(F + Fin);
    grow(m_moeH, hidden);
    zero(m_moeH.data(), hidden);
    grow(m_moeDx, a.received * Cz);
    zero(m_moeDx.data(), a.received * Cz);
    T *dAct = m_moeH.data(), *dH = m_moeH.data() + a.received * F;
    forEachExpertBlock(a.recvRows, m_El, [&](std::size_t e, std::size_t at, int rows) {
        G *db2 = L.fcprojb == kNone ? nullptr : grad(L.fcprojb) + e * Cz;
        G *db1 = L.fcb == kNone ? nullptr : grad(L.fcb) + e * F;
        ops::linearBackward<T>(stream(), dAct + at * F, grad(L.fcprojw) + e * Cz * F, db2, dy + at * Cz, a.act.data() + at * F,
                               param(L.fcprojw) + e * Cz * F, rows, F, C);
        if (m_config.llama)
            ops::swigluBackward(stream(), dH + at * Fin, a.h.data() + at * Fin, dAct + at * F, rows, F);
        else
            ops::geluBackward(stream(), dH + at * Fin, a.h.data() + at * Fin, dAct + at * F, static_cast<std::int64_t>(rows) * F);
        ops::linearBackward<T>(stream(), m_moeDx.data() + at * Cz, grad(L.fcw) + e * Fin * Cz, db1, dH + at * Fin,
                               a.xin.data() + at * Cz, param(L.fcw) + e * Fin * Cz, rows, C, Fin);
    });
}

// The router: the gates' gradients and the load-balancing loss's, through the softmax, into the
// router's weights and (once over the tp group) dx.
template <typename T>
void GptModel<T>::moeRouterBackward(int l, MoeActs &a, T *dx, const T *x, G lossScale)
{
    const int B = m_batch, Tn = m_seqLen, BT = B * Tn, C = m_config.hidden, E = m_config.experts, k = m_config.topK;
    const auto bte = static_cast<std::size_t>(BT) * E, btk = static_cast<std::size_t>(BT) * k;
    std::vector<G> dGates(btk), dProbs(bte, G(0));
    m_device->toHost(dGates.data(), m_moeDGates.data(), btk * sizeof(G));
    for (std::size_t i = 0; i < btk; ++i)
        dProbs[i / static_cast<std::size_t>(k) * E + static_cast<std::size_t>(a.expert[i])] += dGates[i];
    if (m_config.auxLossCoef > 0) {
        std::vector<double> count(static_cast<std::size_t>(E));
        for (int b = 0; b < B; ++b) {
            std::fill(count.begin(), count.end(), 0.0);
            for (std::size_t i = static_cast<std::size_t>(b) * Tn * k; i < static_cast<std::size_t>(b + 1) * Tn * k; ++i)
                count[static_cast<std::size_t>(a.expert[i])] += 1;
            for (int e = 0; e < E; ++e) {
                // d/dp[t,e] of coef·E·fₑ·mean_t p[t,e] / B, every t of the sequence.
                const G g = static_cast<G>(static_cast<double>(lossScale) * m_config.auxLossCoef * E *
                                           (count[static_cast<std::size_t>(e)] / (Tn * k)) / Tn / B);
                for (int t = b * Tn; t < (b + 1) * Tn; ++t)
                    dProbs[static_cast<std::size_t>(t) * E + e] += g;
            }
        }
    }
    grow(m_moeDProbs, bte);
    m_device->fromHost(m_moeDProbs.data(), dProbs.data(), bte * sizeof(G));
    grow(m_moeLogits, bte);
    // The logits' gradient in G, then (when T is narrower) rounded for the router's GEMMs.
    if constexpr (std::is_same_v<T, G>) {
        ops::softmaxRowsBackward(stream(), m_moeLogits.data(), a.probs.data(), m_moeDProbs.data(), BT, E);
    } else {
        grow(m_moeLogitsAcc, bte);
        ops::softmaxRowsBackward(stream(), m_moeLogitsAcc.data(), a.probs.data(), m_moeDProbs.data(), BT, E);
        ops::convert(stream(), m_moeLogits.data(), m_moeLogitsAcc.data(), static_cast<std::int64_t>(bte));
    }
    // Every tp rank computes the router's gradients alike; its input gradient is added once.
    ops::linearBackward<T>(stream(), m_config.tpRank == 0 ? dx : nullptr, grad(m_layers[l].router), nullptr, m_moeLogits.data(), x,
                           param(m_layers[l].router), BT, C, E);
}

#define TRELLIS_MOE_MEMBERS(T)                                                                                         \
    template bool GptModel<T>::isExpert(std::size_t) const;                                                            \
    template std::vector<std::int32_t> GptModel<T>::routing(int) const;                                                \
    template void GptModel<T>::setExpertParallelGroup(DeviceCommunicator *, HostCommunicator *);                       \
    template ExpertLoad GptModel<T>::takeExpertLoad();                                                                 \
    template std::size_t GptModel<T>::activationBytes() const;                                                         \
    template GptModel<T>::MoeActs &GptModel<T>::moeActs(int);                                                          \
    template void GptModel<T>::moeExchange(const T *, const std::vector<std::size_t> &, T *,                           \
                                           const std::vector<std::size_t> &);                                          \
    template void GptModel<T>::moeForward(int, T *, const T *);                                                        \
    template std::vector<typename GptModel<T>::G> GptModel<T>::moeRouterProbs(int, const T *, typename GptModel<T>::MoeActs &); \
    template void GptModel<T>::moeDispatch(typename GptModel<T>::MoeActs &, const T *);                               \
    template void GptModel<T>::moeRunExperts(int, typename GptModel<T>::MoeActs &);                                   \
    template void GptModel<T>::recordExpertLoad(int, const std::vector<std::size_t> &, std::uint64_t, double);         \
    template void GptModel<T>::moeBackward(int, T *, const T *, const T *, typename GptModel<T>::G);                  \
    template void GptModel<T>::moeExpertsBackward(int, typename GptModel<T>::MoeActs &, const T *);                    \
    template void GptModel<T>::moeRouterBackward(int, typename GptModel<T>::MoeActs &, T *, const T *, typename GptModel<T>::G);
TRELLIS_MOE_MEMBERS(float)
TRELLIS_MOE_MEMBERS(double)
TRELLIS_MOE_MEMBERS(kernels::bf16)
TRELLIS_MOE_MEMBERS(kernels::f16)
#undef TRELLIS_MOE_MEMBERS

} // namespace trellis::trainer
