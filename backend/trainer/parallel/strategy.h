// What a parallelism does around forward, backward and the optimizer step (picotron's manner: one
// short file per parallelism, composed as the plan asks; parallel_stack.h composes them).
//   Strategy      — the hooks every parallelism may take part in: begin a step, make the
//                   gradients final, say which ranges another rank counts (global norm,
//                   checkpoints), name the groups the squared norm is summed over, gather after
//                   the optimizer step.
//   GradientSharding — the data-parallel family (data_parallel, zero1, sharded): where this rank's
//                   parameters and gradients live (it serves the model's unit hooks), how they are
//                   reduced over the dp group, and which ranges this rank updates. In mixed
//                   precision it keeps the fp32 master weights of the ranges it updates and the
//                   16-bit compute copy the model reads (precision/compute_copy.h), and makes the
//                   copy from the masters after each optimizer step, sharded and gathered as its
//                   ZeRO stage shards and gathers the parameters.
//   Executor      — runs the micro-batches of a step through the model: sequential (gradient
//                   accumulation) or a pipeline schedule.
// Ranges are in the flat index of this rank's model (its tensor-parallel shard of the whole
// model). Threading: training thread only.
#pragma once

#include "backend/plan/mesh.h"
#include "backend/trainer/optimizer/adamw.h"
#include "backend/trainer/comm/communicator.h"
#include "backend/trainer/model/gpt_model.h"
#include "backend/trainer/precision/compute_copy.h"

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <type_traits>
#include <span>
#include <string>
#include <vector>

namespace trellis::trainer {

// Data-parallel traffic where it is not the whole gradients every step (local updates, gradient
// compression), so far in the run, this rank's: payload bytes handed to all-reduces over dp, and
// what reducing every gradient whole every step (in parallel.grad_reduce's type) would have.
struct DpTraffic {
    std::uint64_t outerSteps = 0, bytes = 0, denseBytes = 0;
};

// A range this rank updates, with where its fp32 parameters (the master weights in mixed
// precision) and reduced gradients live.
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
    // The groups the squared gradient norm (a host value) is summed over, appended in order.
    virtual void normGroups(std::vector<plan::GroupKind> &groups) { (void)groups; }
    // After the optimizer updated the owned ranges.
    virtual void afterOptimizerStep() {}
};

class GradientSharding : public Strategy {
public:
    // compute: the element type the model computes in — F32 (the model reads the fp32 parameters
    // themselves), BF16 or F16 (it reads a compute copy of them).
    explicit GradientSharding(DType compute) : m_compute(compute) {}
    DType computeType() const { return m_compute; }
    bool mixed() const { return isMixed(m_compute); }
    // The unit hooks for a model of element type T (T must be the compute type).
    template <typename T>
    UnitHooks<T> &hooks();

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

    virtual std::uint64_t parameterBytes() const = 0; // what the model reads (the compute copy when mixed)
    virtual std::uint64_t masterBytes() const = 0;    // fp32 master weights beside it (0 in fp32)
    virtual std::uint64_t gradientBytes() const = 0;
    virtual std::uint64_t bufferBytes() const = 0; // communication buffers (peak)
    // Time with a non-blocking reduction in flight (union) and time waited for them, this step.
    virtual double commMs() const = 0;
    virtual double exposedMs() const = 0;

protected:
    // A unit's parameters (of the compute type) and gradient buffer, as UnitHooks<T> hands them out.
    struct RawView {
        void *params = nullptr;
        float *grads = nullptr;
    };
    virtual RawView acquireRaw(int unit, Pass pass) = 0;
    virtual void releaseRaw(int unit, Pass pass) = 0;

private:
    template <typename T>
    class Hooks final : public UnitHooks<T> {
    public:
        explicit Hooks(GradientSharding &owner) : m_owner(owner) {}
        typename UnitHooks<T>::View acquire(int unit, Pass pass) override
        {
            const RawView raw = m_owner.acquireRaw(unit, pass);
            return {static_cast<T *>(raw.params), raw.grads};
        }
        void release(int unit, Pass pass) override { m_owner.releaseRaw(unit, pass); }

    private:
        GradientSharding &m_owner;
    };
    DType m_compute;
    Hooks<float> m_f32{*this};
    Hooks<kernels::bf16> m_bf16{*this};
    Hooks<kernels::f16> m_f16{*this};
};

template <typename T>
UnitHooks<T> &GradientSharding::hooks()
{
    if (kernels::dtypeOf<T>() != m_compute)
        throw std::logic_error(std::string("GradientSharding: a ") + kernels::toString(kernels::dtypeOf<T>()) +
                               " model on " + kernels::toString(m_compute) + " parameters");
    if constexpr (std::is_same_v<T, float>)
        return m_f32;
    else if constexpr (std::is_same_v<T, kernels::bf16>)
        return m_bf16;
    else
        return m_f16;
}

// The groups a model instance talks over inside its layers: tensor, context and expert
// parallelism (and the host sides of tp and ep for host values).
struct ModelGroups {
    DeviceCommunicator *tp = nullptr;
    DeviceCommunicator *cp = nullptr;
    DeviceCommunicator *ep = nullptr;
    HostCommunicator *tpHost = nullptr;
    HostCommunicator *epHost = nullptr;
    template <typename T>
    void attach(GptModel<T> &model) const
    {
        model.setTensorParallelGroup(tp, tpHost);
        model.setContextParallelGroup(cp);
        model.setExpertParallelGroup(ep, epHost);
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
    // Forward and backward of every micro-batch of a step; gradients accumulate with weight
    // lossScale/m (lossScale: fp16's dynamic loss scale, else 1).
    virtual StepOutput run(const std::vector<MicroBatch> &batches, const Phase &phase, double lossScale) = 0;
    virtual std::uint64_t activationBytes() const = 0;
    virtual const std::vector<TimelineSpan> &spans() const = 0;
    // The mixture-of-experts routing statistics of the step's forwards (empty for a dense model).
    virtual ExpertLoad takeExpertLoad() = 0;
};

} // namespace trellis::trainer
