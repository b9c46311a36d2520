// See zero1.h.
#include "trainer/parallel/zero1.h"

namespace trellis::trainer {

Zero1::Zero1(Communicator &dp, const GptModel<float> &model, const std::vector<int> &held, bool separateFirstUnit,
             const BucketOptions &options)
    : DataParallel(dp, model, held, separateFirstUnit, options, BucketReducer::Mode::ReduceScatter)
{
}

std::vector<OwnedRange> Zero1::owned()
{
    // Chunks in index order (buckets run from the end of the buffer).
    std::vector<OwnedRange> out;
    for (std::size_t i = m_reducer->buckets().size(); i-- > 0;) {
        const Bucket chunk = m_reducer->ownedChunk(i);
        for (OwnedRange &r : ownedIn(chunk.begin, chunk.end))
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
    float *params = m_state.params();
    for (std::size_t i = 0; i < m_reducer->buckets().size(); ++i) {
        const Bucket &b = m_reducer->buckets()[i];
        const Bucket chunk = m_reducer->ownedChunk(i);
        m_dp.allGather(params + chunk.begin, params + b.begin, chunk.size(), DataType::F32);
    }
}

std::uint64_t Zero1::bufferBytes() const
{
    std::uint64_t bytes = 0;
    for (const Bucket &b : m_reducer->buckets())
        bytes += b.size() / static_cast<std::size_t>(m_dp.size()) * sizeof(float);
    return bytes;
}

} // namespace trellis::trainer
