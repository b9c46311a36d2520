// See data_parallel.h.
#include "trainer/parallel/data_parallel.h"

#include <algorithm>

namespace trellis::trainer {
namespace {

std::size_t elements(double mb) { return static_cast<std::size_t>(mb * 1024.0 * 1024.0 / sizeof(float)); }

} // namespace

DataParallel::DataParallel(Communicator &dp, const GptModel<float> &model, const std::vector<int> &held,
                           bool separateFirstUnit, const BucketOptions &options)
    : DataParallel(dp, model, held, separateFirstUnit, options, BucketReducer::Mode::AllReduce)
{
}

DataParallel::DataParallel(Communicator &dp, const GptModel<float> &model, const std::vector<int> &held,
                           bool separateFirstUnit, const BucketOptions &options, BucketReducer::Mode mode)
    : m_dp(dp), m_state(model.units(), held, static_cast<std::size_t>(dp.size()), separateFirstUnit, model.device())
{
    m_state.load(model.parameters().data());
    const auto n = static_cast<std::size_t>(dp.size());
    m_reducer = std::make_unique<BucketReducer>(
        dp, m_state.grads(), makeBuckets(m_state.segments(), elements(options.bucketMb), elements(options.firstBucketMb), n),
        mode, options.overlap);
}

UnitHooks<float>::View DataParallel::acquire(int unit, Pass)
{
    const std::size_t local = m_state.unit(unit).local;
    return {m_state.params() + local, m_state.grads() + local};
}

void DataParallel::setExpertParallel(Communicator &expertDp, int ep, const std::vector<ParamRange> &experts,
                                     const kernels::Stream &stream)
{
    std::vector<Bucket> local;
    for (const auto &[range, at] : m_state.modelRanges(0, m_state.size()))
        for (const ParamRange &e : experts) {
            const std::size_t begin = std::max(range.begin, e.begin), end = std::min(range.end, e.end);
            if (begin < end)
                local.push_back({at + (begin - range.begin), at + (end - range.begin)});
        }
    std::sort(local.begin(), local.end(), [](const Bucket &a, const Bucket &b) { return a.begin < b.begin; });
    m_reducer->setExpertRanges(std::move(local), expertDp, ep, stream);
}

void DataParallel::beginStep()
{
    m_state.zeroGradients();
    m_reducer->beginStep();
}

void DataParallel::onGradientsReady(std::size_t offset) { m_reducer->onGradientsReady(m_state.localOf(offset)); }

void DataParallel::reduceGradients() { m_reducer->finish(); }

std::vector<OwnedRange> DataParallel::ownedIn(std::size_t begin, std::size_t end)
{
    std::vector<OwnedRange> out;
    for (const auto &[range, local] : m_state.modelRanges(begin, end))
        out.push_back({range, m_state.params() + local, m_state.grads() + local});
    return out;
}

std::vector<OwnedRange> DataParallel::owned() { return ownedIn(0, m_state.size()); }

std::vector<std::span<float>> DataParallel::reducedGradients(int unit)
{
    // The unit's whole segment (pipelines give the tied embedding a segment of its own).
    const std::size_t local = m_state.unit(unit).local;
    for (const auto &s : m_state.segments())
        if (local >= s.begin && local < s.end)
            return {std::span<float>(m_state.grads() + s.begin, s.end - s.begin)};
    return {};
}

} // namespace trellis::trainer
