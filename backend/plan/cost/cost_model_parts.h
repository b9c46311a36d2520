// The cost model's parts (internal to backend/plan), which estimatePlan runs in order: memory per
// stage (cost_model_memory.cpp), FLOPs and each chunk's compute time (cost_model_compute.cpp), the
// pipeline schedule and its bubble (cost_model_schedule.cpp), the collectives each stage's ranks
// issue (cost_model_comm.cpp); cost_model.cpp derives the plan's figures they share and adds the
// step time up.
#pragma once

#include "backend/plan/cost/cost_model.h"
#include "backend/plan/cost/layout_model.h"
#include "backend/plan/schedule.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace trellis::plan::detail {

// The plan's figures every part reads, derived once.
struct CostInputs {
    CostInputs(const Plan &plan, bool exact);

    const Plan &plan;
    const ModelSpec &m;
    const ParallelSpec &p;
    bool exact = true; // simulate the generated schedule (false: closed forms, the planner's fast path)
    int tp = 1, pp = 1, cp = 1, ep = 1, v = 1;
    // Gradients are reduced, and ZeRO shards, over the data- and context-parallel ranks together.
    int dp = 1;
    Shapes sh;
    bool mixed = false;
    Framework framework = Framework::Trellis;
    bool flash = false;
    bool megatron = false;
    // Bytes a parameter of the model states outside trellis-trainer's own layout (trainerLayout,
    // whose fp32 gradients are counted where it is). Mixed precision: DeepSpeed keeps 16-bit
    // parameters and gradients and fp32 master weights with the two moments, 2 + 2 + 12
    // (Rajbhandari et al. 2020, K = 12). Megatron-LM keeps main gradients in fp32 with bf16 (2 + 4
    // + 12 = 18; 6 + 12/dp with its distributed optimizer; bf16 forces
    // accumulate_allreduce_grads_in_fp32) and with fp16 its gradient buffer in fp16 (the flag's
    // default): 2 + 2 + 12 = 16, 4 + 12/dp. fp32 everywhere: 4 + 4 + 8.
    double paramBytes = 4, gradBytes = 4, optBytes = 8;
    // Megatron-LM with fp16 copies each owned gradient to fp32 at the optimizer step
    // (main_param.grad = main_grad.float()) and frees the copies when the next step zeroes the
    // gradients, before its forward: 4 bytes an owned parameter alive while the activations are
    // not. Its distributed-optimizer table counts them in (20, 4 + 16/dp): the step's peak.
    double stepCopyBytes = 0;
    double elem = 4; // bytes of an activation or gradient element
    // trellis-trainer's mixed precision (parallel/strategy.h): activations and the parameters the
    // model reads in 16 bits, fp32 gradients, master weights and moments, statistics and softmaxes.
    std::uint64_t tBytes = 4;
    std::uint64_t local = 0; // parameters of a tp (and ep) rank
    bool sp = false;
    bool dropout = false;
    double topK = 1;
    bool cpu = true;
    // trellis-trainer's own layout where it runs the plan's model; a Megatron-style one otherwise.
    bool trainerLayout = false;
    // Megatron-LM's pipeline without sequence parallelism sends each tp rank's 1/tp of the
    // activations between stages and all-gathers them over the tp group on arrival (Narayanan et
    // al. 2021 §4.1, the scatter/gather optimisation).
    bool scatterGather = false;
    bool split = false;     // zb-h1 over a pipeline: weight gradients run apart
    bool recompute = false; // full recompute
    // Rows of a micro-batch on one rank (bt) and, with sequence parallelism, of its share (rows).
    std::uint64_t bt = 0, rows = 0;
    bool moe = false;
    std::uint64_t choices = 1;
    // Rows a mixture-of-experts layer sends (and, balanced, receives) per micro-batch.
    std::uint64_t moeRows = 0;
    double B = 0;        // bt as a double
    double rowBytes = 0; // a micro-batch's hidden states, all rows
    double kvBytes = 0;  // k and v a layer gathers over the context-parallel group
    double a2aBytes = 0; // the rows a layer sends to their experts
    // Layer bounds of the chunks (pp · v of them; one without a pipeline) and, exact, the schedule.
    std::vector<int> bounds;
    std::optional<Schedule> schedule;
    int chunksTotal = 1;

    int layersOf(int chunk) const
    {
        return bounds[static_cast<std::size_t>(chunk) + 1] - bounds[static_cast<std::size_t>(chunk)];
    }
    std::uint64_t padded(std::uint64_t size) const; // a unit padded to a multiple of dp
};

// Units a stage holds, as the trainer cuts them: the embedding (on the first chunk, and tied on
// the last with the gpt architecture), each layer, the final norm (with llama's head).
std::vector<std::uint64_t> stageUnits(const CostInputs &in, int stage);
// The stage's local buffer segments (ZeRO 0/1): the tied embedding apart when a pipeline's end
// stage holds it, the rest together.
std::vector<std::uint64_t> stageSegments(const CostInputs &in, int stage);

// PowerSGD's matrices on a stage (parallel.grad_compression; trainer/parallel/powersgd.h): the
// elements of its factors (every P and Q), of the matrices (their error feedback), and of the
// largest matrix (its scratch).
struct PowerSgdShapes {
    std::uint64_t factors = 0, matrixElements = 0, largest = 0;
};
PowerSgdShapes powerSgdShapes(const CostInputs &in, int stage);

// Memory: e.memory per stage, and a warning for each stage that does not fit the device.
void estimateMemory(const CostInputs &in, const DeviceSpec &device, Estimate &e);

// FLOPs: e.tokensPerStep, e.modelFlopsPerStep, e.hardwareFlopsPerStep.
void estimateFlops(const CostInputs &in, Estimate &e);

// Which link each group's collectives cross. Rank order tp, cp, dp, pp (mesh.h): a group leaves
// the node when its span does.
struct Links {
    int perNode = 1;
    bool tpInter = false, cpInter = false, dpInter = false, ppInter = false, epInter = false;
    LinkSpec intra, inter;
    const LinkSpec &tp() const { return tpInter ? inter : intra; }
    const LinkSpec &cp() const { return cpInter ? inter : intra; }
    const LinkSpec &ep() const { return epInter ? inter : intra; }
    const LinkSpec &dp() const { return dpInter ? inter : intra; }
    const LinkSpec &pp() const { return ppInter ? inter : intra; }
};
Links linksOf(const CostInputs &in);

// Per micro-batch costs of each chunk, ms, for the schedule simulator: GEMM FLOPs at the device's
// efficiency, element-wise passes at its memory bandwidth, and the TP, CP and EP collectives on
// the critical path; with the transfer between stages.
ScheduleCosts chunkCosts(const CostInputs &in, const DeviceSpec &device, const Links &links);
// A transfer between stages (send and receive of one micro-batch's activations), ms.
double stageTransferMs(const CostInputs &in, const Links &links);

// The pipeline: the schedule simulated (exact, and small enough) or the closed-form fill and
// drain; sets e.bubbleFraction, e.bubbleMs and, exact, e.timeline and e.stageBubbleFraction.
struct PipelineTime {
    double makespan = 0; // the step's compute and bubble
    double busy = 0;     // the busiest stage's compute
};
PipelineTime pipelineTime(const CostInputs &in, const ScheduleCosts &costs, Estimate &e);

// The collectives each stage's ranks issue in a step (e.collectives), as trellis-trainer records
// them, and the communication time the step pays for.
struct CommTime {
    std::vector<double> dpMsOfStage;      // data-parallel reductions after the backward
    std::vector<double> dpOverlapOfStage; // of those, what runs under later micro-batches' compute
    double tpMs = 0;                      // the busiest stage's tensor-parallel collectives
};
CommTime estimateCollectives(const CostInputs &in, const Links &links, Estimate &e);

} // namespace trellis::plan::detail
