// See buckets.h.
#include "backend/trainer/parallel/buckets.h"

#include <algorithm>
#include <stdexcept>
#include <string>
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

BucketReducer::BucketReducer(DeviceCommunicator &dp, float *gradients, std::vector<Bucket> buckets, Mode mode, bool overlap,
                             Device &device, DType wire)
    : m_dp(dp), m_gradients(gradients), m_buckets(std::move(buckets)), m_mode(mode), m_overlap(overlap),
      m_inFlight(m_buckets.size()), m_stream(device.stream()), m_wire(wire)
{
    if (wire != DType::F32 && wire != DType::BF16)
        throw std::invalid_argument(std::string("BucketReducer: gradients reduce in fp32 or bf16, not ") + kernels::toString(wire));
    if (wire != DType::F32) {
        std::size_t end = 0;
        for (const Bucket &b : m_buckets)
            end = std::max(end, b.end);
        m_wireCopy = std::make_unique<ComputeBuffer>(wire, device);
        m_wireCopy->assign(end);
    }
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

void BucketReducer::setExpertRanges(std::vector<Bucket> ranges, DeviceCommunicator &expertDp, int ep, const kernels::Stream &stream)
{
    if (m_mode != Mode::AllReduce)
        throw std::logic_error("BucketReducer: expert ranges need the all-reduce mode (ZeRO 0)");
    m_expertRanges = std::move(ranges);
    m_expertDp = &expertDp;
    m_ep = ep;
    m_stream = stream;
}

void BucketReducer::launch(std::size_t i)
{
    const Bucket &b = m_buckets[i];
    auto &f = m_inFlight[i];
    f.start = Clock::now();
    f.handles.clear();
    f.staged.clear();
    // fp32 on the wire: the gradients themselves; bf16: the wire copy's slice, rounded from them
    // now and widened back by complete() (result: the part of the slice the reduction fills).
    auto stage = [&](std::size_t begin, std::size_t end, std::size_t resultAt, std::size_t count) -> void * {
        if (m_wire == DType::F32)
            return m_gradients + begin;
        m_wireCopy->fromMasters(begin, m_gradients + begin, end - begin);
        f.staged.push_back({resultAt, count});
        return m_wireCopy->at(begin);
    };
    auto reduce = [&](std::size_t begin, std::size_t end, bool expert) {
        if (begin >= end)
            return;
        if (!expert) {
            void *data = stage(begin, end, begin, end - begin);
            f.handles.push_back(m_dp.allReduceAsync(data, data, end - begin, m_wire, ReduceOp::Avg));
            return;
        }
        kernels::scale(m_stream, m_gradients + begin, static_cast<std::int64_t>(end - begin), 1.0f / static_cast<float>(m_ep));
        if (m_expertDp->size() > 1) {
            void *data = stage(begin, end, begin, end - begin);
            f.handles.push_back(m_expertDp->allReduceAsync(data, data, end - begin, m_wire, ReduceOp::Avg));
        }
    };
    if (m_mode == Mode::ReduceScatter) {
        const std::size_t chunk = b.size() / static_cast<std::size_t>(m_dp.size());
        const Bucket mine = ownedChunk(i); // the reduced chunk lands at this rank's block
        void *data = stage(b.begin, b.end, mine.begin, chunk);
        f.handles.push_back(m_dp.reduceScatterAsync(data, data, chunk, m_wire, ReduceOp::Avg));
        return;
    }
    std::size_t at = b.begin;
    for (const Bucket &e : m_expertRanges) {
        if (e.end <= at || e.begin >= b.end)
            continue;
        reduce(at, std::max(at, e.begin), false);
        at = std::max(at, e.begin);
        reduce(at, std::min(b.end, e.end), true);
        at = std::min(b.end, e.end);
    }
    reduce(at, b.end, false);
}

void BucketReducer::complete(std::size_t i)
{
    for (const Staged &s : m_inFlight[i].staged)
        m_wireCopy->toMasters(s.at, m_gradients + s.at, s.count);
    m_inFlight[i].staged.clear();
}

void BucketReducer::poll()
{
    // MPI makes progress on non-blocking collectives mostly inside MPI calls: testing here, between
    // layers of backward, is what lets the reductions advance while we compute.
    for (std::size_t i = 0; i < m_next; ++i) {
        auto &f = m_inFlight[i];
        if (!f.done && std::all_of(f.handles.begin(), f.handles.end(), [](auto &h) { return h->test(); })) {
            f.done = true;
            f.end = Clock::now();
            complete(i);
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
    for (std::size_t i = 0; i < m_inFlight.size(); ++i) {
        auto &f = m_inFlight[i];
        if (!f.done) {
            for (auto &h : f.handles)
                h->wait();
            f.done = true;
            f.end = Clock::now();
            complete(i);
        }
    }
    m_exposedMs = msBetween(start, Clock::now());
    std::vector<std::pair<Clock::time_point, Clock::time_point>> spans;
    for (const auto &f : m_inFlight)
        spans.emplace_back(f.start, f.end);
    m_commMs = unionMs(std::move(spans));
}

} // namespace trellis::trainer
