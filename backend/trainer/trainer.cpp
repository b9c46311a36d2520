// The per-rank training loop; see trainer.h: what a run is built from (the groups, the strategies,
// the optimizer, the data), then its steps (training_run.h). Everything that depends on the kind
// of parallelism sits behind ParallelStack: nothing here branches on it.
#include "backend/trainer/trainer.h"

#include "backend/plan/mesh.h"
#include "backend/protocol/exit_codes.h"
#include "backend/trainer/comm/allreduce_algorithm.h"
#include "backend/trainer/comm/process_groups.h"
#include "backend/trainer/common/trainer_error.h"
#include "backend/trainer/data/data_loader.h"
#include "backend/trainer/optimizer/adamw.h"
#include "backend/trainer/parallel/parallel_stack.h"
#include "backend/trainer/precision/loss_scaler.h"
#include "backend/trainer/telemetry/node_relay.h"
#include "backend/trainer/telemetry/step_telemetry.h"
#include "backend/trainer/telemetry/telemetry_publisher.h"
#include "backend/trainer/training_run.h"
#include "kernels/cpu/half_gemm.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <new>
#include <sstream>

namespace trellis::trainer {
namespace {

// This machine's host memory in GB (/proc/meminfo's MemTotal); 0 where it cannot be read.
double machineMemoryGB()
{
    std::ifstream in("/proc/meminfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("MemTotal:", 0) == 0) {
            std::istringstream fields(line.substr(9));
            double kib = 0;
            fields >> kib;
            return kib * 1024 / 1e9;
        }
    return 0;
}

// training.checkpoint.mode where the plan names none: async, unless the staging buffers would take
// more than half a node's host memory — the plan's cluster.host_memory_gb, else the smallest
// machine's among the ranks — then sync, said on stderr (even with --quiet) and as an event. The
// staging bytes are the ranks' own (what each writes), summed over the ranks of each node.
void resolveCheckpointMode(plan::Plan &plan, MpiCommunicator &world, ParallelStack &stack, TelemetryPublisher &telemetry)
{
    plan::CheckpointSpec &c = plan.training.checkpoint;
    if (c.modeGiven || c.every <= 0)
        return;
    HostCommunicator &host = world;
    double memory = plan.cluster.hostMemoryGB;
    if (!(memory > 0)) {
        const double mine = machineMemoryGB();
        memory = host.allReduce(mine > 0 ? mine : 1e12, ReduceOp::Min);
    }
    double elements = 0;
    for (const CheckpointPiece &p : stack.checkpointPieces())
        elements += static_cast<double>(p.whole.end - p.whole.begin);
    const std::vector<double> staging = host.allGather(elements * plan::checkpointBytesPerElement(plan));
    std::map<int, double> perNode;
    for (std::size_t r = 0; r < staging.size(); ++r)
        perNode[plan::Mesh::nodeOf(static_cast<int>(r), plan.cluster)] += staging[r];
    double most = 0;
    for (const auto &[node, bytes] : perNode)
        most = std::max(most, bytes);
    std::string why;
    c.mode = plan::checkpointModeFor(c, most, memory, &why);
    c.modeGiven = true;
    if (why.empty() || world.rank() != 0)
        return;
    std::fprintf(stderr, "%s\n", why.c_str());
    proto::Envelope e;
    e.mutable_event()->set_kind(proto::Event::INFO);
    e.mutable_event()->set_message(why);
    telemetry.publish(std::move(e));
}

DataLoader openData(const plan::Plan &plan, const std::string &planDir)
{
    const plan::ModelSpec &ms = plan.model;
    const plan::TrainingSpec &ts = plan.training;
    if (ts.data.source == "synthetic")
        return DataLoader::synthetic(1 << 20, ms.vocab, ms.seqLen, ts.seed);
    if (ts.data.source != "tokens" && ms.vocab < 256)
        throw TrainerError(proto::kExitDataError,
                           "model.vocab: byte-level text needs at least 256 tokens, got " + std::to_string(ms.vocab));
    auto loaded = ts.data.source == "tokens"
                      ? DataLoader::fromTokenFile(resolvePlanPath(planDir, ts.data.path), ms.seqLen, ms.vocab, ts.seed)
                      : DataLoader::fromTextFile(resolvePlanPath(planDir, ts.data.path), ms.seqLen, ts.seed);
    if (!loaded)
        throw TrainerError(proto::kExitDataError, loaded.errorText());
    return std::move(loaded).value();
}

// parallel.allreduce: hierarchical groups composed over the cluster's nodes; ring and recursive
// doubling were forced before MPI_Init (allreduce_algorithm.h) and are read back here. `say`:
// this rank prints what runs.
void setUpAllReduce(const plan::Plan &plan, ProcessGroups &groups, bool say)
{
    const plan::AllReduceAlgorithm a = plan.parallel.allReduce;
    if (a == plan::AllReduceAlgorithm::Hierarchical) {
        const std::vector<std::string> lines = groups.composeHierarchical(plan.cluster);
        if (say)
            for (const std::string &line : lines)
                std::printf("all-reduce %s\n", line.c_str());
    } else if (a != plan::AllReduceAlgorithm::Auto) {
        const std::string inEffect = allReduceParametersInEffect(); // every rank: MPI_T is per process
        if (say)
            std::printf("all-reduce: %s (Open MPI: %s)\n", plan::toString(a), inEffect.empty() ? "its parameters not readable" : inEffect.c_str());
    }
}

// How this rank's kernels run the plan's precision (Hello, and rank 0's start-up line): for the
// 16-bit types, which GEMM backend, and whether the CPU computes bf16 natively.
std::string kernelsNote(plan::Precision precision, const Device &device)
{
    if (precision == plan::Precision::Fp32 || device.kind() != kernels::Device::Cpu)
        return {};
    if (precision == plan::Precision::Fp16)
        return std::string("fp16 GEMMs: ") + kernels::cpu::gemm16Backend(kernels::DType::F16);
    std::string note = std::string("bf16 GEMMs: ") + kernels::cpu::gemm16Backend(kernels::DType::BF16);
    if (!kernels::cpu::nativeBf16Gemm())
        note += "; this CPU has no AVX512-BF16 or AMX, so bf16 runs slower than it could";
    return note;
}

} // namespace

Trainer::Trainer(plan::Plan plan, TrainerOptions options, MpiCommunicator &world)
    : m_plan(std::move(plan)), m_options(std::move(options)), m_world(world)
{
}

int Trainer::run()
{
    TelemetryPublisher::Options topt;
    topt.endpoint = m_options.endpoint.empty() ? m_plan.telemetry.endpoint : m_options.endpoint;
    topt.runId = m_options.runId;
    topt.curve = m_options.telemetryKeys;
    topt.rank = m_world.rank();
    topt.heartbeatMs = m_plan.telemetry.heartbeatMs;
    std::optional<NodeRelay> relay;
    if (m_options.nodeRelay && !topt.endpoint.empty())
        relay = setUpNodeRelay(m_world.handle(), m_options.runId, topt.endpoint, m_options.telemetryKeysPath);
    if (relay) {
        topt.supervisor = topt.endpoint;
        topt.relayName = relay->name;
        topt.endpoint = relay->endpoint;
        topt.relayRunning = [r = *relay] { return r.running(); };
        topt.startRelay = [r = *relay] { return r.ensure(); };
    }
    TelemetryPublisher telemetry(topt);
    std::uint64_t step = 0; // the step under way, for the failure report
    try {
        return train(telemetry, step);
    } catch (const TrainerError &e) {
        return publishFailure(telemetry, m_world.rank(), e.exitCode(), e.what(), step);
    } catch (const kernels::DeviceError &e) {
        return publishFailure(telemetry, m_world.rank(), proto::kExitDeviceError, e.what(), step);
    } catch (const std::bad_alloc &) {
        return publishFailure(telemetry, m_world.rank(), proto::kExitOutOfMemory, "out of memory", step);
    } catch (const std::exception &e) {
        return publishFailure(telemetry, m_world.rank(), proto::kExitInternalError, std::string("internal error: ") + e.what(), step);
    }
}

int Trainer::train(TelemetryPublisher &telemetry, std::uint64_t &stepNumber)
{
    const plan::ParallelSpec &ps = m_plan.parallel;
    const plan::TrainingSpec &ts = m_plan.training;
    const int rank = m_world.rank();
    const plan::Mesh mesh(ps);
    const plan::MeshCoordinates coords = mesh.coordinatesOf(rank);
    ProcessGroups groups(m_world, mesh);
    setUpAllReduce(m_plan, groups, rank == 0 && !m_options.quiet);
    ParallelStack stack(m_plan, groups, {m_options.overlap && ps.overlapGradReduce});
    const std::string kernelsLine = kernelsNote(ps.precision, stack.device());
    publishHello(telemetry, m_world.size(), coords, stack.parameterCount(), stack.device().name(),
                 plan::toString(ps.precision), kernelsLine);
    if (rank == 0 && !m_options.quiet && !kernelsLine.empty())
        std::printf("precision %s: %s\n", plan::toString(ps.precision), kernelsLine.c_str());
    if (const std::string note = stack.compressionNote(); rank == 0 && !m_options.quiet && !note.empty())
        std::printf("%s\n", note.c_str());
    if (const std::string &note = stack.placementNote(); rank == 0 && !note.empty())
        std::printf("%s; several ranks on GPUs have not yet been verified on two physical GPUs (docs/gpu.md)\n", note.c_str());
    LossScaler scaler(ps.lossScale, ps.precision == plan::Precision::Fp16);
    const DataLoader data = openData(m_plan, m_options.planDir);

    std::vector<ParamRange> owned;
    for (const OwnedRange &o : stack.owned())
        owned.push_back(o.range);
    AdamW optimizer(owned, {ts.beta1, ts.beta2, ts.eps, ts.weightDecay}, stack.device());
    optimizer.setDecayMask(stack.decayMask());

    resolveCheckpointMode(m_plan, m_world, stack, telemetry);
    TrainingRun run(m_plan, m_options, m_world, telemetry, coords, groups, stack, optimizer, scaler, data);
    for (int step = run.start(); step < ts.steps;) {
        stepNumber = static_cast<std::uint64_t>(step) + 1;
        if (run.runStep(step, stepNumber)) // a step the replica groups dropped is trained again
            ++step;
    }
    run.end();
    run.dumpResults();
    telemetry.setProgress(static_cast<std::uint64_t>(ts.steps), "done");
    telemetry.close(proto::kExitOk, "completed", static_cast<std::uint64_t>(ts.steps));
    return proto::kExitOk;
}

} // namespace trellis::trainer
