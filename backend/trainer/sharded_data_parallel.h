// ZeRO stages 2 and 3 (Rajbhandari et al. 2020) over the model's units (gpt_model.h: embeddings,
// each layer, final norm). Every unit is padded to a multiple of the DP degree and cut into equal
// chunks; rank r owns chunk r of every unit: the Adam moments of it (as in ZeRO-1), its reduced
// gradients (stage 2) and, at stage 3, its parameters too.
//
// Backward: the model asks for a unit's gradient buffer (zeroed, unit-sized, transient); when the
// unit's gradients are final the buffer is reduce-scattered (non-blocking, averaged) and, once
// that completes, this rank's chunk is added to the persistent gradient shard and the buffer
// freed. With micro-batches this happens once per micro-batch, as in DeepSpeed's stage 2.
// Stage 3 forward and backward: a unit's parameters are all-gathered before the model uses it
// and freed after; the next unit in pass order is prefetched while the current one computes.
// The embeddings and the final norm (the "root" units: the tied head needs the embeddings at the
// end of forward and the start of backward) stay gathered until the optimizer step.
// Stage 2 keeps full parameters and all-gathers each unit's updated chunks after the step.
//
// The optimizer sees what a rank owns as ranges of the full parameter index (the same ranges
// ZeRO-1 would hold for the same chunks), with one pointer per range into the shards, so
// checkpoints record the same ranges at every stage and reshard between stages and DP degrees.
// Threading: training thread only.
#pragma once

#include "trainer/adamw.h"
#include "trainer/communicator.h"
#include "trainer/gpt_model.h"

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <vector>

namespace trellis::trainer {

class ShardedDataParallel final : public UnitHooks<float> {
public:
    // Installs itself as the model's unit hooks and frees the model's flat gradients (and, at
    // stage 3, its flat parameters) after taking this rank's chunks of the current parameters.
    // overlap = false waits for each reduce-scatter as soon as it starts (no overlap).
    ShardedDataParallel(Communicator &dp, GptModel<float> &model, int stage, bool overlap);
    ~ShardedDataParallel() override;
    ShardedDataParallel(const ShardedDataParallel &) = delete;
    ShardedDataParallel &operator=(const ShardedDataParallel &) = delete;

    int stage() const { return m_stage; }
    // Replaces the parameters with `full` (parameterCount values; resume).
    void setParameters(const float *full);
    // The full parameters or reduced gradients on every rank (all-gathered): dumps and tests.
    std::vector<float> gatherParameters();
    std::vector<float> gatherGradients();

    void beginStep();
    View acquire(int unit, Pass pass) override;
    void release(int unit, Pass pass) override;
    // Waits for every reduce-scatter: the gradient shard is complete.
    void finishBackward();
    // After the optimizer updated the owned chunks: stage 2 all-gathers the full parameters,
    // stage 3 drops the (now stale) gathered root units.
    void afterOptimizerStep();

    const std::vector<ParamRange> &owned() const { return m_owned; }
    std::vector<float *> ownedParameters();
    std::vector<const float *> ownedGradients() const;
    std::vector<std::span<float>> ownedGradientSpans();
    std::vector<float> ownedParameterValues() const; // the owned ranges, concatenated

    // Bytes this rank holds persistently per category, and the peak of transient buffers
    // (gathered units, unit gradient buffers in flight, staging) since construction.
    std::uint64_t parameterBytes() const;
    std::uint64_t gradientBytes() const { return m_gradShard.size() * sizeof(float); }
    std::uint64_t peakBufferBytes() const { return m_peakBuffers; }
    // comm_ms: union of the intervals during which a non-blocking gather or reduce was in flight;
    // exposed: time spent waiting for them.
    double commMs() const;
    double exposedMs() const { return m_exposedMs; }

private:
    using Clock = std::chrono::steady_clock;
    struct UnitShard {
        std::size_t begin = 0;  // in the full parameter index
        std::size_t size = 0;   // real elements
        std::size_t chunk = 0;  // padded size / dp
        std::size_t offset = 0; // of this rank's chunk in the shards
    };
    struct Gather {
        std::vector<float> buffer; // padded unit, valid once `handle` completed
        std::unique_ptr<CommHandle> handle;
        Clock::time_point start;
    };
    struct Reduction {
        int unit = 0;
        std::vector<float> buffer;
        std::unique_ptr<CommHandle> handle;
        Clock::time_point start;
        bool done = false;
    };

    bool isRoot(int unit) const { return unit == 0 || unit == static_cast<int>(m_units.size()) - 1; }
    float *gathered(int unit);      // stage 3: waits for / issues the gather of `unit`
    void prefetch(int unit);
    void freeGathered(int unit);
    void launchReduction(int unit);
    void poll();                    // completes finished reductions in launch order
    void complete(Reduction &r);
    void wait(CommHandle &handle);
    void addBuffer(std::int64_t bytes);
    void addSpan(Clock::time_point a, Clock::time_point b) { m_spans.emplace_back(a, b); }

    Communicator &m_dp;
    GptModel<float> &m_model;
    int m_stage;
    bool m_overlap;
    std::vector<UnitShard> m_units;
    std::vector<ParamRange> m_owned;
    std::vector<std::size_t> m_ownedShardOffset; // where owned range i starts in the shards
    std::vector<float> m_paramShard;             // stage 3
    std::vector<float> m_gradShard;
    std::vector<Gather> m_gathers;               // per unit (stage 3)
    std::vector<std::vector<float>> m_unitGrads; // per unit: the buffer backward adds into
    std::deque<Reduction> m_reductions;
    std::int64_t m_buffers = 0;
    std::uint64_t m_peakBuffers = 0;
    double m_exposedMs = 0;
    std::vector<std::pair<Clock::time_point, Clock::time_point>> m_spans;
};

} // namespace trellis::trainer
