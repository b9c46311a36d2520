// A rank's checkpoint shard as bytes and back: what a rank saves (TrainingState) laid out as one
// self-checking blob — header, parameter ranges, parameters, Adam moments, a version 2 shard's
// outer state and own state, an FNV-1a checksum last. One module, so that whatever moves a rank's
// state (a checkpoint file today; a peer's memory, a network transfer) moves the same bytes.
#pragma once

#include "backend/trainer/optimizer/adamw.h"

#include <cstdint>
#include <string>
#include <vector>

namespace trellis::trainer {

struct TrainingState {
    std::uint64_t step = 0;               // steps completed
    std::vector<float> parameters;        // full, parameterCount (saving: rank 0 below ZeRO-3)
    std::vector<ParamRange> ranges;       // what this rank's moments cover
    std::vector<float> rangeParameters;   // saving at ZeRO-3: the parameters of `ranges`, concatenated
    std::vector<float> m, v;              // moments for `ranges`, concatenated
    std::uint64_t adamStep = 0;
    std::string precision = "fp32"; // the run's precision when saved (informational)
    double lossScale = 0;           // fp16: the dynamic loss scale (0: none)
    int lossScaleClean = 0;         // fp16: clean steps since the scale last changed
    // Local updates (parallel.dp_sync local_sgd, diloco): between outer steps the replicas'
    // parameters and moments differ, so every replica writes its own shards, with the outer
    // state of the same ranges (the anchor, and DiLoCo's momentum, the same on every replica).
    // replica -1: every-step training (one copy of everything, written by the first replica).
    int replica = -1;                  // the dp rank that wrote the shard
    int replicas = 0;                  // the dp degree it was written at
    std::string dpSync;                // "local_sgd" or "diloco"
    std::uint64_t innerSteps = 0, outerSteps = 0; // the outer optimizer's counters
    std::vector<float> anchor, outerMomentum;     // for `ranges` (the momentum: DiLoCo only)
    // This rank's own state beyond the ranges, opaque here: PowerSGD's error feedback and Q
    // (trainer/parallel/powersgd.h). Loading hands a rank the blob the same rank wrote, when the
    // checkpoint's dp, tp and pp are the plan's; else it stays empty.
    std::string extra;
};

// A shard as parsed: the state of the ranges it holds (the parameters: none, all, or those of its
// ranges).
struct Shard {
    std::uint64_t step = 0, parameterCount = 0, adamStep = 0;
    std::vector<float> parameters;
    std::vector<ParamRange> ranges;
    std::vector<float> m, v;
    // Version 2: the replica that wrote it and its outer state (local updates), the writer's own
    // state (PowerSGD).
    int rank = 0, replica = -1;
    std::uint64_t innerSteps = 0, outerSteps = 0;
    std::vector<float> anchor, outerMomentum;
    std::string extra;
};

// The shard of `rank` of `worldSize` for `state` (version 1, or 2 with local updates or own state).
std::string shardBytes(const TrainingState &state, int rank, int worldSize, std::uint64_t parameterCount);
// The same into `out` (replaced; its capacity kept, so a buffer reused between saves costs no
// allocation after the first).
void shardBytes(const TrainingState &state, int rank, int worldSize, std::uint64_t parameterCount, std::string &out);
// Parses a shard; returns "" or why it is unusable (the checksum is checked first).
std::string parseShard(const std::string &bytes, Shard &s);

std::uint64_t fnv1a64(const void *data, std::size_t bytes, std::uint64_t seed = 0xcbf29ce484222325ULL);

} // namespace trellis::trainer
