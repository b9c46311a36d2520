// See layout_model.h.
#include "plan/layout_model.h"

#include "plan/plan.h"

#include <algorithm>

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

std::vector<TrainerBucket> trainerBuckets(const std::vector<std::uint64_t> &segments, int dp, const ParallelSpec &p)
{
    auto elements = [](double mb) { return static_cast<std::uint64_t>(mb * 1024.0 * 1024.0 / 4.0); };
    const auto n = static_cast<std::uint64_t>(dp);
    const double bucketMb = p.bucketMb.value_or(25.0);
    const std::uint64_t bucket = roundUp(std::max<std::uint64_t>(1, elements(bucketMb)), n);
    const std::uint64_t first = roundUp(std::max<std::uint64_t>(1, elements(p.firstBucketMb.value_or(bucketMb))), n);
    std::vector<TrainerBucket> out;
    bool isFirst = true;
    for (auto seg = segments.rbegin(); seg != segments.rend(); ++seg) {
        std::uint64_t end = roundUp(*seg, n);
        while (end > 0) {
            const std::uint64_t size = std::min(end, isFirst ? first : bucket);
            out.push_back({end - size, size, *seg});
            end -= size;
            isFirst = false;
        }
    }
    return out;
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
