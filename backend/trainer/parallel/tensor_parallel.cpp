// See tensor_parallel.h.
#include "backend/trainer/parallel/tensor_parallel.h"

#include <algorithm>

namespace trellis::trainer {

WholeIndex::WholeIndex(const GptConfig &config)
{
    const GptModel<float> local(config, false);
    GptConfig wholeConfig = config;
    wholeConfig.tp = 1;
    wholeConfig.tpRank = 0;
    wholeConfig.ep = 1;
    wholeConfig.epRank = 0;
    const GptModel<float> whole(wholeConfig, false);
    m_wholeCount = whole.parameterCount();
    for (std::size_t i = 0; i < local.tensors().size(); ++i) {
        std::size_t at = local.tensors()[i].offset;
        for (const auto &[offset, n] : local.shardRuns(i, config.tpRank)) {
            const std::size_t w = whole.tensors()[i].offset + offset;
            if (!m_runs.empty() && m_runs.back().local + m_runs.back().size == at &&
                m_runs.back().whole + m_runs.back().size == w)
                m_runs.back().size += n; // contiguous in both: one run
            else
                m_runs.push_back({at, w, n});
            at += n;
        }
    }
}

std::vector<std::pair<ParamRange, std::size_t>> WholeIndex::runs(const ParamRange &local) const
{
    std::vector<std::pair<ParamRange, std::size_t>> out;
    auto it = std::upper_bound(m_runs.begin(), m_runs.end(), local.begin,
                               [](std::size_t offset, const Run &r) { return offset < r.local; });
    if (it != m_runs.begin())
        --it;
    for (; it != m_runs.end() && it->local < local.end; ++it) {
        const std::size_t from = std::max(local.begin, it->local), to = std::min(local.end, it->local + it->size);
        if (from < to)
            out.push_back({{it->whole + (from - it->local), it->whole + (to - it->local)}, from - local.begin});
    }
    return out;
}

std::vector<ParamRange> subtractRanges(const std::vector<ParamRange> &ranges, const std::vector<ParamRange> &cut)
{
    std::vector<ParamRange> out;
    for (const ParamRange &r : ranges) {
        std::size_t at = r.begin;
        for (const ParamRange &c : cut) {
            if (c.end <= at || c.begin >= r.end)
                continue;
            if (c.begin > at)
                out.push_back({at, c.begin});
            at = std::max(at, c.end);
        }
        if (at < r.end)
            out.push_back({at, r.end});
    }
    return out;
}

TensorParallel::TensorParallel(DeviceCommunicator &tp, const GptConfig &config) : m_tp(tp)
{
    if (config.tpRank == 0)
        return;
    const GptModel<float> layout(config, false);
    for (std::size_t i = 0; i < layout.tensors().size(); ++i)
        if (layout.isReplicated(i))
            m_replicated.push_back({layout.tensors()[i].offset, layout.tensors()[i].offset + layout.tensors()[i].size});
}

void TensorParallel::removeCopies(std::vector<ParamRange> &ranges) const
{
    if (!m_replicated.empty())
        ranges = subtractRanges(ranges, m_replicated);
}

} // namespace trellis::trainer
