// What a checkpoint costs: see CheckpointEstimate in cost_model.h.
#include "backend/plan/cost/cost_model.h"
#include "backend/plan/cost/cost_model_parts.h"
#include "backend/plan/mesh.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace trellis::plan {
namespace {

// Defaults where nothing was measured: a rank's single-threaded memcpy into a buffer it reuses,
// a GPU's device-to-host copy into pageable staging memory (PCIe Gen4/5 x16 moves 25–50 GB/s
// pinned, about half that pageable), a node's durable write (a local NVMe of a GPU node; a
// virtual disk of a CPU machine).
constexpr double kCpuCopyGBps = 4.0, kGpuCopyGBps = 12.0;
constexpr double kCpuDiskGBps = 0.5, kGpuDiskGBps = 2.0;

struct Spread {
    std::vector<std::uint64_t> perRank, perNode;
};

// Each rank's bytes a save, and each node's, as the trainer writes them (see the header).
Spread spreadOf(const Plan &plan)
{
    const detail::CostInputs in(plan, false);
    const ParallelSpec &p = plan.parallel;
    const Mesh mesh(p);
    const int world = mesh.worldSize();
    const bool localUpdates = p.dpSync.mode != DpSyncMode::EveryStep;
    const double perElement = checkpointBytesPerElement(plan);
    std::vector<double> stageElements(static_cast<std::size_t>(std::max(1, p.pp)), 0);
    for (int s = 0; s < p.pp; ++s) {
        const std::vector<std::uint64_t> units = detail::stageUnits(in, s);
        stageElements[static_cast<std::size_t>(s)] = static_cast<double>(std::accumulate(units.begin(), units.end(), std::uint64_t{0}));
    }
    Spread out;
    out.perRank.assign(static_cast<std::size_t>(world), 0);
    out.perNode.assign(1, 0);
    for (int r = 0; r < world; ++r) {
        const MeshCoordinates c = mesh.coordinatesOf(r);
        // Context-parallel ranks hold copies of the same parameters (ZeRO shards over dp × cp
        // together): with local updates the first cp rank of each replica writes its copy; with
        // ZeRO every rank its share; else the first dp × cp rank of each tp × pp position.
        const bool writes = localUpdates ? c.cp == 0 : p.zero > 0 || (c.dp == 0 && c.cp == 0);
        if (!writes)
            continue;
        const double elements = stageElements[static_cast<std::size_t>(c.pp)] / (localUpdates || p.zero == 0 ? 1 : in.dp);
        const auto bytes = static_cast<std::uint64_t>(elements * perElement);
        out.perRank[static_cast<std::size_t>(r)] = bytes;
        const auto node = static_cast<std::size_t>(std::max(0, Mesh::nodeOf(r, plan.cluster))); // unplaced: the first node's
        if (out.perNode.size() <= node)
            out.perNode.resize(node + 1, 0);
        out.perNode[node] += bytes;
    }
    return out;
}

std::uint64_t most(const std::vector<std::uint64_t> &values)
{
    return values.empty() ? 0 : *std::max_element(values.begin(), values.end());
}

// The staging buffers' bytes on the busiest node (what async saves keep in host memory).
std::uint64_t stagingPerNode(const Plan &plan) { return most(spreadOf(plan).perNode); }

// checkpointWarnings for a plan whose busiest node stages `staging` bytes.
Diagnostics warningsFor(const Plan &plan, double staging)
{
    Diagnostics out;
    const CheckpointSpec &c = plan.training.checkpoint;
    const double memory = plan.cluster.hostMemoryGB;
    if (c.every <= 0 || !(memory > 0))
        return out;
    std::string why;
    if (checkpointModeFor(c, staging, memory, &why) == CheckpointMode::Sync && !c.modeGiven)
        out.push_back({Severity::Warning, "training.checkpoint.mode", why});
    else if (c.modeGiven && c.mode == CheckpointMode::Async && staging > memory * 1e9 / 2)
        out.push_back({Severity::Warning, "training.checkpoint.mode",
                       "async saves' staging buffers would take " + memorySizeText(staging) + " of a node's " +
                           memorySizeText(memory * 1e9) + " host memory, more than half"});
    return out;
}

} // namespace

CheckpointMode resolvedCheckpointMode(const Plan &plan, double hostMemoryGB, std::string *why)
{
    const CheckpointSpec &c = plan.training.checkpoint;
    const double memory = hostMemoryGB > 0 ? hostMemoryGB : plan.cluster.hostMemoryGB;
    if (c.modeGiven || c.every <= 0 || !(memory > 0))
        return c.mode;
    return checkpointModeFor(c, static_cast<double>(stagingPerNode(plan)), memory, why);
}

Diagnostics checkpointWarnings(const Plan &plan)
{
    return plan.training.checkpoint.every > 0 ? warningsFor(plan, static_cast<double>(stagingPerNode(plan))) : Diagnostics{};
}

Diagnostics checkpointWarnings(const Plan &plan, const CheckpointEstimate &estimate)
{
    Diagnostics out = warningsFor(plan, static_cast<double>(estimate.mostBytesPerNode));
    // In-memory checkpoints' peer copies beside the run's own inter-node traffic, and their memory.
    if (estimate.peerShare > 0.25)
        out.push_back({Severity::Warning, "training.checkpoint.memory.every",
                       "the copies of each node's in-memory checkpoints on the next node would take " +
                           std::to_string(static_cast<int>(estimate.peerShare * 100 + 0.5)) +
                           "% of the inter-node bandwidth over the steps between saves, competing with the run's own traffic; "
                           "save to memory less often"});
    const double memory = plan.cluster.hostMemoryGB;
    if (estimate.memoryEvery > 0 && memory > 0 && static_cast<double>(estimate.memoryBytesPerNode) > memory * 1e9 / 2)
        out.push_back({Severity::Warning, "training.checkpoint.memory.keep",
                       "the memory store would take " + memorySizeText(static_cast<double>(estimate.memoryBytesPerNode)) + " of a node's " +
                           memorySizeText(memory * 1e9) + " host memory, more than half" +
                           (estimate.peerCopy ? " (its own saves and the previous node's copy)" : "")});
    return out;
}

CheckpointEstimate estimateCheckpoint(const Plan &plan, const DeviceSpec &device, double stepMs, double overlapMs)
{
    CheckpointEstimate e;
    const CheckpointSpec &c = plan.training.checkpoint;
    e.hostMemoryGB = plan.cluster.hostMemoryGB;
    if (c.memory.given) { // a node's store holds its ranks' shards of `keep` saves and the one being written
        e.memoryEvery = c.memory.every;
        e.memoryKeep = c.memory.keep;
        const std::uint64_t perNode = most(spreadOf(plan).perNode);
        e.peerCopy = plan.cluster.nodes.size() > 1;
        // and, on several nodes, the previous node's copy of as many (the busiest node's size: a bound)
        e.memoryBytesPerNode = perNode * static_cast<std::uint64_t>(std::max(1, c.memory.keep) + 1) * (e.peerCopy ? 2 : 1);
        if (e.peerCopy) {
            e.peerBytesPerSave = perNode;
            const double gbps = plan.cluster.interNode.bandwidthGBps > 0 ? plan.cluster.interNode.bandwidthGBps : 12.5;
            e.peerCopyMs = static_cast<double>(perNode) / (gbps * 1e9) * 1e3;
            if (stepMs > 0)
                e.peerShare = e.peerCopyMs / (stepMs * std::max(1, c.memory.every));
        }
    }
    if (c.every <= 0)
        return e;
    e.enabled = true;
    e.every = c.every;
    const Spread s = spreadOf(plan);
    e.bytesPerSave = std::accumulate(s.perRank.begin(), s.perRank.end(), std::uint64_t{0});
    e.mostBytesPerRank = most(s.perRank);
    e.mostBytesPerNode = most(s.perNode);
    e.mode = checkpointModeFor(c, static_cast<double>(e.mostBytesPerNode), plan.cluster.hostMemoryGB, &e.modeWhy);
    e.stagingBytesPerNode = e.mode == CheckpointMode::Async ? e.mostBytesPerNode : 0;
    const bool gpu = !plan.cluster.nodes.empty() && plan.cluster.nodes.front().device == DeviceKind::Cuda;
    const double copy = device.hostCopyGBps > 0 ? device.hostCopyGBps : gpu ? kGpuCopyGBps : kCpuCopyGBps;
    const double disk = device.diskWriteGBps > 0 ? device.diskWriteGBps : gpu ? kGpuDiskGBps : kCpuDiskGBps;
    e.copyMs = static_cast<double>(e.mostBytesPerRank) / (copy * 1e9) * 1e3;
    e.writeMs = static_cast<double>(e.mostBytesPerNode) / (disk * 1e9) * 1e3;
    // Async on CPUs the copy runs behind the next step's forward and backward (the update waits for
    // what is left of it); on GPUs it is made at the boundary (backend/trainer/training_run_state.cpp).
    e.copyBehind = e.mode == CheckpointMode::Async && !gpu;
    e.blockMs = e.mode == CheckpointMode::Sync ? e.copyMs + e.writeMs
                : e.copyBehind                 ? std::max(0.0, e.copyMs - overlapMs)
                                               : e.copyMs;
    e.landsEvery = c.every;
    if (stepMs > 0) {
        // Async: a save is put in place at the first boundary after its write ended; a save due
        // before that waits for it (when_busy wait: training waits for the rest of the write) or is
        // skipped (skip: one lands every so many steps) — backend/trainer/training_run_state.cpp.
        const double interval = stepMs * c.every;
        if (e.mode == CheckpointMode::Async && c.whenBusy == CheckpointWhenBusy::Wait) {
            e.writeWaitMs = std::max(0.0, e.writeMs - interval);
            e.blockMs += e.writeWaitMs;
        }
        if (e.mode == CheckpointMode::Async && c.whenBusy == CheckpointWhenBusy::Skip) {
            const int k = std::max(1, static_cast<int>(std::ceil(e.writeMs / stepMs - 1e-9))); // boundaries until it lands
            e.landsEvery = c.every * ((k + c.every - 1) / c.every);
        }
        e.overheadFraction = e.blockMs / interval;
    }
    return e;
}

} // namespace trellis::plan
