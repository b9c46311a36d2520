// See expert.h.
#include "backend/trainer/parallel/expert.h"

#include "backend/trainer/parallel/tensor_parallel.h"

namespace trellis::trainer {

ExpertParallel::ExpertParallel(DeviceCommunicator &ep, const GptConfig &config) : m_ep(ep)
{
    const GptModel<float> layout(config, false);
    std::size_t at = 0;
    for (std::size_t i = 0; i < layout.tensors().size(); ++i) {
        const ParamTensor &t = layout.tensors()[i];
        if (!layout.isExpert(i))
            continue;
        if (t.offset > at)
            m_replicated.push_back({at, t.offset});
        if (!m_experts.empty() && m_experts.back().end == t.offset)
            m_experts.back().end = t.offset + t.size;
        else
            m_experts.push_back({t.offset, t.offset + t.size});
        at = t.offset + t.size;
    }
    if (at < layout.parameterCount())
        m_replicated.push_back({at, layout.parameterCount()});
}

void ExpertParallel::removeCopies(std::vector<ParamRange> &ranges) const
{
    if (m_ep.rank() != 0)
        ranges = subtractRanges(ranges, m_replicated);
}

} // namespace trellis::trainer
