// The parallel strategies a plan asks for, composed (picotron's manner): the data-parallel family
// member that stores the parameters and reduces the gradients (data_parallel, zero1, sharded),
// the executor that runs the micro-batches (sequential, or the pipeline), and tensor parallelism.
// The trainer's step loop talks to this stack only, and the stack runs each phase over its
// strategies in order (dp, pp, tp), so no code outside parallel/ branches on a kind of
// parallelism. Ranges called "whole" are in the whole model's index (tp = 1 layout): checkpoints
// and dumps use it, so they are independent of the parallel layout. The plan's precision picks the
// model's element type (float, bf16, f16): the executor and its model instances are built for it,
// and the storage keeps fp32 masters and the compute copy (strategy.h); everything this stack
// hands the optimizer, the norm and checkpoints is fp32.
// Threading: training thread only.
#pragma once

#include "backend/plan/plan.h"
#include "backend/plan/schedule.h"
#include "backend/trainer/comm/process_groups.h"
#include "backend/trainer/parallel/outer_sync.h"
#include "backend/trainer/parallel/strategy.h"
#include "backend/trainer/parallel/tensor_parallel.h"

#include <memory>
#include <optional>
#include <vector>

namespace trellis::trainer {

class DataParallel;

struct StackOptions {
    bool overlap = true; // start bucket reductions during backward
};

// A piece of what this rank writes to a checkpoint: a whole-model range, its parameters and the
// offset of its optimizer moments in the compact owned order.
struct CheckpointPiece {
    ParamRange whole;
    const float *params = nullptr;
    std::size_t moment = 0;
};

// With local updates (parallel.dp_sync) every dp replica trains its own copy between outer steps:
// which replica this rank is, and the outer optimizer's counters, as checkpoints keep them.
// replica -1: every-step training (one copy of everything).
struct ReplicaState {
    int replica = -1;
    int replicas = 0;
    std::string dpSync; // "local_sgd", "diloco"; empty for every-step training
    std::uint64_t innerSteps = 0, outerSteps = 0;
};

// The dense model a plan's model section describes (no parallelism, no experts).
GptConfig modelConfigOf(const plan::ModelSpec &model);
// The model a rank of `plan` holds: tp rank tpRank's slice (and cp, ep ranks'); all 0: the whole model.
GptConfig configOf(const plan::Plan &plan, int tpRank = 0, int cpRank = 0, int epRank = 0);

class ParallelStack {
public:
    // Builds the model from plan.training.seed (the same on every layout) and the strategies.
    // Throws TrainerError for a plan the stack cannot build (e.g. an invalid schedule).
    ParallelStack(const plan::Plan &plan, ProcessGroups &groups, const StackOptions &options);
    ~ParallelStack();

    const GptConfig &config() const { return m_config; }
    DType computeType() const { return m_storage->computeType(); }
    Device &device() const { return *m_device; }
    std::uint64_t parameterCount() const { return m_localCount; } // this rank's model
    std::uint64_t wholeParameterCount() const { return m_whole.wholeCount(); }
    // This rank's model's tensors (names, offsets) in model order.
    const std::vector<ParamTensor> &tensors() const { return m_tensors; }
    // Fault injection: a NaN in this rank's copy of `tensor` (its first element this rank owns).
    bool poison(const std::string &tensor);
    // Weight decay per element of this rank's model index (matrices, not biases, gains or wpe).
    std::vector<bool> decayMask() const;

    // The step.
    void beginStep();
    // lossScale multiplies the loss before backward (fp16's dynamic loss scale; 1 otherwise).
    StepOutput run(const std::vector<MicroBatch> &batches, const Executor::Phase &phase, double lossScale = 1.0);
    void reduceGradients();
    // The mean loss over the global batch from this rank's part (0 where it has no head; collective).
    double globalLoss(double local);
    double gradientNorm();                    // the global L2 norm of the reduced gradients (collective)
    // Multiplies the reduced gradients this rank updates by `factor` (fp16: 1 / loss scale).
    void scaleGradients(double factor);
    std::vector<OwnedRange> owned() { return m_storage->owned(); }
    void afterOptimizerStep();

    // Measurements.
    std::uint64_t parameterBytes() const { return m_storage->parameterBytes(); }
    std::uint64_t masterBytes() const { return m_storage->masterBytes(); }
    std::uint64_t gradientBytes() const { return m_storage->gradientBytes(); }
    std::uint64_t bufferBytes() const { return m_storage->bufferBytes(); }
    // Local updates and gradient compression: the dp traffic so far (all 0 otherwise).
    DpTraffic dpTraffic() const;
    // Gradient compression, for the log: "grad compression powersgd: …"; empty without it.
    std::string compressionNote() const;
    // How the device's collectives run, for the log (ProcessGroups::placeOn); empty on the CPU.
    const std::string &placementNote() const { return m_placement; }
    std::uint64_t activationBytes() const { return m_executor->activationBytes(); }
    double asyncCommMs() const { return m_storage->commMs(); }
    double asyncExposedMs() const { return m_storage->exposedMs(); }
    const std::vector<TimelineSpan> &spans() const { return m_executor->spans(); }
    ExpertLoad takeExpertLoad() { return m_executor->takeExpertLoad(); }
    // Optimizer state the strategies keep beside AdamW's (local updates: the anchor and DiLoCo's
    // momentum), in bytes; 0 without.
    std::uint64_t strategyOptimizerBytes() const;
    // What happened to the strategies' state in the last step that a run's events should say
    // (local updates: "diloco outer step 3: the replicas' parameters averaged ..."); empty when
    // nothing. Each note is handed out once.
    std::string takeStepNote();
    // Local updates: this rank's replica (its dp rank), whose own state it checkpoints; -1 otherwise.
    int replica();
    ReplicaState replicaState();
    // Local updates: the outer state of a piece this rank writes (the anchor, DiLoCo's momentum),
    // appended to `anchor` and `momentum`; nothing for every-step training.
    void outerStateOf(const CheckpointPiece &piece, std::vector<float> &anchor, std::vector<float> &momentum) const;
    // Local updates: the outer state of every range this rank owns, in ownedWhole()'s order (a
    // checkpoint's), and the outer counters. Nothing when the checkpoint was written by every-step
    // training (saved.replica -1: a local-update run may start from one) or the run has no local updates.
    void restoreOuterState(const ReplicaState &saved, const std::vector<float> &anchor, const std::vector<float> &momentum);
    // Checkpoints: this rank's own state beyond its ranges (PowerSGD's error feedback and Q), as
    // bytes; empty when it has none. restoreOwnState returns "" or why it restarts that state
    // (nothing saved, or saved for another layout or rank) — never an error: it is the
    // compression's memory, not the model's.
    std::string ownState() const;
    std::string restoreOwnState(const std::string &saved);

    // Checkpoints: what this rank writes (each whole element by exactly one rank; with local
    // updates by one rank of every replica, whose copies differ), what it needs
    // back (every owned range, whole, in the optimizer's compact order), and the parameters from
    // a whole-model vector.
    std::vector<CheckpointPiece> checkpointPieces();
    std::vector<ParamRange> ownedWhole();
    void setParameters(const std::vector<float> &whole);
    // The whole model's parameters or reduced gradients on every rank (collective over the world).
    std::vector<float> gatherParameters();
    // Keeps this rank's part of the reduced gradients now (before clipping); gatherCapturedGradients
    // assembles the whole vector later (collective).
    void captureGradients();
    std::vector<float> gatherCapturedGradients();

private:
    // Calls visit(whole range, owned range, offset in it, moment offset of the owned range) for
    // every range this rank writes (checkpoints, dumps): each whole element by exactly one rank.
    // The data-parallel storage (ZeRO 0: local updates, gradient compression); null otherwise.
    DataParallel *dataParallel() const;
    const OuterSync *outerSync() const; // local updates; null otherwise
    OuterSync *outerSync();
    // everyReplica: each dp replica's own copy too (local-update checkpoints).
    template <typename Visit>
    void forEachWritten(Visit visit, bool everyReplica = false);
    std::vector<std::pair<ParamRange, float *>> canonical(bool gradients); // whole range, its values
    // Whole-model vector from pieces in device memory (collective).
    std::vector<float> assemble(const std::vector<std::pair<ParamRange, const float *>> &pieces);

    ProcessGroups &m_groups;
    Device *m_device;
    GptConfig m_config;
    std::uint64_t m_localCount = 0;
    WholeIndex m_whole;
    std::vector<bool> m_decay;
    std::vector<ParamTensor> m_tensors;
    int m_lossRanks = 1; // ranks that compute the loss: the world / pp
    std::optional<plan::Schedule> m_schedule;
    std::unique_ptr<GradientSharding> m_storage;
    std::unique_ptr<Executor> m_executor;
    std::vector<Strategy *> m_strategies; // phase order: dp, pp, tp
    std::vector<std::unique_ptr<Strategy>> m_owned;
    class ContextParallel *m_context = nullptr; // cp > 1: cuts each micro-batch to this rank's tokens
    std::vector<std::pair<ParamRange, DeviceBuffer<float>>> m_captured;
    std::uint64_t m_outerStepsNoted = 0; // local updates: the outer steps takeStepNote() has told of
    std::string m_placement; // how the device communicators were placed (NCCL, staged), for the start line
};

} // namespace trellis::trainer
