// Planner search (docs/architecture.md §5): every valid plan for a model, a cluster and a global batch —
// dp × tp × pp filling the cluster, ZeRO stage, schedule and virtual stages, micro-batch size,
// recompute — estimated with the cost model's fast path, those that do not fit in the devices'
// memory dropped, the rest ranked by predicted tokens/s. Each candidate says why it is where it is.
// At 16,384 GPUs it stays within seconds and megabytes: the cluster, training and launch sections
// are validated once (candidates differ only in model and parallelism), plans are changed in one
// working copy, and only those that can still enter the best `top` are copied and kept.
#pragma once

#include "backend/plan/cost/cost_model.h"
#include "backend/plan/plan.h"

#include <string>
#include <vector>

namespace trellis::plan {

struct SearchRequest {
    ModelSpec model;
    ClusterSpec cluster;
    int globalBatch = 0; // sequences per step; 0: 4 per device
    int top = 10;
    TrainingSpec training; // carried into the plans (steps for the cost of a run)
    // Every plan copied, validated in full and kept until all are ranked: the plain search the
    // fast one (the default) must agree with, plan for plan — tests compare them.
    bool exhaustive = false;
};

struct Candidate {
    Plan plan;
    Estimate estimate;
    std::string reason; // e.g. "tp=8 keeps the all-reduce on NVLink; 9% bubble with zb-h1; 61 of 80 GB"
    // Empty when trellis-trainer launches the plan; else why not yet (the first of
    // checkTrainerSupport's errors, naming the field).
    std::string notLaunchable;
};

struct SearchResult {
    std::vector<Candidate> best;  // at most `top`, fastest first
    long considered = 0;          // plans enumerated
    long valid = 0;               // of those, valid
    long fitting = 0;             // of those, fitting in memory
};

SearchResult searchPlans(const SearchRequest &request);

} // namespace trellis::plan
