// See buckets.h.
#include "trainer/parallel/buckets.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace trellis::trainer {
namespace {

std::size_t roundUp(std::size_t x, std::size_t m) { return (x + m - 1) / m * m; }

double msBetween(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b)
{
    return std::chrono::duration<double, std::milli>(b - a).count();
}

} // namespace

std::vector<Bucket> makeBuckets(const std::vector<ModelState::Segment> &segments, std::size_t bucketElements,
                                std::size_t firstElements, std::size_t multiple)
{
    if (multiple == 0)
        throw std::invalid_argument("makeBuckets: multiple must be at least 1");
    bucketElements = roundUp(std::max<std::size_t>(1, bucketElements), multiple);
    firstElements = roundUp(std::max<std::size_t>(1, firstElements), multiple);
    std::vector<Bucket> buckets;
    bool first = true;
    for (auto s = segments.rbegin(); s != segments.rend(); ++s) {
        if ((s->end - s->begin) % multiple != 0)
            throw std::invalid_argument("makeBuckets: segment size must be a multiple of the rank count");
        std::size_t end = s->end;
        while (end > s->begin) {
            const std::size_t size = std::min(end - s->begin, first ? firstElements : bucketElements);
            buckets.push_back({end - size, end});
            end -= size;
            first = false;
        }
    }
    return buckets;
}

double unionMs(std::vector<std::pair<std::chrono::steady_clock::time_point, std::chrono::steady_clock::time_point>> spans)
{
    std::sort(spans.begin(), spans.end());
    double total = 0;
    std::chrono::steady_clock::time_point coveredUntil{};
    for (const auto &[a, b] : spans) {
        const auto from = std::max(a, coveredUntil);
        if (b > from)
            total += msBetween(from, b);
        coveredUntil = std::max(coveredUntil, b);
    }
    return total;
}

BucketReducer::BucketReducer(Communicator &dp, float *gradients, std::vector<Bucket> buckets, Mode mode, bool overlap)
    : m_dp(dp), m_gradients(gradients), m_buckets(std::move(buckets)), m_mode(mode), m_overlap(overlap),
      m_inFlight(m_buckets.size())
{
}

void BucketReducer::beginStep()
{
    for (auto &f : m_inFlight)
        f = {};
    m_next = 0;
    m_commMs = 0;
    m_exposedMs = 0;
}

Bucket BucketReducer::ownedChunk(std::size_t i) const
{
    const Bucket &b = m_buckets[i];
    const std::size_t chunk = b.size() / static_cast<std::size_t>(m_dp.size());
    const std::size_t start = b.begin + chunk * static_cast<std::size_t>(m_dp.rank());
    return {start, start + chunk};
}

void BucketReducer::launch(std::size_t i)
{
    const Bucket &b = m_buckets[i];
    float *data = m_gradients + b.begin;
    auto &f = m_inFlight[i];
    f.start = Clock::now();
    if (m_mode == Mode::AllReduce)
        f.handle = m_dp.allReduceAsync(data, data, b.size(), DataType::F32, ReduceOp::Avg);
    else
        f.handle = m_dp.reduceScatterAsync(data, data, b.size() / static_cast<std::size_t>(m_dp.size()), DataType::F32,
                                           ReduceOp::Avg);
}

void BucketReducer::poll()
{
    // MPI makes progress on non-blocking collectives mostly inside MPI calls: testing here, between
    // layers of backward, is what lets the reductions advance while we compute.
    for (std::size_t i = 0; i < m_next; ++i) {
        auto &f = m_inFlight[i];
        if (!f.done && f.handle->test()) {
            f.done = true;
            f.end = Clock::now();
        }
    }
}

void BucketReducer::onGradientsReady(std::size_t offset)
{
    if (!m_overlap)
        return;
    while (m_next < m_buckets.size() && m_buckets[m_next].begin >= offset)
        launch(m_next++);
    poll();
}

void BucketReducer::finish()
{
    const auto start = Clock::now();
    while (m_next < m_buckets.size())
        launch(m_next++);
    for (auto &f : m_inFlight) {
        if (!f.done) {
            f.handle->wait();
            f.done = true;
            f.end = Clock::now();
        }
    }
    m_exposedMs = msBetween(start, Clock::now());
    std::vector<std::pair<Clock::time_point, Clock::time_point>> spans;
    for (const auto &f : m_inFlight)
        spans.emplace_back(f.start, f.end);
    m_commMs = unionMs(std::move(spans));
}

} // namespace trellis::trainer
