// What plan.h declares beside the data: parameter counts of a model and the names of the enums
// as the plan file spells them.
#include "backend/plan/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace trellis::plan {

bool Plan::operator==(const Plan &o) const
{
    return schema == o.schema && name == o.name && ownTrainer == o.ownTrainer && model == o.model && cluster == o.cluster &&
           parallel == o.parallel && training == o.training && telemetry == o.telemetry && launch == o.launch;
}

namespace {
std::uint64_t countParameters(const ModelSpec &m, std::uint64_t experts)
{
    const std::uint64_t V = static_cast<std::uint64_t>(m.vocab), C = static_cast<std::uint64_t>(m.hidden),
                        F = static_cast<std::uint64_t>(m.ffn), S = static_cast<std::uint64_t>(m.seqLen),
                        L = static_cast<std::uint64_t>(m.layers);
    const std::uint64_t K = m.heads > 0 ? C / static_cast<std::uint64_t>(m.heads) * static_cast<std::uint64_t>(m.kvHeads) : C;
    const std::uint64_t router = m.moe.experts > 0 ? C * static_cast<std::uint64_t>(m.moe.experts) : 0;
    if (m.arch == kArchLlama) // RMSNorm gains, q k v o without biases, SwiGLU, untied head
        return 2 * V * C + C + L * (2 * C + C * (C + 2 * K) + C * C + experts * 3 * C * F + router);
    return V * C + S * C + 2 * C + L * (4 * C + C * (C + 2 * K) + (C + 2 * K) + C * C + C + experts * (2 * C * F + F + C) + router);
}
} // namespace

int expertCapacity(const MoeSpec &moe, int seqLen)
{
    if (!moe.capacityFactor || moe.experts <= 0)
        return seqLen * std::max(1, moe.topK); // dropless: never more than every assignment
    return std::max(1, static_cast<int>(std::ceil(*moe.capacityFactor * seqLen * moe.topK / moe.experts)));
}

bool isReservedTrainerVariable(const std::string &name)
{
    static const char *const reserved[] = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                                           "TORCHELASTIC_RESTART_COUNT"};
    for (const char *r : reserved)
        if (name == r)
            return true;
    return name.rfind("TRELLIS_", 0) == 0 || name.rfind("OMPI_", 0) == 0 || name.rfind("PMIX_", 0) == 0;
}

std::uint64_t parameterCount(const ModelSpec &m)
{
    return countParameters(m, m.moe.experts > 0 ? static_cast<std::uint64_t>(m.moe.experts) : 1);
}

std::uint64_t activeParameterCount(const ModelSpec &m)
{
    return countParameters(m, m.moe.experts > 0 ? static_cast<std::uint64_t>(m.moe.topK) : 1);
}

const char *toString(DeviceKind kind) { return kind == DeviceKind::Cuda ? "cuda" : "cpu"; }
const char *toString(NonFinitePolicy p) { return p == NonFinitePolicy::Skip ? "skip" : "stop"; }
const char *toString(CheckpointMode m) { return m == CheckpointMode::Sync ? "sync" : "async"; }
const char *toString(CheckpointWhenBusy w) { return w == CheckpointWhenBusy::Skip ? "skip" : "wait"; }

double checkpointBytesPerElement(const Plan &plan)
{
    switch (plan.parallel.dpSync.mode) {
    case DpSyncMode::LocalSgd: return 16;
    case DpSyncMode::DiLoCo: return 20;
    case DpSyncMode::EveryStep: break;
    }
    return 12;
}

CheckpointMode checkpointModeFor(const CheckpointSpec &c, double stagingBytesPerNode, double hostMemoryGB, std::string *why)
{
    if (c.modeGiven || c.every <= 0 || !(hostMemoryGB > 0) || stagingBytesPerNode <= hostMemoryGB * 1e9 / 2)
        return c.mode;
    if (why)
        *why = "checkpoints are written sync: async saves' staging buffers would take " + memorySizeText(stagingBytesPerNode) +
               " of a node's " + memorySizeText(hostMemoryGB * 1e9) + " host memory, more than half (training.checkpoint.mode chooses)";
    return CheckpointMode::Sync;
}

std::string memorySizeText(double bytes)
{
    char text[32];
    std::snprintf(text, sizeof text, bytes >= 1e9 ? "%.1f GB" : "%.1f MB", bytes >= 1e9 ? bytes / 1e9 : bytes / 1e6);
    return text;
}

const char *toString(Recompute r)
{
    switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
    }
    return "none";
}
const char *toString(GradReduce g) { return g == GradReduce::Bf16 ? "bf16" : "fp32"; }

const char *toString(DpSyncMode m)
{
    switch (m) {
    case DpSyncMode::EveryStep: return "every_step";
    case DpSyncMode::LocalSgd: return "local_sgd";
    case DpSyncMode::DiLoCo: return "diloco";
    }
    return "?";
}

const char *toString(TelemetryRelay r)
{
    switch (r) {
    case TelemetryRelay::Auto: return "auto";
    case TelemetryRelay::On: return "on";
    case TelemetryRelay::Off: return "off";
    }
    return "?";
}

const char *toString(Precision p)
{
    switch (p) {
    case Precision::Fp32: return "fp32";
    case Precision::Bf16: return "bf16";
    case Precision::Fp16: return "fp16";
    }
    return "fp32";
}

const char *toString(Framework f)
{
    switch (f) {
    case Framework::Auto: return "auto";
    case Framework::Trellis: return "trellis";
    case Framework::Megatron: return "megatron";
    case Framework::DeepSpeed: return "deepspeed";
    }
    return "auto";
}

const char *toString(AttentionKernel a)
{
    switch (a) {
    case AttentionKernel::Auto: return "auto";
    case AttentionKernel::Materialized: return "materialized";
    case AttentionKernel::Flash: return "flash";
    }
    return "auto";
}

const char *toString(CpLayout layout) { return layout == CpLayout::Contiguous ? "contiguous" : "zigzag"; }

const char *toString(GradCompression kind) { return kind == GradCompression::PowerSgd ? "powersgd" : "none"; }

const char *toString(AllReduceAlgorithm a)
{
    switch (a) {
    case AllReduceAlgorithm::Ring: return "ring";
    case AllReduceAlgorithm::RecursiveDoubling: return "recursive_doubling";
    case AllReduceAlgorithm::Hierarchical: return "hierarchical";
    case AllReduceAlgorithm::Auto: break;
    }
    return "auto";
}
const char *toString(LaunchTarget t)
{
    switch (t) {
    case LaunchTarget::Local: return "local";
    case LaunchTarget::Ssh: return "ssh";
    case LaunchTarget::Slurm: return "slurm";
    }
    return "local";
}

} // namespace trellis::plan
