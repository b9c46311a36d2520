// Model and cluster presets: named starting points a plan can refer to ("model.preset").
// Figures are public architecture and hardware numbers; each has its source beside it.
#pragma once

#include "backend/plan/plan.h"

#include <optional>
#include <string>
#include <vector>

namespace trellis::plan {

std::optional<ModelSpec> modelPreset(const std::string &name);
std::vector<std::string> modelPresetNames();

struct ClusterPreset {
    std::string name;
    int slotsPerNode = 1;
    DeviceKind device = DeviceKind::Cpu;
    std::string gpuModel;
    LinkSpec intraNode;
    LinkSpec interNode;
    double pricePerDeviceHour = 0;
    double hostMemoryGB = 0; // a node's host memory (0: not known)
};

std::optional<ClusterPreset> clusterPreset(const std::string &name);
std::vector<std::string> clusterPresetNames();

// Nodes "node0".."node<N-1>" (or "localhost" for one cpu-local node) filled from a preset.
ClusterSpec expandCluster(const ClusterPreset &preset, int nodeCount);

// A new plan to start from: the model and cluster presets, every slot a data-parallel rank
// (tp = pp = 1, one micro-batch of one sequence), synthetic data, 100 steps. nullopt for an
// unknown preset or a node count below 1.
std::optional<Plan> starterPlan(const std::string &modelName, const std::string &clusterName, int nodeCount,
                                const std::string &name = "new plan");

} // namespace trellis::plan
