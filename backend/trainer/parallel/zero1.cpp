// See zero1.h.
#include "backend/trainer/parallel/zero1.h"

namespace trellis::trainer {

Zero1::Zero1(DeviceCommunicator &dp, const GptModel<float> &model, const std::vector<int> &held, bool separateFirstUnit,
             const BucketOptions &options, DType compute)
    : DataParallel(dp, model, held, separateFirstUnit, options, compute, BucketReducer::Mode::ReduceScatter,
                   !isMixed(compute)),
      m_masters(model.device())
{
    if (mixed()) {
        std::size_t at = 0;
        for (std::size_t i = 0; i < m_reducer->buckets().size(); ++i) {
            m_masterAt.push_back(at);
            at += m_reducer->ownedChunk(i).size();
        }
        m_masters.assign(at);
    }
    setParameters(model.parameters().data());
}

void Zero1::setParameters(const float *model)
{
    if (!mixed()) {
        DataParallel::setParameters(model);
        return;
    }
    // The compute copy of every held unit, and the masters of this rank's chunks.
    for (const ModelState::HeldUnit &h : m_state.held())
        m_copy.fromMasters(h.local, model + h.range.begin, h.range.size());
    for (std::size_t i = 0; i < m_reducer->buckets().size(); ++i) {
        const Bucket chunk = m_reducer->ownedChunk(i);
        for (const auto &[range, local] : m_state.modelRanges(chunk.begin, chunk.end))
            kernels::copy(m_masters.device().stream(), m_masters.data() + m_masterAt[i] + (local - chunk.begin),
                          model + range.begin, static_cast<std::int64_t>(range.end - range.begin));
    }
}

std::vector<OwnedRange> Zero1::owned()
{
    // Chunks in index order (buckets run from the end of the buffer).
    std::vector<OwnedRange> out;
    for (std::size_t i = m_reducer->buckets().size(); i-- > 0;) {
        const Bucket chunk = m_reducer->ownedChunk(i);
        auto params = [&](std::size_t local) {
            return mixed() ? m_masters.data() + m_masterAt[i] + (local - chunk.begin) : m_state.params() + local;
        };
        for (OwnedRange &r : ownedIn(chunk.begin, chunk.end, params))
            out.push_back(r);
    }
    return out;
}

std::vector<std::span<float>> Zero1::reducedGradients(int unit)
{
    std::vector<std::span<float>> out;
    const auto whole = DataParallel::reducedGradients(unit); // the unit's segment
    if (whole.empty())
        return out;
    const std::size_t begin = static_cast<std::size_t>(whole.front().data() - m_state.grads());
    const std::size_t end = begin + whole.front().size();
    for (std::size_t i = m_reducer->buckets().size(); i-- > 0;) {
        const Bucket chunk = m_reducer->ownedChunk(i);
        if (chunk.begin >= begin && chunk.end <= end)
            out.emplace_back(m_state.grads() + chunk.begin, chunk.size());
    }
    return out;
}

void Zero1::afterOptimizerStep()
{
    // Each rank updated its chunks; every rank gathers them (mixed precision: the compute copy's
    // chunks, made from the updated masters first).
    for (std::size_t i = 0; i < m_reducer->buckets().size(); ++i) {
        const Bucket &b = m_reducer->buckets()[i];
        const Bucket chunk = m_reducer->ownedChunk(i);
        if (mixed()) {
            m_copy.fromMasters(chunk.begin, m_masters.data() + m_masterAt[i], chunk.size());
            m_dp.allGather(m_copy.at(chunk.begin), m_copy.at(b.begin), chunk.size(), m_copy.type());
        } else {
            float *params = m_state.params();
            m_dp.allGather(params + chunk.begin, params + b.begin, chunk.size());
        }
    }
}

std::uint64_t Zero1::bufferBytes() const
{
    std::uint64_t bytes = 0;
    for (const Bucket &b : m_reducer->buckets())
        bytes += b.size() / static_cast<std::size_t>(m_dp.size()) * sizeof(float);
    return bytes + m_reducer->stagingBytes();
}

} // namespace trellis::trainer
