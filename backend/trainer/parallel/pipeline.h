// Pipeline parallelism: the executor of the schedule's action lists (backend/plan/schedule.h) —
// the same lists the cost model simulates and the GUI draws — and what a pipeline adds around the
// optimizer step. The model is cut into pp·v chunks of whole layers (plan::stageLayerBounds);
// chunk c runs on pipeline rank c mod pp; the first chunk also holds the embeddings and the last
// the final norm and the tied head, so the embedding matrix lives on the first and the last
// stage and their reduced gradients are summed over the embedding group each step (Megatron's
// embedding group); the last stage's copy counts neither in the norm nor in checkpoints.
//
// Each micro-batch in flight on a chunk gets its own model instance (its own activations); all
// instances share the rank's parameters and gradients through the data-parallel strategy's unit
// hooks, so dp, ZeRO-1 and ZeRO-2/3 compose with the pipeline unchanged. Templated on the model's
// element type T: activations and their gradients travel in T, with non-blocking sends and
// blocking receives; the time spent waiting in
// receives and for sends to drain is the measured bubble. Every executed action is a span.
// Threading: training thread only.
#pragma once

#include "backend/plan/plan.h"
#include "backend/plan/schedule.h"
#include "backend/trainer/parallel/strategy.h"

#include <chrono>
#include <map>
#include <memory>
#include <set>

namespace trellis::trainer {

// The model units pipeline rank `stage` holds: its chunks' layers, the embeddings on the first
// and the last stage (the head is tied), the final norm on the last.
std::vector<int> pipelineHeldUnits(const plan::ModelSpec &model, const plan::Schedule &schedule, int stage);

template <typename T>
class Pipeline final : public Strategy, public Executor {
public:
    // pp: this rank's pipeline group (rank = stage); storage: the data-parallel strategy whose
    // hooks every model instance uses; embedding: the embedding group (null on middle stages);
    // groups: the tensor- and context-parallel groups the instances talk over.
    Pipeline(const GptConfig &config, const plan::ModelSpec &model, const plan::Schedule &schedule, DeviceCommunicator &pp,
             GradientSharding &storage, DeviceCommunicator *embedding, Recompute recompute, const ModelGroups &groups,
             Device &device);
    ~Pipeline() override;
    const char *name() const override { return "pipeline"; }

    // Executor
    StepOutput run(const std::vector<MicroBatch> &batches, const Phase &phase, double lossScale) override;
    std::uint64_t activationBytes() const override;
    ExpertLoad takeExpertLoad() override;
    const std::vector<TimelineSpan> &spans() const override { return m_spans; }

    // Strategy: the tied embedding's reduced gradients summed over the embedding group; the last
    // stage's copy left out of the norm and the checkpoint; the norm summed over the pipeline.
    void reduceGradients() override;
    void removeCopies(std::vector<ParamRange> &ranges) const override;
    void normGroups(std::vector<plan::GroupKind> &groups) override { groups.push_back(plan::GroupKind::Pp); }

    std::size_t peakInFlight() const { return m_peakInstances; }

private:
    using Clock = std::chrono::steady_clock;
    struct Key {
        int microBatch, chunk;
        bool operator<(const Key &o) const { return microBatch != o.microBatch ? microBatch < o.microBatch : chunk < o.chunk; }
    };
    GptModel<T> *instance(int microBatch, int chunk);
    void retire(int microBatch, int chunk);
    int tag(bool gradient, int microBatch, int chunk) const;
    std::size_t messageCount() const;
    void send(bool gradient, int microBatch, int chunk, int peer, const T *data);
    void receive(bool gradient, int microBatch, int chunk, int peer);
    void waitSends();
    std::int64_t nowNs() const;
    // The schedule's actions: a forward (its share of the loss into `loss` on the last chunk), a
    // backward (whole, or its input half), a weight-gradient half, a gradient sent back.
    void runForward(const plan::Action &a, const MicroBatch &mb, double &loss);
    void runBackward(const plan::Action &a, typename GptModel<T>::G scale);
    void runBackwardWeights(const plan::Action &a);
    void sendGradient(const plan::Action &a);
    void retireFinished(); // instances whose gradients are complete go back to their pool

    const plan::Schedule &m_schedule;
    DeviceCommunicator &m_pp;
    GradientSharding &m_storage;
    DeviceCommunicator *m_embedding;
    ModelGroups m_groups;
    Recompute m_recompute;
    GptConfig m_config;
    int m_chunks = 0; // pp · v
    std::vector<int> m_bounds;
    ParamRange m_embeddingRange; // unit 0 in the model index
    std::map<int, std::vector<std::unique_ptr<GptModel<T>>>> m_pool; // free instances per chunk
    std::map<Key, std::unique_ptr<GptModel<T>>> m_active;
    std::size_t m_peakInstances = 0;
    // Activation and gradient messages live in device buffers of the rank's device.
    DeviceBuffer<T> &buffer(std::map<Key, DeviceBuffer<T>> &map, const Key &key);
    Device &m_device;
    std::map<Key, DeviceBuffer<T>> m_received; // activations (F) and gradients (B) by target
    std::map<Key, DeviceBuffer<T>> m_receivedGrad;
    struct PendingSend {
        DeviceBuffer<T> buffer;
        std::unique_ptr<CommHandle> handle;
    };
    std::vector<PendingSend> m_sends;
    double m_bubbleMs = 0;
    std::vector<TimelineSpan> m_spans;
    int m_lastBatch = 0, m_lastSeqLen = 0;         // shape of the micro-batch being worked on
    std::map<Key, DeviceBuffer<T>> m_localGrad; // input gradients handed to a chunk on this rank
    std::map<Key, DeviceBuffer<T>> m_outGrad;   // input gradients waiting for their SendGradient
    std::set<Key> m_finished;                       // instances whose gradients are complete
};

} // namespace trellis::trainer
