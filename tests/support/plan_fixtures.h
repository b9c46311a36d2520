// Plans the cost-model tests build: a model and a cluster preset, a layout, synthetic data.
#pragma once

#include "backend/plan/plan.h"
#include "backend/plan/presets.h"

#include <string>

namespace trellis::test {

inline plan::Plan planFor(const std::string &model, const std::string &cluster, int nodes, int dp, int tp, int pp)
{
    plan::Plan p;
    p.name = std::string("t"); // (a move: GCC 12 warns falsely on assigning a literal here)
    p.model = *plan::modelPreset(model);
    p.cluster = plan::expandCluster(*plan::clusterPreset(cluster), nodes);
    p.parallel.dp = dp;
    p.parallel.tp = tp;
    p.parallel.pp = pp;
    p.parallel.microBatchSize = 1;
    p.parallel.microBatches = 2 * pp;
    p.training.data.source = "synthetic";
    return p;
}

} // namespace trellis::test
