// Model and cluster presets: named starting points a plan can refer to ("model.preset").
// Figures are public architecture and hardware numbers; each has its source beside it.
#pragma once

#include "plan.h"

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
};

std::optional<ClusterPreset> clusterPreset(const std::string &name);
std::vector<std::string> clusterPresetNames();

// Nodes "node0".."node<N-1>" (or "localhost" for one cpu-local node) filled from a preset.
ClusterSpec expandCluster(const ClusterPreset &preset, int nodeCount);

} // namespace trellis::plan
