// Preset tables. Sources: GPT-2 paper (Radford et al. 2019) table 2 and the released configs;
// GPT-3 paper (Brown et al. 2020) table 2.1; Llama 2 paper (Touvron et al. 2023) table 1 and the
// released params.json; Llama 3 paper (Dubey et al. 2024) table 3; Mixtral paper (Jiang et al.
// 2024) table 1. Hardware: NVIDIA H100/A100/H200 datasheets and DGX user guides.
#include "backend/plan/presets.h"

#include <map>

namespace trellis::plan {
namespace {

ModelSpec model(const char *name, int layers, int hidden, int heads, int kvHeads, int ffn,
                int seqLen, int vocab, MoeSpec moe = {})
{
    // Llama and Mixtral: RMSNorm, SwiGLU, rotary positions, untied head, no biases.
    const std::string n = name;
    const char *arch = n.rfind("llama", 0) == 0 || n.rfind("mixtral", 0) == 0 ? kArchLlama : kArchGpt;
    return ModelSpec{name, arch, layers, hidden, heads, kvHeads, ffn, seqLen, vocab, moe};
}

const std::map<std::string, ModelSpec> &modelTable()
{
    static const std::map<std::string, ModelSpec> table = {
        // tiny: byte-level model that trains in about a minute on a laptop CPU.
        {"tiny", model("tiny", 2, 128, 4, 4, 512, 128, 256)},
        {"gpt2-124m", model("gpt2-124m", 12, 768, 12, 12, 3072, 1024, 50257)},
        {"gpt2-350m", model("gpt2-350m", 24, 1024, 16, 16, 4096, 1024, 50257)},
        {"gpt2-774m", model("gpt2-774m", 36, 1280, 20, 20, 5120, 1024, 50257)},
        {"gpt2-1.5b", model("gpt2-1.5b", 48, 1600, 25, 25, 6400, 1024, 50257)},
        {"gpt3-175b", model("gpt3-175b", 96, 12288, 96, 96, 49152, 2048, 50257)},
        {"llama2-7b", model("llama2-7b", 32, 4096, 32, 32, 11008, 4096, 32000)},
        {"llama2-13b", model("llama2-13b", 40, 5120, 40, 40, 13824, 4096, 32000)},
        {"llama2-70b", model("llama2-70b", 80, 8192, 64, 8, 28672, 4096, 32000)},
        {"llama3-405b", model("llama3-405b", 126, 16384, 128, 8, 53248, 8192, 128256)},
        {"mixtral-8x7b", model("mixtral-8x7b", 32, 4096, 32, 8, 14336, 32768, 32000, {8, 2, {}, 0.01})},
    };
    return table;
}

const std::map<std::string, ClusterPreset> &clusterTable()
{
    static const std::map<std::string, ClusterPreset> table = {
        // This machine's CPU: ranks talk through shared memory (OpenMPI vader BTL).
        {"cpu-local", {"cpu-local", 4, DeviceKind::Cpu, "", {10.0, 1.0}, {1.0, 50.0}, 0.0}},
        // Host memory a node (the last figure): DGX H100 and H200 HGX systems 2 TB, DGX A100
        // (80 GB) 2 TB, a typical 8x A100 PCIe server 1 TB; this machine's: not in the plan (the
        // trainer reads /proc/meminfo).
        // DGX H100: 8 GPUs, NVLink4 900 GB/s bidirectional per GPU (450 per direction),
        // 8x ConnectX-7 400 Gb/s = 50 GB/s per GPU between nodes.
        {"dgx-h100", {"dgx-h100", 8, DeviceKind::Cuda, "H100-SXM", {450.0, 3.0}, {50.0, 10.0}, 4.0, 2048}},
        // DGX A100: NVLink3 600 GB/s bidirectional per GPU, 8x HDR 200 Gb/s = 25 GB/s per GPU.
        {"dgx-a100", {"dgx-a100", 8, DeviceKind::Cuda, "A100-SXM", {300.0, 3.0}, {25.0, 10.0}, 2.0, 2048}},
        // 8x A100 PCIe: PCIe Gen4 x16 ~32 GB/s per direction, 100 Gb/s Ethernet between nodes.
        {"a100-pcie-8", {"a100-pcie-8", 8, DeviceKind::Cuda, "A100-PCIe", {32.0, 5.0}, {12.5, 15.0}, 1.5, 1024}},
        // H200 8-GPU HGX: same NVLink4 fabric as H100, 400 Gb/s NIC per GPU.
        {"h200-8", {"h200-8", 8, DeviceKind::Cuda, "H200-SXM", {450.0, 3.0}, {50.0, 10.0}, 5.0, 2048}},
    };
    return table;
}

} // namespace

std::optional<ModelSpec> modelPreset(const std::string &name)
{
    auto it = modelTable().find(name);
    if (it == modelTable().end())
        return std::nullopt;
    return it->second;
}

std::vector<std::string> modelPresetNames()
{
    std::vector<std::string> names;
    for (const auto &[name, spec] : modelTable())
        names.push_back(name);
    return names;
}

std::optional<ClusterPreset> clusterPreset(const std::string &name)
{
    auto it = clusterTable().find(name);
    if (it == clusterTable().end())
        return std::nullopt;
    return it->second;
}

std::vector<std::string> clusterPresetNames()
{
    std::vector<std::string> names;
    for (const auto &[name, spec] : clusterTable())
        names.push_back(name);
    return names;
}

ClusterSpec expandCluster(const ClusterPreset &preset, int nodeCount)
{
    ClusterSpec cluster;
    cluster.preset = preset.name;
    cluster.intraNode = preset.intraNode;
    cluster.interNode = preset.interNode;
    cluster.pricePerDeviceHour = preset.pricePerDeviceHour;
    cluster.hostMemoryGB = preset.hostMemoryGB;
    for (int i = 0; i < nodeCount; ++i) {
        NodeSpec node;
        node.host = (nodeCount == 1 && preset.device == DeviceKind::Cpu) ? "localhost"
                                                                        : "node" + std::to_string(i);
        node.slotCount = preset.slotsPerNode;
        node.device = preset.device;
        node.gpuModel = preset.gpuModel;
        cluster.nodes.push_back(node);
    }
    return cluster;
}

std::optional<Plan> starterPlan(const std::string &modelName, const std::string &clusterName, int nodeCount,
                                const std::string &name)
{
    const auto model = modelPreset(modelName);
    const auto cluster = clusterPreset(clusterName);
    if (!model || !cluster || nodeCount < 1)
        return std::nullopt;
    Plan p;
    p.name = name;
    p.model = *model;
    p.cluster = expandCluster(*cluster, nodeCount);
    p.parallel.dp = p.cluster.totalSlots();
    p.training.data.source = "synthetic";
    return p;
}

} // namespace trellis::plan
