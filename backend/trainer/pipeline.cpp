// See pipeline.h.
#include "trainer/pipeline.h"

#include "plan/mesh.h"

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

PipelineEngine::PipelineEngine(const GptModel<float> &reference, const plan::ModelSpec &model,
                               const plan::Schedule &schedule, Communicator &pp, Communicator &dp, int zero, bool recompute,
                               Communicator *tp)
    : m_schedule(schedule), m_pp(pp), m_dp(dp), m_tp(tp), m_zero(zero), m_recompute(recompute),
      m_config(reference.config()), m_parameterCount(reference.parameterCount())
{
    if (zero > 1)
        throw std::invalid_argument("PipelineEngine: ZeRO stage 2 and 3 are not available with pipeline parallelism");
    const int p = schedule.stages, v = schedule.virtualStages, stage = pp.rank();
    if (pp.size() != p)
        throw std::invalid_argument("PipelineEngine: the pipeline group has " + std::to_string(pp.size()) +
                                    " ranks, the schedule " + std::to_string(p) + " stages");
    m_chunks = p * v;
    m_bounds = plan::stageLayerBounds(model, m_chunks);
    const int lastUnit = m_config.layers + 1;

    // Units this rank holds: its chunks' layers, the embeddings on the first and last chunk's
    // ranks (the head is tied), the final norm with the last chunk.
    std::vector<bool> held(static_cast<std::size_t>(lastUnit) + 1, false);
    for (int c = stage; c < m_chunks; c += p) {
        for (int l = m_bounds[c]; l < m_bounds[c + 1]; ++l)
            held[static_cast<std::size_t>(l) + 1] = true;
        if (c == 0 || c == m_chunks - 1)
            held[0] = true;
        if (c == m_chunks - 1)
            held[static_cast<std::size_t>(lastUnit)] = true;
    }
    const auto n = static_cast<std::size_t>(dp.size());
    const auto r = static_cast<std::size_t>(dp.rank());
    const auto &units = reference.units();
    m_units.resize(units.size());
    const bool firstStage = stage == 0;
    for (std::size_t u = 0; u < units.size(); ++u) {
        if (!held[u])
            continue;
        UnitStore &s = m_units[u];
        s.begin = units[u].begin;
        s.size = units[u].size();
        s.chunk = (s.size + n - 1) / n;
        s.params.assign(s.chunk * n, 0.0f);
        s.grads.assign(s.chunk * n, 0.0f);
        std::copy_n(reference.parameters().begin() + static_cast<long>(s.begin), s.size, s.params.begin());
        m_heldUnits.push_back(static_cast<int>(u));
        // ZeRO-1: this rank's chunk of the unit; otherwise all of it.
        const std::size_t from = zero == 1 ? std::min(s.size, r * s.chunk) : 0;
        const std::size_t to = zero == 1 ? std::min(s.size, (r + 1) * s.chunk) : s.size;
        if (from < to) {
            m_owned.push_back({s.begin + from, s.begin + to});
            m_ownedAt.emplace_back(static_cast<int>(u), from);
            // The embedding held by both end stages counts once in the global norm: on the first.
            m_countInNorm.push_back(u != 0 || firstStage || p == 1);
        }
    }
    // With tensor parallelism the tensors every tp rank holds alike count on the first tp rank only.
    for (std::size_t i = 0; i < reference.tensors().size(); ++i)
        if (m_config.tp > 1 && m_config.tpRank > 0 && reference.isReplicated(i))
            m_skipInNorm.push_back({reference.tensors()[i].offset, reference.tensors()[i].offset + reference.tensors()[i].size});
}

PipelineEngine::~PipelineEngine()
{
    waitSends();
}

UnitHooks<float>::View PipelineEngine::acquire(int unit, Pass)
{
    UnitStore &s = m_units[static_cast<std::size_t>(unit)];
    if (s.params.empty())
        throw std::logic_error("PipelineEngine: unit " + std::to_string(unit) + " is not held by this stage");
    return {s.params.data(), s.grads.data()};
}

std::int64_t PipelineEngine::nowNs() const
{
    // Wall clock, so spans of ranks on different hosts line up (to NTP precision) in one trace.
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

GptModel<float> *PipelineEngine::instance(int microBatch, int chunk)
{
    auto &pool = m_pool[chunk];
    std::unique_ptr<GptModel<float>> model;
    if (!pool.empty()) {
        model = std::move(pool.back());
        pool.pop_back();
    } else {
        model = std::make_unique<GptModel<float>>(m_config);
        model->releaseFlatParameters();
        model->releaseFlatGradients();
        model->setStage({m_bounds[chunk], m_bounds[chunk + 1], chunk == 0, chunk == m_chunks - 1});
        model->setRecompute(m_recompute);
        model->setUnitHooks(this);
        model->setTensorParallelGroup(m_tp);
        ++m_instances;
    }
    GptModel<float> *raw = model.get();
    m_active[{microBatch, chunk}] = std::move(model);
    m_peakInstances = std::max(m_peakInstances, m_active.size());
    return raw;
}

void PipelineEngine::retire(int microBatch, int chunk)
{
    auto it = m_active.find({microBatch, chunk});
    if (it == m_active.end())
        throw std::logic_error("PipelineEngine: no micro-batch " + std::to_string(microBatch) + " in flight on chunk " +
                               std::to_string(chunk));
    m_pool[chunk].push_back(std::move(it->second));
    m_active.erase(it);
}

std::size_t PipelineEngine::messageCount() const
{
    // The residual stream between stages: every row, or this tp rank's rows with sequence parallelism.
    std::size_t rows = static_cast<std::size_t>(m_lastBatch) * static_cast<std::size_t>(m_lastSeqLen);
    if (m_config.tp > 1 && m_config.sequenceParallel)
        rows /= static_cast<std::size_t>(m_config.tp);
    return rows * static_cast<std::size_t>(m_config.hidden);
}

int PipelineEngine::tag(bool gradient, int microBatch, int chunk) const
{
    // Unique per message of a step; MPI guarantees tags up to 32767, Open MPI far more.
    return (gradient ? 1 : 0) + 2 * (chunk + m_chunks * microBatch);
}

void PipelineEngine::send(bool gradient, int microBatch, int chunk, int peer, const float *data)
{
    const std::size_t count = messageCount();
    PendingSend s;
    s.buffer.assign(data, data + count);
    s.handle = m_pp.sendAsync(s.buffer.data(), count, DataType::F32, peer, tag(gradient, microBatch, chunk));
    m_sends.push_back(std::move(s));
}

void PipelineEngine::receive(bool gradient, int microBatch, int chunk, int peer)
{
    const std::size_t count = messageCount();
    auto &target = (gradient ? m_receivedGrad : m_received)[{microBatch, chunk}];
    target.resize(count);
    const auto start = Clock::now();
    m_pp.recv(target.data(), count, DataType::F32, peer, tag(gradient, microBatch, chunk));
    m_bubbleMs += msBetween(start, Clock::now());
}

void PipelineEngine::waitSends()
{
    const auto start = Clock::now();
    for (auto &s : m_sends)
        s.handle->wait();
    m_sends.clear();
    m_bubbleMs += msBetween(start, Clock::now());
}

double PipelineEngine::runSchedule(const std::vector<MicroBatch> &batches)
{
    using plan::ActionKind;
    m_bubbleMs = 0;
    m_spans.clear();
    for (int u : m_heldUnits)
        std::fill(m_units[static_cast<std::size_t>(u)].grads.begin(), m_units[static_cast<std::size_t>(u)].grads.end(), 0.0f);
    const int m = m_schedule.microBatches;
    if (static_cast<int>(batches.size()) != m)
        throw std::invalid_argument("PipelineEngine::runSchedule: expected " + std::to_string(m) + " micro-batches");
    const float scale = 1.0f / static_cast<float>(m);
    double loss = 0;
    const auto &actions = m_schedule.ranks[static_cast<std::size_t>(m_pp.rank())];
    for (const plan::Action &a : actions) {
        const MicroBatch &mb = batches[static_cast<std::size_t>(a.microBatch >= 0 ? a.microBatch : 0)];
        m_lastBatch = mb.batch;
        m_lastSeqLen = mb.seqLen;
        PipelineSpan span{plan::toString(a.kind), a.microBatch, a.chunk, nowNs(), 0};
        switch (a.kind) {
        case ActionKind::Forward: {
            GptModel<float> *model = instance(a.microBatch, a.chunk);
            const float *input = nullptr;
            if (a.chunk > 0) {
                // From the previous chunk: received, or on this very rank (one stage, v > 1).
                auto it = m_received.find({a.microBatch, a.chunk});
                if (it != m_received.end()) {
                    input = it->second.data();
                } else {
                    auto local = m_active.find({a.microBatch, a.chunk - 1});
                    if (local == m_active.end())
                        throw std::logic_error("pipeline: forward of micro-batch " + std::to_string(a.microBatch) +
                                               " on chunk " + std::to_string(a.chunk) + " before its input arrived");
                    input = local->second->output();
                }
            }
            const float l = model->forwardStage(mb.tokens, mb.targets, input, mb.batch, mb.seqLen);
            m_received.erase({a.microBatch, a.chunk});
            if (a.chunk == m_chunks - 1)
                loss += static_cast<double>(l) / m;
            break;
        }
        case ActionKind::Backward:
        case ActionKind::BackwardInput: {
            auto it = m_active.find({a.microBatch, a.chunk});
            if (it == m_active.end())
                throw std::logic_error("pipeline: backward of micro-batch " + std::to_string(a.microBatch) +
                                       " on chunk " + std::to_string(a.chunk) + " without its forward");
            const float *dOutput = nullptr;
            if (a.chunk < m_chunks - 1) {
                auto g = m_receivedGrad.find({a.microBatch, a.chunk});
                if (g != m_receivedGrad.end()) {
                    dOutput = g->second.data();
                } else {
                    if (m_localGrad.count({a.microBatch, a.chunk}) == 0)
                        throw std::logic_error("pipeline: backward of micro-batch " + std::to_string(a.microBatch) +
                                               " on chunk " + std::to_string(a.chunk) + " before its gradient arrived");
                    dOutput = m_localGrad[{a.microBatch, a.chunk}].data();
                }
            }
            it->second->backwardStage(dOutput, scale, a.kind == ActionKind::Backward);
            m_receivedGrad.erase({a.microBatch, a.chunk});
            if (a.chunk > 0) {
                // The gradient of the chunk's input: for the previous chunk on this rank (one stage,
                // v > 1) or, copied now so the instance can be reused, for a SendGradient.
                const float *g = it->second->inputGradient();
                const std::size_t n = messageCount();
                const bool local = (a.chunk - 1) % m_schedule.stages == m_pp.rank();
                (local ? m_localGrad[{a.microBatch, a.chunk - 1}] : m_outGrad[{a.microBatch, a.chunk}]).assign(g, g + n);
            }
            m_localGrad.erase({a.microBatch, a.chunk});
            if (a.kind == ActionKind::Backward)
                m_finished.insert({a.microBatch, a.chunk});
            break;
        }
        case ActionKind::BackwardWeight: {
            auto it = m_active.find({a.microBatch, a.chunk});
            if (it == m_active.end())
                throw std::logic_error("pipeline: weight gradient of micro-batch " + std::to_string(a.microBatch) +
                                       " on chunk " + std::to_string(a.chunk) + " without its backward");
            it->second->backwardWeights();
            m_finished.insert({a.microBatch, a.chunk});
            break;
        }
        case ActionKind::SendActivation:
            send(false, a.microBatch, a.chunk + 1, a.peer, m_active.at({a.microBatch, a.chunk})->output());
            break;
        case ActionKind::RecvActivation:
            receive(false, a.microBatch, a.chunk, a.peer);
            break;
        case ActionKind::SendGradient: {
            auto g = m_outGrad.find({a.microBatch, a.chunk});
            if (g == m_outGrad.end())
                throw std::logic_error("pipeline: gradient of micro-batch " + std::to_string(a.microBatch) + " on chunk " +
                                       std::to_string(a.chunk) + " sent before its backward");
            send(true, a.microBatch, a.chunk - 1, a.peer, g->second.data());
            m_outGrad.erase(g);
            break;
        }
        case ActionKind::RecvGradient:
            receive(true, a.microBatch, a.chunk, a.peer);
            break;
        case ActionKind::OptimizerStep:
            break;
        }
        span.endNs = nowNs();
        m_spans.push_back(span);
        // An instance is free once its gradients are complete and what it sends has been copied.
        for (auto it = m_finished.begin(); it != m_finished.end();) {
            retire(it->microBatch, it->chunk);
            it = m_finished.erase(it);
        }
    }
    waitSends();
    if (!m_active.empty())
        throw std::logic_error("pipeline: " + std::to_string(m_active.size()) + " micro-batches still in flight after the schedule");
    return loss;
}

void PipelineEngine::reduceGradients()
{
    const auto start = Clock::now();
    const int p = m_schedule.stages;
    // The tied embedding: first and last stage exchange their gradients and both add them in the
    // same order (first + last), so the two copies stay bit for bit equal.
    if (p > 1 && (m_pp.rank() == 0 || m_pp.rank() == p - 1)) {
        const std::int64_t spanStart = nowNs();
        UnitStore &e = m_units[0];
        std::vector<float> other(e.grads.size());
        const int peer = m_pp.rank() == 0 ? p - 1 : 0;
        auto handle = m_pp.sendAsync(e.grads.data(), e.grads.size(), DataType::F32, peer, 1 << 20);
        m_pp.recv(other.data(), other.size(), DataType::F32, peer, 1 << 20);
        handle->wait();
        for (std::size_t i = 0; i < other.size(); ++i)
            e.grads[i] = m_pp.rank() == 0 ? e.grads[i] + other[i] : other[i] + e.grads[i];
        m_spans.push_back({"embedding_all_reduce", -1, -1, spanStart, nowNs()});
    }
    const std::int64_t dpStart = nowNs();
    for (int u : m_heldUnits) {
        UnitStore &s = m_units[static_cast<std::size_t>(u)];
        if (m_zero == 1)
            m_dp.reduceScatter(s.grads.data(), s.grads.data(), s.chunk, DataType::F32, ReduceOp::Avg);
        else
            m_dp.allReduce(s.grads.data(), s.grads.data(), s.grads.size(), DataType::F32, ReduceOp::Avg);
    }
    if (m_dp.size() > 1)
        m_spans.push_back({m_zero == 1 ? "dp_reduce_scatter" : "dp_all_reduce", -1, -1, dpStart, nowNs()});
    m_reduceMs = msBetween(start, Clock::now());
}

void PipelineEngine::afterOptimizerStep()
{
    if (m_zero != 1)
        return;
    const std::size_t r = static_cast<std::size_t>(m_dp.rank());
    for (int u : m_heldUnits) {
        UnitStore &s = m_units[static_cast<std::size_t>(u)];
        m_dp.allGather(s.params.data() + r * s.chunk, s.params.data(), s.chunk, DataType::F32);
    }
}

std::vector<float *> PipelineEngine::ownedParameters()
{
    std::vector<float *> out;
    for (const auto &[u, offset] : m_ownedAt)
        out.push_back(m_units[static_cast<std::size_t>(u)].params.data() + offset);
    return out;
}

std::vector<const float *> PipelineEngine::ownedGradients() const
{
    std::vector<const float *> out;
    for (const auto &[u, offset] : m_ownedAt)
        out.push_back(m_units[static_cast<std::size_t>(u)].grads.data() + offset);
    return out;
}

std::vector<std::span<float>> PipelineEngine::normSpans()
{
    std::vector<std::span<float>> out;
    for (std::size_t i = 0; i < m_owned.size(); ++i) {
        if (!m_countInNorm[i])
            continue;
        float *base = m_units[static_cast<std::size_t>(m_ownedAt[i].first)].grads.data() + m_ownedAt[i].second;
        // The owned range minus the tensors another tp rank counts (m_skipInNorm is sorted).
        std::size_t at = m_owned[i].begin;
        for (const ParamRange &skip : m_skipInNorm) {
            if (skip.end <= at || skip.begin >= m_owned[i].end)
                continue;
            if (skip.begin > at)
                out.emplace_back(base + (at - m_owned[i].begin), skip.begin - at);
            at = std::max(at, skip.end);
        }
        if (at < m_owned[i].end)
            out.emplace_back(base + (at - m_owned[i].begin), m_owned[i].end - at);
    }
    return out;
}

std::vector<std::span<float>> PipelineEngine::ownedGradientSpans()
{
    std::vector<std::span<float>> out;
    for (std::size_t i = 0; i < m_owned.size(); ++i)
        out.emplace_back(m_units[static_cast<std::size_t>(m_ownedAt[i].first)].grads.data() + m_ownedAt[i].second,
                         m_owned[i].end - m_owned[i].begin);
    return out;
}

std::vector<float> PipelineEngine::ownedParameterValues() const
{
    std::vector<float> out;
    for (std::size_t i = 0; i < m_owned.size(); ++i) {
        const float *p = m_units[static_cast<std::size_t>(m_ownedAt[i].first)].params.data() + m_ownedAt[i].second;
        out.insert(out.end(), p, p + (m_owned[i].end - m_owned[i].begin));
    }
    return out;
}

void PipelineEngine::setParameters(const float *full)
{
    for (int u : m_heldUnits) {
        UnitStore &s = m_units[static_cast<std::size_t>(u)];
        std::copy_n(full + s.begin, s.size, s.params.begin());
    }
}

namespace {

// Assembles a full vector on every rank from the ranges each rank holds. Where several ranks hold
// a range (DP replicas, the embedding on both end stages) they hold identical values, so the sum
// over holders divided by their count — in double, exact for a few equal floats — is that value.
std::vector<float> assemble(Communicator &world, std::size_t count,
                            const std::vector<std::pair<std::size_t, std::span<const float>>> &pieces)
{
    std::vector<double> sum(count, 0.0), holders(count, 0.0);
    for (const auto &[begin, values] : pieces)
        for (std::size_t i = 0; i < values.size(); ++i) {
            sum[begin + i] += values[i];
            holders[begin + i] += 1.0;
        }
    world.allReduce(sum.data(), count, ReduceOp::Sum);
    world.allReduce(holders.data(), count, ReduceOp::Sum);
    std::vector<float> out(count);
    for (std::size_t i = 0; i < count; ++i)
        out[i] = holders[i] > 0 ? static_cast<float>(sum[i] / holders[i]) : 0.0f;
    return out;
}

} // namespace

std::vector<float> PipelineEngine::gatherParameters(Communicator &world)
{
    std::vector<std::pair<std::size_t, std::span<const float>>> pieces;
    for (int u : m_heldUnits) {
        const UnitStore &s = m_units[static_cast<std::size_t>(u)];
        pieces.emplace_back(s.begin, std::span<const float>(s.params.data(), s.size));
    }
    return assemble(world, m_parameterCount, pieces);
}

std::vector<float> PipelineEngine::gatherGradients(Communicator &world)
{
    // Reduced gradients: whole units without ZeRO, this rank's chunks with ZeRO-1.
    std::vector<std::pair<std::size_t, std::span<const float>>> pieces;
    for (std::size_t i = 0; i < m_owned.size(); ++i)
        pieces.emplace_back(m_owned[i].begin,
                            std::span<const float>(m_units[static_cast<std::size_t>(m_ownedAt[i].first)].grads.data() +
                                                       m_ownedAt[i].second,
                                                   m_owned[i].end - m_owned[i].begin));
    return assemble(world, m_parameterCount, pieces);
}

std::uint64_t PipelineEngine::parameterBytes() const
{
    std::uint64_t n = 0;
    for (int u : m_heldUnits)
        n += m_units[static_cast<std::size_t>(u)].params.size() * sizeof(float);
    return n;
}

std::uint64_t PipelineEngine::gradientBytes() const
{
    std::uint64_t n = 0;
    for (int u : m_heldUnits)
        n += m_units[static_cast<std::size_t>(u)].grads.size() * sizeof(float);
    return n;
}

std::uint64_t PipelineEngine::activationBytes() const
{
    std::uint64_t n = 0;
    for (const auto &[chunk, pool] : m_pool)
        for (const auto &model : pool)
            n += model->activationBytes();
    return n;
}

} // namespace trellis::trainer
