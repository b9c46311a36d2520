// The cost model (docs/architecture.md §5): for a validated plan, per pipeline stage (ranks of one stage hold
// the same up to their ZeRO chunk) the bytes held by category, the FLOPs, the communication per
// group and collective, the pipeline bubble from the schedule simulator, and from them the step
// time, tokens/s, MFU and the cost of the run. No Qt; the CLI, the GUI and the planner share it.
//
// Memory follows trellis-trainer's own accounting exactly on a CPU cluster (fp32 parameters,
// gradients and the two Adam moments; ZeRO chunks of padded buckets or units; tensor-parallel
// shards; pipeline stages with the tied embedding on both ends; one set of activations per
// micro-batch in flight as the schedule's lists keep them). On GPUs, which the trainer does not
// run yet, activations follow a Megatron-LM-style implementation in the plan's precision
// (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
// §4: 34·s·b·h + 5·a·s²·b bytes a layer in 16-bit, generalised to the ffn width, grouped-query
// attention, SwiGLU, experts, sequence and context parallelism and the recompute policy).
// The collectives a rank issues (group, operation, bytes, calls) are those trellis-trainer records
// for the plan, per stage. Time is a roofline: GEMM FLOPs at the device's GEMM efficiency, plus
// the element-wise passes over activations at its memory bandwidth (GPUs), collectives at
// latency + bytes × the nccl-tests bus factor / link bandwidth of the tier the group spans,
// TP, CP and EP collectives on the critical path, pipeline transfers in the schedule simulation,
// DP gradient reduction overlapped with the last backward when overlap_grad_reduce is on.
#pragma once

#include "backend/plan/plan.h"
#include "backend/plan/result.h"
#include "backend/plan/schedule.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace trellis::plan {

// A device's figures. Peak TFLOP/s are dense (no sparsity); the CPU's come from calibration.
struct DeviceSpec {
    std::string name;
    double peakTflopsFp32 = 0;
    double peakTflopsBf16 = 0;
    double memoryGB = 0;
    double efficiency = 0.5;       // achieved / peak for the model's GEMMs
    double memoryBandwidthGBps = 0; // achievable HBM bandwidth for element-wise passes; 0: not modelled (CPU)
    // The step's update outside forward and backward, ns a parameter (calibrated CPUs; 0: not
    // modelled): gradient zeroing and norm over the parameters a rank holds, AdamW over those it owns.
    double gradientNsPerParameter = 0;
    double optimizerNsPerParameter = 0;
    // Checkpoints: a rank's copy of its state into host staging buffers (GB/s a rank, every rank
    // at once; a GPU's device-to-host copy) and a node's write of its ranks' shards (GB/s a node,
    // durable: fsync'd). Datasheet-free defaults; `trellis-cli calibrate` measures a CPU machine's.
    double hostCopyGBps = 0;
    double diskWriteGBps = 0;
};
// Known devices by gpu_model ("H100-SXM", "A100-SXM", "A100-PCIe", "H200-SXM") and "cpu".
DeviceSpec deviceFor(const ClusterSpec &cluster);

struct StageMemory {
    int stage = 0;
    // parameters: what the model reads (16-bit copies in trellis-trainer's mixed precision);
    // masterWeights: trellis-trainer's fp32 masters beside them (0 in fp32, and for Megatron-LM and
    // DeepSpeed accounting, which count their masters with the optimizer states).
    std::uint64_t parameters = 0, masterWeights = 0, gradients = 0, optimizer = 0, activations = 0, commBuffers = 0;
    // Alive only during the optimizer step, when the activations are freed: Megatron-LM's fp32
    // copies of fp16 gradients.
    std::uint64_t optimizerStep = 0;
    std::uint64_t total() const { return parameters + masterWeights + gradients + optimizer + activations + commBuffers; }
    // The most held at once: during forward and backward, or during the optimizer step.
    std::uint64_t peak() const { return std::max(total(), total() - activations + optimizerStep); }
};

struct CollectiveEstimate {
    std::string group; // "tp", "cp", "ep", "dp", "pp", "world"
    std::string op;    // "all_reduce", "reduce_scatter", "all_gather", "all_to_all", "send", "recv"
    std::uint64_t bytes = 0; // a step's total over its calls, per rank (nccl-tests convention, as CollectiveStats)
    int callsPerStep = 0;
    double msPerStep = 0;
    bool interNode = false;
    int stage = -1; // the pipeline stage whose ranks issue it; -1: every rank alike
};

// The gradient all-reduce of the data-parallel group under each algorithm (parallel.allreduce):
// a step's predicted time of its calls (a latency–bandwidth model per link tier, collective_model.h),
// the one that runs and why. Empty group: the plan has no such all-reduce (one replica, ZeRO's
// reduce-scatters).
struct AllReduceOption {
    AllReduceAlgorithm algorithm = AllReduceAlgorithm::Auto;
    double msPerStep = 0;
};
struct AllReduceChoice {
    std::string group;       // "dp" or "dp_cp"
    int ranks = 0;           // the group's size
    int nodes = 1;           // the nodes its members are on
    int perNode = 0;         // its members on each node; 0: different numbers on different nodes
    double callsPerStep = 0; // buckets (and the scalars sharing the group)
    double bytesPerCall = 0;
    std::vector<AllReduceOption> options; // auto, ring, recursive_doubling, hierarchical
    AllReduceAlgorithm chosen = AllReduceAlgorithm::Auto;  // the plan's
    AllReduceAlgorithm fastest = AllReduceAlgorithm::Auto; // the lowest predicted time
    std::string why;         // one line: what runs and what the others would cost
    double msOf(AllReduceAlgorithm a) const
    {
        for (const auto &o : options)
            if (o.algorithm == a)
                return o.msPerStep;
        return 0;
    }
};

// What a checkpoint costs (training.checkpoint; trellis-trainer's saves, backend/trainer/checkpoint):
// every element of the model's state is written by one rank (by one rank of each replica with
// local updates) — the parameters, both Adam moments, and with local updates the anchor and
// DiLoCo's momentum, all fp32 — spread as the trainer spreads it (ZeRO: each dp rank its 1/dp;
// without: the first dp rank of each tp × pp position). Async saves copy a rank's part into host
// staging buffers kept between saves (training waits for the copy) and write it behind training;
// sync saves make training wait for the write too.
struct CheckpointEstimate {
    bool enabled = false;
    int every = 0;                               // training.checkpoint.every
    CheckpointMode mode = CheckpointMode::Async; // as the run will save: the plan's, or the default resolved
    std::string modeWhy;                         // why the default resolved to sync ("" otherwise)
    std::uint64_t bytesPerSave = 0;              // every rank's shard, summed
    std::uint64_t mostBytesPerRank = 0;
    std::uint64_t mostBytesPerNode = 0;          // what the busiest node writes a save
    std::uint64_t stagingBytesPerNode = 0;       // host memory the staging buffers take there (async; 0 with sync)
    double hostMemoryGB = 0;                     // a node's (cluster.host_memory_gb; 0: not known to the plan)
    double copyMs = 0;                           // the busiest rank's copy into its staging buffers
    bool copyBehind = false; // async on CPUs: the copy overlaps the next step's forward and backward
    double writeMs = 0;                          // the busiest node's durable write
    // Training's wait a save: sync the copy and the write; async the copy (behind: what outlasts
    // the next step's forward and backward), and with when_busy wait the part of the write that
    // outlasts the steps to the next save.
    double blockMs = 0;
    double writeWaitMs = 0; // of it, the write waited for (async, when_busy wait)
    double overheadFraction = 0;                 // blockMs over the steps between saves (every × step)
    // Async saves with when_busy skip whose write outlasts the steps to the next save skip the
    // saves due meanwhile: one lands every this many steps (else every).
    int landsEvery = 0;
    // In-memory checkpoints (training.checkpoint.memory; memoryEvery 0: none): the host memory the
    // busiest node's memory store takes — its own shards and, on several nodes, the previous
    // node's copy (peerCopy). On one node there is no copy on another: a lost node's state comes
    // from the disk. peerBytesPerSave: what the busiest node sends the next a save; peerCopyMs: that
    // at the inter-node bandwidth; peerShare: the fraction of that bandwidth over the steps
    // between in-memory saves it takes (the holders send beside the run's own traffic).
    int memoryEvery = 0, memoryKeep = 0;
    std::uint64_t memoryBytesPerNode = 0;
    bool peerCopy = false;
    std::uint64_t peerBytesPerSave = 0;
    double peerCopyMs = 0, peerShare = 0;
};
// The checkpoint estimate alone (estimatePlan fills Estimate::checkpoint); stepMs: the step time
// the overhead is measured against (0: not given); overlapMs: the forward and backward a copy made
// behind training overlaps (Estimate::computeMs; 0: none, the copy blocks whole).
CheckpointEstimate estimateCheckpoint(const Plan &plan, const DeviceSpec &device, double stepMs = 0, double overlapMs = 0);
// training.checkpoint.mode as a run saves: the plan's when it names one; else async, unless the
// staging buffers would take more than half a node's host memory (hostMemoryGB, or the plan's
// cluster.host_memory_gb when 0; unknown: async) — then sync, and `why` says so.
CheckpointMode resolvedCheckpointMode(const Plan &plan, double hostMemoryGB = 0, std::string *why = nullptr);
// The validation warning for that (empty: none): the default resolved to sync, or an explicit
// async whose staging buffers would not leave half of a node's host memory. The second form
// judges by an estimate's busiest node instead of working the spread out again.
Diagnostics checkpointWarnings(const Plan &plan);
Diagnostics checkpointWarnings(const Plan &plan, const CheckpointEstimate &estimate);

struct Estimate {
    std::vector<StageMemory> memory; // per pipeline stage, DP rank 0 and TP rank 0
    std::uint64_t parametersTotal = 0;
    std::uint64_t parametersActive = 0; // a token's path: top_k experts of a mixture
    double modelFlopsPerStep = 0;    // 3 × (layers' and head's forward) per token × tokens (Narayanan et al. 2021)
    double hardwareFlopsPerStep = 0; // with recompute's extra forward
    std::vector<CollectiveEstimate> collectives;
    AllReduceChoice allReduce; // the data-parallel gradient all-reduce, per algorithm
    double computeMs = 0;       // the busiest rank's F/B/W time
    double bubbleMs = 0;        // pipeline idle of that rank
    double bubbleFraction = 0;  // from the schedule simulator
    // The simulated step of the pipeline (pp > 1 and exact): per pipeline rank, its actions with
    // start and end in ms from the step's start, and each stage's idle share of the makespan.
    std::vector<std::vector<TimedAction>> timeline;
    std::vector<double> stageBubbleFraction;
    double exposedCommMs = 0;   // TP on the critical path + the part of DP not hidden
    double stepMs = 0;
    double tokensPerStep = 0;
    double tokensPerS = 0;
    double mfu = 0;             // model FLOPs / datasheet peak; 0 on CPUs, which have none
    double costPerRun = 0;      // steps × step time × devices × price per device-hour
    Diagnostics warnings;       // memory that does not fit, named by stage and category
    CheckpointEstimate checkpoint;          // training.checkpoint's cost (enabled false: no checkpoints)
    Framework framework = Framework::Trellis; // whose accounting the memory follows (resolved from auto)
    bool flashAttention = false;              // the attention kernel assumed (resolved from auto)

    // The most any rank holds (its stage's total).
    std::uint64_t peakMemory() const
    {
        std::uint64_t most = 0;
        for (const auto &m : memory)
            most = std::max(most, m.peak());
        return most;
    }
};

// The plan must have passed validatePlan. Never NaN or infinite for such a plan. exact = true
// generates and simulates the plan's schedule (the bubble, and the activations each stage keeps
// per the lists); false uses closed forms instead — the planner's fast path for thousands of plans.
Estimate estimatePlan(const Plan &plan, const DeviceSpec &device, bool exact = true);

// Whether trellis-trainer runs the plan's model in its own layout: CPU nodes, a dense model (gpt
// or llama, grouped-query attention included; context parallelism included).
bool runsOnTrainer(const Plan &plan);
// parallel.framework with auto resolved: trellis where runsOnTrainer, else Megatron-LM, or
// DeepSpeed at ZeRO stages 2 and 3.
Framework resolvedFramework(const Plan &plan);
// parallel.attention with auto resolved: flash on GPU nodes, materialized on CPUs.
AttentionKernel resolvedAttention(const Plan &plan);
// One line naming the accounting: "Megatron-LM: bf16 parameters, fp32 main gradients, …".
std::string accountingSummary(const Plan &plan);

// Per-rank parameter count for a tensor-parallel degree (tp shards of the vocabulary, heads and
// MLP width; everything else replicated) and an expert-parallel degree (ep shards the experts).
std::uint64_t localParameterCount(const ModelSpec &model, int tp, int ep = 1);

} // namespace trellis::plan
