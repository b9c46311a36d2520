// Checkpoints: <dir>/step-NNNNNNNN/ holds one shard per rank (rank-NNNNN.bin: the parameters
// (all of them on rank 0, or with ZeRO-3 those of the ranges each rank owns), the Adam moments of
// the ranges the rank owns, the Adam step) and meta.json, written
// last. Every rank writes into step-NNNNNNNN.partial/; after a barrier rank 0 writes meta.json
// through a temporary file and renames the directory into place, so a checkpoint either is
// complete or is ignored, and an existing complete one is never overwritten by a failed save.
// Shards record the parameter ranges they hold, so a checkpoint written at one DP degree and
// ZeRO stage loads at another: each rank picks the ranges it now owns (resharding). Parameters and
// moments are fp32 whatever the run's precision (mixed precision saves its master weights; the
// 16-bit compute copies are remade from them), so a run resumes in another precision too; meta.json
// names the precision it was written in and fp16's loss-scaler state. With local updates
// (parallel.dp_sync) every replica writes (format version 2 shards: the replica, the outer
// counters, the anchor and momentum of its ranges) and meta.json names the mode and replicas;
// a rank's own opaque state (PowerSGD's) is the end of a version 2 shard too.
#pragma once

#include "backend/plan/plan.h"
#include "backend/plan/result.h"
#include "backend/trainer/optimizer/adamw.h"
#include "backend/trainer/comm/communicator.h"

#include <cstdint>
#include <string>
#include <vector>

namespace trellis::trainer {

inline constexpr const char *kCheckpointFormat = "trellis.checkpoint/1";

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

// Collective over `world` (every rank calls it). Returns "" or a message naming the file.
std::string saveCheckpoint(HostCommunicator &world, const std::string &dir, const plan::Plan &plan, const TrainingState &state,
                           std::uint64_t parameterCount, int keep);

struct LoadResult {
    bool found = false;          // false: no usable checkpoint (start fresh)
    std::string error;           // fatal: a checkpoint exists but cannot be used with this plan
    std::vector<std::string> skipped; // incomplete or corrupt checkpoints passed over, with reasons
    std::string path;            // the checkpoint loaded
};

// Loads the newest complete checkpoint whose checksums verify. Fills `state` for `owned` ranges
// (moments assembled from whichever shards hold them). Errors name the file and the field.
// replica: with local updates the dp rank whose own state to load (a local-update checkpoint
// resumes at the same dp degree and mode only: each replica takes its own shards back, any tp/pp
// layout); -1 for every-step training. A local-update run may start from an every-step
// checkpoint: its replicas begin equal, the outer state fresh (state.replica stays -1).
LoadResult loadCheckpoint(const std::string &dir, const plan::Plan &plan, std::uint64_t parameterCount,
                          const std::vector<ParamRange> &owned, TrainingState &state, int replica = -1, int rank = -1);

std::uint64_t fnv1a64(const void *data, std::size_t bytes, std::uint64_t seed = 0xcbf29ce484222325ULL);

} // namespace trellis::trainer
