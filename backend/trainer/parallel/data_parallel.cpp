// See data_parallel.h.
#include "backend/trainer/parallel/data_parallel.h"

#include <algorithm>

namespace trellis::trainer {
namespace {

std::size_t elements(double mb) { return static_cast<std::size_t>(mb * 1024.0 * 1024.0 / sizeof(float)); }

} // namespace

DataParallel::DataParallel(DeviceCommunicator &dp, const GptModel<float> &model, const std::vector<int> &held,
                           bool separateFirstUnit, const BucketOptions &options, DType compute)
    : DataParallel(dp, model, held, separateFirstUnit, options, compute, BucketReducer::Mode::AllReduce, true)
{
    setParameters(model.parameters().data());
}

DataParallel::DataParallel(DeviceCommunicator &dp, const GptModel<float> &model, const std::vector<int> &held,
                           bool separateFirstUnit, const BucketOptions &options, DType compute, BucketReducer::Mode mode,
                           bool masters)
    : GradientSharding(compute), m_dp(dp),
      m_state(model.units(), held, static_cast<std::size_t>(dp.size()), separateFirstUnit, model.device(),
              {masters, true}),
      m_copy(compute, model.device())
{
    if (mixed())
        m_copy.assign(m_state.size());
    m_wireBytes = options.wire == DType::F32 ? 4 : 2;
    const auto n = static_cast<std::size_t>(dp.size());
    m_reducer = std::make_unique<BucketReducer>(
        dp, m_state.grads(), makeBuckets(m_state.segments(), elements(options.bucketMb), elements(options.firstBucketMb), n),
        mode, options.overlap, model.device(), options.wire);
}

GradientSharding::RawView DataParallel::acquireRaw(int unit, Pass)
{
    const std::size_t local = m_state.unit(unit).local;
    void *params = mixed() ? m_copy.at(local) : static_cast<void *>(m_state.params() + local);
    return {params, m_state.grads() + local};
}

void DataParallel::setParameters(const float *model)
{
    m_state.load(model);
    if (m_outer)
        m_outer->reset();
    if (mixed())
        m_copy.fromMasters(0, m_state.params(), m_state.size());
}

void DataParallel::setLocalUpdates(const plan::DpSyncSpec &spec)
{
    m_outer = std::make_unique<OuterSync>(m_dp, spec, m_state.params(), m_state.size(), m_state.device());
}

DpTraffic DataParallel::traffic() const
{
    const std::uint64_t dense = m_state.size() * m_wireBytes; // one step's whole gradients
    if (m_outer)
        return {m_outer->outerSteps(), m_outer->outerSteps() * m_outer->bytesPerSync(), m_outer->innerSteps() * dense};
    if (m_powerSgd)
        return {0, m_powerSgd->reductions() * m_powerSgd->bytesPerStep(), m_powerSgd->reductions() * m_powerSgd->wholeBytesPerStep()};
    return {};
}

void DataParallel::afterOptimizerStep()
{
    if (m_outer)
        m_outer->afterInnerStep(); // every inner_steps steps the replicas' parameters meet
    // Every rank updated every master it holds: the compute copy follows (padding stays zero).
    if (mixed())
        m_copy.fromMasters(0, m_state.params(), m_state.size());
}

std::uint64_t DataParallel::parameterBytes() const
{
    return mixed() ? m_copy.bytes() : m_state.size() * sizeof(float);
}

std::uint64_t DataParallel::masterBytes() const { return mixed() ? m_state.size() * sizeof(float) : 0; }

void DataParallel::setExpertParallel(DeviceCommunicator &expertDp, int ep, const std::vector<ParamRange> &experts,
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

void DataParallel::onGradientsReady(std::size_t offset)
{
    // Local updates: each replica keeps its own gradients; compression: all at once when final.
    if (!m_outer && !m_powerSgd)
        m_reducer->onGradientsReady(m_state.localOf(offset));
}

void DataParallel::reduceGradients()
{
    if (m_powerSgd)
        m_powerSgd->reduce(m_state.grads());
    else if (!m_outer)
        m_reducer->finish();
}

std::uint64_t DataParallel::bufferBytes() const
{
    return m_reducer->stagingBytes() + (m_powerSgd ? m_powerSgd->stateBytes() : 0);
}

void DataParallel::setGradCompression(const plan::GradCompressionSpec &spec, const std::vector<ParamTensor> &tensors,
                                      std::uint64_t seed)
{
    auto held = [this](std::size_t offset) {
        return std::any_of(m_state.held().begin(), m_state.held().end(),
                           [&](const ModelState::HeldUnit &h) { return offset >= h.range.begin && offset < h.range.end; });
    };
    std::vector<GradientMatrix> matrices;
    std::vector<std::pair<std::size_t, std::size_t>> covered; // local ranges of the matrices
    for (const ParamTensor &t : tensors)
        if (t.shape.size() == 2 && t.size > 0 && held(t.offset)) {
            const std::size_t local = m_state.localOf(t.offset);
            matrices.push_back({local, t.shape[0], t.shape[1]});
            covered.emplace_back(local, local + t.size);
        }
    std::sort(covered.begin(), covered.end());
    std::vector<std::pair<std::size_t, std::size_t>> vectors; // every other real range
    for (const auto &[range, local] : m_state.modelRanges(0, m_state.size())) {
        std::size_t at = local;
        const std::size_t end = local + (range.end - range.begin);
        for (const auto &[b, e] : covered) {
            if (e <= at || b >= end)
                continue;
            if (b > at)
                vectors.emplace_back(at, b);
            at = std::max(at, e);
        }
        if (at < end)
            vectors.emplace_back(at, end);
    }
    m_powerSgd = std::make_unique<PowerSgd>(m_dp, std::move(matrices), std::move(vectors), spec.rank, spec.warmStart, seed);
}

std::vector<OwnedRange> DataParallel::owned()
{
    return ownedIn(0, m_state.size(), [this](std::size_t local) { return m_state.params() + local; });
}

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
