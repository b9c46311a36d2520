// How the trainer lays out what the cost model counts exactly (cost_model.cpp): ZeRO chunks of
// units, the padded gradient buckets (trainer/parallel/buckets.cpp), and the model instances a
// pipeline schedule keeps alive per chunk. Internal to the plan library.
#pragma once

#include "plan/schedule.h"

#include <cstdint>
#include <map>
#include <vector>

namespace trellis::plan {
struct ParallelSpec;
}

namespace trellis::plan::detail {

// Elements of [begin, begin+size) that rank r owns when the range is split in dp equal chunks
// (the last padded).
std::uint64_t ownedOfUnit(std::uint64_t size, int dp, int r);

// The trainer's local gradient buffer (trainer/parallel/model_state.h): segments, each padded to
// a multiple of dp — one without a pipeline, the tied embedding apart with one — cut into buckets
// from the last segment's end (buckets.cpp makeBuckets). Per bucket: its padded size and the real
// elements of its segment that lie in it (begin within the segment, the segment's real size).
struct TrainerBucket {
    std::uint64_t begin = 0, size = 0, segmentReal = 0;
};
std::vector<TrainerBucket> trainerBuckets(const std::vector<std::uint64_t> &segments, int dp, const ParallelSpec &p);
std::uint64_t paddedTotal(const std::vector<TrainerBucket> &buckets);
// ZeRO-1: rank r's chunk of each bucket, without the padding.
std::uint64_t zeroOneOwned(const std::vector<TrainerBucket> &buckets, int dp, int r);

// Micro-batch-chunks alive at once per chunk of `rank`, in list order: +1 at F, −1 when its last
// backward part runs (Backward, or W when split), as the trainer keeps a model instance.
std::map<int, int> instancesPerChunk(const Schedule &s, int rank);

} // namespace trellis::plan::detail
