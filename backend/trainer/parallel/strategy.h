// What a parallelism does around forward, backward and the optimizer step (picotron's manner: one
// short file per parallelism, composed as the plan asks; parallel_stack.h composes them).
//   Strategy      — the hooks every parallelism may take part in: begin a step, make the
//                   gradients final, say which ranges another rank counts (global norm,
//                   checkpoints), name the groups the squared norm is summed over, gather after
//                   the optimizer step.
//   GradientSharding — the data-parallel family (data_parallel, zero1, sharded): where this rank's
//                   parameters and gradients live (it serves the model's unit hooks), how they are
//                   reduced over the dp group, and which ranges this rank updates.
//   Executor      — runs the micro-batches of a step through the model: sequential (gradient
//                   accumulation) or a pipeline schedule.
// Ranges are in the flat index of this rank's model (its tensor-parallel shard of the whole
// model). Threading: training thread only.
#pragma once

#include "trainer/adamw.h"
#include "trainer/comm/communicator.h"
#include "trainer/gpt_model.h"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace trellis::trainer {

// A range this rank updates, with where its parameters and reduced gradients live.
struct OwnedRange {
    ParamRange range;
    float *params = nullptr; // range.begin's parameter
    float *grads = nullptr;  // range.begin's reduced gradient
};

class Strategy {
public:
    virtual ~Strategy() = default;
    virtual const char *name() const = 0;
    virtual void beginStep() {}
    // After the step's last backward: bring the gradients to their final, reduced form.
    virtual void reduceGradients() {}
    // Removes from `ranges` what this rank holds only as a copy of what another rank counts
    // (global norm, checkpoint shards): replicated tensors on tp ranks > 0, the last stage's
    // copy of the tied embedding.
    virtual void removeCopies(std::vector<ParamRange> &ranges) const { (void)ranges; }
    // The groups the squared gradient norm is summed over, appended in order.
    virtual void normGroups(std::vector<Communicator *> &groups) { (void)groups; }
    // After the optimizer updated the owned ranges.
    virtual void afterOptimizerStep() {}
};

class GradientSharding : public Strategy, public UnitHooks<float> {
public:
    // What this rank updates (reduced gradients and their parameters), in index order.
    virtual std::vector<OwnedRange> owned() = 0;
    // Whether each dp rank owns a different part (ZeRO ≥ 1): then the norm is summed over dp and
    // every dp rank writes its part of a checkpoint; otherwise the dp replicas are copies.
    virtual bool shardsOverDp() const = 0;
    // Where unit `unit`'s reduced gradient lives on this rank once reduceGradients() ran, padding
    // included: identical spans on every rank holding the unit with the same dp coordinate.
    virtual std::vector<std::span<float>> reducedGradients(int unit) = 0;
    // The model's gradients from model offset `offset` to its end are final (early reduction).
    virtual void onGradientsReady(std::size_t offset) { (void)offset; }
    // Replaces the held parameters from a vector in this rank's model index (resume).
    virtual void setParameters(const float *model) = 0;

    virtual std::uint64_t parameterBytes() const = 0;
    virtual std::uint64_t gradientBytes() const = 0;
    virtual std::uint64_t bufferBytes() const = 0; // communication buffers (peak)
    // Time with a non-blocking reduction in flight (union) and time waited for them, this step.
    virtual double commMs() const = 0;
    virtual double exposedMs() const = 0;
};

// The groups a model instance talks over inside its layers: tensor, context and expert parallelism.
struct ModelGroups {
    Communicator *tp = nullptr;
    Communicator *cp = nullptr;
    Communicator *ep = nullptr;
    void attach(GptModel<float> &model) const
    {
        model.setTensorParallelGroup(tp);
        model.setContextParallelGroup(cp);
        model.setExpertParallelGroup(ep);
    }
};

struct MicroBatch {
    const std::int32_t *tokens = nullptr;
    const std::int32_t *targets = nullptr;
    int batch = 0;
    int seqLen = 0;
};

// A span of the measured timeline (pipeline actions, gradient collectives), wall clock in ns.
struct TimelineSpan {
    std::string name;
    int microBatch = -1;
    int chunk = -1;
    std::int64_t startNs = 0;
    std::int64_t endNs = 0;
};

struct StepOutput {
    double loss = 0;       // mean loss over the micro-batches, where this rank computes it
    bool hasLoss = false;  // false on pipeline stages without the head
    double bubbleMs = 0;   // time waiting on pipeline peers
};

class Executor {
public:
    using Phase = std::function<void(const char *)>;
    virtual ~Executor() = default;
    // Forward and backward of every micro-batch of a step; gradients accumulate with weight 1/m.
    virtual StepOutput run(const std::vector<MicroBatch> &batches, const Phase &phase) = 0;
    virtual std::uint64_t activationBytes() const = 0;
    virtual const std::vector<TimelineSpan> &spans() const = 0;
    // The mixture-of-experts routing statistics of the step's forwards (empty for a dense model).
    virtual ExpertLoad takeExpertLoad() = 0;
};

} // namespace trellis::trainer
