// ZeRO stages 2 and 3 (Rajbhandari et al. 2020) over the model units this rank holds (the whole
// model, or a pipeline stage's units): every unit is padded to a multiple of the dp degree and cut
// into equal chunks; dp rank r owns chunk r of every unit — its Adam moments, its reduced
// gradients (stage 2) and, at stage 3, its parameters too.
//
// Backward: the model asks for a unit's gradient buffer (zeroed, unit-sized, transient) when it
// computes weight gradients; when the unit's gradients are final the buffer is reduce-scattered
// (non-blocking, averaged) and, once that completes, this rank's chunk is added to the gradient
// shard and the buffer freed — once per micro-batch, as in DeepSpeed's stage 2. Passes that need
// only the parameters (forward, a split backward's input half) allocate nothing.
// Stage 3: a unit's parameters are all-gathered before the model uses it and freed after; the
// next held unit in pass order is prefetched. The embeddings and the final norm ("root" units:
// the tied head needs the embedding at both ends) stay gathered until the optimizer step.
// Stage 2 keeps the held parameters whole and all-gathers each unit's updated chunks after it.
// Mixed precision: the fp32 masters are sharded like the gradients (stage 2: a master shard beside
// the whole compute copy; stage 3: the parameter shard is the masters, with a compute-copy shard
// beside it), and what is gathered is the compute copy — half the bytes of fp32.
// Threading: training thread only.
#pragma once

#include "backend/trainer/parallel/model_state.h"
#include "backend/trainer/parallel/strategy.h"

#include <chrono>
#include <deque>
#include <memory>

namespace trellis::trainer {

class Sharded final : public GradientSharding {
public:
    Sharded(DeviceCommunicator &dp, const GptModel<float> &model, const std::vector<int> &held, int stage, bool overlap,
            DType compute, DType wire = DType::F32);
    ~Sharded() override;
    const char *name() const override { return m_stage == 3 ? "zero3" : "zero2"; }

    void beginStep() override;
    void reduceGradients() override; // waits for every reduce-scatter
    void afterOptimizerStep() override;
    std::vector<OwnedRange> owned() override;
    bool shardsOverDp() const override { return true; }
    void normGroups(std::vector<plan::GroupKind> &groups) override { groups.push_back(plan::GroupKind::DpCp); }
    std::vector<std::span<float>> reducedGradients(int unit) override;
    void setParameters(const float *model) override;

    std::uint64_t parameterBytes() const override;
    std::uint64_t masterBytes() const override;
    std::uint64_t gradientBytes() const override { return m_gradShard.size() * sizeof(float); }
    std::uint64_t bufferBytes() const override { return m_peakBuffers; }
    double commMs() const override;
    double exposedMs() const override { return m_exposedMs; }

protected:
    RawView acquireRaw(int unit, Pass pass) override;
    void releaseRaw(int unit, Pass pass) override;

private:
    using Clock = std::chrono::steady_clock;
    struct UnitShard {
        bool held = false;
        std::size_t begin = 0;  // in the model index
        std::size_t size = 0;   // real elements
        std::size_t chunk = 0;  // padded size / dp
        std::size_t offset = 0; // of this rank's chunk in the shards
        std::size_t local = 0;  // in the stage-2 parameter buffer
    };
    struct Gather {
        ComputeBuffer buffer; // padded unit (compute type), valid once `handle` completed
        std::unique_ptr<CommHandle> handle;
        Clock::time_point start;
    };
    struct Reduction {
        int unit = 0;
        DeviceBuffer<float> buffer;
        std::unique_ptr<ComputeBuffer> staged; // grad_reduce bf16: the rounded copy reduced instead
        std::unique_ptr<CommHandle> handle;
        Clock::time_point start;
        bool done = false;
    };

    bool isRoot(int unit) const { return unit == 0 || unit == static_cast<int>(m_units.size()) - 1; }
    int nextHeld(int unit, int direction) const;
    void *gathered(int unit);
    void prefetch(int unit);
    void freeGathered(int unit);
    void launchReduction(int unit);
    void poll();
    void complete(Reduction &r);
    void wait(CommHandle &handle);
    void addBuffer(std::int64_t bytes);

    DeviceCommunicator &m_dp;
    int m_stage;
    bool m_overlap;
    std::vector<UnitShard> m_units;  // every model unit; held ones have shards
    std::vector<int> m_held;
    Device &m_device;
    DType m_wire;
    ModelState m_full;                // stage 2: the held units' fp32 parameters, whole (fp32 precision)
    ComputeBuffer m_copyFull;         // stage 2, mixed: the compute copy, whole
    DeviceBuffer<float> m_paramShard; // stage 3: the parameter shard (the masters); stage 2 mixed: the master shard
    ComputeBuffer m_copyShard;        // stage 3, mixed: the compute copy's shard
    DeviceBuffer<float> m_gradShard;
    std::vector<Gather> m_gathers;
    std::vector<DeviceBuffer<float>> m_unitGrads;
    std::deque<Reduction> m_reductions;
    std::int64_t m_buffers = 0;
    std::uint64_t m_peakBuffers = 0;
    double m_exposedMs = 0;
    std::vector<std::pair<Clock::time_point, Clock::time_point>> m_spans;
};

} // namespace trellis::trainer
