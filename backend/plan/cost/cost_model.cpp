// The cost model; see cost_model.h. Formulas: parameter and activation counts mirror
// backend/trainer/model/gpt_model.cpp on CPUs (Korthikanti et al. 2022 on GPUs); FLOPs per token as
// Narayanan et al. 2021 §5.1, generalised to grouped-query attention, SwiGLU and experts; ZeRO
// shares as Rajbhandari et al. 2020 (fp32: 4 + 4 + 8 bytes a parameter; mixed precision:
// 2 + 2 + 12). This file derives the plan's figures and adds the step time up from the parts
// (cost_model_parts.h). Collective counting lives in collective_model.h, calibration in calibration.h.
#include "backend/plan/cost/cost_model.h"

#include "backend/plan/cost/cost_model_parts.h"
#include "backend/plan/mesh.h"
#include "backend/plan/schedule.h"

#include <algorithm>
#include <string>

namespace trellis::plan {
namespace detail {
namespace {

std::uint64_t roundUp(std::uint64_t x, std::uint64_t m) { return (x + m - 1) / m * m; }

} // namespace

CostInputs::CostInputs(const Plan &thePlan, bool simulate)
    : plan(thePlan), m(thePlan.model), p(thePlan.parallel), exact(simulate)
{
    tp = p.tp;
    pp = p.pp;
    cp = p.cp;
    ep = p.ep;
    v = p.pp > 1 ? p.virtualStages : 1;
    dp = p.dp * cp;
    sh = shapesOf(m, tp, ep);
    mixed = p.precision != Precision::Fp32;
    framework = resolvedFramework(plan);
    flash = resolvedAttention(plan) == AttentionKernel::Flash;
    megatron = framework == Framework::Megatron;
    paramBytes = mixed ? 2 : 4;
    gradBytes = !mixed ? 4 : megatron && p.precision == Precision::Bf16 ? 4 : 2;
    optBytes = !mixed ? 8 : 12;
    stepCopyBytes = megatron && p.precision == Precision::Fp16 ? 4 : 0;
    elem = mixed ? 2 : 4;
    tBytes = mixed ? 2 : 4;
    // Megatron-LM pads the vocabulary to a multiple of make_vocab_size_divisible_by (128) times
    // tp: the first stage's embedding and the output layer hold the padded rows (GPT-2's 50257:
    // 50304 at tp 1, 51200 at tp 8), and the logits are computed over them.
    if (megatron)
        sh.Vl = roundUp(static_cast<std::uint64_t>(m.vocab), 128 * static_cast<std::uint64_t>(tp)) / static_cast<std::uint64_t>(tp);
    local = megatron ? sh.embedding() + sh.L * sh.layer() + sh.final() : localParameterCount(m, tp, ep);
    sp = p.sequenceParallel && tp > 1;
    dropout = !sh.llama;
    topK = m.moe.experts > 0 ? m.moe.topK : 1;
    cpu = plan.cluster.nodes.empty() || plan.cluster.nodes.front().device == DeviceKind::Cpu;
    trainerLayout = framework == Framework::Trellis && runsOnTrainer(plan) && !flash;
    scatterGather = megatron && tp > 1 && pp > 1 && !p.sequenceParallel;
    split = p.schedule == "zb-h1" && pp > 1;
    recompute = p.recompute == Recompute::Full;

    bt = static_cast<std::uint64_t>(p.microBatchSize) * sh.S / static_cast<std::uint64_t>(cp);
    rows = sp ? bt / tp : bt;
    moe = m.moe.experts > 0;
    choices = moe ? static_cast<std::uint64_t>(m.moe.topK) : 1;
    moeRows = !moe                   ? 0
              : m.moe.capacityFactor ? sh.E * static_cast<std::uint64_t>(p.microBatchSize) *
                                           static_cast<std::uint64_t>(expertCapacity(m.moe, m.seqLen))
                                     : bt * choices;
    B = static_cast<double>(bt);
    rowBytes = B * sh.C * (trainerLayout ? static_cast<double>(tBytes) : elem);
    kvBytes = 2.0 * B * sh.Kq * elem * cp;
    a2aBytes = B * sh.C * topK * elem;

    bounds = {0, static_cast<int>(m.layers)};
    if (pp > 1) {
        bounds = stageLayerBounds(m, pp * v);
        if (exact)
            if (auto s = generateSchedule(p.schedule, pp, p.microBatches, v))
                schedule = std::move(s).value();
    }
    chunksTotal = pp * v;
}

std::uint64_t CostInputs::padded(std::uint64_t size) const { return roundUp(size, static_cast<std::uint64_t>(dp)); }

std::vector<std::uint64_t> stageUnits(const CostInputs &in, int stage)
{
    const Shapes &sh = in.sh;
    std::vector<std::uint64_t> units;
    if (in.pp == 1) {
        units.push_back(sh.embedding());
        for (std::uint64_t l = 0; l < sh.L; ++l)
            units.push_back(sh.layer());
        units.push_back(sh.final());
        return units;
    }
    bool embedding = false;
    for (int c = stage; c < in.chunksTotal; c += in.pp) {
        for (int l = in.bounds[static_cast<std::size_t>(c)]; l < in.bounds[static_cast<std::size_t>(c) + 1]; ++l)
            units.push_back(sh.layer());
        embedding = embedding || c == 0 || (c == in.chunksTotal - 1 && !sh.llama);
        if (c == in.chunksTotal - 1)
            units.push_back(sh.final());
    }
    if (embedding)
        units.push_back(sh.embedding());
    return units;
}

std::vector<std::uint64_t> stageSegments(const CostInputs &in, int stage)
{
    const Shapes &sh = in.sh;
    if (in.pp == 1)
        return std::vector<std::uint64_t>{in.local};
    const bool embedding = stage == 0 || (stage == in.pp - 1 && !sh.llama);
    std::uint64_t rest = 0;
    for (std::uint64_t size : stageUnits(in, stage))
        rest += size;
    if (!embedding)
        return std::vector<std::uint64_t>{rest};
    return std::vector<std::uint64_t>{sh.embedding(), rest - sh.embedding()};
}

} // namespace detail

namespace {

using detail::CommTime;
using detail::CostInputs;
using detail::PipelineTime;
using detail::Shapes;
using detail::shapesOf;

// DP reduction hidden under compute: under the last backward without a pipeline (bucketed);
// with one, the per-micro-batch reductions under its compute (ZeRO-2/3 outside trellis-trainer).
double hiddenReductionMs(const CostInputs &in, const ScheduleCosts &costs, const PipelineTime &time, double dpMs,
                         const CommTime &comm)
{
    const double lastBackward = costs.backwardInput.back() + costs.backwardWeight.back();
    double hidden = in.pp == 1 && in.p.overlapGradReduce ? std::min(dpMs, 0.8 * lastBackward * (in.bounds.back() > 0 ? 1 : 0)) : 0.0;
    if (in.pp > 1)
        hidden = std::min(*std::max_element(comm.dpOverlapOfStage.begin(), comm.dpOverlapOfStage.end()), 0.8 * time.busy);
    return hidden;
}

// The update after the reduction, the busiest stage's. Calibrated CPUs: ns a held and an owned
// parameter as measured. GPUs outside trellis-trainer: memory-bound passes at the device's
// bandwidth, bytes a parameter as Megatron-LM's (and DeepSpeed's) mixed-precision optimizer moves
// them — for every held parameter the gradient buffer zeroed; for every owned one fp16's copy of
// the gradient to fp32 (2 read + 4 written), the overflow check and the norm (4 + 4 read, or the
// norm alone in fp32), Adam (parameter, gradient and two moments read, parameter and moments
// written: 28) and the 16-bit parameter written back from the master (4 + 2). A fixed cost of
// every step whatever the batch: it weighs most in small-batch runs.
double optimizerBytesPerOwned(const CostInputs &in)
{
    if (!in.mixed)
        return 4 + 28;
    return 8 + 28 + 4 + in.paramBytes + (in.stepCopyBytes > 0 ? 2 + 4 : 0);
}

double updateMs(const CostInputs &in, const DeviceSpec &device, const Estimate &e)
{
    const bool measured = device.gradientNsPerParameter > 0 || device.optimizerNsPerParameter > 0;
    const bool bandwidth = !measured && !in.trainerLayout && device.memoryBandwidthGBps > 0;
    double ms = 0;
    for (const auto &mem : e.memory) {
        const double held = static_cast<double>(mem.parameters) / in.paramBytes;
        const double owned = static_cast<double>(mem.optimizer) / in.optBytes;
        if (bandwidth)
            ms = std::max(ms, (held * in.gradBytes + owned * optimizerBytesPerOwned(in)) / (device.memoryBandwidthGBps * 1e9) * 1e3);
        else
            ms = std::max(ms, (held * device.gradientNsPerParameter + owned * device.optimizerNsPerParameter) / 1e6);
    }
    return ms;
}

// Breakdown: compute + exposed communication (TP on the critical path, DP not hidden) + bubble;
// then the step's rates and the cost of the run.
void addStepTime(const CostInputs &in, const DeviceSpec &device, const ScheduleCosts &costs, const PipelineTime &time,
                 const CommTime &comm, Estimate &e)
{
    const ParallelSpec &p = in.p;
    const double dpMs = *std::max_element(comm.dpMsOfStage.begin(), comm.dpMsOfStage.end());
    const double hidden = hiddenReductionMs(in, costs, time, dpMs, comm);
    const double tpMs = std::min(comm.tpMs, time.busy);
    const double update = updateMs(in, device, e);
    e.computeMs = std::max(0.0, time.busy - tpMs) + update;
    e.exposedCommMs = tpMs + dpMs - hidden;
    e.stepMs = time.makespan + dpMs - hidden + update;
    if (!(e.stepMs > 0))
        e.stepMs = 1e-6;
    e.tokensPerS = e.tokensPerStep / (e.stepMs / 1000.0);
    const double world = static_cast<double>(p.worldSize());
    const double peakAll = (in.mixed ? device.peakTflopsBf16 : device.peakTflopsFp32) * 1e12 * world;
    // MFU needs a datasheet peak; a CPU's figure is a measured rate (or a placeholder), so none.
    e.mfu = peakAll > 0 && !in.cpu ? e.modelFlopsPerStep / (e.stepMs / 1000.0) / peakAll : 0.0;
    e.costPerRun = e.stepMs / 1000.0 * in.plan.training.steps / 3600.0 * world * in.plan.cluster.pricePerDeviceHour;
}

} // namespace

std::uint64_t localParameterCount(const ModelSpec &model, int tp, int ep)
{
    const Shapes s = shapesOf(model, tp, ep);
    return s.embedding() + s.L * s.layer() + s.final();
}

Estimate estimatePlan(const Plan &plan, const DeviceSpec &device, bool exact)
{
    const CostInputs in(plan, exact);
    Estimate e;
    e.framework = in.framework;
    e.flashAttention = in.flash;
    e.parametersTotal = parameterCount(plan.model);
    e.parametersActive = activeParameterCount(plan.model);
    detail::estimateMemory(in, device, e);
    detail::estimateFlops(in, e);
    const detail::Links links = detail::linksOf(in);
    ScheduleCosts costs = detail::chunkCosts(in, device, links);
    costs.transfer = detail::stageTransferMs(in, links);
    const PipelineTime time = detail::pipelineTime(in, costs, e);
    const CommTime comm = detail::estimateCollectives(in, links, e);
    addStepTime(in, device, costs, time, comm, e);
    if (exact) { // the planner's thousands of plans go without
        e.checkpoint = estimateCheckpoint(plan, device, e.stepMs, e.computeMs);
        for (Diagnostic &w : checkpointWarnings(plan, e.checkpoint))
            e.warnings.push_back(std::move(w));
    }
    return e;
}

} // namespace trellis::plan
