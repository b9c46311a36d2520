// The cost model; see cost_model.h. Formulas: parameter and activation counts mirror
// backend/trainer/model/gpt_model.cpp on CPUs (Korthikanti et al. 2022 on GPUs); FLOPs per token as
// Narayanan et al. 2021 §5.1, generalised to grouped-query attention, SwiGLU and experts; ZeRO
// shares as Rajbhandari et al. 2020 (fp32: 4 + 4 + 8 bytes a parameter; mixed precision:
// 2 + 2 + 12). Collective counting lives in collective_model.h, calibration in calibration.h.
#include "plan/cost_model.h"

#include "plan/collective_model.h"
#include "plan/layout_model.h"
#include "plan/mesh.h"
#include "plan/schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

namespace trellis::plan {
namespace {

using detail::Calls;
using detail::callsMs;
using detail::collectiveMs;
using detail::Pass;
using detail::tpPass;
using detail::TpPass;
using detail::instancesPerChunk;
using detail::ownedOfUnit;
using detail::paddedTotal;
using detail::trainerBuckets;
using detail::zeroOneOwned;
using detail::Shapes;
using detail::shapesOf;

std::uint64_t roundUp(std::uint64_t x, std::uint64_t m) { return (x + m - 1) / m * m; }
std::string str(double v, int decimals = 1)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

} // namespace

std::uint64_t localParameterCount(const ModelSpec &model, int tp, int ep)
{
    const Shapes s = shapesOf(model, tp, ep);
    return s.embedding() + s.L * s.layer() + s.final();
}

Estimate estimatePlan(const Plan &plan, const DeviceSpec &device, bool exact)
{
    const ModelSpec &m = plan.model;
    const ParallelSpec &p = plan.parallel;
    Estimate e;
    const int tp = p.tp, pp = p.pp, cp = p.cp, ep = p.ep, v = p.pp > 1 ? p.virtualStages : 1;
    // Gradients are reduced, and ZeRO shards, over the data- and context-parallel ranks together.
    const int dp = p.dp * cp;
    const Shapes sh = shapesOf(m, tp, ep);
    const bool mixed = p.precision != Precision::Fp32;
    const Framework framework = resolvedFramework(plan);
    const bool flash = resolvedAttention(plan) == AttentionKernel::Flash;
    e.framework = framework;
    e.flashAttention = flash;
    // Bytes a parameter of the model states. Mixed precision: DeepSpeed (and trellis) keep 16-bit
    // parameters and gradients and fp32 master weights with the two moments, 2 + 2 + 12
    // (Rajbhandari et al. 2020, K = 12). Megatron-LM keeps main gradients in fp32 with bf16 (2 + 4
    // + 12 = 18; 6 + 12/dp with its distributed optimizer) and with fp16 16-bit gradients plus an
    // fp32 copy beside the master weights (2 + 2 + 16 = 20; 4 + 16/dp): its distributed
    // optimizer's documentation. fp32 everywhere: 4 + 4 + 8.
    const bool megatron = framework == Framework::Megatron;
    const double paramBytes = mixed ? 2 : 4;
    const double gradBytes = !mixed ? 4 : megatron && p.precision == Precision::Bf16 ? 4 : 2;
    const double optBytes = !mixed ? 8 : megatron && p.precision == Precision::Fp16 ? 16 : 12;
    const double elem = mixed ? 2 : 4; // bytes of an activation or gradient element
    // trellis-trainer's mixed precision (parallel/strategy.h): activations and the parameters the
    // model reads in 16 bits, fp32 gradients, master weights and moments, statistics and softmaxes.
    const std::uint64_t tBytes = mixed ? 2 : 4;
    e.parametersTotal = parameterCount(m);
    e.parametersActive = activeParameterCount(m);
    const std::uint64_t local = localParameterCount(m, tp, ep);
    const bool sp = p.sequenceParallel && tp > 1;
    const bool dropout = !sh.llama;
    const double topK = m.moe.experts > 0 ? m.moe.topK : 1;
    const bool cpu = plan.cluster.nodes.empty() || plan.cluster.nodes.front().device == DeviceKind::Cpu;
    // trellis-trainer's own layout where it runs the plan's model; a Megatron-style one otherwise.
    const bool trainerLayout = framework == Framework::Trellis && runsOnTrainer(plan) && !flash;
    // Megatron-LM's pipeline without sequence parallelism sends each tp rank's 1/tp of the
    // activations between stages and all-gathers them over the tp group on arrival (Narayanan et
    // al. 2021 §4.1, the scatter/gather optimisation).
    const bool scatterGather = megatron && tp > 1 && pp > 1 && !p.sequenceParallel;

    // Activations of one model instance running `layers` layers (and the embedding, the head),
    // in bytes.
    const std::uint64_t bt = static_cast<std::uint64_t>(p.microBatchSize) * sh.S / static_cast<std::uint64_t>(cp);
    const std::uint64_t rows = sp ? bt / tp : bt;
    const bool moe = m.moe.experts > 0;
    const std::uint64_t choices = moe ? static_cast<std::uint64_t>(m.moe.topK) : 1;
    // Rows a mixture-of-experts layer sends (and, balanced, receives) per micro-batch.
    const std::uint64_t moeRows = !moe                   ? 0
                                  : m.moe.capacityFactor ? sh.E * static_cast<std::uint64_t>(p.microBatchSize) *
                                                               static_cast<std::uint64_t>(expertCapacity(m.moe, m.seqLen))
                                                         : bt * choices;
    auto trainerInstance = [&](std::uint64_t layers, bool head) -> std::uint64_t { // gpt_model.cpp
        // A norm's per-row statistics (LayerNorm: mean and 1/σ; RMSNorm: 1/rms); q, k, v; the
        // MLP's first linear output (gate and up with SwiGLU) and its activation.
        // The attention probabilities (heads · local tokens · local tokens) or, with ring attention
        // (cp > 1), each row's log-sum-exp only.
        // The model's elements of T (activations) and of fp32 (statistics, the log-sum-exp, the
        // probabilities and losses; the router's probabilities and gates, the slot and expert
        // indices) are two buffers (gpt_model.cpp allocateActivations).
        const std::uint64_t C = sh.C, att = cp > 1 ? 0 : sh.NHl * bt * (sh.S / static_cast<std::uint64_t>(cp)),
                            lse = cp > 1 ? sh.NHl * bt : 0, stats = (sh.llama ? 1 : 2) * rows;
        const std::uint64_t mlpIn = (sh.llama ? 2 : 1) * sh.Fl;
        // A mixture-of-experts MLP (model/moe.cpp) keeps the router's probabilities, each choice's
        // gate, slot and expert (4 bytes each), the rows its experts received, their hidden
        // activations and the outputs that came back (moeRows each way: capacity — every expert's
        // slots, padding included; dropless — every choice, as a balanced router sends them).
        const std::uint64_t mlpActs = moe ? moeRows * (C + mlpIn + sh.Fl) + moeRows * C : bt * (mlpIn + sh.Fl);
        const std::uint64_t routing = moe ? bt * sh.E + 3 * bt * choices : 0; // 4 bytes each
        const std::uint64_t innerT = rows * C + bt * (sh.Cq + 2 * sh.Kq) + bt * sh.Cq + att + 2 * rows * C + rows * C + mlpActs +
                                     rows * C;
        const std::uint64_t inner4 = stats + lse + stats + routing;
        // Full recompute shares one set of inner activations, selective one of attention
        // probabilities (ring attention keeps none to drop).
        const bool full = p.recompute == Recompute::Full;
        const std::uint64_t layersT = layers == 0                                          ? 0
                                      : full                                            ? innerT
                                      : p.recompute == Recompute::Selective && cp == 1 ? (innerT - att) * layers + att
                                                                                      : innerT * layers;
        const std::uint64_t layers4 = layers == 0 ? 0 : full ? inner4 : inner4 * layers;
        const std::uint64_t headT = head ? bt * C + bt * sh.Vl : 0, head4 = head ? stats + bt * sh.Vl + bt : 0;
        return (rows * C + layersT + rows * C * layers + headT) * tBytes + (layers4 + head4) * 4;
    };
    // A Megatron-style layer's activations for one micro-batch, and what full recompute keeps.
    const double repRows = sp ? 1.0 / tp : 1.0;
    const double megatronInput = static_cast<double>(bt) * sh.C * repRows * elem;
    const double megatronLayer = [&] {
        const double B = static_cast<double>(bt);
        // Norm inputs, the qkv and MLP inputs (split with sequence parallelism), dropout masks.
        const double replicated = B * sh.C * repRows * (4 * elem + (dropout ? 2 : 0));
        // q, k, v, the projection's input, the MLP's hidden activations (three for SwiGLU).
        const double split = B * elem * (2.0 * sh.Cq + 2.0 * sh.Kq) + topK * B * sh.Fl * elem * (sh.llama ? 3 : 2);
        // Softmax output (and dropout mask and output): the core attention selective recompute
        // redoes; flash attention keeps only each row's fp32 log-sum-exp instead.
        const double scores = flash                                  ? sh.NHl * B * 4.0
                              : p.recompute == Recompute::Selective ? 0.0
                                                                     : sh.NHl * B * sh.S * (dropout ? 2 * elem + 1 : elem);
        return replicated + split + scores;
    }();
    auto megatronInstance = [&](std::uint64_t layers, bool embed, bool head) -> std::uint64_t {
        const double B = static_cast<double>(bt);
        // Full recompute keeps each layer's input; the layer being recomputed holds the rest, once
        // a stage (recomputeWorkingSet), since one micro-batch at a time runs its backward.
        const double stored = static_cast<double>(layers) * (p.recompute == Recompute::Full ? megatronInput : megatronLayer);
        const double embedding = embed && dropout ? B * sh.C * repRows : 0.0;
        const double out = head ? 2 * B * sh.C * repRows * elem + 4.0 * B * sh.Vl : 0.0; // norm, head input, fp32 logits
        return static_cast<std::uint64_t>(stored + embedding + out);
    };
    auto instanceBytes = [&](std::uint64_t layers, bool embed, bool head) {
        return trainerLayout ? trainerInstance(layers, head) : megatronInstance(layers, embed, head);
    };
    const std::uint64_t recomputeWorkingSet =
        !trainerLayout && p.recompute == Recompute::Full ? static_cast<std::uint64_t>(megatronLayer - megatronInput) : 0;

    // Memory per stage (DP rank 0, TP rank 0).
    std::vector<int> bounds{0, static_cast<int>(m.layers)};
    std::optional<Schedule> schedule;
    if (pp > 1) {
        bounds = stageLayerBounds(m, pp * v);
        if (exact)
            if (auto s = generateSchedule(p.schedule, pp, p.microBatches, v))
                schedule = std::move(s).value();
    }
    const int chunksTotal = pp * v;
    // Activation bytes alive at once at the peak of Megatron-LM's interleaved order on pipeline
    // rank r: forward k runs chunk ((k mod p·v) / p)·p + r, backward k chunk (v − 1 − (k mod p·v)
    // / p)·p + r; warm-up forwards, then one forward and one backward each, then the drain.
    auto interleavedPeak = [&](int r) {
        const int mb = p.microBatches, total = mb * v, group = pp * v;
        const int warmup = interleavedWarmup(r, pp, mb, v);
        auto chunkBytes = [&](int k, bool backward) {
            const int slot = (k % group) / pp;
            const int c = (backward ? v - 1 - slot : slot) * pp + r;
            const auto layers = static_cast<std::uint64_t>(bounds[static_cast<std::size_t>(c) + 1] - bounds[static_cast<std::size_t>(c)]);
            return instanceBytes(layers, c == 0, c == chunksTotal - 1);
        };
        std::uint64_t live = 0, peakBytes = 0;
        int forwards = 0, backwards = 0;
        auto forward = [&] {
            live += chunkBytes(forwards++, false);
            peakBytes = std::max(peakBytes, live);
        };
        for (int k = 0; k < warmup; ++k)
            forward();
        for (int k = 0; k < total - warmup; ++k) {
            forward();
            live -= chunkBytes(backwards++, true);
        }
        return peakBytes;
    };
    // Units a stage holds, as the trainer cuts them: the embedding (on the first chunk, and tied
    // on the last with the gpt architecture), each layer, the final norm (with llama's head).
    auto unitsOf = [&](int stage) {
        std::vector<std::uint64_t> units;
        if (pp == 1) {
            units.push_back(sh.embedding());
            for (std::uint64_t l = 0; l < sh.L; ++l)
                units.push_back(sh.layer());
            units.push_back(sh.final());
            return units;
        }
        bool embedding = false;
        for (int c = stage; c < chunksTotal; c += pp) {
            for (int l = bounds[static_cast<std::size_t>(c)]; l < bounds[static_cast<std::size_t>(c) + 1]; ++l)
                units.push_back(sh.layer());
            embedding = embedding || c == 0 || (c == chunksTotal - 1 && !sh.llama);
            if (c == chunksTotal - 1)
                units.push_back(sh.final());
        }
        if (embedding)
            units.push_back(sh.embedding());
        return units;
    };
    const auto padded = [&](std::uint64_t size) { return roundUp(size, static_cast<std::uint64_t>(dp)); };
    // The stage's local buffer segments (ZeRO 0/1): the tied embedding apart when a pipeline's end
    // stage holds it, the rest together.
    auto segmentsOf = [&](int stage) {
        if (pp == 1)
            return std::vector<std::uint64_t>{local};
        const bool embedding = stage == 0 || (stage == pp - 1 && !sh.llama);
        std::uint64_t rest = 0;
        for (std::uint64_t size : unitsOf(stage))
            rest += size;
        if (!embedding)
            return std::vector<std::uint64_t>{rest};
        return std::vector<std::uint64_t>{sh.embedding(), rest - sh.embedding()};
    };
    // ZeRO-2/3 outside trellis-trainer (DeepSpeed, FSDP): a unit's whole gradients while it is
    // reduce-scattered and the next one's being produced and, at stage 3, a unit gathered for use
    // and the next one prefetched — not every micro-batch's, as the trainer's worst case. In fp32
    // element units like the rest (scaled to the precision below).
    auto shardedFrameworkBuffers = [&](const std::vector<std::uint64_t> &units) -> std::uint64_t {
        std::uint64_t largest = 0;
        for (std::uint64_t size : units)
            largest = std::max(largest, padded(size));
        return (2 + (p.zero == 3 ? 2 : 0)) * largest * 4;
    };
    for (int stage = 0; stage < pp; ++stage) {
        StageMemory mem;
        mem.stage = stage;
        const std::vector<std::uint64_t> units = unitsOf(stage);
        if (p.zero <= 1) {
            // The padded local buffer (the trainer's; the model's own count elsewhere).
            const auto buckets = trainerBuckets(segmentsOf(stage), dp, p);
            std::uint64_t real = 0;
            for (std::uint64_t size : segmentsOf(stage))
                real += size;
            mem.parameters = (trainerLayout ? paddedTotal(buckets) : real) * 4;
            mem.gradients = mem.parameters;
            mem.optimizer = (p.zero == 1 ? zeroOneOwned(buckets, dp, 0) : real) * 8;
            // The in-place reduce-scatter stages this rank's chunk of each bucket.
            // (Megatron-LM's distributed optimizer reduce-scatters in its gradient buffer itself.)
            mem.commBuffers = p.zero == 1 && !megatron ? paddedTotal(buckets) / dp * 4 : 0;
            if (trainerLayout && mixed) {
                // The compute copy of the whole buffer; fp32 masters of all of it (ZeRO 0) or of
                // this rank's chunks (ZeRO 1); gradients fp32; reduced in bf16: a bf16 copy.
                mem.parameters = paddedTotal(buckets) * tBytes;
                mem.masterWeights = (p.zero == 1 ? paddedTotal(buckets) / dp : paddedTotal(buckets)) * 4;
                if (p.gradReduce == GradReduce::Bf16)
                    mem.commBuffers += paddedTotal(buckets) * 2;
            }
        }
        if (pp == 1) {
            if (p.zero >= 2) {
                std::uint64_t chunks = 0, owned = 0;
                for (std::uint64_t size : units) {
                    chunks += (size + dp - 1) / dp;
                    owned += ownedOfUnit(size, dp, 0);
                }
                mem.parameters = (p.zero == 3 ? chunks : local) * 4;
                mem.gradients = chunks * 4;
                mem.optimizer = owned * 8;
                if (trainerLayout && mixed) { // the compute copy (whole, or its shard) and the master shard
                    mem.parameters = (p.zero == 3 ? chunks : local) * tBytes;
                    mem.masterWeights = chunks * 4;
                }
                // Transient buffers, at worst: every unit's gradients of every micro-batch in
                // flight (a reduce-scatter may not complete before the backward ends, MPI
                // progressing only inside calls, and they complete in launch order); at stage 3
                // also the roots kept gathered and a layer in use plus the one prefetched.
                std::uint64_t all = 0;
                for (std::uint64_t size : units)
                    all += padded(size);
                // Reduced in bf16, each unit's fp32 gradients have a bf16 copy beside them.
                const std::uint64_t gradBuffer = p.gradReduce == GradReduce::Bf16 ? 6 : 4;
                mem.commBuffers = all * static_cast<std::uint64_t>(p.microBatches) * gradBuffer;
                if (p.zero == 3) // gathered in the compute type
                    mem.commBuffers += (padded(units.front()) + padded(units.back()) + 2 * padded(sh.layer())) * tBytes;
                if (!trainerLayout) // DeepSpeed's and FSDP's bounded buckets
                    mem.commBuffers = shardedFrameworkBuffers(units);
            }
            mem.activations = instanceBytes(sh.L, true, true);
            mem.activations += recomputeWorkingSet;
        } else {
            // ZeRO 2/3 over a pipeline: the stage's units sharded as without one; transient
            // buffers at worst every unit of every micro-batch in flight and, at stage 3, every
            // unit gathered.
            if (p.zero >= 2) {
                std::uint64_t all = 0;
                for (std::uint64_t size : units) {
                    mem.parameters += (p.zero == 3 ? padded(size) / dp : size) * (trainerLayout ? tBytes : 4);
                    mem.gradients += padded(size) / dp * 4;
                    mem.optimizer += ownedOfUnit(size, dp, 0) * 8;
                    if (trainerLayout && mixed)
                        mem.masterWeights += padded(size) / dp * 4;
                    all += padded(size);
                }
                const std::uint64_t gradBuffer = p.gradReduce == GradReduce::Bf16 ? 6 : 4;
                mem.commBuffers = all * static_cast<std::uint64_t>(p.microBatches) * gradBuffer +
                                  (p.zero == 3 ? all * (trainerLayout ? tBytes : 4) : 0);
                if (!trainerLayout)
                    mem.commBuffers = shardedFrameworkBuffers(units);
            }
            std::map<int, int> instances;
            if (!trainerLayout && p.schedule == "interleaved-1f1b" && v > 1) {
                // Megatron-LM frees a micro-batch chunk's activations after its backward: the
                // stage holds, at its peak, what its order keeps alive at once — the warm-up's
                // forwards plus one (Korthikanti et al. 2022 §4.2.3: the first stage keeps
                // L·(1 + (p−1)/(p·v)) layers' worth with equal chunks).
                mem.activations += interleavedPeak(stage);
            } else if (schedule) {
                instances = instancesPerChunk(*schedule, stage);
            } else {
                // Closed forms: 1f1b and zb-h1 keep p − s micro-batches in flight on stage s, gpipe
                // all m, interleaved its warm-up plus one, spread over its v chunks.
                const int mb = p.microBatches;
                int alive = p.schedule == "gpipe" ? mb : std::min(pp - stage, mb);
                if (p.schedule == "interleaved-1f1b" && v > 1)
                    alive = (std::min((pp - stage - 1) * 2 + (v - 1) * pp + 1, mb * v) + v - 1) / v;
                for (int c = stage; c < chunksTotal; c += pp)
                    instances[c] = alive;
            }
            for (const auto &[chunk, count] : instances) { // (empty for Megatron's interleaved order)
                const auto layers = static_cast<std::uint64_t>(bounds[static_cast<std::size_t>(chunk) + 1] -
                                                               bounds[static_cast<std::size_t>(chunk)]);
                mem.activations += static_cast<std::uint64_t>(count) * instanceBytes(layers, chunk == 0, chunk == chunksTotal - 1);
            }
            mem.activations += recomputeWorkingSet;
        }
        if (mixed && !trainerLayout) { // bf16/fp16 weights and gradients, fp32 master weights with the moments
            mem.parameters = mem.parameters / 4 * static_cast<std::uint64_t>(paramBytes);
            mem.gradients = mem.gradients / 4 * static_cast<std::uint64_t>(gradBytes);
            mem.optimizer = mem.optimizer / 8 * static_cast<std::uint64_t>(optBytes);
            mem.commBuffers = mem.commBuffers / 4 * static_cast<std::uint64_t>(gradBytes);
        }
        e.memory.push_back(mem);
        if (device.memoryGB > 0 && static_cast<double>(mem.total()) > device.memoryGB * 1e9)
            e.warnings.push_back({Severity::Warning, "parallel",
                                  "stage " + std::to_string(stage) + " ranks need " + str(mem.total() / 1e9) +
                                      " GB (parameters " + str(mem.parameters / 1e9) +
                                      (mem.masterWeights > 0 ? ", master weights " + str(mem.masterWeights / 1e9) : std::string()) +
                                      ", gradients " +
                                      str(mem.gradients / 1e9) + ", optimizer " + str(mem.optimizer / 1e9) +
                                      ", activations " + str(mem.activations / 1e9) + ", communication buffers " +
                                      str(mem.commBuffers / 1e9) + ") but a " + device.name + " has " +
                                      str(device.memoryGB, 0) + " GB"});
    }

    // FLOPs (Narayanan et al. 2021 §5.1, generalised): a layer's forward per token is
    // 2·(C·(C + 2K) + C·C) for q, k, v and the projection, 2·(2 or 3)·C·F·top_k for the MLP and
    // 4·S·C for the attention scores and their product with v; the head 2·C·V. Backward is twice
    // the forward; full recompute runs the layers' forward again, selective the attention core.
    const double tokensPerStep = static_cast<double>(p.globalBatch()) * static_cast<double>(m.seqLen);
    const double C = m.hidden, F = m.ffn, V = m.vocab, S = m.seqLen;
    const double K = m.heads > 0 ? C / m.heads * m.kvHeads : C;
    const double mats = sh.llama ? 3 : 2;
    const double layerToken = 2 * (C * (C + 2 * K) + C * C) + 2 * mats * C * F * topK + 4 * S * C;
    const double headToken = 2 * C * V;
    e.tokensPerStep = tokensPerStep;
    e.modelFlopsPerStep = tokensPerStep * 3 * (m.layers * layerToken + headToken);
    // Flash attention's backward computes the scores q·kᵀ again (2·S·C a token).
    e.hardwareFlopsPerStep = e.modelFlopsPerStep + (p.recompute == Recompute::Full        ? tokensPerStep * m.layers * layerToken
                                                    : p.recompute == Recompute::Selective ? tokensPerStep * m.layers * 4 * S * C
                                                                                          : 0.0) +
                             (flash ? tokensPerStep * m.layers * 2 * S * C : 0.0);

    // Links. Rank order tp, cp, dp, pp (mesh.h): a group leaves the node when its span does.
    const int perNode = plan.cluster.nodes.empty() ? 1 : std::max(1, plan.cluster.nodes.front().slotCount);
    const bool tpInter = tp > perNode, cpInter = tp * cp > perNode, dpInter = tp * cp * p.dp > perNode,
               ppInter = tp * cp * p.dp >= perNode;
    const bool epInter = tp * cp * ep > perNode; // expert groups are strided dp ranks
    // A plan that names no links gets this machine's shared memory and a 10 Gb/s-class network.
    const LinkSpec intra = plan.cluster.intraNode.bandwidthGBps > 0 ? plan.cluster.intraNode : LinkSpec{10.0, 1.0};
    const LinkSpec inter = plan.cluster.interNode.bandwidthGBps > 0 ? plan.cluster.interNode : LinkSpec{1.0, 50.0};
    const LinkSpec &tpLink = tpInter ? inter : intra;
    const LinkSpec &cpLink = cpInter ? inter : intra;
    const LinkSpec &epLink = epInter ? inter : intra;
    const LinkSpec &dpLink = dpInter ? inter : intra;
    const LinkSpec &ppLink = ppInter ? inter : intra;

    // Per micro-batch costs of each chunk, ms: GEMM FLOPs at the device's efficiency, element-wise
    // passes over the activations at its memory bandwidth, and the TP, CP and EP collectives on
    // the critical path.
    const double peak = (mixed ? device.peakTflopsBf16 : device.peakTflopsFp32) * 1e12 * std::max(device.efficiency, 1e-3);
    const double B = static_cast<double>(bt);
    const double rowBytes = B * sh.C * (trainerLayout ? static_cast<double>(tBytes) : elem); // a micro-batch's hidden states, all rows
    const double layerFlops = 2.0 * B * (sh.C * (sh.Cq + 2.0 * sh.Kq) + sh.Cq * sh.C) + 2.0 * mats * B * sh.C * sh.Fl * topK +
                              4.0 * B * sh.S * sh.Cq;
    const double coreFlops = 4.0 * B * sh.S * sh.Cq;
    const double headFlops = 2.0 * B * sh.C * sh.Vl;
    // Bytes the element-wise passes of a layer's forward read and write: two norms (2 passes
    // each), two residual adds with dropout, the MLP activation, the softmax unless the attention
    // core is recomputed (fused) per selective recompute or fused by flash attention. Backward
    // moves about twice that.
    const double rep = sp ? 1.0 / tp : 1.0;
    const double elementwise =
        B * sh.C * rep * elem * (4 + 6) + (dropout ? 2 * B * sh.C * rep : 0.0) + topK * B * sh.Fl * elem * (sh.llama ? 3 : 2) +
        (p.recompute == Recompute::Selective || flash ? 0.0 : sh.NHl * B * sh.S * (dropout ? 4 * elem + 1 : 2 * elem));
    const double memoryMs = device.memoryBandwidthGBps > 0 ? elementwise / (device.memoryBandwidthGBps * 1e9) * 1000.0 : 0.0;
    const double gemmMs = layerFlops / peak * 1000.0;
    // Context parallelism: each layer gathers k and v from the group and reduce-scatters their
    // gradients, overlapped with the attention core where that is longer (ring attention).
    const double kvBytes = 2.0 * B * sh.Kq * elem * cp;
    const double coreMs = coreFlops / peak * 1000.0;
    const double cpForward = cp > 1 ? std::max(0.0, collectiveMs("all_gather", kvBytes, cp, cpLink) - coreMs) : 0.0;
    const double cpBackward = cp > 1 ? std::max(0.0, collectiveMs("reduce_scatter", kvBytes, cp, cpLink) - 2 * coreMs) : 0.0;
    // Expert parallelism: tokens to their experts and back, in forward and in backward.
    const double a2aBytes = B * sh.C * topK * elem;
    const double epPass = ep > 1 ? 2 * collectiveMs("all_to_all", a2aBytes, ep, epLink) : 0.0;
    const bool split = p.schedule == "zb-h1" && pp > 1;
    const bool recompute = p.recompute == Recompute::Full;
    const int chunks = chunksTotal;
    ScheduleCosts costs;
    costs.forward.resize(static_cast<std::size_t>(chunks));
    costs.backwardInput.resize(static_cast<std::size_t>(chunks));
    costs.backwardWeight.resize(static_cast<std::size_t>(chunks));
    std::vector<double> tpMsOfChunk(static_cast<std::size_t>(chunks), 0.0);
    for (int c = 0; c < chunks; ++c) {
        const double layers = bounds[static_cast<std::size_t>(c) + 1] - bounds[static_cast<std::size_t>(c)];
        const bool embed = c == 0, head = c == chunks - 1;
        auto tpMs = [&](Pass pass) {
            return tp > 1 ? tpPass(pass, layers, embed, head, sp, split, recompute, rowBytes, B, tp, sh.norm()).ms(tp, tpLink) : 0.0;
        };
        const double tpF = tpMs(Pass::Forward), tpB = tpMs(Pass::Backward), tpW = tpMs(Pass::Weights);
        tpMsOfChunk[static_cast<std::size_t>(c)] = tpF + tpB + tpW;
        const double head_ = head ? headFlops / peak * 1000.0 : 0.0;
        const double forward = layers * (gemmMs + memoryMs + cpForward + epPass) + head_;
        const double again = (recompute ? layers * (gemmMs + memoryMs) : p.recompute == Recompute::Selective ? layers * coreMs : 0.0) +
                             (flash ? layers * coreMs / 2 : 0.0);
        costs.forward[static_cast<std::size_t>(c)] = forward + tpF;
        // Input gradients: the GEMMs once more and the element-wise backward; weight gradients: the
        // GEMMs once more (the split schedules run them apart).
        costs.backwardInput[static_cast<std::size_t>(c)] =
            layers * (gemmMs + 2 * memoryMs + cpBackward + epPass) + head_ + again + tpB;
        costs.backwardWeight[static_cast<std::size_t>(c)] = layers * gemmMs + head_ + tpW;
    }
    // A transfer between stages: this rank's rows with sequence parallelism, its 1/tp of them and
    // the tp group's all-gather with Megatron-LM's scatter/gather, else all of them.
    const double sendBytes = rowBytes / (sp || scatterGather ? tp : 1);
    costs.transfer = collectiveMs("send_recv", sendBytes, 2, ppLink) +
                     (scatterGather ? collectiveMs("all_gather", rowBytes, tp, tpLink) : 0.0);
    const int m_ = p.microBatches;
    double makespan = 0, busy = 0;
    if (pp > 1 && schedule && static_cast<long>(pp) * m_ * v <= 20000) {
        const Simulation sim = simulateSchedule(*schedule, costs);
        makespan = sim.makespan;
        busy = *std::max_element(sim.busy.begin(), sim.busy.end());
        e.bubbleFraction = sim.bubbleFraction;
        if (exact && sim.completed) {
            e.timeline = sim.timeline;
            for (double b : sim.bubble)
                e.stageBubbleFraction.push_back(makespan > 0 ? b / makespan : 0.0);
        }
    } else {
        // One stage (or too many actions to simulate quickly): the busiest stage's work plus the
        // closed-form fill and drain of its schedule.
        for (int s = 0; s < pp; ++s) {
            double work = 0;
            for (int c = s; c < chunks; c += pp)
                work += m_ * (costs.forward[static_cast<std::size_t>(c)] + costs.backwardInput[static_cast<std::size_t>(c)] +
                              costs.backwardWeight[static_cast<std::size_t>(c)]);
            busy = std::max(busy, work);
        }
        const double perMicro = busy / std::max(1, m_ * v);
        double fill = (pp - 1) * perMicro / v;
        if (p.schedule == "zb-h1")
            fill = (pp - 1) * perMicro / 3.0; // (p−1)(F+B−W) with F ≈ B ≈ W
        makespan = busy + (pp > 1 ? fill : 0.0);
        e.bubbleFraction = makespan > 0 ? (makespan - busy) / makespan : 0.0;
    }
    e.bubbleMs = makespan - busy;

    // The collectives each stage's ranks issue in a step, as trellis-trainer records them
    // (communicator groups of one rank record nothing).
    std::vector<double> dpMsOfStage(static_cast<std::size_t>(pp), 0.0), dpOverlapOfStage(static_cast<std::size_t>(pp), 0.0);
    double tpMsOfStage = 0;
    auto emit = [&](int stage, const std::string &group, const std::string &op, const Calls &c, int n, const LinkSpec &link,
                    bool interNode) {
        if (n <= 1 || c.calls <= 0)
            return 0.0;
        const double ms = callsMs(op == "send" || op == "recv" ? "send_recv" : op, c, n, link);
        e.collectives.push_back({group, op, static_cast<std::uint64_t>(c.bytes), static_cast<int>(c.calls),
                                 op == "recv" ? 0.0 : ms, interNode, pp > 1 ? stage : -1});
        return ms;
    };
    const double scalar = 8; // a double: the loss, a squared norm
    // fp16 in trellis-trainer: every step the ranks agree on the overflow verdict (an int over the world).
    const bool overflowVote = trainerLayout && p.precision == Precision::Fp16;
    // Without tp and pp the world is the DP group: the loss (and the sharded norm) go there.
    const bool worldIsDp = tp == 1 && pp == 1 && cp == 1;
    for (int stage = 0; stage < pp; ++stage) {
        const int st = pp > 1 ? stage : -1;
        // Tensor parallelism.
        if (tp > 1) {
            TpPass total;
            if (moe && trainerLayout) // each mixture-of-experts layer's gate gradients, summed over the group
                for (int c = stage; c < chunks; c += pp)
                    total.allReduce.add(m_ * (bounds[static_cast<std::size_t>(c) + 1] - bounds[static_cast<std::size_t>(c)]),
                                        static_cast<double>(bt * choices) * 4.0);
            for (int c = stage; c < chunks; c += pp) {
                const double layers = bounds[static_cast<std::size_t>(c) + 1] - bounds[static_cast<std::size_t>(c)];
                for (Pass pass : {Pass::Forward, Pass::Backward, Pass::Weights}) {
                    const TpPass t = tpPass(pass, layers, c == 0, c == chunks - 1, sp, split, recompute, rowBytes, B, tp, sh.norm());
                    total.allReduce.add(t.allReduce, m_);
                    total.allGather.add(t.allGather, m_);
                    total.reduceScatter.add(t.reduceScatter, m_);
                }
            }
            total.allReduce.add(1, scalar); // the gradient norm's sum over the group
            if (scatterGather) // every activation and gradient received, gathered over the group
                for (int c = stage; c < chunks; c += pp)
                    total.allGather.add(m_ * ((c != chunks - 1 ? 1 : 0) + (c != 0 ? 1 : 0)), rowBytes);
            double ms = emit(st, "tp", "all_gather", total.allGather, tp, tpLink, tpInter);
            ms += emit(st, "tp", "reduce_scatter", total.reduceScatter, tp, tpLink, tpInter);
            ms += emit(st, "tp", "all_reduce", total.allReduce, tp, tpLink, tpInter);
            tpMsOfStage = std::max(tpMsOfStage, ms);
        }
        if (cp > 1 && trainerLayout) {
            // trellis-trainer's ring (model/ring_attention.cpp): a layer's forward sends its k/v
            // block on cp − 1 times; its backward sends the blocks on cp − 1 times and their dK/dV
            // partial sums cp times (the last back to the owner); full recompute runs the forward
            // ring again. Every message is one rank's block, bt · 2 · kv width floats.
            double layersHere = 0;
            for (int c = stage; c < chunks; c += pp)
                layersHere += bounds[static_cast<std::size_t>(c) + 1] - bounds[static_cast<std::size_t>(c)];
            // The k/v blocks travel in the activations' type, the dK/dV partial sums in fp32.
            const double kvSends = (recompute ? 2.0 : 1.0) * (cp - 1) + (cp - 1), dkvSends = cp;
            const double block = static_cast<double>(bt) * 2.0 * static_cast<double>(sh.Kq);
            Calls ring;
            ring.add(m_ * layersHere * kvSends, block * static_cast<double>(tBytes));
            ring.add(m_ * layersHere * dkvSends, block * 4.0);
            emit(st, "cp", "send", ring, cp, cpLink, cpInter);
            emit(st, "cp", "recv", ring, cp, cpLink, cpInter);
        } else if (cp > 1) {
            Calls gather, scatter;
            gather.add(m_ * (bounds.back() - bounds.front()) / pp, kvBytes);
            scatter.add(m_ * (bounds.back() - bounds.front()) / pp, kvBytes);
            emit(st, "cp", "all_gather", gather, cp, cpLink, cpInter);
            emit(st, "cp", "reduce_scatter", scatter, cp, cpLink, cpInter);
        }
        if (ep > 1 && trainerLayout) {
            // trellis-trainer (model/moe.cpp): per layer and micro-batch, dispatch and combine in
            // forward (again with full recompute), the output gradients out and the input
            // gradients home in backward, each moeRows rows of this rank; dropless routing first
            // exchanges the row counts (one int per expert) in each forward. The norm's sum.
            double layersHere = 0;
            for (int c = stage; c < chunks; c += pp)
                layersHere += bounds[static_cast<std::size_t>(c) + 1] - bounds[static_cast<std::size_t>(c)];
            const double forwards = recompute ? 2.0 : 1.0;
            Calls a2a, norm;
            a2a.add(m_ * layersHere * 2.0 * (forwards + 1.0), static_cast<double>(moeRows * sh.C * tBytes));
            if (!m.moe.capacityFactor)
                a2a.add(m_ * layersHere * forwards, static_cast<double>(sh.E) * 4.0);
            norm.add(1, scalar);
            emit(st, "ep", "all_to_all", a2a, ep, epLink, epInter);
            emit(st, "ep", "all_reduce", norm, ep, epLink, epInter);
        } else if (ep > 1) {
            Calls a2a;
            a2a.add(4.0 * m_ * (bounds.back() - bounds.front()) / pp, a2aBytes);
            emit(st, "ep", "all_to_all", a2a, ep, epLink, epInter);
        }
        // Data parallelism: gradient reduction (ZeRO: reduce-scatter and the parameters'
        // all-gather), and the scalars.
        // Gradients on the wire (fp32, or bf16 with grad_reduce bf16) and the parameters ZeRO
        // gathers (the compute copy: the activations' type).
        const double g = trainerLayout ? (p.gradReduce == GradReduce::Bf16 ? 2.0 : 4.0) : gradBytes;
        const double gp = trainerLayout ? static_cast<double>(tBytes) : gradBytes;
        const std::string dpName = cp > 1 ? "dp_cp" : "dp"; // the gradient replicas: dp × cp ranks
        double dpMs = 0;
        if (p.zero <= 1) {
            // Buckets over the stage's segments: all-reduced (ZeRO 0), or reduce-scattered and
            // the parameters all-gathered (ZeRO 1); without a pipeline the loss (and the norm)
            // share the dp group when it is the world.
            const auto segments = segmentsOf(stage);
            const auto buckets = trainerBuckets(segments, dp, p);
            Calls reduce, scalars, expertReduce;
            // Expert parallelism: each layer unit is [the rest | its experts] (the experts last), and
            // a bucket's expert parts are averaged over expert_dp, one call per part.
            std::vector<std::pair<std::uint64_t, std::uint64_t>> experts; // in the layer segment (the last)
            if (ep > 1 && trainerLayout) {
                const std::uint64_t first = pp == 1 ? sh.embedding() : 0, expertPart = sh.El * sh.mlp();
                std::uint64_t layersHere = 0;
                for (int c = stage; c < chunks; c += pp)
                    layersHere += static_cast<std::uint64_t>(bounds[static_cast<std::size_t>(c) + 1] - bounds[static_cast<std::size_t>(c)]);
                for (std::uint64_t i = 0; i < layersHere; ++i)
                    experts.emplace_back(first + (i + 1) * sh.layer() - expertPart, first + (i + 1) * sh.layer());
            }
            for (const detail::BucketPart &part : detail::bucketParts(buckets, segments.size() - 1, experts)) {
                if (!part.expert)
                    reduce.add(1, static_cast<double>(part.elements) * g);
                else if (p.dp / ep > 1) // a group of one makes no call
                    expertReduce.add(1, static_cast<double>(part.elements) * g);
            }
            dpMs += emit(st, "expert_dp", "all_reduce", expertReduce, p.dp / ep, dpLink, dpInter);
            if (worldIsDp)
                scalars.add(1, scalar); // the loss
            if (p.zero == 1)
                scalars.add(1, scalar); // the norm of the owned gradients
            if (worldIsDp && overflowVote)
                scalars.add(1, 4);
            if (p.zero == 0) {
                Calls all = reduce; // the buckets and the scalars share the dp group's all-reduce
                all.calls += scalars.calls;
                all.bytes += scalars.bytes;
                dpMs += emit(st, dpName, "all_reduce", all, dp, dpLink, dpInter);
            } else {
                Calls gatherParams; // the same buckets, the parameters' element size
                for (const detail::BucketPart &part : detail::bucketParts(buckets, segments.size() - 1, experts))
                    if (!part.expert)
                        gatherParams.add(1, static_cast<double>(part.elements) * gp);
                dpMs += emit(st, dpName, "reduce_scatter", reduce, dp, dpLink, dpInter);
                dpMs += emit(st, dpName, "all_gather", gatherParams, dp, dpLink, dpInter);
                dpMs += emit(st, dpName, "all_reduce", scalars, dp, dpLink, dpInter);
            }
        } else {
            // ZeRO 2/3: every unit reduce-scattered once per micro-batch (its weight gradients);
            // stage 2 all-gathers each unit after the step; stage 3 gathers the roots once a
            // step and every other unit each time a pass uses it (forward, backward, and with a
            // split backward its input half too).
            const std::vector<std::uint64_t> units = unitsOf(stage);
            const bool holdsEmbedding = pp == 1 || stage == 0 || (stage == pp - 1 && !sh.llama);
            const bool holdsFinal = pp == 1 || stage == pp - 1;
            std::uint64_t layerUnits = 0;
            for (int c = stage; c < chunksTotal; c += pp)
                layerUnits += static_cast<std::uint64_t>(bounds.empty() ? sh.L : bounds[static_cast<std::size_t>(c) + 1] - bounds[static_cast<std::size_t>(c)]);
            if (pp == 1)
                layerUnits = sh.L;
            Calls reduce, gather, scalars;
            for (std::uint64_t size : units)
                reduce.add(m_, static_cast<double>(padded(size)) * g); // every micro-batch
            if (p.zero == 2) {
                for (std::uint64_t size : units)
                    gather.add(1, static_cast<double>(padded(size)) * gp);
            } else {
                if (holdsEmbedding)
                    gather.add(1, static_cast<double>(padded(sh.embedding())) * gp);
                if (holdsFinal)
                    gather.add(1, static_cast<double>(padded(sh.final())) * gp);
                const double passes = split ? 3.0 : 2.0;
                gather.add(passes * m_ * static_cast<double>(layerUnits), static_cast<double>(padded(sh.layer())) * gp);
            }
            scalars.add(worldIsDp ? 2 : 1, scalar);
            if (worldIsDp && overflowVote)
                scalars.add(1, 4);
            const double reduceMs = emit(st, dpName, "reduce_scatter", reduce, dp, dpLink, dpInter);
            dpMs += reduceMs;
            // Outside trellis-trainer (GPU streams progress on their own) the reduce-scatters of
            // every micro-batch but the last run while later micro-batches compute.
            if (!trainerLayout && m_ > 1)
                dpOverlapOfStage[static_cast<std::size_t>(stage)] = reduceMs * (m_ - 1) / m_;
            dpMs += emit(st, dpName, "all_gather", gather, dp, dpLink, dpInter);
            dpMs += emit(st, dpName, "all_reduce", scalars, dp, dpLink, dpInter);
        }
        // The tied embedding's two copies: their reduced gradients summed between the end stages.
        if (pp > 1 && !sh.llama && (stage == 0 || stage == pp - 1)) {
            Calls sum; // the reduced gradients: fp32 in trellis-trainer whatever went over the wire
            const double ge = trainerLayout ? 4.0 : gradBytes;
            if (p.zero == 0)
                sum.add(1, static_cast<double>(padded(sh.embedding())) * ge);
            else if (p.zero == 1)
                for (const auto &b : trainerBuckets({sh.embedding()}, dp, p)) // its own segment, cut alike
                    sum.add(1, static_cast<double>(b.size / static_cast<std::uint64_t>(dp)) * ge);
            else
                sum.add(1, static_cast<double>(padded(sh.embedding()) / static_cast<std::uint64_t>(dp)) * ge);
            dpMs += emit(stage, "embedding", "all_reduce", sum, 2, ppLink, ppInter);
        }
        dpMsOfStage[static_cast<std::size_t>(stage)] = dpMs;
        // Pipeline: activations forward and gradients back between neighbouring chunks, the norm's sum.
        if (pp > 1) {
            Calls sends;
            for (int c = stage; c < chunks; c += pp)
                sends.add(m_ * ((c != chunks - 1 ? 1 : 0) + (c != 0 ? 1 : 0)), sendBytes);
            Calls norm;
            norm.add(1, scalar);
            emit(stage, "pp", "send", sends, pp, ppLink, ppInter);
            emit(stage, "pp", "recv", sends, pp, ppLink, ppInter);
            emit(stage, "pp", "all_reduce", norm, pp, ppLink, ppInter);
        }
        if (!worldIsDp) {
            Calls loss;
            loss.add(1, scalar);
            if (overflowVote)
                loss.add(1, 4);
            emit(st, "world", "all_reduce", loss, p.worldSize(), p.worldSize() > perNode ? inter : intra, p.worldSize() > perNode);
        }
    }
    const double dpMs = *std::max_element(dpMsOfStage.begin(), dpMsOfStage.end());
    // DP reduction overlaps the last backward without a pipeline (bucketed); after the flush with one.
    const double lastBackward = costs.backwardInput.back() + costs.backwardWeight.back();
    double hidden = pp == 1 && p.overlapGradReduce ? std::min(dpMs, 0.8 * lastBackward * (bounds.back() > 0 ? 1 : 0)) : 0.0;
    if (pp > 1) // per-micro-batch reductions under the pipeline's compute (ZeRO-2/3 outside trellis-trainer)
        hidden = std::min(*std::max_element(dpOverlapOfStage.begin(), dpOverlapOfStage.end()), 0.8 * busy);
    // Breakdown: compute + exposed communication (TP on the critical path, DP not hidden) + bubble.
    const double tpMs = std::min(tpMsOfStage, busy);
    // The update after the reduction (calibrated CPUs): the busiest stage's held and owned parameters.
    double updateMs = 0;
    for (const auto &mem : e.memory)
        updateMs = std::max(updateMs, (static_cast<double>(mem.parameters) / paramBytes * device.gradientNsPerParameter +
                                       static_cast<double>(mem.optimizer) / optBytes * device.optimizerNsPerParameter) /
                                          1e6);
    e.computeMs = std::max(0.0, busy - tpMs) + updateMs;
    e.exposedCommMs = tpMs + dpMs - hidden;
    e.stepMs = makespan + dpMs - hidden + updateMs;
    if (!(e.stepMs > 0))
        e.stepMs = 1e-6;
    e.tokensPerS = tokensPerStep / (e.stepMs / 1000.0);
    const double world = static_cast<double>(p.worldSize());
    const double peakAll = (mixed ? device.peakTflopsBf16 : device.peakTflopsFp32) * 1e12 * world;
    // MFU needs a datasheet peak; a CPU's figure is a measured rate (or a placeholder), so none.
    e.mfu = peakAll > 0 && !cpu ? e.modelFlopsPerStep / (e.stepMs / 1000.0) / peakAll : 0.0;
    e.costPerRun = e.stepMs / 1000.0 * plan.training.steps / 3600.0 * world * plan.cluster.pricePerDeviceHour;
    return e;
}

} // namespace trellis::plan
