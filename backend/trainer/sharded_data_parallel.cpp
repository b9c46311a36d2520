// See sharded_data_parallel.h.
#include "trainer/sharded_data_parallel.h"

#include <algorithm>
#include <stdexcept>

namespace trellis::trainer {
namespace {

double msBetween(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b)
{
    return std::chrono::duration<double, std::milli>(b - a).count();
}

} // namespace

ShardedDataParallel::ShardedDataParallel(Communicator &dp, GptModel<float> &model, int stage, bool overlap)
    : m_dp(dp), m_model(model), m_stage(stage), m_overlap(overlap)
{
    if (stage != 2 && stage != 3)
        throw std::invalid_argument("ShardedDataParallel: stage must be 2 or 3");
    const auto n = static_cast<std::size_t>(dp.size());
    const auto r = static_cast<std::size_t>(dp.rank());
    std::size_t offset = 0;
    for (const ParamUnit &u : model.units()) {
        UnitShard s;
        s.begin = u.begin;
        s.size = u.size();
        s.chunk = (u.size() + n - 1) / n;
        s.offset = offset;
        offset += s.chunk;
        // This rank's chunk, without the padding at the end of the unit.
        const std::size_t from = std::min(s.size, r * s.chunk), to = std::min(s.size, (r + 1) * s.chunk);
        if (from < to) {
            m_owned.push_back({s.begin + from, s.begin + to});
            m_ownedShardOffset.push_back(s.offset);
        }
        m_units.push_back(s);
    }
    m_gradShard.assign(offset, 0.0f);
    m_gathers.resize(m_units.size());
    m_unitGrads.resize(m_units.size());
    if (m_stage == 3)
        m_paramShard.assign(offset, 0.0f);
    setParameters(model.parameters().data());
    model.releaseFlatGradients();
    if (m_stage == 3)
        model.releaseFlatParameters();
    model.setUnitHooks(this);
}

ShardedDataParallel::~ShardedDataParallel()
{
    m_model.setUnitHooks(nullptr);
}

void ShardedDataParallel::setParameters(const float *full)
{
    if (m_stage == 2) {
        float *mine = m_model.parameters().data();
        if (mine != full)
            std::copy_n(full, m_model.parameterCount(), mine);
        return;
    }
    for (std::size_t i = 0; i < m_owned.size(); ++i)
        std::copy(full + m_owned[i].begin, full + m_owned[i].end, m_paramShard.begin() + static_cast<long>(m_ownedShardOffset[i]));
    for (std::size_t u = 0; u < m_units.size(); ++u)
        freeGathered(static_cast<int>(u));
}

std::uint64_t ShardedDataParallel::parameterBytes() const
{
    return m_stage == 3 ? m_paramShard.size() * sizeof(float) : m_model.parameterCount() * sizeof(float);
}

std::vector<float *> ShardedDataParallel::ownedParameters()
{
    std::vector<float *> out;
    for (std::size_t i = 0; i < m_owned.size(); ++i)
        out.push_back(m_stage == 3 ? m_paramShard.data() + m_ownedShardOffset[i]
                                   : m_model.parameters().data() + m_owned[i].begin);
    return out;
}

std::vector<const float *> ShardedDataParallel::ownedGradients() const
{
    std::vector<const float *> out;
    for (std::size_t i = 0; i < m_owned.size(); ++i)
        out.push_back(m_gradShard.data() + m_ownedShardOffset[i]);
    return out;
}

std::vector<std::span<float>> ShardedDataParallel::ownedGradientSpans()
{
    std::vector<std::span<float>> out;
    for (std::size_t i = 0; i < m_owned.size(); ++i)
        out.emplace_back(m_gradShard.data() + m_ownedShardOffset[i], m_owned[i].end - m_owned[i].begin);
    return out;
}

std::vector<float> ShardedDataParallel::ownedParameterValues() const
{
    std::vector<float> out;
    for (std::size_t i = 0; i < m_owned.size(); ++i) {
        const float *p = m_stage == 3 ? m_paramShard.data() + m_ownedShardOffset[i]
                                      : m_model.parameters().data() + m_owned[i].begin;
        out.insert(out.end(), p, p + (m_owned[i].end - m_owned[i].begin));
    }
    return out;
}

std::vector<float> ShardedDataParallel::gatherParameters()
{
    if (m_stage == 2)
        return {m_model.parameters().begin(), m_model.parameters().end()};
    std::vector<float> full(m_model.parameterCount());
    std::vector<float> unit;
    for (const UnitShard &s : m_units) {
        unit.resize(s.chunk * static_cast<std::size_t>(m_dp.size()));
        m_dp.allGather(m_paramShard.data() + s.offset, unit.data(), s.chunk, DataType::F32);
        std::copy_n(unit.begin(), s.size, full.begin() + static_cast<long>(s.begin));
    }
    return full;
}

std::vector<float> ShardedDataParallel::gatherGradients()
{
    std::vector<float> full(m_model.parameterCount());
    std::vector<float> unit;
    for (const UnitShard &s : m_units) {
        unit.resize(s.chunk * static_cast<std::size_t>(m_dp.size()));
        m_dp.allGather(m_gradShard.data() + s.offset, unit.data(), s.chunk, DataType::F32);
        std::copy_n(unit.begin(), s.size, full.begin() + static_cast<long>(s.begin));
    }
    return full;
}

void ShardedDataParallel::beginStep()
{
    std::fill(m_gradShard.begin(), m_gradShard.end(), 0.0f);
    m_exposedMs = 0;
    m_spans.clear();
}

void ShardedDataParallel::addBuffer(std::int64_t bytes)
{
    m_buffers += bytes;
    m_peakBuffers = std::max(m_peakBuffers, static_cast<std::uint64_t>(std::max<std::int64_t>(0, m_buffers)));
}

void ShardedDataParallel::wait(CommHandle &handle)
{
    const auto start = Clock::now();
    handle.wait();
    m_exposedMs += msBetween(start, Clock::now());
}

void ShardedDataParallel::prefetch(int unit)
{
    if (m_stage != 3 || unit < 0 || unit >= static_cast<int>(m_units.size()))
        return;
    Gather &g = m_gathers[static_cast<std::size_t>(unit)];
    if (!g.buffer.empty())
        return; // resident or in flight
    const UnitShard &s = m_units[static_cast<std::size_t>(unit)];
    g.buffer.resize(s.chunk * static_cast<std::size_t>(m_dp.size()));
    addBuffer(static_cast<std::int64_t>(g.buffer.size() * sizeof(float)));
    g.start = Clock::now();
    g.handle = m_dp.allGatherAsync(m_paramShard.data() + s.offset, g.buffer.data(), s.chunk, DataType::F32);
}

float *ShardedDataParallel::gathered(int unit)
{
    prefetch(unit);
    Gather &g = m_gathers[static_cast<std::size_t>(unit)];
    if (g.handle) {
        wait(*g.handle);
        g.handle.reset();
        addSpan(g.start, Clock::now());
    }
    return g.buffer.data();
}

void ShardedDataParallel::freeGathered(int unit)
{
    Gather &g = m_gathers[static_cast<std::size_t>(unit)];
    if (g.handle) { // never left in flight: the buffer is the receive buffer
        g.handle->wait();
        g.handle.reset();
    }
    addBuffer(-static_cast<std::int64_t>(g.buffer.size() * sizeof(float)));
    std::vector<float>().swap(g.buffer);
}

UnitHooks<float>::View ShardedDataParallel::acquire(int unit, Pass pass)
{
    poll();
    const UnitShard &s = m_units[static_cast<std::size_t>(unit)];
    View view;
    if (m_stage == 3) {
        view.params = gathered(unit);
        // Prefetch the unit the model will ask for next: forward walks up, backward down (after
        // the head it needs the final norm, then the last layer, ...).
        const int last = static_cast<int>(m_units.size()) - 1;
        if (pass == Pass::Forward)
            prefetch(unit + 1);
        else if (unit == last)
            prefetch(last - 1);
        else if (unit > 1)
            prefetch(unit - 1);
    } else {
        view.params = m_model.parameters().data() + s.begin;
    }
    if (pass == Pass::Backward) {
        auto &buffer = m_unitGrads[static_cast<std::size_t>(unit)];
        buffer.assign(s.chunk * static_cast<std::size_t>(m_dp.size()), 0.0f);
        addBuffer(static_cast<std::int64_t>(buffer.size() * sizeof(float)));
        view.grads = buffer.data();
    }
    return view;
}

void ShardedDataParallel::release(int unit, Pass pass)
{
    if (pass == Pass::Backward)
        launchReduction(unit);
    if (m_stage == 3 && !isRoot(unit))
        freeGathered(unit);
    poll();
}

void ShardedDataParallel::launchReduction(int unit)
{
    const UnitShard &s = m_units[static_cast<std::size_t>(unit)];
    Reduction r;
    r.unit = unit;
    r.buffer = std::move(m_unitGrads[static_cast<std::size_t>(unit)]);
    r.start = Clock::now();
    // In place: this rank's averaged chunk lands at its own block of the buffer.
    r.handle = m_dp.reduceScatterAsync(r.buffer.data(), r.buffer.data(), s.chunk, DataType::F32, ReduceOp::Avg);
    m_reductions.push_back(std::move(r));
    if (!m_overlap) {
        wait(*m_reductions.back().handle);
        m_reductions.back().done = true;
        addSpan(m_reductions.back().start, Clock::now());
    }
}

void ShardedDataParallel::complete(Reduction &r)
{
    const UnitShard &s = m_units[static_cast<std::size_t>(r.unit)];
    const float *mine = r.buffer.data() + s.chunk * static_cast<std::size_t>(m_dp.rank());
    float *shard = m_gradShard.data() + s.offset;
    for (std::size_t i = 0; i < s.chunk; ++i)
        shard[i] += mine[i];
    addBuffer(-static_cast<std::int64_t>(r.buffer.size() * sizeof(float)));
}

void ShardedDataParallel::poll()
{
    // Test everything so MPI progresses all of it, but add into the shard in launch order only:
    // with micro-batches the same unit arrives several times and the sum must not depend on timing.
    for (auto &r : m_reductions)
        if (!r.done && r.handle->test()) {
            r.done = true;
            addSpan(r.start, Clock::now());
        }
    for (auto &g : m_gathers)
        if (g.handle && g.handle->test()) {
            addSpan(g.start, Clock::now());
            g.handle.reset();
        }
    while (!m_reductions.empty() && m_reductions.front().done) {
        complete(m_reductions.front());
        m_reductions.pop_front();
    }
}

void ShardedDataParallel::finishBackward()
{
    for (auto &r : m_reductions) {
        if (!r.done) {
            wait(*r.handle);
            r.done = true;
            addSpan(r.start, Clock::now());
        }
    }
    poll();
}

void ShardedDataParallel::afterOptimizerStep()
{
    if (m_stage == 3) {
        for (std::size_t u = 0; u < m_units.size(); ++u)
            freeGathered(static_cast<int>(u));
        return;
    }
    // Stage 2: every rank updated its chunks in the full buffer; gather each unit's chunks.
    // The unit's last chunk may hang over its end (padding), so each goes through a staging buffer.
    float *params = m_model.parameters().data();
    std::vector<float> unit, chunk;
    for (const UnitShard &s : m_units) {
        unit.resize(s.chunk * static_cast<std::size_t>(m_dp.size()));
        chunk.assign(s.chunk, 0.0f);
        const std::int64_t staged = static_cast<std::int64_t>((unit.size() + chunk.size()) * sizeof(float));
        addBuffer(staged);
        const std::size_t from = std::min(s.size, s.chunk * static_cast<std::size_t>(m_dp.rank()));
        std::copy(params + s.begin + from, params + s.begin + std::min(s.size, from + s.chunk), chunk.begin());
        m_dp.allGather(chunk.data(), unit.data(), s.chunk, DataType::F32);
        std::copy_n(unit.begin(), s.size, params + s.begin);
        addBuffer(-staged);
    }
}

double ShardedDataParallel::commMs() const
{
    auto spans = m_spans;
    std::sort(spans.begin(), spans.end());
    double total = 0;
    Clock::time_point coveredUntil{};
    for (const auto &[a, b] : spans) {
        const Clock::time_point from = std::max(a, coveredUntil);
        if (b > from)
            total += msBetween(from, b);
        coveredUntil = std::max(coveredUntil, b);
    }
    return total;
}

} // namespace trellis::trainer
