// See pipeline.h.
#include "backend/trainer/parallel/pipeline.h"

#include "backend/plan/mesh.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace trellis::trainer {
namespace {

double msBetween(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b)
{
    return std::chrono::duration<double, std::milli>(b - a).count();
}

} // namespace

std::vector<int> pipelineHeldUnits(const plan::ModelSpec &model, const plan::Schedule &schedule, int stage)
{
    const int p = schedule.stages, chunks = p * schedule.virtualStages, lastUnit = model.layers + 1;
    const std::vector<int> bounds = plan::stageLayerBounds(model, chunks);
    std::vector<bool> held(static_cast<std::size_t>(lastUnit) + 1, false);
    for (int c = stage; c < chunks; c += p) {
        for (int l = bounds[static_cast<std::size_t>(c)]; l < bounds[static_cast<std::size_t>(c) + 1]; ++l)
            held[static_cast<std::size_t>(l) + 1] = true;
        if (c == 0 || (c == chunks - 1 && model.arch == plan::kArchGpt)) // gpt's head is the embedding
            held[0] = true;
        if (c == chunks - 1)
            held[static_cast<std::size_t>(lastUnit)] = true;
    }
    std::vector<int> units;
    for (std::size_t u = 0; u < held.size(); ++u)
        if (held[u])
            units.push_back(static_cast<int>(u));
    return units;
}

template <typename T>
Pipeline<T>::Pipeline(const GptConfig &config, const plan::ModelSpec &model, const plan::Schedule &schedule,
                      DeviceCommunicator &pp, GradientSharding &storage, DeviceCommunicator *embedding, Recompute recompute,
                      const ModelGroups &groups, Device &device)
    : m_schedule(schedule), m_pp(pp), m_storage(storage), m_embedding(embedding), m_groups(groups), m_recompute(recompute),
      m_config(config), m_device(device)
{
    const int p = schedule.stages, v = schedule.virtualStages;
    if (pp.size() != p)
        throw std::invalid_argument("pipeline: the pipeline group has " + std::to_string(pp.size()) +
                                    " ranks, the schedule " + std::to_string(p) + " stages");
    m_chunks = p * v;
    m_bounds = plan::stageLayerBounds(model, m_chunks);
    const GptModel<T> layout(config, false);
    m_embeddingRange = {layout.units().front().begin, layout.units().front().end};
}

template <typename T>
Pipeline<T>::~Pipeline()
{
    waitSends();
}

template <typename T>
DeviceBuffer<T> &Pipeline<T>::buffer(std::map<Key, DeviceBuffer<T>> &map, const Key &key)
{
    return map.try_emplace(key, m_device).first->second;
}

template <typename T>
std::int64_t Pipeline<T>::nowNs() const
{
    // Wall clock, so spans of ranks on different hosts line up (to NTP precision) in one trace.
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

template <typename T>
GptModel<T> *Pipeline<T>::instance(int microBatch, int chunk)
{
    auto &pool = m_pool[chunk];
    std::unique_ptr<GptModel<T>> model;
    if (!pool.empty()) {
        model = std::move(pool.back());
        pool.pop_back();
    } else {
        model = std::make_unique<GptModel<T>>(m_config, false, m_device);
        model->setStage({m_bounds[chunk], m_bounds[chunk + 1], chunk == 0, chunk == m_chunks - 1});
        model->setRecompute(m_recompute);
        model->setUnitHooks(&m_storage.hooks<T>());
        m_groups.attach(*model);
    }
    GptModel<T> *raw = model.get();
    m_active[{microBatch, chunk}] = std::move(model);
    m_peakInstances = std::max(m_peakInstances, m_active.size());
    return raw;
}

template <typename T>
void Pipeline<T>::retire(int microBatch, int chunk)
{
    auto it = m_active.find({microBatch, chunk});
    if (it == m_active.end())
        throw std::logic_error("PipelineEngine: no micro-batch " + std::to_string(microBatch) + " in flight on chunk " +
                               std::to_string(chunk));
    m_pool[chunk].push_back(std::move(it->second));
    m_active.erase(it);
}

template <typename T>
std::size_t Pipeline<T>::messageCount() const
{
    // The residual stream between stages: every row, or this tp rank's rows with sequence parallelism.
    std::size_t rows = static_cast<std::size_t>(m_lastBatch) * static_cast<std::size_t>(m_lastSeqLen);
    if (m_config.tp > 1 && m_config.sequenceParallel)
        rows /= static_cast<std::size_t>(m_config.tp);
    return rows * static_cast<std::size_t>(m_config.hidden);
}

template <typename T>
int Pipeline<T>::tag(bool gradient, int microBatch, int chunk) const
{
    // Unique per message of a step; MPI guarantees tags up to 32767, Open MPI far more.
    return (gradient ? 1 : 0) + 2 * (chunk + m_chunks * microBatch);
}

template <typename T>
void Pipeline<T>::send(bool gradient, int microBatch, int chunk, int peer, const T *data)
{
    const std::size_t count = messageCount();
    PendingSend s{DeviceBuffer<T>(m_device), nullptr};
    s.buffer.assignFromDevice(data, count);
    s.handle = m_pp.sendAsync(s.buffer.data(), count, peer, tag(gradient, microBatch, chunk));
    m_sends.push_back(std::move(s));
}

template <typename T>
void Pipeline<T>::receive(bool gradient, int microBatch, int chunk, int peer)
{
    const std::size_t count = messageCount();
    DeviceBuffer<T> &target = buffer(gradient ? m_receivedGrad : m_received, {microBatch, chunk});
    target.ensure(count);
    const auto start = Clock::now();
    m_pp.recv(target.data(), count, peer, tag(gradient, microBatch, chunk));
    m_bubbleMs += msBetween(start, Clock::now());
}

template <typename T>
void Pipeline<T>::waitSends()
{
    const auto start = Clock::now();
    for (auto &s : m_sends)
        s.handle->wait();
    m_sends.clear();
    m_bubbleMs += msBetween(start, Clock::now());
}

template <typename T>
void Pipeline<T>::runForward(const plan::Action &a, const MicroBatch &mb, double &loss)
{
    const int m = m_schedule.microBatches;
    GptModel<T> *model = instance(a.microBatch, a.chunk);
    const T *input = nullptr;
    if (a.chunk > 0) {
        // From the previous chunk: received, or on this very rank (one stage, v > 1).
        auto it = m_received.find({a.microBatch, a.chunk});
        if (it != m_received.end()) {
            input = it->second.data();
        } else {
            auto local = m_active.find({a.microBatch, a.chunk - 1});
            if (local == m_active.end())
                throw std::logic_error("pipeline: forward of micro-batch " + std::to_string(a.microBatch) + " on chunk " +
                                       std::to_string(a.chunk) + " before its input arrived");
            input = local->second->output();
        }
    }
    const auto l = model->forwardStage(mb.tokens, mb.targets, input, mb.batch, mb.seqLen);
    m_received.erase({a.microBatch, a.chunk});
    if (a.chunk == m_chunks - 1)
        loss += static_cast<double>(l) / m;
}

template <typename T>
void Pipeline<T>::runBackward(const plan::Action &a, typename GptModel<T>::G scale)
{
    using plan::ActionKind;
    auto it = m_active.find({a.microBatch, a.chunk});
    if (it == m_active.end())
        throw std::logic_error("pipeline: backward of micro-batch " + std::to_string(a.microBatch) + " on chunk " +
                               std::to_string(a.chunk) + " without its forward");
    const T *dOutput = nullptr;
    if (a.chunk < m_chunks - 1) {
        auto g = m_receivedGrad.find({a.microBatch, a.chunk});
        if (g != m_receivedGrad.end()) {
            dOutput = g->second.data();
        } else {
            if (m_localGrad.count({a.microBatch, a.chunk}) == 0)
                throw std::logic_error("pipeline: backward of micro-batch " + std::to_string(a.microBatch) + " on chunk " +
                                       std::to_string(a.chunk) + " before its gradient arrived");
            dOutput = buffer(m_localGrad, {a.microBatch, a.chunk}).data();
        }
    }
    it->second->backwardStage(dOutput, scale, a.kind == ActionKind::Backward);
    m_receivedGrad.erase({a.microBatch, a.chunk});
    if (a.chunk > 0) {
        // The gradient of the chunk's input: for the previous chunk on this rank (one stage,
        // v > 1) or, copied now so the instance can be reused, for a SendGradient.
        const T *g = it->second->inputGradient();
        const std::size_t n = messageCount();
        const bool local = (a.chunk - 1) % m_schedule.stages == m_pp.rank();
        (local ? buffer(m_localGrad, {a.microBatch, a.chunk - 1}) : buffer(m_outGrad, {a.microBatch, a.chunk}))
            .assignFromDevice(g, n);
    }
    m_localGrad.erase({a.microBatch, a.chunk});
    if (a.kind == ActionKind::Backward)
        m_finished.insert({a.microBatch, a.chunk});
}

template <typename T>
void Pipeline<T>::runBackwardWeights(const plan::Action &a)
{
    auto it = m_active.find({a.microBatch, a.chunk});
    if (it == m_active.end())
        throw std::logic_error("pipeline: weight gradient of micro-batch " + std::to_string(a.microBatch) + " on chunk " +
                               std::to_string(a.chunk) + " without its backward");
    it->second->backwardWeights();
    m_finished.insert({a.microBatch, a.chunk});
}

template <typename T>
void Pipeline<T>::sendGradient(const plan::Action &a)
{
    auto g = m_outGrad.find({a.microBatch, a.chunk});
    if (g == m_outGrad.end())
        throw std::logic_error("pipeline: gradient of micro-batch " + std::to_string(a.microBatch) + " on chunk " +
                               std::to_string(a.chunk) + " sent before its backward");
    send(true, a.microBatch, a.chunk - 1, a.peer, g->second.data());
    m_outGrad.erase(g);
}

template <typename T>
void Pipeline<T>::retireFinished()
{
    // An instance is free once its gradients are complete and what it sends has been copied.
    for (auto it = m_finished.begin(); it != m_finished.end();) {
        retire(it->microBatch, it->chunk);
        it = m_finished.erase(it);
    }
}

template <typename T>
StepOutput Pipeline<T>::run(const std::vector<MicroBatch> &batches, const Phase &phase, double lossScale)
{
    using plan::ActionKind;
    m_bubbleMs = 0;
    m_spans.clear();
    if (phase)
        phase("pipeline");
    const int m = m_schedule.microBatches;
    if (static_cast<int>(batches.size()) != m)
        throw std::invalid_argument("Pipeline::runSchedule: expected " + std::to_string(m) + " micro-batches");
    using G = typename GptModel<T>::G;
    const G scale = static_cast<G>(lossScale) / static_cast<G>(m);
    double loss = 0;
    const auto &actions = m_schedule.ranks[static_cast<std::size_t>(m_pp.rank())];
    for (const plan::Action &a : actions) {
        const MicroBatch &mb = batches[static_cast<std::size_t>(a.microBatch >= 0 ? a.microBatch : 0)];
        m_lastBatch = mb.batch;
        m_lastSeqLen = mb.seqLen;
        TimelineSpan span{plan::toString(a.kind), a.microBatch, a.chunk, nowNs(), 0};
        switch (a.kind) {
        case ActionKind::Forward: runForward(a, mb, loss); break;
        case ActionKind::Backward:
        case ActionKind::BackwardInput: runBackward(a, scale); break;
        case ActionKind::BackwardWeight: runBackwardWeights(a); break;
        case ActionKind::SendActivation:
            send(false, a.microBatch, a.chunk + 1, a.peer, m_active.at({a.microBatch, a.chunk})->output());
            break;
        case ActionKind::RecvActivation: receive(false, a.microBatch, a.chunk, a.peer); break;
        case ActionKind::SendGradient: sendGradient(a); break;
        case ActionKind::RecvGradient: receive(true, a.microBatch, a.chunk, a.peer); break;
        case ActionKind::OptimizerStep: break;
        }
        span.endNs = nowNs();
        m_spans.push_back(span);
        retireFinished();
    }
    waitSends();
    if (!m_active.empty())
        throw std::logic_error("pipeline: " + std::to_string(m_active.size()) + " micro-batches still in flight after the schedule");
    StepOutput out;
    out.loss = loss;
    out.hasLoss = m_pp.rank() == m_schedule.stages - 1;
    out.bubbleMs = m_bubbleMs;
    return out;
}

template <typename T>
void Pipeline<T>::reduceGradients()
{
    // The tied embedding: its two copies' reduced gradients are summed (a + b == b + a, so the
    // copies stay bit for bit equal), laid out alike on both ends (model_state.h, sharded.h).
    if (!m_embedding || m_embedding->size() < 2 || m_config.llama) // llama's head is a tensor of its own
        return;
    const std::int64_t start = nowNs();
    for (std::span<float> g : m_storage.reducedGradients(0))
        m_embedding->allReduce(g.data(), g.data(), g.size(), ReduceOp::Sum);
    m_spans.push_back({"embedding_all_reduce", -1, -1, start, nowNs()});
}

template <typename T>
void Pipeline<T>::removeCopies(std::vector<ParamRange> &ranges) const
{
    if (m_schedule.stages < 2 || m_pp.rank() != m_schedule.stages - 1 || m_config.llama)
        return;
    std::vector<ParamRange> kept;
    for (const ParamRange &r : ranges) {
        if (r.begin < m_embeddingRange.begin)
            kept.push_back({r.begin, std::min(r.end, m_embeddingRange.begin)});
        if (r.end > m_embeddingRange.end)
            kept.push_back({std::max(r.begin, m_embeddingRange.end), r.end});
    }
    ranges = std::move(kept);
}

template <typename T>
ExpertLoad Pipeline<T>::takeExpertLoad()
{
    ExpertLoad load;
    for (auto &[chunk, pool] : m_pool)
        for (auto &model : pool)
            load.add(model->takeExpertLoad());
    for (auto &[key, model] : m_active)
        load.add(model->takeExpertLoad());
    return load;
}

template <typename T>
std::uint64_t Pipeline<T>::activationBytes() const
{
    std::uint64_t n = 0;
    for (const auto &[chunk, pool] : m_pool)
        for (const auto &model : pool)
            n += model->activationBytes();
    return n;
}

template class Pipeline<float>;
template class Pipeline<kernels::bf16>;
template class Pipeline<kernels::f16>;

} // namespace trellis::trainer
