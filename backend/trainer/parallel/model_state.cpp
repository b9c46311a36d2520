// See model_state.h.
#include "backend/trainer/parallel/model_state.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace trellis::trainer {

ModelState::ModelState(const std::vector<ParamUnit> &units, const std::vector<int> &held, std::size_t multiple,
                       bool separateFirstUnit, Device &device, Buffers buffers)
    : m_device(device)
{
    if (multiple == 0)
        throw std::invalid_argument("ModelState: padding multiple must be at least 1");
    auto pad = [multiple](std::size_t n) { return (n + multiple - 1) / multiple * multiple; };
    std::size_t at = 0, segmentStart = 0;
    for (std::size_t i = 0; i < held.size(); ++i) {
        const int u = held[i];
        if (u < 0 || static_cast<std::size_t>(u) >= units.size() || (i > 0 && held[i - 1] >= u))
            throw std::invalid_argument("ModelState: held units must be ascending model units");
        m_held.push_back({u, units[static_cast<std::size_t>(u)], at});
        at += units[static_cast<std::size_t>(u)].size();
        const bool closes = i + 1 == held.size() || (separateFirstUnit && u == 0);
        if (closes) {
            at = segmentStart + pad(at - segmentStart);
            m_segments.push_back({segmentStart, at});
            segmentStart = at;
        }
    }
    m_size = at;
    if (buffers.params)
        m_params.assign(at);
    if (buffers.grads)
        m_grads.assign(at);
}

void ModelState::zeroGradients() { m_grads.zero(); }

bool ModelState::holds(int unit) const
{
    return std::any_of(m_held.begin(), m_held.end(), [unit](const HeldUnit &h) { return h.unit == unit; });
}

const ModelState::HeldUnit &ModelState::unit(int unit) const
{
    for (const HeldUnit &h : m_held)
        if (h.unit == unit)
            return h;
    throw std::logic_error("ModelState: unit " + std::to_string(unit) + " is not held by this rank");
}

std::size_t ModelState::localOf(std::size_t offset) const
{
    for (const HeldUnit &h : m_held)
        if (offset >= h.range.begin && offset < h.range.end)
            return h.local + (offset - h.range.begin);
    throw std::logic_error("ModelState: model offset " + std::to_string(offset) + " is not held by this rank");
}

std::vector<std::pair<ParamRange, std::size_t>> ModelState::modelRanges(std::size_t begin, std::size_t end) const
{
    std::vector<std::pair<ParamRange, std::size_t>> out;
    for (const HeldUnit &h : m_held) {
        const std::size_t from = std::max(begin, h.local), to = std::min(end, h.local + h.range.size());
        if (from >= to)
            continue;
        const ParamRange r{h.range.begin + (from - h.local), h.range.begin + (to - h.local)};
        // Adjacent units continue one range (their model ranges are contiguous too).
        if (!out.empty() && out.back().first.end == r.begin && out.back().second + (out.back().first.end - out.back().first.begin) == from)
            out.back().first.end = r.end;
        else
            out.emplace_back(r, from);
    }
    return out;
}

void ModelState::load(const float *model)
{
    for (const HeldUnit &h : m_held)
        kernels::copy(m_device.stream(), m_params.data() + h.local, model + h.range.begin,
                      static_cast<std::int64_t>(h.range.size()));
}

} // namespace trellis::trainer
