// Pipeline parallelism: this rank's model chunks, their parameter storage, and the executor of
// the schedule's action lists (backend/plan/schedule.h) — the same lists the cost model
// simulates and the GUI draws. The model is cut into pp·v chunks of whole layers
// (plan::stageLayerBounds); chunk c runs on pipeline rank c mod pp, the first chunk also holds
// the embeddings and the last the final norm and the tied head, so the embedding matrix lives on
// the first and the last stage and their gradients are summed between the two each step
// (Megatron's embedding group).
//
// Each micro-batch in flight on a chunk gets its own model instance (its own activations); all
// instances of the rank share one set of parameters and gradients through the unit hooks.
// Activations and their gradients travel with non-blocking sends and blocking receives; the time
// spent waiting in receives is the measured bubble. Every executed action becomes a span for the
// timeline. Data parallelism over the pipeline replicas (ZeRO 0: all-reduce; ZeRO 1:
// reduce-scatter, sharded AdamW, all-gather) runs unit by unit after the schedule.
// Threading: training thread only.
#pragma once

#include "plan/plan.h"
#include "plan/schedule.h"
#include "trainer/adamw.h"
#include "trainer/communicator.h"
#include "trainer/gpt_model.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace trellis::trainer {

struct PipelineSpan {
    std::string name; // the action (plan::toString) or the collective: "embedding_all_reduce", "dp_all_reduce", ...
    int microBatch = -1;
    int chunk = -1;
    std::int64_t startNs = 0; // wall clock (system_clock), nanoseconds
    std::int64_t endNs = 0;
};

class PipelineEngine final : public UnitHooks<float> {
public:
    // pp: this rank's pipeline group (rank = stage); dp: its data-parallel group (same stage).
    // `reference` holds the initialised full model (its parameters are copied, not kept).
    // tp: the tensor-parallel group the stage's model instances all-reduce over (null without tp).
    PipelineEngine(const GptModel<float> &reference, const plan::ModelSpec &model, const plan::Schedule &schedule,
                   Communicator &pp, Communicator &dp, int zero, bool recompute, Communicator *tp = nullptr);
    ~PipelineEngine() override;

    // Runs one step's action lists up to the optimizer step. batches[mb] gives micro-batch mb's
    // tokens and targets (only the first stage reads tokens, only the last targets). Returns the
    // sum of the micro-batch losses / m on the last stage, 0 elsewhere.
    struct MicroBatch {
        const std::int32_t *tokens = nullptr;
        const std::int32_t *targets = nullptr;
        int batch = 0;
        int seqLen = 0;
    };
    double runSchedule(const std::vector<MicroBatch> &batches);
    // Sums the tied embedding's gradient between the first and the last stage and reduces every
    // unit over the DP group (all-reduce, or reduce-scatter at ZeRO-1).
    void reduceGradients();
    // After the optimizer updated the owned ranges: ZeRO-1 all-gathers the parameters.
    void afterOptimizerStep();

    // What the optimizer updates: ranges of the full parameter index with a pointer each into
    // this rank's storage. The embedding is owned by both end stages (each updates its copy
    // identically); normRanges leaves the last stage's copy out so the global norm counts it once.
    const std::vector<ParamRange> &owned() const { return m_owned; }
    std::vector<float *> ownedParameters();
    std::vector<const float *> ownedGradients() const;
    std::vector<std::span<float>> normSpans();
    std::vector<std::span<float>> ownedGradientSpans();
    std::vector<float> ownedParameterValues() const;
    void setParameters(const float *full);
    // Full parameters / gradients on every rank, gathered over `peers` (the ranks with this rank's
    // tp coordinate); with tp the result is this tp rank's shard layout (GptModel::gatherWhole
    // turns it into the whole model's).
    std::vector<float> gatherParameters(Communicator &world);
    std::vector<float> gatherGradients(Communicator &world);

    // This step's measurements (bubble: time waiting to receive from pipeline peers and for
    // sends to drain; spans: every action executed).
    double bubbleMs() const { return m_bubbleMs; }
    double reduceMs() const { return m_reduceMs; }
    const std::vector<PipelineSpan> &spans() const { return m_spans; }
    std::size_t peakInFlight() const { return m_peakInstances; }
    std::uint64_t parameterBytes() const;
    std::uint64_t gradientBytes() const;
    std::uint64_t activationBytes() const;
    std::uint64_t bufferBytes() const { return m_peakBufferBytes; }

    UnitHooks<float>::View acquire(int unit, Pass pass) override;
    void release(int, Pass) override {}

private:
    using Clock = std::chrono::steady_clock;
    struct UnitStore {
        std::size_t begin = 0, size = 0, chunk = 0; // chunk: padded size / dp
        std::vector<float> params, grads;           // padded to a multiple of dp
    };
    struct Key {
        int microBatch, chunk;
        bool operator<(const Key &o) const { return microBatch != o.microBatch ? microBatch < o.microBatch : chunk < o.chunk; }
    };
    GptModel<float> *instance(int microBatch, int chunk); // takes one from the chunk's pool
    void retire(int microBatch, int chunk);
    int tag(bool gradient, int microBatch, int chunk) const;
    std::size_t messageCount() const;
    void send(bool gradient, int microBatch, int chunk, int peer, const float *data);
    void receive(bool gradient, int microBatch, int chunk, int peer);
    void waitSends();
    std::int64_t nowNs() const;

    const plan::Schedule &m_schedule;
    Communicator &m_pp;
    Communicator &m_dp;
    Communicator *m_tp;
    int m_zero;
    bool m_recompute;
    GptConfig m_config;
    std::size_t m_parameterCount;
    int m_chunks = 0; // pp · v
    std::vector<int> m_bounds;
    std::vector<UnitStore> m_units; // indexed by model unit; empty stores are not held here
    std::vector<int> m_heldUnits;
    std::vector<ParamRange> m_owned;
    std::vector<std::pair<int, std::size_t>> m_ownedAt; // (unit, offset in its store)
    std::vector<bool> m_countInNorm;
    std::vector<ParamRange> m_skipInNorm; // replicated tensors another tp rank counts
    std::map<int, std::vector<std::unique_ptr<GptModel<float>>>> m_pool; // free instances per chunk
    std::map<Key, std::unique_ptr<GptModel<float>>> m_active;
    std::size_t m_instances = 0, m_peakInstances = 0;
    std::map<Key, std::vector<float>> m_received; // activations (F) and gradients (B) by target
    std::map<Key, std::vector<float>> m_receivedGrad;
    struct PendingSend {
        std::vector<float> buffer;
        std::unique_ptr<CommHandle> handle;
    };
    std::vector<PendingSend> m_sends;
    std::uint64_t m_peakBufferBytes = 0;
    double m_bubbleMs = 0, m_reduceMs = 0;
    std::vector<PipelineSpan> m_spans;
    int m_lastBatch = 0, m_lastSeqLen = 0;           // shape of the micro-batch being worked on
    std::map<Key, std::vector<float>> m_localGrad;   // input gradients handed to a chunk on this rank
    std::map<Key, std::vector<float>> m_outGrad;     // input gradients waiting for their SendGradient
    std::set<Key> m_finished;                         // instances whose gradients are complete
};

} // namespace trellis::trainer
