// The 128-GPU example plan (llama2-70b on 16 DGX H100 nodes, tp 8 · dp 4 · pp 4) and the same
// plan at another rank count: nodes added or cut, dp set to fill them (1 rank: one slot, no
// parallelism). For the mesh's tests and its benchmark.
#pragma once

#include "backend/plan/plan_json.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace trellis::test {

inline plan::Plan gpuPlan()
{
    auto loaded = plan::loadPlanFile(TRELLIS_SOURCE_DIR "/resources/plans/gpu/llama2-70b-dgx-h100.json");
    if (!loaded.ok()) {
        std::fprintf(stderr, "cannot load the 128-GPU plan\n");
        std::exit(1);
    }
    return loaded.value();
}

inline plan::Plan gpuPlanWithRanks(int ranks)
{
    plan::Plan p = gpuPlan();
    if (ranks == 1) {
        p.cluster.nodes.resize(1);
        p.cluster.nodes[0].slotCount = 1;
        p.parallel.tp = p.parallel.pp = p.parallel.dp = 1;
        return p;
    }
    const plan::NodeSpec node = p.cluster.nodes.back();
    p.cluster.nodes.clear();
    for (int i = 0; i < ranks / 8; ++i) {
        p.cluster.nodes.push_back(node);
        p.cluster.nodes.back().host = "node" + std::to_string(i);
    }
    p.parallel.dp = ranks / (p.parallel.tp * p.parallel.pp);
    return p;
}

} // namespace trellis::test
