// How the trainer lays out what the cost model counts exactly (cost_model.cpp): a rank's tensor
// shapes and unit sizes, ZeRO chunks of units, the padded gradient buckets and their expert parts
// (trainer/parallel/buckets.cpp), and the model instances a pipeline schedule keeps alive per chunk. Internal to the plan library.
#pragma once

#include "backend/plan/schedule.h"

#include <cstdint>
#include <map>
#include <utility>
#include <memory>
#include <vector>

namespace trellis::plan {
struct ModelSpec;
struct ParallelSpec;
}

namespace trellis::plan::detail {

// Per-rank shapes: tp splits the vocabulary, heads (q and kv) and MLP width, ep the experts.
struct Shapes {
    bool llama = false;
    std::uint64_t C = 0, S = 0, L = 0, Vl = 0, Cq = 0, Kq = 0, Fl = 0, NHl = 0, El = 1, E = 0;
    std::uint64_t mlp() const { return llama ? 3 * C * Fl : 2 * C * Fl + Fl + C; } // one expert
    std::uint64_t layer() const
    {
        const std::uint64_t norms = llama ? 2 * C : 4 * C;
        const std::uint64_t attention = C * (Cq + 2 * Kq) + Cq * C + (llama ? 0 : Cq + 2 * Kq + C);
        return norms + attention + El * mlp() + C * E; // C·E: the router
    }
    std::uint64_t embedding() const { return llama ? Vl * C : Vl * C + S * C; }
    double norm() const { return static_cast<double>(llama ? C : 2 * C); } // a norm's parameters
    std::uint64_t final() const { return llama ? C + Vl * C : 2 * C; } // llama: the untied head sits with the final norm
};

Shapes shapesOf(const ModelSpec &m, int tp, int ep);

// Elements of [begin, begin+size) that rank r owns when the range is split in dp equal chunks
// (the last padded).
std::uint64_t ownedOfUnit(std::uint64_t size, int dp, int r);

// The trainer's local gradient buffer (trainer/parallel/model_state.h): segments, each padded to
// a multiple of dp — one without a pipeline, the tied embedding apart with one — cut into buckets
// from the last segment's end (buckets.cpp makeBuckets). Per bucket: its padded size and the real
// elements of its segment that lie in it (begin within the segment, the segment's real size).
struct TrainerBucket {
    std::uint64_t begin = 0, size = 0, segmentReal = 0;
    std::size_t segment = 0; // index in `segments`
};
// Remembered per thread (the planner asks for the same buckets for every ZeRO stage, schedule and
// recompute of a shape: ten thousand buckets of a 70B model each time); shared, never changed.
std::shared_ptr<const std::vector<TrainerBucket>> trainerBuckets(const std::vector<std::uint64_t> &segments, int dp,
                                                                 const ParallelSpec &p);

// Expert parallelism: the trainer's reducer (buckets.cpp setExpertRanges) cuts a bucket where it
// crosses an expert range and reduces each part in its own call. The parts of every bucket, in
// order; `experts` are [begin, end) ranges of the last segment (the layers), sorted.
struct BucketPart {
    std::uint64_t elements = 0;
    bool expert = false;
};
std::vector<BucketPart> bucketParts(const std::vector<TrainerBucket> &buckets, std::size_t layerSegment,
                                    const std::vector<std::pair<std::uint64_t, std::uint64_t>> &experts);
std::uint64_t paddedTotal(const std::vector<TrainerBucket> &buckets);
// ZeRO-1: rank r's chunk of each bucket, without the padding.
std::uint64_t zeroOneOwned(const std::vector<TrainerBucket> &buckets, int dp, int r);

// Micro-batch-chunks alive at once per chunk of `rank`, in list order: +1 at F, −1 when its last
// backward part runs (Backward, or W when split), as the trainer keeps a model instance.
std::map<int, int> instancesPerChunk(const Schedule &s, int rank);

} // namespace trellis::plan::detail
