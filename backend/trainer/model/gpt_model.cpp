// GPT's layout, initialisation, activation buffers and forward pass over the op interface; see
// gpt_model.h. Pre-norm blocks:
//   x = x + proj(attn(qkv(ln1(x)))) ;  x = x + fcproj(gelu(fc(ln2(x))))
// then logits = lnf(x)·wteᵀ (tied embedding). The backward passes are in gpt_model_backward.cpp,
// the tensor-parallel pieces in gpt_model_parallel.cpp, ring attention and the mixture of experts
// in model/.
#include "backend/trainer/model/gpt_model.h"

#include "kernels/ops.h"
#include "backend/trainer/common/rng.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>

namespace trellis::trainer {

namespace ops = kernels;

template <typename T>
std::size_t GptModel<T>::addTensor(const std::string &name, std::vector<int> shape)
{
    std::size_t size = 1;
    for (int d : shape)
        size *= static_cast<std::size_t>(d);
    const std::size_t offset = m_tensors.empty() ? 0 : m_tensors.back().offset + m_tensors.back().size;
    m_tensors.push_back({name, offset, size, std::move(shape)});
    return offset;
}

namespace {

bool validConfig(const GptConfig &c, int kvHeads)
{
    const int C = c.hidden, tp = c.tp, KVH = kvHeads;
    const bool dims = c.vocab > 0 && C > 0 && c.ffn > 0 && c.maxSeqLen > 0 && c.layers > 0 && c.heads > 0 && C % c.heads == 0;
    const bool tensorParallel = tp >= 1 && c.tpRank >= 0 && c.tpRank < tp && c.heads % tp == 0 && c.vocab % tp == 0 &&
                                c.ffn % tp == 0 && KVH > 0 && c.heads % KVH == 0 && KVH % tp == 0;
    const bool architecture = dims && (c.llama || KVH == c.heads) && (!c.llama || (C / c.heads) % 2 == 0) && c.ropeTheta > 0;
    const bool contextParallel = c.cp >= 1 && c.cpRank >= 0 && c.cpRank < c.cp;
    const bool experts = c.experts >= 0 && c.ep >= 1 && c.epRank >= 0 && c.epRank < c.ep &&
                         (c.experts == 0 ? c.ep == 1
                                         : c.experts % c.ep == 0 && c.topK >= 1 && c.topK <= c.experts && c.capacity >= 0 &&
                                               c.auxLossCoef >= 0);
    return dims && tensorParallel && architecture && contextParallel && experts;
}

} // namespace

template <typename T>
GptModel<T>::GptModel(const GptConfig &config, bool allocate, Device &device) : m_config(config), m_device(&device)
{
    if (m_config.kvHeads == 0)
        m_config.kvHeads = m_config.heads;
    if (!validConfig(config, m_config.kvHeads))
        throw std::invalid_argument("GptModel: invalid configuration");
    // Tensor parallelism: this rank's share of the vocabulary, of the q heads and kv heads (and
    // so of q, k, v) and of the MLP's inner width; everything else is replicated.
    const int C = config.hidden, tp = config.tp, hs = C / config.heads;
    m_V = config.vocab / tp;
    m_Cq = C / tp;
    m_NH = config.heads / tp;
    m_KVH = m_config.kvHeads / tp;
    m_Ckv = m_KVH * hs;
    m_QKV = m_Cq + 2 * m_Ckv;
    m_F = config.ffn / tp;
    m_Fin = config.llama ? 2 * m_F : m_F;
    m_wte = addTensor("wte", {m_V, C});
    if (!config.llama)
        m_wpe = addTensor("wpe", {config.maxSeqLen, C});
    for (int l = 0; l < config.layers; ++l)
        m_layers.push_back(addLayerTensors(l));
    m_lnfw = addTensor("lnf.weight", {C});
    if (config.llama)
        m_lmHead = addTensor("lm_head.weight", {m_V, C});
    else
        m_lnfb = addTensor("lnf.bias", {C});
    m_count = m_tensors.back().offset + m_tensors.back().size;
    if (allocate) {
        m_params.assign(m_count);
        m_grads.assign(m_count);
    }
    defineUnits();
    m_stage.endLayer = config.layers;
    if (config.llama)
        computeRopeTables();
}

template <typename T>
typename GptModel<T>::Layer GptModel<T>::addLayerTensors(int l)
{
    const int C = m_config.hidden, F = m_F, Cq = m_Cq;
    const bool llama = m_config.llama;
    // Built with append: GCC 12 raises a false -Wrestrict on chained std::string operator+.
    std::string p = "h";
    p.append(std::to_string(l)).append(".");
    auto bias = [&](const char *name, int n) { return llama ? kNone : addTensor(p + name, {n}); };
    Layer L{};
    L.ln1w = addTensor(p + "ln1.weight", {C});
    L.ln1b = bias("ln1.bias", C);
    L.qkvw = addTensor(p + "attn.qkv.weight", {m_QKV, C});
    L.qkvb = bias("attn.qkv.bias", m_QKV);
    L.projw = addTensor(p + "attn.proj.weight", {C, Cq});
    L.projb = bias("attn.proj.bias", C);
    L.ln2w = addTensor(p + "ln2.weight", {C});
    L.ln2b = bias("ln2.bias", C);
    L.router = kNone;
    if (m_config.experts > 0) {
        // The router, then this rank's experts stacked (each tp-split like the dense MLP): the
        // experts are the tail of the layer's unit.
        const int El = m_El = m_config.experts / m_config.ep;
        L.router = addTensor(p + "mlp.router.weight", {m_config.experts, C});
        L.fcw = addTensor(p + "mlp.experts.fc.weight", {El, m_Fin, C});
        L.fcb = llama ? kNone : addTensor(p + "mlp.experts.fc.bias", {El, F});
        L.fcprojw = addTensor(p + "mlp.experts.proj.weight", {El, C, F});
        L.fcprojb = llama ? kNone : addTensor(p + "mlp.experts.proj.bias", {El, C});
    } else {
        L.fcw = addTensor(p + "mlp.fc.weight", {m_Fin, C});
        L.fcb = bias("mlp.fc.bias", F);
        L.fcprojw = addTensor(p + "mlp.proj.weight", {C, F});
        L.fcprojb = bias("mlp.proj.bias", C);
    }
    return L;
}

// The units parameters are gathered and released by (ZeRO-3, offload): the embedding, each layer,
// the final norm (and llama's head).
template <typename T>
void GptModel<T>::defineUnits()
{
    const int layers = m_config.layers;
    m_units.push_back({m_wte, m_layers.empty() ? m_lnfw : m_layers.front().ln1w});
    for (int l = 0; l < layers; ++l)
        m_units.push_back({m_layers[l].ln1w, l + 1 < layers ? m_layers[l + 1].ln1w : m_lnfw});
    m_units.push_back({m_lnfw, m_count});
    m_unitParams.assign(m_units.size(), nullptr);
    m_unitGrads.assign(m_units.size(), nullptr);
}

// llama's rotary angles pos·theta^(−2i/hs), computed in double once.
template <typename T>
void GptModel<T>::computeRopeTables()
{
    const int hs = m_config.hidden / m_config.heads, half = hs / 2, maxT = m_config.maxSeqLen;
    std::vector<G> cosT(static_cast<std::size_t>(maxT) * half), sinT(cosT.size());
    for (int t = 0; t < maxT; ++t)
        for (int i = 0; i < half; ++i) {
            const double angle = t * std::pow(m_config.ropeTheta, -2.0 * i / hs);
            cosT[static_cast<std::size_t>(t) * half + i] = static_cast<G>(std::cos(angle));
            sinT[static_cast<std::size_t>(t) * half + i] = static_cast<G>(std::sin(angle));
        }
    m_ropeCos.assignFromHost(cosT.data(), cosT.size());
    m_ropeSin.assignFromHost(sinT.data(), sinT.size());
}

template <typename T>
void GptModel<T>::setUnitHooks(UnitHooks<T> *hooks)
{
    m_hooks = hooks;
    std::fill(m_unitParams.begin(), m_unitParams.end(), nullptr);
    std::fill(m_unitGrads.begin(), m_unitGrads.end(), nullptr);
}

template <typename T>
int GptModel<T>::unitOf(std::size_t offset) const
{
    // Units are few (layers + 2) and sorted by begin.
    const auto it = std::upper_bound(m_units.begin(), m_units.end(), offset,
                                     [](std::size_t o, const ParamUnit &u) { return o < u.begin; });
    return static_cast<int>(it - m_units.begin()) - 1;
}

template <typename T>
void GptModel<T>::acquire(int unit, Pass pass)
{
    const auto u = static_cast<std::size_t>(unit);
    if (m_hooks) {
        const auto view = m_hooks->acquire(unit, pass);
        m_unitParams[u] = view.params;
        m_unitGrads[u] = view.grads;
    } else {
        m_unitParams[u] = m_params.data() + m_units[u].begin;
        m_unitGrads[u] = m_grads.data() + m_units[u].begin;
    }
}

template <typename T>
void GptModel<T>::release(int unit, Pass pass)
{
    if (m_hooks) {
        m_hooks->release(unit, pass);
        m_unitParams[static_cast<std::size_t>(unit)] = nullptr;
        m_unitGrads[static_cast<std::size_t>(unit)] = nullptr;
    }
}

template <typename T>
void GptModel<T>::initialize(std::uint64_t seed)
{
    if (m_config.tp > 1 || m_config.ep > 1) {
        // Slices of the whole model's initialisation, so every tp and ep trains the same model.
        GptModel<T> whole(wholeConfig());
        whole.initialize(seed);
        const std::vector<T> hostWhole = whole.m_params.toHost();
        const std::vector<T> mine = sliceOfWhole(hostWhole.data());
        m_params.assignFromHost(mine.data(), mine.size());
        return;
    }
    // Generated on the host in tensor order, then copied to the device.
    std::vector<T> host(m_count, T(0));
    Rng rng(seed);
    // GPT-2's 0.02 belongs to its width 768 (0.02·√768 ≈ 0.55); keeping that fan-in-relative scale
    // at other widths stops Adam's ±lr per-element steps, which do not depend on the weights' scale,
    // from outgrowing the initial token signal of a narrow model within a few steps (the tiny
    // preset's loss spike at step 15). Wide models get smaller weights, as OPT and BLOOM used.
    const double std0 = m_config.initStd > 0 ? m_config.initStd : 0.02 * std::sqrt(768.0 / m_config.hidden);
    const double stdResidual = std0 / std::sqrt(2.0 * m_config.layers);
    for (const auto &t : m_tensors) {
        T *p = host.data() + t.offset;
        const bool isBias = t.name.ends_with(".bias");
        const bool isNormGain = t.name.ends_with("ln1.weight") || t.name.ends_with("ln2.weight") || t.name == "lnf.weight";
        if (isBias) {
            std::fill(p, p + t.size, T(0));
        } else if (isNormGain) {
            std::fill(p, p + t.size, T(1));
        } else {
            const bool residual = t.name.ends_with("attn.proj.weight") || t.name.ends_with("mlp.proj.weight") ||
                                  t.name.ends_with("experts.proj.weight");
            const double s = residual ? stdResidual : std0;
            for (std::size_t i = 0; i < t.size; ++i)
                p[i] = kernels::convertTo<T>(rng.normal() * s);
        }
    }
    m_params.assignFromHost(host.data(), host.size());
}

template <typename T>
void GptModel<T>::zeroGradients()
{
    m_grads.zero();
}

template <typename T>
void GptModel<T>::allocateActivations(int batch, int seqLen)
{
    // Capacity only grows (largest batch·seqLen and seqLen seen), so alternating shapes never
    // reallocate twice. Any batch·T·T = (batch·T)·T ≤ capacityBT·capacityT, so the attention
    // matrices of every shape within capacity fit too.
    const int BT = batch * seqLen;
    if (BT <= m_capacityBT && seqLen <= m_capacityT)
        return;
    const ActivationLayout s = activationLayout(std::max(BT, m_capacityBT), std::max(seqLen, m_capacityT));
    m_acts.assign(static_cast<std::size_t>(s.totalT));
    m_stats.assign(static_cast<std::size_t>(s.totalG));
    carveActivations(s);
    m_capacityBT = static_cast<int>(s.bt);
    m_capacityT = s.tCap;
    allocateBackwardScratch(s.r, s.bt, s.tCap);
}

// How large each activation region is for bt rows of sequences up to tCap long (and which
// attention and loss kernels run, which decides what they keep).
template <typename T>
typename GptModel<T>::ActivationLayout GptModel<T>::activationLayout(std::int64_t bt, int tCap)
{
    ActivationLayout s;
    s.bt = bt;
    s.tCap = tCap;
    const std::int64_t C = m_config.hidden, F = m_F, Fin = m_Fin, V = m_V, NH = m_NH, Cq = m_Cq, QKV = m_QKV;
    // The attention probabilities (heads·T² a sequence, T), or with ring attention only each
    // row's log-sum-exp (G).
    // Fused attention (cuDNN, bf16 on a GPU) keeps the log-sum-exp too, never the probabilities.
    m_fusedAttention = !cp() && ops::fusedAttention<T>(stream());
    s.keepsLse = cp() || m_fusedAttention;
    s.att = s.keepsLse ? 0 : NH * bt * tCap;
    s.lse = s.keepsLse ? NH * bt : 0;
    // Selective recompute drops the probabilities; ring and fused attention keep none to drop.
    s.sharedAtt = m_recompute == Recompute::Selective && !s.keepsLse;
    // Inner activations of one layer (everything but its output, residual3), T: the norms'
    // outputs; q, k, v (rotated with llama), the attention output and probabilities; the MLP's
    // first linear's output (gate and up with SwiGLU) and the activation; the two branches'
    // outputs and residual2. G: a norm's mean (LayerNorm) and reciprocal deviation per row.
    const std::int64_t r = s.r = rows(static_cast<int>(bt)); // rows of the norm and residual regions
    const std::int64_t stats = m_config.llama ? r : 2 * r;
    // A mixture-of-experts MLP keeps its routing and rows apart (model/moe.cpp).
    const std::int64_t mlpActs = moe() ? 0 : bt * Fin + bt * F;
    const std::int64_t innerT = r * C + bt * QKV + bt * Cq + s.att + r * C * 2 + r * C + mlpActs + r * C;
    const std::int64_t innerG = stats + s.lse + stats;
    const int layers = m_stage.endLayer - m_stage.firstLayer;
    // Full recompute: one set of inner activations for every layer; selective: one set of
    // attention probabilities.
    s.full = m_recompute == Recompute::Full;
    const std::int64_t layersT = layers == 0 ? 0 : s.full ? innerT : s.sharedAtt ? (innerT - s.att) * layers + s.att : innerT * layers;
    const std::int64_t layersG = layers == 0 ? 0 : s.full ? innerG : innerG * layers;
    // The head: the final norm's output (every row) and the logits (T); its statistics, the
    // probabilities and the per-position losses (G).
    // The probabilities, or where the cross-entropy keeps none (on a GPU) each row's log-sum-exp.
    m_fusedLoss = m_config.tp == 1 && ops::fusedCrossEntropy<T>(stream());
    s.probs = m_fusedLoss ? bt : bt * V;
    const std::int64_t headT = m_stage.head ? bt * C + bt * V : 0, headG = m_stage.head ? stats + s.probs + bt : 0;
    s.totalT = r * C + layersT + r * C * layers + headT;
    s.totalG = layersG + headG;
    return s;
}

// m_acts and m_stats cut into the regions activationLayout sized, in its order.
template <typename T>
void GptModel<T>::carveActivations(const ActivationLayout &s)
{
    const std::int64_t C = m_config.hidden, r = s.r, bt = s.bt;
    T *cursor = m_acts.data();
    G *statCursor = m_stats.data();
    auto take = [&](std::int64_t n) {
        T *p = cursor;
        cursor += n;
        return p;
    };
    auto takeG = [&](std::int64_t n) {
        G *p = statCursor;
        statCursor += n;
        return p;
    };
    const bool llama = m_config.llama;
    const int first = m_stage.firstLayer, end = m_stage.endLayer;
    m_encoded = take(r * C);
    m_layerActs.assign(static_cast<std::size_t>(m_config.layers), LayerActs{});
    for (int l = first; l < end; ++l) {
        LayerActs &a = m_layerActs[l];
        if (s.full && l > first) {
            a = m_layerActs[first]; // shared inner activations
            continue;
        }
        a.ln1 = take(r * C);
        a.ln1Mean = llama ? nullptr : takeG(r);
        a.ln1Rstd = takeG(r);
        a.qkv = take(bt * m_QKV);
        a.atty = take(bt * m_Cq);
        a.att = s.keepsLse ? nullptr : s.sharedAtt && l > first ? m_layerActs[first].att : take(s.att);
        a.lse = s.keepsLse ? takeG(s.lse) : nullptr;
        a.attproj = take(r * C);
        a.residual2 = take(r * C);
        a.ln2 = take(r * C);
        a.ln2Mean = llama ? nullptr : takeG(r);
        a.ln2Rstd = takeG(r);
        a.fch = moe() ? nullptr : take(bt * m_Fin);
        a.fchGelu = moe() ? nullptr : take(bt * m_F);
        a.fcproj = take(r * C);
    }
    for (int l = first; l < end; ++l)
        m_layerActs[l].residual3 = take(r * C); // every layer's output is kept
    if (m_stage.head) {
        m_lnf = take(bt * C);
        m_lnfMean = llama ? nullptr : takeG(r);
        m_lnfRstd = takeG(r);
        m_logits = take(bt * m_V);
        m_probs = takeG(s.probs);
        m_losses = takeG(bt);
    }
}

template <typename T>
void GptModel<T>::allocateBackwardScratch(std::int64_t r, std::int64_t bt, int tCap)
{
    const std::int64_t C = m_config.hidden, F = m_F, Fin = m_Fin, V = m_V, Cq = m_Cq, QKV = m_QKV;
    m_dResidual.assign(static_cast<std::size_t>(r * C));
    m_dLn.assign(static_cast<std::size_t>(r * C));
    if (sp()) {
        m_gathered.assign(static_cast<std::size_t>(bt * C));
        m_partial.assign(static_cast<std::size_t>(bt * C));
        m_lnfLocal.assign(m_stage.head ? static_cast<std::size_t>(r * C) : 0);
    }
    m_dQkv.assign(static_cast<std::size_t>(bt * QKV));
    m_dAtty.assign(static_cast<std::size_t>(bt * Cq));
    m_dFch.assign(moe() ? 0 : static_cast<std::size_t>(bt * Fin));
    m_dFchGelu.assign(moe() ? 0 : static_cast<std::size_t>(bt * F));
    m_dLogits.assign(m_stage.head ? static_cast<std::size_t>(bt * V) : 0);
    m_dAttScratch.assign(cp() || m_fusedAttention ? 0 : static_cast<std::size_t>(tCap) * tCap, G(0));
}

template <typename T>
void GptModel<T>::setStage(const StageRange &stage)
{
    StageRange st = stage;
    if (st.endLayer < 0)
        st.endLayer = m_config.layers;
    if (st.firstLayer < 0 || st.firstLayer > st.endLayer || st.endLayer > m_config.layers)
        throw std::invalid_argument("GptModel::setStage: layer range outside the model");
    m_stage = st;
    m_capacityBT = 0; // re-plan the activation buffer on the next forward
}

template <typename T>
typename GptModel<T>::G GptModel<T>::forward(const std::int32_t *tokens, const std::int32_t *targets, int batch, int seqLen)
{
    if (!m_stage.embed || !m_stage.head)
        throw std::logic_error("GptModel::forward: this instance is a pipeline stage; use forwardStage");
    return forwardStage(tokens, targets, nullptr, batch, seqLen);
}

template <typename T>
void GptModel<T>::backward(G lossScale)
{
    backwardStage(nullptr, lossScale, true);
}

template <typename T>
const T *GptModel<T>::output() const
{
    return m_stage.endLayer > m_stage.firstLayer ? m_layerActs[m_stage.endLayer - 1].residual3 : m_encoded;
}

template <typename T>
typename GptModel<T>::G GptModel<T>::forwardStage(const std::int32_t *tokens, const std::int32_t *targets, const T *input, int batch, int seqLen)
{
    takeBatch(tokens, targets, batch, seqLen);
    const int BT = batch * seqLen;
    if (m_stage.embed)
        embedForward(BT);
    else
        ops::copy(stream(), m_encoded, input, static_cast<std::int64_t>(rows(BT)) * m_config.hidden); // the stage input, kept for backward
    const T *x = m_encoded;
    for (int l = m_stage.firstLayer; l < m_stage.endLayer; ++l) {
        acquire(l + 1, Pass::Forward);
        layerForward(l, x);
        release(l + 1, Pass::Forward);
        x = m_layerActs[l].residual3;
    }
    if (!m_stage.head) {
        if (m_stage.embed)
            release(0, Pass::Forward);
        return G(0);
    }
    return headForward(x, BT);
}

// The batch's shape checked and its buffers sized; the tokens and targets this stage reads checked
// on the host, where the batch comes from, then copied to the device; with context parallelism,
// every rank's positions.
template <typename T>
void GptModel<T>::takeBatch(const std::int32_t *tokens, const std::int32_t *targets, int batch, int seqLen)
{
    if (static_cast<std::int64_t>(seqLen) * m_config.cp > m_config.maxSeqLen || seqLen <= 0 || batch <= 0)
        throw std::invalid_argument("GptModel::forward: sequence length outside 1..maxSeqLen");
    if (cp() && m_config.cpZigzag && seqLen % 2 != 0)
        throw std::invalid_argument("GptModel::forward: a zigzag context-parallel rank holds two equal chunks (even length)");
    if (sp() && (batch * seqLen) % m_config.tp != 0)
        throw std::invalid_argument("GptModel::forward: sequence parallelism needs batch·seqLen divisible by tp");
    allocateActivations(batch, seqLen);
    m_batch = batch;
    m_seqLen = seqLen;
    m_weightsPending = false;
    m_lastAuxLoss = 0;
    if (cp() && m_positionsHost.size() != static_cast<std::size_t>(m_config.cp) * seqLen) {
        m_positionsHost.clear();
        for (int r = 0; r < m_config.cp; ++r) {
            const auto mine = contextPositions(m_config.cp, r, seqLen, m_config.cpZigzag);
            m_positionsHost.insert(m_positionsHost.end(), mine.begin(), mine.end());
        }
        m_positions.assignFromHost(m_positionsHost.data(), m_positionsHost.size());
    }
    const int BT = batch * seqLen, V = m_config.vocab;
    auto checkedCopy = [&](const std::int32_t *from, std::vector<std::int32_t> &host, DeviceBuffer<std::int32_t> &device) {
        host.assign(from, from + BT);
        for (int i = 0; i < BT; ++i)
            if (host[i] < 0 || host[i] >= V)
                throw std::invalid_argument("GptModel::forward: token outside the vocabulary");
        device.assignFromHost(host.data(), host.size());
    };
    if (m_stage.embed)
        checkedCopy(tokens, m_hostTokens, m_tokens);
    if (m_stage.head)
        checkedCopy(targets, m_hostTargets, m_targets);
}

// The embedding unit acquired (released after the head where it is tied) and the tokens embedded.
template <typename T>
void GptModel<T>::embedForward(int BT)
{
    const int C = m_config.hidden, Vl = m_V;
    acquire(0, Pass::Forward);
    if (m_config.llama && m_config.tp == 1) {
        ops::embeddingRangeForward(stream(), m_encoded, m_tokens.data(), param(m_wte), 0, Vl, BT, C);
    } else if (m_config.tp == 1 && !cp()) {
        ops::encoderForward(stream(), m_encoded, m_tokens.data(), param(m_wte), param(m_wpe), m_batch, m_seqLen, C, m_config.vocab);
    } else {
        // Vocabulary-parallel embedding: each rank looks up the tokens in its vocabulary range,
        // the sum over the group is the embedding (reduce-scattered to this rank's rows with
        // sequence parallelism); positions are replicated.
        T *lookup = sp() ? m_partial.data() : m_encoded;
        ops::embeddingRangeForward(stream(), lookup, m_tokens.data(), param(m_wte), m_config.tpRank * Vl, Vl, BT, C);
        if (sp())
            scatterRows(m_partial.data(), m_encoded, BT);
        else
            tpAllReduce(m_encoded, static_cast<std::size_t>(BT) * C);
        const int R = rows(BT);
        if (!m_config.llama) // llama's positions are rotary, in attention
            addPositionRows(m_encoded, sp() ? m_config.tpRank * R : 0, R);
    }
}

// The final norm, the logits and the mean loss of the last stage.
template <typename T>
typename GptModel<T>::G GptModel<T>::headForward(const T *x, int BT)
{
    const int last = m_config.layers + 1; // the final-norm unit
    if (!m_stage.embed && tiedHead())
        acquire(0, Pass::Forward); // the tied head
    acquire(last, Pass::Forward);
    if (sp()) {
        normForward(m_lnfLocal.data(), m_lnfMean, m_lnfRstd, x, m_lnfw, m_lnfb, rows(BT));
        gatherRows(m_lnfLocal.data(), m_lnf, BT);
    } else {
        normForward(m_lnf, m_lnfMean, m_lnfRstd, x, m_lnfw, m_lnfb, BT);
    }
    ops::linearForward<T>(stream(), m_logits, m_lnf, param(tiedHead() ? m_wte : m_lmHead), nullptr, BT, m_config.hidden, m_V);
    release(last, Pass::Forward);
    if (m_stage.embed || tiedHead())
        release(0, Pass::Forward);
    const int V = m_config.vocab;
    if (m_fusedLoss)
        ops::crossEntropyLseForward(stream(), m_losses, m_probs, m_logits, m_targets.data(), BT, V);
    else if (m_config.tp == 1)
        ops::crossEntropyForward(stream(), m_losses, m_probs, m_logits, m_targets.data(), BT, V);
    else
        vocabParallelCrossEntropy(BT);
    return static_cast<G>(ops::sum(stream(), m_losses, BT) / BT);
}

template <typename T>
void GptModel<T>::layerForward(int l, const T *x)
{
    const int batch = m_batch, seqLen = m_seqLen, BT = batch * seqLen, C = m_config.hidden, F = m_F, NH = m_NH,
              Cq = m_Cq;
    const Layer &L = m_layers[l];
    LayerActs &a = m_layerActs[l];
    const int R = rows(BT);
    const std::size_t rc = static_cast<std::size_t>(R) * C;
    normForward(a.ln1, a.ln1Mean, a.ln1Rstd, x, L.ln1w, L.ln1b, R);
    // Column-parallel q, k, v for this rank's heads (on all rows, gathered with sequence
    // parallelism); attention on them; row-parallel output projection whose partial sums the
    // group adds (all-reduce, or reduce-scatter to this rank's rows).
    ops::linearForward(stream(), a.qkv, gatheredRows(a.ln1, BT), param(L.qkvw), paramOrNull(L.qkvb), BT, C, m_QKV);
    if (m_config.llama)
        applyRope(a.qkv, false);
    if (cp())
        ringAttentionForward(a.atty, a.lse, a.qkv);
    else if (m_fusedAttention)
        ops::flashAttentionForward(stream(), a.atty, a.lse, a.qkv, batch, seqLen, Cq, NH, m_KVH);
    else
        ops::attentionForward(stream(), a.atty, a.att, a.qkv, batch, seqLen, Cq, NH, m_KVH);
    rowParallelForward(a.attproj, a.atty, L.projw, L.projb, BT, Cq);
    ops::residualForward(stream(), a.residual2, x, a.attproj, static_cast<std::int64_t>(rc));
    normForward(a.ln2, a.ln2Mean, a.ln2Rstd, a.residual2, L.ln2w, L.ln2b, R);
    if (moe()) {
        // Partial sums over tp of every row, added by the group like a row-parallel linear's.
        T *partial = sp() ? m_partial.data() : a.fcproj;
        moeForward(l, partial, gatheredRows(a.ln2, BT));
        if (sp())
            scatterRows(m_partial.data(), a.fcproj, BT);
        else
            tpAllReduce(a.fcproj, static_cast<std::size_t>(BT) * C);
        ops::residualForward(stream(), a.residual3, a.residual2, a.fcproj, static_cast<std::int64_t>(rc));
        return;
    }
    // gpt: fcproj(gelu(fc(x))); llama: proj(silu(gate(x))·up(x)), gate and up as one linear.
    ops::linearForward(stream(), a.fch, gatheredRows(a.ln2, BT), param(L.fcw), paramOrNull(L.fcb), BT, C, m_Fin);
    if (m_config.llama)
        ops::swigluForward(stream(), a.fchGelu, a.fch, BT, F);
    else
        ops::geluForward(stream(), a.fchGelu, a.fch, static_cast<std::int64_t>(BT) * F);
    rowParallelForward(a.fcproj, a.fchGelu, L.fcprojw, L.fcprojb, BT, F);
    ops::residualForward(stream(), a.residual3, a.residual2, a.fcproj, static_cast<std::int64_t>(rc));
}

template <typename T>
void GptModel<T>::rowParallelForward(T *out, const T *in, std::size_t w, std::size_t b, int BT, int width)
{
    const int C = m_config.hidden;
    T *bias = m_config.tpRank == 0 ? paramOrNull(b) : nullptr; // a row-parallel layer's bias is added once
    if (sp()) {
        ops::linearForward(stream(), m_partial.data(), in, param(w), bias, BT, width, C);
        scatterRows(m_partial.data(), out, BT);
    } else {
        ops::linearForward(stream(), out, in, param(w), bias, BT, width, C);
        tpAllReduce(out, static_cast<std::size_t>(BT) * C);
    }
}

template <typename T>
void GptModel<T>::applyRope(T *qkv, bool inverse)
{
    const int BT = m_batch * m_seqLen, hs = m_config.hidden / m_config.heads;
    if (!cp()) {
        ops::rope(stream(), qkv, m_ropeCos.data(), m_ropeSin.data(), BT, m_seqLen, 0, m_QKV, m_NH, hs, inverse);
        ops::rope(stream(), qkv + m_Cq, m_ropeCos.data(), m_ropeSin.data(), BT, m_seqLen, 0, m_QKV, m_KVH, hs, inverse);
        return;
    }
    forEachPositionRun(0, BT, [&](int row, int pos, int count) { // this rank's chunks, at their positions
        T *at = qkv + static_cast<std::int64_t>(row) * m_QKV;
        ops::rope(stream(), at, m_ropeCos.data(), m_ropeSin.data(), count, count, pos, m_QKV, m_NH, hs, inverse);
        ops::rope(stream(), at + m_Cq, m_ropeCos.data(), m_ropeSin.data(), count, count, pos, m_QKV, m_KVH, hs, inverse);
    });
}

template class GptModel<float>;
template class GptModel<double>;
template class GptModel<kernels::bf16>;
template class GptModel<kernels::f16>;

std::vector<bool> weightDecayMask(const std::vector<ParamTensor> &tensors, std::size_t count)
{
    std::vector<bool> mask(count, false);
    for (const auto &t : tensors)
        if (t.shape.size() >= 2 && t.name != "wpe" && !t.name.ends_with(".bias")) // matrices (stacked experts too)
            std::fill(mask.begin() + static_cast<long>(t.offset), mask.begin() + static_cast<long>(t.offset + t.size), true);
    return mask;
}

} // namespace trellis::trainer
