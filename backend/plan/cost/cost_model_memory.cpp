// The cost model's memory part (cost_model_parts.h): per pipeline stage, the bytes its ranks hold
// by category — parameters, master weights, gradients and optimizer states as the trainer's
// buffers and ZeRO chunks lay them out, the activations its schedule keeps alive, communication
// buffers — and a warning for each stage that does not fit the device.
#include "backend/plan/cost/cost_model_parts.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

namespace trellis::plan::detail {
namespace {

std::string str(double v, int decimals = 1)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

// Activations of one model instance running `layers` layers (and the embedding, the head), in
// bytes: trellis-trainer's own (gpt_model.cpp) where it runs the plan, a Megatron-style layer's
// otherwise.
class ActivationModel {
public:
    explicit ActivationModel(const CostInputs &in);

    std::uint64_t instanceBytes(std::uint64_t layers, bool embed, bool head) const
    {
        return m_in.trainerLayout ? trainerInstance(layers, head) : megatronInstance(layers, embed, head);
    }
    // Full recompute outside the trainer: the rest of the layer being recomputed, once a stage,
    // since one micro-batch at a time runs its backward.
    std::uint64_t recomputeWorkingSet() const
    {
        return !m_in.trainerLayout && m_in.p.recompute == Recompute::Full ? static_cast<std::uint64_t>(m_megatronLayer - m_megatronInput)
                                                                           : 0;
    }
    std::uint64_t interleavedPeak(int r) const;

private:
    std::uint64_t trainerInstance(std::uint64_t layers, bool head) const;
    std::uint64_t megatronInstance(std::uint64_t layers, bool embed, bool head) const;
    double megatronLayer() const;

    const CostInputs &m_in;
    double m_repRows = 1, m_megatronInput = 0, m_megatronLayer = 0;
};

ActivationModel::ActivationModel(const CostInputs &in) : m_in(in)
{
    m_repRows = in.sp ? 1.0 / in.tp : 1.0;
    m_megatronInput = static_cast<double>(in.bt) * in.sh.C * m_repRows * in.elem;
    m_megatronLayer = megatronLayer();
}

std::uint64_t ActivationModel::trainerInstance(std::uint64_t layers, bool head) const // gpt_model.cpp
{
    const Shapes &sh = m_in.sh;
    const ParallelSpec &p = m_in.p;
    const int cp = m_in.cp;
    const std::uint64_t bt = m_in.bt, rows = m_in.rows, moeRows = m_in.moeRows, choices = m_in.choices;
    const bool moe = m_in.moe;
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
    return (rows * C + layersT + rows * C * layers + headT) * m_in.tBytes + (layers4 + head4) * 4;
}

// A Megatron-style layer's activations for one micro-batch.
double ActivationModel::megatronLayer() const
{
    const Shapes &sh = m_in.sh;
    const double elem = m_in.elem, topK = m_in.topK;
    const bool dropout = m_in.dropout;
    const double B = static_cast<double>(m_in.bt);
    // Norm inputs, the qkv and MLP inputs (split with sequence parallelism), dropout masks.
    const double replicated = B * sh.C * m_repRows * (4 * elem + (dropout ? 2 : 0));
    // q, k, v, the projection's input, the MLP's hidden activations (three for SwiGLU).
    const double split = B * elem * (2.0 * sh.Cq + 2.0 * sh.Kq) + topK * B * sh.Fl * elem * (sh.llama ? 3 : 2);
    // Softmax output (and dropout mask and output): the core attention selective recompute
    // redoes; flash attention keeps only each row's fp32 log-sum-exp instead.
    const double scores = m_in.flash                               ? sh.NHl * B * 4.0
                          : m_in.p.recompute == Recompute::Selective ? 0.0
                                                                     : sh.NHl * B * sh.S * (dropout ? 2 * elem + 1 : elem);
    return replicated + split + scores;
}

std::uint64_t ActivationModel::megatronInstance(std::uint64_t layers, bool embed, bool head) const
{
    const Shapes &sh = m_in.sh;
    const double B = static_cast<double>(m_in.bt);
    // Full recompute keeps each layer's input; the layer being recomputed holds the rest, once
    // a stage (recomputeWorkingSet), since one micro-batch at a time runs its backward.
    const double stored = static_cast<double>(layers) * (m_in.p.recompute == Recompute::Full ? m_megatronInput : m_megatronLayer);
    const double embedding = embed && m_in.dropout ? B * sh.C * m_repRows : 0.0;
    const double out = head ? 2 * B * sh.C * m_repRows * m_in.elem + 4.0 * B * sh.Vl : 0.0; // norm, head input, fp32 logits
    return static_cast<std::uint64_t>(stored + embedding + out);
}

// Activation bytes alive at once at the peak of Megatron-LM's interleaved order on pipeline
// rank r: forward k runs chunk ((k mod p·v) / p)·p + r, backward k chunk (v − 1 − (k mod p·v)
// / p)·p + r; warm-up forwards, then one forward and one backward each, then the drain.
std::uint64_t ActivationModel::interleavedPeak(int r) const
{
    const int pp = m_in.pp, v = m_in.v;
    const int mb = m_in.p.microBatches, total = mb * v, group = pp * v;
    const int warmup = interleavedWarmup(r, pp, mb, v);
    auto chunkBytes = [&](int k, bool backward) {
        const int slot = (k % group) / pp;
        const int c = (backward ? v - 1 - slot : slot) * pp + r;
        const auto layers = static_cast<std::uint64_t>(m_in.layersOf(c));
        return instanceBytes(layers, c == 0, c == m_in.chunksTotal - 1);
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
}

// ZeRO-2/3 outside trellis-trainer (DeepSpeed, FSDP): a unit's whole gradients while it is
// reduce-scattered and the next one's being produced and, at stage 3, a unit gathered for use
// and the next one prefetched — not every micro-batch's, as the trainer's worst case. In fp32
// element units like the rest (scaled to the precision by toFrameworkPrecision).
std::uint64_t shardedFrameworkBuffers(const CostInputs &in, const std::vector<std::uint64_t> &units)
{
    std::uint64_t largest = 0;
    for (std::uint64_t size : units)
        largest = std::max(largest, in.padded(size));
    return (2 + (in.p.zero == 3 ? 2 : 0)) * largest * 4;
}

// Data parallelism's options at ZeRO 0 (trainer/parallel/outer_sync.h, powersgd.h): local
// updates keep an fp32 anchor of the local buffer (`held` elements) and DiLoCo its outer momentum,
// optimizer state; PowerSGD its factors, the matrices' error feedback, the vectors packed and a
// scratch matrix, fp32, with the communication buffers.
void addDataParallelOptions(const CostInputs &in, int stage, std::uint64_t held, std::uint64_t real, StageMemory &mem)
{
    const ParallelSpec &p = in.p;
    if (p.dpSync.local())
        mem.optimizer += held * 4 * (p.dpSync.mode == DpSyncMode::DiLoCo ? 2 : 1);
    if (p.gradCompression.kind == GradCompression::PowerSgd) {
        const PowerSgdShapes shapes = powerSgdShapes(in, stage);
        const std::uint64_t vectors = real - std::min(real, shapes.matrixElements);
        mem.commBuffers += (shapes.factors + shapes.matrixElements + vectors + shapes.largest) * 4;
    }
}

// ZeRO 0/1: the padded local buffer (the trainer's; the model's own count elsewhere).
void addBufferStates(const CostInputs &in, int stage, StageMemory &mem)
{
    const ParallelSpec &p = in.p;
    const int dp = in.dp;
    const auto held = trainerBuckets(stageSegments(in, stage), dp, p);
    const std::vector<TrainerBucket> &buckets = *held;
    std::uint64_t real = 0;
    for (std::uint64_t size : stageSegments(in, stage))
        real += size;
    mem.parameters = (in.trainerLayout ? paddedTotal(buckets) : real) * 4;
    mem.gradients = mem.parameters;
    mem.optimizer = (p.zero == 1 ? zeroOneOwned(buckets, dp, 0) : real) * 8;
    // The in-place reduce-scatter stages this rank's chunk of each bucket.
    // (Megatron-LM's distributed optimizer reduce-scatters in its gradient buffer itself.)
    mem.commBuffers = p.zero == 1 && !in.megatron ? paddedTotal(buckets) / dp * 4 : 0;
    if (in.trainerLayout && in.mixed) {
        // The compute copy of the whole buffer; fp32 masters of all of it (ZeRO 0) or of
        // this rank's chunks (ZeRO 1); gradients fp32; reduced in bf16: a bf16 copy.
        mem.parameters = paddedTotal(buckets) * in.tBytes;
        mem.masterWeights = (p.zero == 1 ? paddedTotal(buckets) / dp : paddedTotal(buckets)) * 4;
        if (p.gradReduce == GradReduce::Bf16)
            mem.commBuffers += paddedTotal(buckets) * 2;
    }
    if (p.zero == 0)
        addDataParallelOptions(in, stage, in.trainerLayout ? paddedTotal(buckets) : real, real, mem);
}

// ZeRO 2/3 without a pipeline: the units sharded.
void addShardedStates(const CostInputs &in, const std::vector<std::uint64_t> &units, StageMemory &mem)
{
    const ParallelSpec &p = in.p;
    const int dp = in.dp;
    const std::uint64_t tBytes = in.tBytes, local = in.local;
    std::uint64_t chunks = 0, owned = 0;
    for (std::uint64_t size : units) {
        chunks += (size + dp - 1) / dp;
        owned += ownedOfUnit(size, dp, 0);
    }
    mem.parameters = (p.zero == 3 ? chunks : local) * 4;
    mem.gradients = chunks * 4;
    mem.optimizer = owned * 8;
    if (in.trainerLayout && in.mixed) { // the compute copy (whole, or its shard) and the master shard
        mem.parameters = (p.zero == 3 ? chunks : local) * tBytes;
        mem.masterWeights = chunks * 4;
    }
    // Transient buffers, at worst: every unit's gradients of every micro-batch in
    // flight (a reduce-scatter may not complete before the backward ends, MPI
    // progressing only inside calls, and they complete in launch order); at stage 3
    // also the roots kept gathered and a layer in use plus the one prefetched.
    std::uint64_t all = 0;
    for (std::uint64_t size : units)
        all += in.padded(size);
    // Reduced in bf16, each unit's fp32 gradients have a bf16 copy beside them.
    const std::uint64_t gradBuffer = p.gradReduce == GradReduce::Bf16 ? 6 : 4;
    mem.commBuffers = all * static_cast<std::uint64_t>(p.microBatches) * gradBuffer;
    if (p.zero == 3) // gathered in the compute type
        mem.commBuffers += (in.padded(units.front()) + in.padded(units.back()) + 2 * in.padded(in.sh.layer())) * tBytes;
    if (!in.trainerLayout) // DeepSpeed's and FSDP's bounded buckets
        mem.commBuffers = shardedFrameworkBuffers(in, units);
}

// ZeRO 2/3 over a pipeline: the stage's units sharded as without one; transient buffers at
// worst every unit of every micro-batch in flight and, at stage 3, every unit gathered.
void addShardedPipelineStates(const CostInputs &in, const std::vector<std::uint64_t> &units, StageMemory &mem)
{
    const ParallelSpec &p = in.p;
    const int dp = in.dp;
    const std::uint64_t tBytes = in.tBytes;
    const bool trainerLayout = in.trainerLayout;
    std::uint64_t all = 0;
    for (std::uint64_t size : units) {
        mem.parameters += (p.zero == 3 ? in.padded(size) / dp : size) * (trainerLayout ? tBytes : 4);
        mem.gradients += in.padded(size) / dp * 4;
        mem.optimizer += ownedOfUnit(size, dp, 0) * 8;
        if (trainerLayout && in.mixed)
            mem.masterWeights += in.padded(size) / dp * 4;
        all += in.padded(size);
    }
    const std::uint64_t gradBuffer = p.gradReduce == GradReduce::Bf16 ? 6 : 4;
    mem.commBuffers = all * static_cast<std::uint64_t>(p.microBatches) * gradBuffer +
                      (p.zero == 3 ? all * (trainerLayout ? tBytes : 4) : 0);
    if (!trainerLayout)
        mem.commBuffers = shardedFrameworkBuffers(in, units);
}

// A pipeline stage's activations: the model instances its schedule keeps alive at once.
std::uint64_t pipelineActivations(const CostInputs &in, const ActivationModel &activations, int stage)
{
    const ParallelSpec &p = in.p;
    const int pp = in.pp, v = in.v;
    std::uint64_t bytes = 0;
    std::map<int, int> instances;
    if (!in.trainerLayout && p.schedule == "interleaved-1f1b" && v > 1) {
        // Megatron-LM frees a micro-batch chunk's activations after its backward: the
        // stage holds, at its peak, what its order keeps alive at once — the warm-up's
        // forwards plus one (Korthikanti et al. 2022 §4.2.3: the first stage keeps
        // L·(1 + (p−1)/(p·v)) layers' worth with equal chunks).
        bytes += activations.interleavedPeak(stage);
    } else if (in.schedule) {
        instances = instancesPerChunk(*in.schedule, stage);
    } else {
        // Closed forms: 1f1b and zb-h1 keep p − s micro-batches in flight on stage s, gpipe
        // all m, interleaved its warm-up plus one, spread over its v chunks.
        const int mb = p.microBatches;
        int alive = p.schedule == "gpipe" ? mb : std::min(pp - stage, mb);
        if (p.schedule == "interleaved-1f1b" && v > 1)
            alive = (std::min((pp - stage - 1) * 2 + (v - 1) * pp + 1, mb * v) + v - 1) / v;
        for (int c = stage; c < in.chunksTotal; c += pp)
            instances[c] = alive;
    }
    for (const auto &[chunk, count] : instances) { // (empty for Megatron's interleaved order)
        const auto layers = static_cast<std::uint64_t>(in.layersOf(chunk));
        bytes += static_cast<std::uint64_t>(count) * activations.instanceBytes(layers, chunk == 0, chunk == in.chunksTotal - 1);
    }
    return bytes;
}

// bf16/fp16 weights and gradients, fp32 master weights with the moments, outside the trainer
// (the states above are counted in fp32 units).
void toFrameworkPrecision(const CostInputs &in, StageMemory &mem)
{
    mem.parameters = mem.parameters / 4 * static_cast<std::uint64_t>(in.paramBytes);
    mem.gradients = mem.gradients / 4 * static_cast<std::uint64_t>(in.gradBytes);
    mem.optimizerStep = mem.optimizer / 8 * static_cast<std::uint64_t>(in.stepCopyBytes); // per owned parameter
    mem.optimizer = mem.optimizer / 8 * static_cast<std::uint64_t>(in.optBytes);
    mem.commBuffers = mem.commBuffers / 4 * static_cast<std::uint64_t>(in.gradBytes);
}

// Memory per stage (DP rank 0, TP rank 0).
StageMemory stageMemory(const CostInputs &in, const ActivationModel &activations, int stage)
{
    StageMemory mem;
    mem.stage = stage;
    const std::vector<std::uint64_t> units = stageUnits(in, stage);
    if (in.p.zero <= 1)
        addBufferStates(in, stage, mem);
    if (in.pp == 1) {
        if (in.p.zero >= 2)
            addShardedStates(in, units, mem);
        mem.activations = activations.instanceBytes(in.sh.L, true, true);
    } else {
        if (in.p.zero >= 2)
            addShardedPipelineStates(in, units, mem);
        mem.activations += pipelineActivations(in, activations, stage);
    }
    mem.activations += activations.recomputeWorkingSet();
    if (in.mixed && !in.trainerLayout)
        toFrameworkPrecision(in, mem);
    return mem;
}

Diagnostic memoryWarning(const DeviceSpec &device, const StageMemory &mem)
{
    return {Severity::Warning, "parallel",
            "stage " + std::to_string(mem.stage) + " ranks need " + str(mem.peak() / 1e9) + " GB" +
                (mem.peak() > mem.total() ? " at the optimizer step (its fp32 gradient copies " + str(mem.optimizerStep / 1e9) +
                                                " GB, the activations freed)"
                                          : std::string()) +
                " (parameters " +
                str(mem.parameters / 1e9) +
                (mem.masterWeights > 0 ? ", master weights " + str(mem.masterWeights / 1e9) : std::string()) + ", gradients " +
                str(mem.gradients / 1e9) + ", optimizer " + str(mem.optimizer / 1e9) + ", activations " +
                str(mem.activations / 1e9) + ", communication buffers " + str(mem.commBuffers / 1e9) + ") but a " +
                device.name + " has " + str(device.memoryGB, 0) + " GB"};
}

} // namespace

void estimateMemory(const CostInputs &in, const DeviceSpec &device, Estimate &e)
{
    const ActivationModel activations(in);
    for (int stage = 0; stage < in.pp; ++stage) {
        const StageMemory mem = stageMemory(in, activations, stage);
        e.memory.push_back(mem);
        if (device.memoryGB > 0 && static_cast<double>(mem.peak()) > device.memoryGB * 1e9)
            e.warnings.push_back(memoryWarning(device, mem));
    }
}

} // namespace trellis::plan::detail
