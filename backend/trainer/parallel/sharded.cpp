// See sharded.h.
#include "backend/trainer/parallel/sharded.h"

#include "backend/trainer/parallel/buckets.h"

#include <algorithm>
#include <stdexcept>

namespace trellis::trainer {
namespace {

double msBetween(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b)
{
    return std::chrono::duration<double, std::milli>(b - a).count();
}

} // namespace

Sharded::Sharded(DeviceCommunicator &dp, const GptModel<float> &model, const std::vector<int> &held, int stage,
                 bool overlap, DType compute, DType wire)
    : GradientSharding(compute), m_dp(dp), m_stage(stage), m_overlap(overlap), m_held(held), m_device(model.device()),
      m_wire(wire),
      m_full(model.units(), stage == 2 ? held : std::vector<int>{}, 1, false, model.device(),
             {stage == 2 && !isMixed(compute), false}),
      m_copyFull(compute, m_device), m_paramShard(m_device), m_copyShard(compute, m_device), m_gradShard(m_device)
{
    if (stage != 2 && stage != 3)
        throw std::invalid_argument("Sharded: ZeRO stage must be 2 or 3");
    if (wire != DType::F32 && wire != DType::BF16)
        throw std::invalid_argument(std::string("Sharded: gradients reduce in fp32 or bf16, not ") + kernels::toString(wire));
    const auto n = static_cast<std::size_t>(dp.size());
    m_units.resize(model.units().size());
    std::size_t offset = 0;
    for (int u : held) {
        const ParamUnit &pu = model.units()[static_cast<std::size_t>(u)];
        UnitShard &s = m_units[static_cast<std::size_t>(u)];
        s.held = true;
        s.begin = pu.begin;
        s.size = pu.size();
        s.chunk = (s.size + n - 1) / n;
        s.offset = offset;
        if (stage == 2)
            s.local = m_full.unit(u).local;
        offset += s.chunk;
    }
    m_gradShard.assign(offset);
    for (std::size_t u = 0; u < m_units.size(); ++u) {
        m_gathers.push_back({ComputeBuffer(compute, m_device), nullptr, {}});
        m_unitGrads.emplace_back(m_device);
    }
    // The shard of masters: stage 3 always (the parameters live only there), stage 2 in mixed
    // precision (beside the whole compute copy).
    if (m_stage == 3 || mixed())
        m_paramShard.assign(offset);
    if (m_stage == 3 && mixed())
        m_copyShard.assign(offset);
    if (m_stage == 2 && mixed())
        m_copyFull.assign(m_full.size());
    setParameters(model.parameters().data());
}

Sharded::~Sharded()
{
    for (auto &r : m_reductions)
        r.handle->wait();
}

void Sharded::setParameters(const float *model)
{
    if (m_stage == 2 && !mixed()) {
        m_full.load(model);
        return;
    }
    const auto r = static_cast<std::size_t>(m_dp.rank());
    for (int u : m_held) {
        const UnitShard &s = m_units[static_cast<std::size_t>(u)];
        const std::size_t from = std::min(s.size, r * s.chunk), to = std::min(s.size, (r + 1) * s.chunk);
        kernels::fill(m_device.stream(), m_paramShard.data() + s.offset, static_cast<std::int64_t>(s.chunk), 0.0f);
        kernels::copy(m_device.stream(), m_paramShard.data() + s.offset, model + s.begin + from,
                      static_cast<std::int64_t>(to - from));
        if (m_stage == 2) // mixed: the whole unit's compute copy
            m_copyFull.fromMasters(s.local, model + s.begin, s.size);
    }
    if (m_stage == 3 && mixed())
        m_copyShard.fromMasters(0, m_paramShard.data(), m_paramShard.size());
    for (std::size_t u = 0; u < m_units.size(); ++u)
        freeGathered(static_cast<int>(u));
}

std::uint64_t Sharded::parameterBytes() const
{
    if (m_stage == 3)
        return mixed() ? m_copyShard.bytes() : m_paramShard.size() * sizeof(float);
    return mixed() ? m_copyFull.bytes() : m_full.size() * sizeof(float);
}

std::uint64_t Sharded::masterBytes() const { return mixed() ? m_paramShard.size() * sizeof(float) : 0; }

std::vector<OwnedRange> Sharded::owned()
{
    std::vector<OwnedRange> out;
    const auto r = static_cast<std::size_t>(m_dp.rank());
    for (int u : m_held) {
        const UnitShard &s = m_units[static_cast<std::size_t>(u)];
        const std::size_t from = std::min(s.size, r * s.chunk), to = std::min(s.size, (r + 1) * s.chunk);
        if (from >= to)
            continue;
        float *params = m_stage == 3 || mixed() ? m_paramShard.data() + s.offset : m_full.params() + s.local + from;
        out.push_back({{s.begin + from, s.begin + to}, params, m_gradShard.data() + s.offset});
    }
    return out;
}

std::vector<std::span<float>> Sharded::reducedGradients(int unit)
{
    const UnitShard &s = m_units[static_cast<std::size_t>(unit)];
    if (!s.held)
        return {};
    return {std::span<float>(m_gradShard.data() + s.offset, s.chunk)};
}

void Sharded::beginStep()
{
    m_gradShard.zero();
    m_exposedMs = 0;
    m_spans.clear();
}

void Sharded::addBuffer(std::int64_t bytes)
{
    m_buffers += bytes;
    m_peakBuffers = std::max(m_peakBuffers, static_cast<std::uint64_t>(std::max<std::int64_t>(0, m_buffers)));
}

void Sharded::wait(CommHandle &handle)
{
    const auto start = Clock::now();
    handle.wait();
    m_exposedMs += msBetween(start, Clock::now());
}

int Sharded::nextHeld(int unit, int direction) const
{
    for (int u = unit + direction; u >= 0 && u < static_cast<int>(m_units.size()); u += direction)
        if (m_units[static_cast<std::size_t>(u)].held)
            return u;
    return -1;
}

void Sharded::prefetch(int unit)
{
    if (m_stage != 3 || unit < 0 || unit >= static_cast<int>(m_units.size()) || !m_units[static_cast<std::size_t>(unit)].held)
        return;
    Gather &g = m_gathers[static_cast<std::size_t>(unit)];
    if (!g.buffer.empty())
        return; // resident or in flight
    const UnitShard &s = m_units[static_cast<std::size_t>(unit)];
    g.buffer.ensure(s.chunk * static_cast<std::size_t>(m_dp.size()));
    addBuffer(static_cast<std::int64_t>(g.buffer.bytes()));
    g.start = Clock::now();
    // The compute type's shard: the masters themselves in fp32, the compute copy's shard else.
    const void *shard = mixed() ? m_copyShard.at(s.offset) : static_cast<const void *>(m_paramShard.data() + s.offset);
    g.handle = m_dp.allGatherAsync(shard, g.buffer.data(), s.chunk, computeType());
}

void *Sharded::gathered(int unit)
{
    prefetch(unit);
    Gather &g = m_gathers[static_cast<std::size_t>(unit)];
    if (g.handle) {
        wait(*g.handle);
        g.handle.reset();
        m_spans.emplace_back(g.start, Clock::now());
    }
    return g.buffer.data();
}

void Sharded::freeGathered(int unit)
{
    Gather &g = m_gathers[static_cast<std::size_t>(unit)];
    if (g.handle) { // never left in flight: the buffer is the receive buffer
        g.handle->wait();
        g.handle.reset();
    }
    addBuffer(-static_cast<std::int64_t>(g.buffer.bytes()));
    g.buffer.release();
}

GradientSharding::RawView Sharded::acquireRaw(int unit, Pass pass)
{
    poll();
    const UnitShard &s = m_units[static_cast<std::size_t>(unit)];
    if (!s.held)
        throw std::logic_error("ZeRO: unit " + std::to_string(unit) + " is not held by this rank");
    RawView view;
    if (m_stage == 3) {
        view.params = gathered(unit);
        // Prefetch the unit the model asks for next: forward walks up, backward down (after the
        // head it needs the final norm, then the last layer, ...); the embedding stays resident.
        const int last = static_cast<int>(m_units.size()) - 1;
        if (pass == Pass::Forward)
            prefetch(nextHeld(unit, +1));
        else if (unit == last)
            prefetch(nextHeld(last, -1));
        else if (unit > 1)
            prefetch(nextHeld(unit, -1) > 0 ? nextHeld(unit, -1) : -1);
    } else {
        view.params = mixed() ? m_copyFull.at(s.local) : static_cast<void *>(m_full.params() + s.local);
    }
    if (pass == Pass::Backward) {
        auto &buffer = m_unitGrads[static_cast<std::size_t>(unit)];
        buffer.assign(s.chunk * static_cast<std::size_t>(m_dp.size()));
        addBuffer(static_cast<std::int64_t>(buffer.size() * sizeof(float)));
        view.grads = buffer.data();
    }
    return view;
}

void Sharded::releaseRaw(int unit, Pass pass)
{
    if (pass == Pass::Backward)
        launchReduction(unit);
    if (m_stage == 3 && !isRoot(unit))
        freeGathered(unit);
    poll();
}

void Sharded::launchReduction(int unit)
{
    const UnitShard &s = m_units[static_cast<std::size_t>(unit)];
    Reduction r{unit, DeviceBuffer<float>(m_device), nullptr, nullptr, {}, false};
    r.buffer = std::move(m_unitGrads[static_cast<std::size_t>(unit)]);
    m_unitGrads[static_cast<std::size_t>(unit)] = DeviceBuffer<float>(m_device);
    r.start = Clock::now();
    // In place: this rank's averaged chunk lands at its own block of the buffer (or of its bf16
    // copy when gradients reduce in bf16).
    if (m_wire == DType::F32) {
        r.handle = m_dp.reduceScatterAsync(r.buffer.data(), r.buffer.data(), s.chunk, ReduceOp::Avg);
    } else {
        r.staged = std::make_unique<ComputeBuffer>(m_wire, m_device);
        r.staged->ensure(r.buffer.size());
        r.staged->fromMasters(0, r.buffer.data(), r.buffer.size());
        addBuffer(static_cast<std::int64_t>(r.staged->bytes()));
        r.handle = m_dp.reduceScatterAsync(r.staged->data(), r.staged->data(), s.chunk, m_wire, ReduceOp::Avg);
    }
    m_reductions.push_back(std::move(r));
    if (!m_overlap) {
        wait(*m_reductions.back().handle);
        m_reductions.back().done = true;
        m_spans.emplace_back(m_reductions.back().start, Clock::now());
    }
}

void Sharded::complete(Reduction &r)
{
    const UnitShard &s = m_units[static_cast<std::size_t>(r.unit)];
    const std::size_t mine = s.chunk * static_cast<std::size_t>(m_dp.rank());
    float *shard = m_gradShard.data() + s.offset;
    if (r.staged) {
        const auto *staged = static_cast<const kernels::bf16 *>(r.staged->at(mine));
        kernels::accumulate(m_device.stream(), shard, staged, static_cast<std::int64_t>(s.chunk));
        addBuffer(-static_cast<std::int64_t>(r.staged->bytes()));
        r.staged.reset();
    } else {
        kernels::accumulate(m_device.stream(), shard, r.buffer.data() + mine, static_cast<std::int64_t>(s.chunk));
    }
    addBuffer(-static_cast<std::int64_t>(r.buffer.size() * sizeof(float)));
}

void Sharded::poll()
{
    // Test everything so MPI progresses all of it, but add into the shard in launch order only:
    // with micro-batches the same unit arrives several times and the sum must not depend on timing.
    for (auto &r : m_reductions)
        if (!r.done && r.handle->test()) {
            r.done = true;
            m_spans.emplace_back(r.start, Clock::now());
        }
    for (auto &g : m_gathers)
        if (g.handle && g.handle->test()) {
            m_spans.emplace_back(g.start, Clock::now());
            g.handle.reset();
        }
    while (!m_reductions.empty() && m_reductions.front().done) {
        complete(m_reductions.front());
        m_reductions.pop_front();
    }
}

void Sharded::reduceGradients()
{
    for (auto &r : m_reductions) {
        if (!r.done) {
            wait(*r.handle);
            r.done = true;
            m_spans.emplace_back(r.start, Clock::now());
        }
    }
    poll();
}

void Sharded::afterOptimizerStep()
{
    if (m_stage == 3) {
        // The compute copy's shard follows the updated masters; the next forward gathers it.
        if (mixed())
            m_copyShard.fromMasters(0, m_paramShard.data(), m_paramShard.size());
        for (std::size_t u = 0; u < m_units.size(); ++u)
            freeGathered(static_cast<int>(u));
        return;
    }
    // Stage 2: every rank updated its chunks; gather each unit's chunks (fp32 parameters, or the
    // compute copy made from the master shard). The unit's last chunk may hang over its end
    // (padding), so each goes through a staging buffer.
    ComputeBuffer unit(computeType(), m_device), chunk(computeType(), m_device);
    const auto r = static_cast<std::size_t>(m_dp.rank());
    for (int u : m_held) {
        const UnitShard &s = m_units[static_cast<std::size_t>(u)];
        unit.ensure(s.chunk * static_cast<std::size_t>(m_dp.size()));
        chunk.assign(s.chunk);
        const std::int64_t staged = static_cast<std::int64_t>(unit.bytes() + chunk.bytes());
        addBuffer(staged);
        const std::size_t from = std::min(s.size, s.chunk * r), count = std::min(s.size, from + s.chunk) - from;
        if (mixed())
            chunk.fromMasters(0, m_paramShard.data() + s.offset, count);
        else
            chunk.fromMasters(0, m_full.params() + s.local + from, count);
        m_dp.allGather(chunk.data(), unit.data(), s.chunk, computeType());
        if (mixed())
            m_copyFull.copyFrom(s.local, unit, 0, s.size);
        else
            unit.toMasters(0, m_full.params() + s.local, s.size);
        addBuffer(-staged);
    }
}

double Sharded::commMs() const { return unionMs(m_spans); }

} // namespace trellis::trainer
