// See layout_model.h.
#include "backend/plan/cost/layout_model.h"

#include "backend/plan/plan.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace trellis::plan::detail {
namespace {
std::uint64_t roundUp(std::uint64_t x, std::uint64_t m) { return (x + m - 1) / m * m; }
} // namespace

std::uint64_t ownedOfUnit(std::uint64_t size, int dp, int r)
{
    const std::uint64_t chunk = (size + dp - 1) / dp;
    const std::uint64_t from = std::min(size, chunk * r), to = std::min(size, chunk * (r + 1));
    return to - from;
}

Shapes shapesOf(const ModelSpec &m, int tp, int ep)
{
    const auto t = static_cast<std::uint64_t>(std::max(1, tp));
    Shapes s;
    s.llama = m.arch == kArchLlama;
    s.C = static_cast<std::uint64_t>(m.hidden);
    s.S = static_cast<std::uint64_t>(m.seqLen);
    s.L = static_cast<std::uint64_t>(m.layers);
    s.Vl = static_cast<std::uint64_t>(m.vocab) / t;
    s.Cq = s.C / t;
    s.Kq = (m.heads > 0 ? s.C / static_cast<std::uint64_t>(m.heads) * static_cast<std::uint64_t>(m.kvHeads) : s.C) / t;
    s.Fl = static_cast<std::uint64_t>(m.ffn) / t;
    s.NHl = static_cast<std::uint64_t>(m.heads) / t;
    s.E = static_cast<std::uint64_t>(std::max(0, m.moe.experts));
    s.El = m.moe.experts > 0 ? s.E / static_cast<std::uint64_t>(std::max(1, ep)) : 1;
    return s;
}

namespace {
std::vector<TrainerBucket> makeTrainerBuckets(const std::vector<std::uint64_t> &segments, int dp, const ParallelSpec &p)
{
    auto elements = [](double mb) { return static_cast<std::uint64_t>(mb * 1024.0 * 1024.0 / 4.0); };
    const auto n = static_cast<std::uint64_t>(dp);
    const double bucketMb = p.bucketMb.value_or(25.0);
    const std::uint64_t bucket = roundUp(std::max<std::uint64_t>(1, elements(bucketMb)), n);
    const std::uint64_t first = roundUp(std::max<std::uint64_t>(1, elements(p.firstBucketMb.value_or(bucketMb))), n);
    std::vector<TrainerBucket> out;
    bool isFirst = true;
    for (std::size_t s = segments.size(); s-- > 0;) {
        std::uint64_t end = roundUp(segments[s], n);
        while (end > 0) {
            const std::uint64_t size = std::min(end, isFirst ? first : bucket);
            out.push_back({end - size, size, segments[s], s});
            end -= size;
            isFirst = false;
        }
    }
    return out;
}
} // namespace

std::shared_ptr<const std::vector<TrainerBucket>> trainerBuckets(const std::vector<std::uint64_t> &segments, int dp,
                                                                 const ParallelSpec &p)
{
    using Key = std::tuple<std::vector<std::uint64_t>, int, double, double>;
    thread_local std::map<Key, std::shared_ptr<const std::vector<TrainerBucket>>> memo;
    const double bucketMb = p.bucketMb.value_or(25.0);
    Key key{segments, dp, bucketMb, p.firstBucketMb.value_or(bucketMb)};
    if (auto it = memo.find(key); it != memo.end())
        return it->second;
    if (memo.size() > 64)
        memo.clear();
    auto made = std::make_shared<const std::vector<TrainerBucket>>(makeTrainerBuckets(segments, dp, p));
    memo.emplace(std::move(key), made);
    return made;
}

std::vector<BucketPart> bucketParts(const std::vector<TrainerBucket> &buckets, std::size_t layerSegment,
                                    const std::vector<std::pair<std::uint64_t, std::uint64_t>> &experts)
{
    std::vector<BucketPart> parts;
    auto part = [&](std::uint64_t from, std::uint64_t to, bool expert) {
        if (from < to)
            parts.push_back({to - from, expert});
    };
    for (const TrainerBucket &b : buckets) {
        std::uint64_t at = b.begin;
        const std::uint64_t end = b.begin + b.size;
        if (b.segment == layerSegment)
            for (const auto &[from, to] : experts) {
                if (to <= at || from >= end)
                    continue;
                part(at, std::max(at, from), false);
                at = std::max(at, from);
                part(at, std::min(end, to), true);
                at = std::min(end, to);
            }
        part(at, end, false);
    }
    return parts;
}

std::uint64_t paddedTotal(const std::vector<TrainerBucket> &buckets)
{
    std::uint64_t total = 0;
    for (const auto &b : buckets)
        total += b.size;
    return total;
}

std::uint64_t zeroOneOwned(const std::vector<TrainerBucket> &buckets, int dp, int r)
{
    std::uint64_t owned = 0;
    for (const auto &b : buckets) {
        const std::uint64_t chunk = b.size / static_cast<std::uint64_t>(dp);
        const std::uint64_t from = b.begin + chunk * static_cast<std::uint64_t>(r);
        const std::uint64_t to = std::min(b.segmentReal, from + chunk);
        if (to > from)
            owned += to - from;
    }
    return owned;
}

std::map<int, int> instancesPerChunk(const Schedule &s, int rank)
{
    std::map<int, int> live, peak;
    for (const Action &a : s.ranks[static_cast<std::size_t>(rank)]) {
        if (a.kind == ActionKind::Forward)
            peak[a.chunk] = std::max(peak[a.chunk], ++live[a.chunk]);
        else if (a.kind == ActionKind::Backward || a.kind == ActionKind::BackwardWeight)
            --live[a.chunk];
    }
    return peak;
}

} // namespace trellis::plan::detail
