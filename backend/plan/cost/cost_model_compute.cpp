// The cost model's FLOPs and compute time (cost_model_parts.h): the model's and the hardware's
// FLOPs per step (Narayanan et al. 2021 §5.1, generalised), and each chunk's forward, input- and
// weight-gradient times for one micro-batch — a roofline of GEMM FLOPs at the device's efficiency
// and element-wise passes at its memory bandwidth, with the TP, CP and EP collectives on the
// critical path — for the schedule simulator.
#include "backend/plan/cost/cost_model_parts.h"

#include "backend/plan/cost/collective_model.h"

#include <algorithm>

namespace trellis::plan::detail {
namespace {

// One layer's times for one micro-batch, ms, and the head's.
struct LayerTimes {
    double gemm = 0;       // the GEMMs of a forward
    double memory = 0;     // the element-wise passes of a forward
    double softmax = 0;    // of which the attention core's softmax and dropout (materialized attention)
    double core = 0;       // the attention core (scores and their product with v)
    double head = 0;       // the head's GEMM
    double cpForward = 0;  // context parallelism's exposed gather of k and v
    double cpBackward = 0; // and reduce-scatter of their gradients
    double epPass = 0;     // expert parallelism: tokens to their experts and back
};

LayerTimes layerTimesOf(const CostInputs &in, const DeviceSpec &device, const Links &links)
{
    const Shapes &sh = in.sh;
    const double B = in.B, elem = in.elem, topK = in.topK;
    const int cp = in.cp, ep = in.ep;
    const double mats = sh.llama ? 3 : 2;
    const double peak = (in.mixed ? device.peakTflopsBf16 : device.peakTflopsFp32) * 1e12 * std::max(device.efficiency, 1e-3);
    const double layerFlops = 2.0 * B * (sh.C * (sh.Cq + 2.0 * sh.Kq) + sh.Cq * sh.C) + 2.0 * mats * B * sh.C * sh.Fl * topK +
                              4.0 * B * sh.S * sh.Cq;
    const double coreFlops = 4.0 * B * sh.S * sh.Cq;
    const double headFlops = 2.0 * B * sh.C * sh.Vl;
    // Bytes the element-wise passes of a layer's forward read and write: two norms (2 passes
    // each), two residual adds with dropout, the MLP activation, and — unless flash attention
    // keeps the scores on chip — the softmax over the scores (read, write) and its dropout (read,
    // write, the mask). Selective recompute does not store the softmax's output but still runs it
    // through memory, twice (forward, and again before backward): Megatron-LM's materialized
    // attention (a fused scale-mask-softmax kernel, then dropout) reads and writes the whole
    // heads × s × s score matrix each time. Backward moves about twice the forward's bytes.
    const double rep = in.sp ? 1.0 / in.tp : 1.0;
    const double softmaxBytes = in.flash ? 0.0 : sh.NHl * B * sh.S * (in.dropout ? 4 * elem + 1 : 2 * elem);
    const double elementwise = B * sh.C * rep * elem * (4 + 6) + (in.dropout ? 2 * B * sh.C * rep : 0.0) +
                               topK * B * sh.Fl * elem * (sh.llama ? 3 : 2) + softmaxBytes;
    LayerTimes t;
    const double bytesPerMs = device.memoryBandwidthGBps * 1e9 / 1000.0;
    t.memory = device.memoryBandwidthGBps > 0 ? elementwise / bytesPerMs : 0.0;
    t.softmax = device.memoryBandwidthGBps > 0 ? softmaxBytes / bytesPerMs : 0.0;
    t.gemm = layerFlops / peak * 1000.0;
    t.head = headFlops / peak * 1000.0;
    // Context parallelism: each layer gathers k and v from the group and reduce-scatters their
    // gradients, overlapped with the attention core where that is longer (ring attention).
    t.core = coreFlops / peak * 1000.0;
    t.cpForward = cp > 1 ? std::max(0.0, collectiveMs("all_gather", in.kvBytes, cp, links.cp()) - t.core) : 0.0;
    t.cpBackward = cp > 1 ? std::max(0.0, collectiveMs("reduce_scatter", in.kvBytes, cp, links.cp()) - 2 * t.core) : 0.0;
    // Expert parallelism: tokens to their experts and back, in forward and in backward.
    t.epPass = ep > 1 ? 2 * collectiveMs("all_to_all", in.a2aBytes, ep, links.ep()) : 0.0;
    return t;
}

} // namespace

// FLOPs (Narayanan et al. 2021 §5.1, generalised): a layer's forward per token is
// 2·(C·(C + 2K) + C·C) for q, k, v and the projection, 2·(2 or 3)·C·F·top_k for the MLP and
// 4·S·C for the attention scores and their product with v; the head 2·C·V. Backward is twice
// the forward; full recompute runs the layers' forward again, selective the attention core.
void estimateFlops(const CostInputs &in, Estimate &e)
{
    const ModelSpec &m = in.m;
    const ParallelSpec &p = in.p;
    const double tokensPerStep = static_cast<double>(p.globalBatch()) * static_cast<double>(m.seqLen);
    const double C = m.hidden, F = m.ffn, V = m.vocab, S = m.seqLen;
    const double K = m.heads > 0 ? C / m.heads * m.kvHeads : C;
    const double mats = in.sh.llama ? 3 : 2;
    const double layerToken = 2 * (C * (C + 2 * K) + C * C) + 2 * mats * C * F * in.topK + 4 * S * C;
    const double headToken = 2 * C * V;
    e.tokensPerStep = tokensPerStep;
    e.modelFlopsPerStep = tokensPerStep * 3 * (m.layers * layerToken + headToken);
    // Flash attention's backward computes the scores q·kᵀ again (2·S·C a token).
    e.hardwareFlopsPerStep = e.modelFlopsPerStep + (p.recompute == Recompute::Full        ? tokensPerStep * m.layers * layerToken
                                                    : p.recompute == Recompute::Selective ? tokensPerStep * m.layers * 4 * S * C
                                                                                          : 0.0) +
                             (in.flash ? tokensPerStep * m.layers * 2 * S * C : 0.0);
}

ScheduleCosts chunkCosts(const CostInputs &in, const DeviceSpec &device, const Links &links)
{
    const ParallelSpec &p = in.p;
    const int tp = in.tp;
    const LayerTimes t = layerTimesOf(in, device, links);
    const int chunks = in.chunksTotal;
    ScheduleCosts costs;
    costs.forward.resize(static_cast<std::size_t>(chunks));
    costs.backwardInput.resize(static_cast<std::size_t>(chunks));
    costs.backwardWeight.resize(static_cast<std::size_t>(chunks));
    for (int c = 0; c < chunks; ++c) {
        const double layers = in.layersOf(c);
        const bool embed = c == 0, head = c == chunks - 1;
        auto tpMs = [&](Pass pass) {
            return tp > 1 ? tpPass(pass, layers, embed, head, in.sp, in.split, in.recompute, in.rowBytes, in.B, tp, in.sh.norm())
                                .ms(tp, links.tp())
                          : 0.0;
        };
        const double tpF = tpMs(Pass::Forward), tpB = tpMs(Pass::Backward), tpW = tpMs(Pass::Weights);
        const double head_ = head ? t.head : 0.0;
        const double forward = layers * (t.gemm + t.memory + t.cpForward + t.epPass) + head_;
        const double again =
            (in.recompute ? layers * (t.gemm + t.memory) : p.recompute == Recompute::Selective ? layers * (t.core + t.softmax) : 0.0) +
            (in.flash ? layers * t.core / 2 : 0.0);
        costs.forward[static_cast<std::size_t>(c)] = forward + tpF;
        // Input gradients: the GEMMs once more and the element-wise backward; weight gradients: the
        // GEMMs once more (the split schedules run them apart).
        costs.backwardInput[static_cast<std::size_t>(c)] =
            layers * (t.gemm + 2 * t.memory + t.cpBackward + t.epPass) + head_ + again + tpB;
        costs.backwardWeight[static_cast<std::size_t>(c)] = layers * t.gemm + head_ + tpW;
    }
    return costs;
}

} // namespace trellis::plan::detail
