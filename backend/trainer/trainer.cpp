// The per-rank training loop; see trainer.h. Everything that depends on the kind of parallelism
// sits behind ParallelStack: this file has no branch on it.
#include "trainer/trainer.h"

#include "plan/mesh.h"
#include "protocol/exit_codes.h"
#include "trainer/adamw.h"
#include "trainer/checkpoint.h"
#include "trainer/comm/allreduce_algorithm.h"
#include "trainer/comm/process_groups.h"
#include "trainer/data_loader.h"
#include "trainer/interop/hf_layout.h"
#include "kernels/cpu/half_gemm.h"
#include "trainer/non_finite.h"
#include "trainer/parallel/parallel_stack.h"
#include "trainer/precision/loss_scaler.h"
#include "trainer/step_telemetry.h"
#include "trainer/node_relay.h"
#include "trainer/telemetry_publisher.h"
#include "trainer/trainer_error.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <new>

namespace trellis::trainer {
namespace {

using Clock = std::chrono::steady_clock;

double msBetween(Clock::time_point a, Clock::time_point b)
{
    return std::chrono::duration<double, std::milli>(b - a).count();
}

// Relative paths in the plan (data, checkpoints) resolve against the plan's folder.
std::string resolve(const std::string &planDir, const std::string &path)
{
    if (!path.empty() && std::filesystem::path(path).is_relative() && !planDir.empty())
        return (std::filesystem::path(planDir) / path).lexically_normal().string();
    return path;
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
                      ? DataLoader::fromTokenFile(resolve(planDir, ts.data.path), ms.seqLen, ms.vocab, ts.seed)
                      : DataLoader::fromTextFile(resolve(planDir, ts.data.path), ms.seqLen, ts.seed);
    if (!loaded)
        throw TrainerError(proto::kExitDataError, loaded.errorText());
    return std::move(loaded).value();
}

// How this rank's kernels run the plan's precision (Hello, and rank 0's start-up line): for the
// 16-bit types, which GEMM backend, and whether the CPU computes bf16 natively.
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

// Every range this rank owns, its parameters and moments; ranges in the whole model's index.
void saveState(HostCommunicator &world, ParallelStack &stack, const AdamW &optimizer, const LossScaler &scaler,
               const plan::Plan &plan, const std::string &dir, std::uint64_t step)
{
    TrainingState state;
    state.step = step;
    state.adamStep = optimizer.stepCount();
    state.precision = plan::toString(plan.parallel.precision);
    if (scaler.enabled()) {
        state.lossScale = scaler.scale();
        state.lossScaleClean = scaler.cleanSteps();
    }
    // Local updates: each replica its own parameters and moments, and the outer state.
    const OuterSync *outer = stack.outerSync();
    if (outer) {
        state.replica = stack.replica();
        state.replicas = plan.parallel.dp;
        state.dpSync = plan::toString(plan.parallel.dpSync.mode);
        state.innerSteps = outer->innerSteps();
        state.outerSteps = outer->outerSteps();
    }
    state.extra = stack.ownState();
    const std::vector<float> m = optimizer.firstMoments(), v = optimizer.secondMoments();
    for (const CheckpointPiece &p : stack.checkpointPieces()) {
        const std::size_t n = p.whole.end - p.whole.begin;
        state.ranges.push_back(p.whole);
        state.rangeParameters.resize(state.rangeParameters.size() + n);
        stack.device().toHost(state.rangeParameters.data() + state.rangeParameters.size() - n, p.params, n * sizeof(float));
        state.m.insert(state.m.end(), m.begin() + static_cast<long>(p.moment), m.begin() + static_cast<long>(p.moment + n));
        state.v.insert(state.v.end(), v.begin() + static_cast<long>(p.moment), v.begin() + static_cast<long>(p.moment + n));
        if (outer) // host memory (local updates run on CPUs)
            outer->saveState(p.params, n, state.anchor, state.outerMomentum);
    }
    const std::string error = saveCheckpoint(world, dir, plan, state, stack.wholeParameterCount(), plan.training.checkpoint.keep);
    if (!error.empty())
        throw TrainerError(proto::kExitCheckpointError, error);
}

// Rank 0 writes PATH, rank r > 0 writes PATH.rank<r>.
void dump(const std::string &path, int rank, const void *data, std::size_t bytes)
{
    if (path.empty())
        return;
    const std::string target = rank == 0 ? path : path + ".rank" + std::to_string(rank);
    std::ofstream out(target + ".tmp", std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char *>(data), static_cast<std::streamsize>(bytes));
    out.close();
    std::error_code ec;
    if (out)
        std::filesystem::rename(target + ".tmp", target, ec);
    if (!out || ec)
        throw TrainerError(proto::kExitIoError, target + ": cannot be written");
}

// The dumps for comparisons that hold the whole model: gathered over the world (collective), in
// transformers' layout where the path ends in .safetensors (rank 0 writes it), else raw float32.
void dumpWhole(ParallelStack &stack, int rank, const std::string &path, const std::vector<float> &values)
{
    if (!path.ends_with(".safetensors")) {
        dump(path, rank, values.data(), values.size() * sizeof(float));
        return;
    }
    GptConfig whole = stack.config();
    whole.tp = whole.cp = whole.ep = 1;
    whole.tpRank = whole.cpRank = whole.epRank = 0;
    if (rank == 0)
        if (const std::string e = writeHuggingFaceTensors(whole, values, path, "trellis-trainer dump"); !e.empty())
            throw TrainerError(proto::kExitIoError, e);
}

// A step's forward and backward, reduced: the loss over every rank and this rank's own.
struct StepPass {
    StepOutput out;
    double localLoss = 0, loss = 0;
};

// The steps of one rank's run, over the parts Trainer::train sets up: where it starts (a
// checkpoint, or transformers-layout weights), each step, and the dumps at the end.
class TrainingRun {
public:
    TrainingRun(const plan::Plan &plan, const TrainerOptions &options, MpiCommunicator &world, TelemetryPublisher &telemetry,
                const plan::MeshCoordinates &coords, ProcessGroups &groups, ParallelStack &stack, AdamW &optimizer,
                LossScaler &scaler, const DataLoader &data)
        : m_plan(plan), m_options(options), m_world(world), m_telemetry(telemetry), m_coords(coords), m_groups(groups),
          m_stack(stack), m_optimizer(optimizer), m_scaler(scaler), m_data(data), m_rank(world.rank()),
          m_checkpointDir(resolve(options.planDir, plan.training.checkpoint.dir)), m_faults(options.inject, m_rank),
          m_schedule{plan.training.lr, plan.training.minLr, plan.training.warmupSteps, plan.training.steps},
          m_tokensPerStep(static_cast<std::uint64_t>(plan.parallel.microBatchSize) * plan.parallel.microBatches *
                          static_cast<std::uint64_t>(plan.model.seqLen))
    {
    }

    // Resume: parameters, moments and step from the newest complete checkpoint (any layout); else a
    // fresh start, from transformers-layout weights when training.init.from names them. Returns the
    // first step to run.
    int start()
    {
        const bool resumed = m_options.resume && !m_checkpointDir.empty() && resume();
        if (!resumed && !m_plan.training.init.from.empty())
            initialiseFromWeights();
        return m_firstStep;
    }
    void runStep(int step, std::uint64_t stepNumber);
    void dumpResults();

private:
    bool resume();
    void requireSameCheckpoint(bool found, std::uint64_t step);
    void initialiseFromWeights();
    std::vector<Batch> loadBatches(int step);
    StepPass forwardBackward(int step, std::uint64_t stepNumber, const std::vector<Batch> &batches, double lossScale);
    bool overflowed(std::uint64_t stepNumber, const StepPass &pass, double gradNorm);
    void skipNonFinite(std::uint64_t stepNumber, const StepPass &pass, double gradNorm);
    void update(double gradNorm, double lr);
    void checkpointIfDue(int step, std::uint64_t stepNumber);
    void publishEvent(proto::Event::Kind kind, std::uint64_t step, const std::string &message);
    void announceOuterStep(std::uint64_t stepNumber);
    void restoreOwnState(const std::string &saved);

    const plan::Plan &m_plan;
    const TrainerOptions &m_options;
    MpiCommunicator &m_world;
    TelemetryPublisher &m_telemetry;
    const plan::MeshCoordinates &m_coords;
    ProcessGroups &m_groups;
    ParallelStack &m_stack;
    AdamW &m_optimizer;
    LossScaler &m_scaler;
    const DataLoader &m_data;
    const int m_rank;
    const std::string m_checkpointDir;
    FaultInjector m_faults;
    const LrSchedule m_schedule;
    const std::uint64_t m_tokensPerStep;
    int m_firstStep = 0;
    std::vector<double> m_losses;
    int m_skippedInARow = 0;
    std::uint64_t m_outerSteps = 0; // local updates: outer steps announced
};

// Local updates (parallel.dp_sync): rank 0 names each outer step in the run's events.
void TrainingRun::announceOuterStep(std::uint64_t stepNumber)
{
    const OuterSync *outer = m_stack.outerSync();
    if (!outer || outer->outerSteps() == m_outerSteps)
        return;
    m_outerSteps = outer->outerSteps();
    if (m_rank != 0)
        return;
    const plan::DpSyncSpec &sync = m_plan.parallel.dpSync;
    char mb[32];
    std::snprintf(mb, sizeof mb, "%.1f", static_cast<double>(outer->bytesPerSync()) / (1 << 20));
    publishEvent(proto::Event::INFO, stepNumber,
                 std::string(plan::toString(sync.mode)) + " outer step " + std::to_string(m_outerSteps) +
                     ": the replicas' parameters averaged over dp (" + mb + " MB a rank, after " +
                     std::to_string(sync.innerSteps) + " steps without gradient reduction)");
}

// A rank's own state from the checkpoint (PowerSGD's error feedback and Q); without it (another
// layout, or a checkpoint written without compression) the compression starts afresh, said once.
void TrainingRun::restoreOwnState(const std::string &saved)
{
    const std::string why = m_stack.restoreOwnState(saved);
    const std::int32_t failed = why.empty() ? 0 : 1;
    if (m_world.host().allReduce(failed, ReduceOp::Sum) > 0 && m_rank == 0)
        std::printf("PowerSGD starts afresh (error feedback 0, a new Q): %s\n",
                    why.empty() ? "another rank's saved state does not fit" : why.c_str());
}

void TrainingRun::publishEvent(proto::Event::Kind kind, std::uint64_t step, const std::string &message)
{
    proto::Envelope e;
    e.mutable_event()->set_kind(kind);
    e.mutable_event()->set_step(step);
    e.mutable_event()->set_message(message);
    m_telemetry.publish(std::move(e));
}

bool TrainingRun::resume()
{
    TrainingState restored;
    const LoadResult loaded =
        loadCheckpoint(m_checkpointDir, m_plan, m_stack.wholeParameterCount(), m_stack.ownedWhole(), restored, m_stack.replica(),
                       m_rank);
    for (const auto &why : loaded.skipped)
        if (m_rank == 0)
            std::fprintf(stderr, "trellis-trainer: skipping checkpoint: %s\n", why.c_str());
    if (!loaded.error.empty())
        throw TrainerError(proto::kExitCheckpointError, loaded.error);
    if (loaded.found) {
        m_stack.setParameters(restored.parameters); // local updates: the anchor too, the momentum 0
        if (restored.replica >= 0) { // a local-update checkpoint: its outer state
            m_stack.restoreOuterState(restored.anchor, restored.outerMomentum, restored.innerSteps, restored.outerSteps);
            m_outerSteps = restored.outerSteps; // announced before the restart
        }
        m_optimizer.restore(restored.m, restored.v, restored.adamStep);
        m_scaler.restore(restored.lossScale, restored.lossScaleClean);
        m_firstStep = static_cast<int>(restored.step);
        if (m_rank == 0)
            std::printf("resumed from %s (step %d)\n", loaded.path.c_str(), m_firstStep);
        publishEvent(proto::Event::RESTART, restored.step, "resumed from " + loaded.path);
    } else if (m_rank == 0) {
        std::printf("no checkpoint in %s: starting at step 0\n", m_checkpointDir.c_str());
    }
    requireSameCheckpoint(loaded.found, restored.step);
    if (loaded.found) // collective: after every rank is known to resume
        restoreOwnState(restored.extra);
    return loaded.found;
}

// Every rank must resume from the same step: folders that differ between hosts are refused.
void TrainingRun::requireSameCheckpoint(bool found, std::uint64_t step)
{
    const std::int64_t mine = found ? static_cast<std::int64_t>(step) : -1;
    const std::vector<std::int64_t> every = m_world.host().allGather(mine);
    for (std::size_t r = 0; r < every.size(); ++r)
        if (every[r] != every[0]) {
            auto what = [](std::int64_t s) { return s < 0 ? std::string("no checkpoint") : "step " + std::to_string(s); };
            throw TrainerError(proto::kExitCheckpointError,
                               "ranks found different checkpoints in " + m_checkpointDir + ": rank 0 " + what(every[0]) + ", rank " +
                                   std::to_string(r) + " " + what(every[r]) +
                                   " (every rank must see the same checkpoints: a folder every host shares, or the copies "
                                   "the ssh target puts on each host before a restart)");
        }
}

// A fresh start from transformers-layout weights (training.init.from), cut onto this layout.
void TrainingRun::initialiseFromWeights()
{
    const std::string from = resolve(m_options.planDir, m_plan.training.init.from);
    GptConfig whole = m_stack.config();
    whole.tp = whole.cp = whole.ep = 1;
    whole.tpRank = whole.cpRank = whole.epRank = 0;
    std::vector<float> weights;
    if (const std::string e = importHuggingFace(whole, from, weights); !e.empty())
        throw TrainerError(proto::kExitPlanInvalid, "training.init.from: " + e);
    m_stack.setParameters(weights);
    if (m_rank == 0 && !m_options.quiet)
        std::printf("initialised from %s\n", from.c_str());
}

// This dp replica's share of the global batch; every pipeline stage takes the same. Rank 0 dumps
// its first step's micro-batches when asked to.
std::vector<Batch> TrainingRun::loadBatches(int step)
{
    const plan::ParallelSpec &ps = m_plan.parallel;
    std::vector<Batch> batches;
    for (int mb = 0; mb < ps.microBatches; ++mb)
        batches.push_back(m_data.batch(static_cast<std::uint64_t>(step), m_coords.dp, ps.dp, mb, ps.microBatches, ps.microBatchSize));
    if (step == m_firstStep && m_rank == 0 && !m_options.dumpBatchPath.empty()) {
        std::vector<std::int32_t> all;
        for (const Batch &b : batches) {
            all.insert(all.end(), b.tokens.begin(), b.tokens.end());
            all.insert(all.end(), b.targets.begin(), b.targets.end());
        }
        dump(m_options.dumpBatchPath, 0, all.data(), all.size() * sizeof(std::int32_t));
    }
    return batches;
}

// Forward and backward of the step's micro-batches, the gradients reduced (and unscaled), the
// loss over every rank.
StepPass TrainingRun::forwardBackward(int step, std::uint64_t stepNumber, const std::vector<Batch> &batches, double lossScale)
{
    std::vector<MicroBatch> micro;
    for (const Batch &b : batches)
        micro.push_back({b.tokens.data(), b.targets.data(), b.batch, b.seqLen});
    StepPass pass;
    pass.out = m_stack.run(micro, [&](const char *phase) { m_telemetry.setProgress(stepNumber, phase); }, lossScale);
    m_faults.afterCompute();
    m_telemetry.setProgress(stepNumber, "comm");
    m_stack.reduceGradients();
    if (m_scaler.enabled())
        m_stack.scaleGradients(1.0 / lossScale); // back to the loss's own gradients
    pass.localLoss = m_faults.loss(pass.out.hasLoss ? pass.out.loss : 0.0, stepNumber);
    pass.loss = m_stack.globalLoss(pass.localLoss);
    if (step == m_firstStep && !m_options.dumpGradsPath.empty())
        m_stack.captureGradients();
    return pass;
}

// fp16: an overflow anywhere (every rank's verdict, agreed over the world) skips the update
// and backs the scale off — expected now and then, counted and reported, not an error.
bool TrainingRun::overflowed(std::uint64_t stepNumber, const StepPass &pass, double gradNorm)
{
    if (!m_scaler.enabled())
        return false;
    const std::int32_t overflow =
        m_world.host().allReduce(std::int32_t(std::isfinite(gradNorm) && std::isfinite(pass.loss) ? 0 : 1), ReduceOp::Max);
    const bool skipped = m_scaler.update(overflow != 0);
    if (skipped && m_scaler.tooManySkipped())
        throw TrainerError(proto::kExitNonFinite,
                           diagnoseNonFinite(m_stack, m_world, stepNumber, pass.loss, gradNorm, std::isfinite(pass.localLoss)) +
                               "; " + std::to_string(m_scaler.skippedInARow()) +
                               " steps in a row overflowed in fp16 (parallel.loss_scale.max_skipped " +
                               std::to_string(m_plan.parallel.lossScale.maxSkipped) + ", scale now " +
                               formatScale(m_scaler.scale()) + ")");
    if (skipped && m_rank == 0 && !m_options.quiet)
        std::fprintf(stderr, "trellis-trainer: step %llu overflowed in fp16: update skipped, loss scale %s\n",
                     static_cast<unsigned long long>(stepNumber), formatScale(m_scaler.scale()).c_str());
    return skipped;
}

// Name the step, the rank and the first tensor; stop, or skip the update (on_non_finite).
void TrainingRun::skipNonFinite(std::uint64_t stepNumber, const StepPass &pass, double gradNorm)
{
    const std::string why = diagnoseNonFinite(m_stack, m_world, stepNumber, pass.loss, gradNorm, std::isfinite(pass.localLoss));
    if (m_plan.training.onNonFinite == plan::NonFinitePolicy::Stop)
        throw TrainerError(proto::kExitNonFinite, why);
    if (++m_skippedInARow > 10)
        throw TrainerError(proto::kExitNonFinite, why + "; 10 steps in a row were skipped already");
    m_stack.afterOptimizerStep(); // nothing was updated: the gathers only refresh the same values
    if (m_rank == 0) {
        std::fprintf(stderr, "trellis-trainer: skipping the update of step %llu: %s\n",
                     static_cast<unsigned long long>(stepNumber), why.c_str());
        publishEvent(proto::Event::NON_FINITE, stepNumber,
                     "skipped the update of step " + std::to_string(stepNumber) + ": " + why);
    }
}

// Clipping to the global norm, then AdamW over the ranges this rank owns.
void TrainingRun::update(double gradNorm, double lr)
{
    m_skippedInARow = 0;
    std::vector<std::span<float>> grads;
    std::vector<float *> params;
    std::vector<const float *> gradPointers;
    for (const OwnedRange &o : m_stack.owned()) {
        grads.emplace_back(o.grads, o.range.end - o.range.begin);
        params.push_back(o.params);
        gradPointers.push_back(o.grads);
    }
    clipToNorm(grads, gradNorm, m_plan.training.gradClip, m_stack.device());
    m_optimizer.step(params, gradPointers, lr);
}

void TrainingRun::checkpointIfDue(int step, std::uint64_t stepNumber)
{
    const plan::TrainingSpec &ts = m_plan.training;
    if (ts.checkpoint.every > 0 && !m_checkpointDir.empty() &&
        (stepNumber % static_cast<std::uint64_t>(ts.checkpoint.every) == 0 || step + 1 == ts.steps)) {
        m_telemetry.setProgress(stepNumber, "checkpoint");
        saveState(m_world, m_stack, m_optimizer, m_scaler, m_plan, m_checkpointDir, stepNumber);
        publishEvent(proto::Event::CHECKPOINT, stepNumber, "checkpoint at step " + std::to_string(stepNumber));
    }
}

void TrainingRun::runStep(int step, std::uint64_t stepNumber)
{
    const plan::TrainingSpec &ts = m_plan.training;
    m_faults.beforeStep(stepNumber, m_telemetry);
    if (m_faults.poisonAt(stepNumber) && !m_stack.poison("lnf.weight") && !m_stack.tensors().empty())
        m_stack.poison(m_stack.tensors().front().name);
    const auto t0 = Clock::now();
    double blockingMs = 0;
    for (const DeviceCommunicator *g : m_groups.all())
        blockingMs -= g->totalMs();
    const std::vector<Batch> batches = loadBatches(step);

    m_stack.beginStep();
    const double lossScale = m_scaler.scale();
    const StepPass pass = forwardBackward(step, stepNumber, batches, lossScale);

    m_telemetry.setProgress(stepNumber, "optimizer");
    const double lr = m_schedule.at(step);
    const double gradNorm = m_stack.gradientNorm();
    const bool skipped = overflowed(stepNumber, pass, gradNorm);
    if (!skipped && (!std::isfinite(pass.loss) || !std::isfinite(gradNorm))) {
        skipNonFinite(stepNumber, pass, gradNorm);
        return;
    }
    if (!skipped)
        update(gradNorm, lr);
    m_telemetry.setProgress(stepNumber, "comm");
    m_stack.afterOptimizerStep(); // skipped: the gathers only refresh the same values
    const auto t1 = Clock::now();
    announceOuterStep(stepNumber);
    m_losses.push_back(pass.loss);
    checkpointIfDue(step, stepNumber);

    // Blocking time in every group's calls beyond the async reductions' waits; pipeline
    // receive waits are bubble, not communication.
    for (const DeviceCommunicator *g : m_groups.all())
        blockingMs += g->totalMs();
    blockingMs = std::max(0.0, blockingMs - pass.out.bubbleMs - m_stack.asyncExposedMs());
    StepFigures f;
    f.step = stepNumber;
    f.totalSteps = static_cast<std::uint64_t>(ts.steps);
    f.tokens = m_tokensPerStep;
    f.stepMs = msBetween(t0, t1);
    f.bubbleMs = pass.out.bubbleMs;
    f.commMs = m_stack.asyncCommMs() + blockingMs;
    f.exposedMs = m_stack.asyncExposedMs() + blockingMs;
    f.loss = pass.loss;
    f.gradNorm = gradNorm;
    f.lr = lr;
    f.parameterBytes = m_stack.parameterBytes();
    f.masterBytes = m_stack.masterBytes();
    f.lossScale = m_scaler.enabled() ? lossScale : 0.0;
    f.skippedSteps = m_scaler.skippedTotal();
    f.updateSkipped = skipped;
    const DpTraffic traffic = m_stack.dpTraffic();
    f.outerSteps = traffic.outerSteps;
    f.dpBytes = traffic.bytes;
    f.dpDenseBytes = traffic.denseBytes;
    f.gradientBytes = m_stack.gradientBytes();
    f.optimizerBytes = m_optimizer.stateBytes() + (m_stack.outerSync() ? m_stack.outerSync()->stateBytes() : 0);
    f.activationBytes = m_stack.activationBytes();
    f.bufferBytes = m_stack.bufferBytes();
    ExpertLoad load = m_stack.takeExpertLoad(); // taken every step; tp ranks > 0 route alike and stay quiet
    if (m_groups.tp().rank() == 0)
        f.experts = std::move(load);
    const bool traced = m_plan.telemetry.traceEvery > 0 && !m_stack.spans().empty() &&
                        stepNumber % static_cast<std::uint64_t>(m_plan.telemetry.traceEvery) == 0;
    publishStep(m_telemetry, f, m_groups.all(), traced ? &m_stack.spans() : nullptr);
    if (m_rank == 0 && !m_options.quiet)
        std::printf("step %5llu/%d  loss %.4f  lr %.2e  %.1f ms  %.0f tok/s/rank\n", static_cast<unsigned long long>(stepNumber),
                    ts.steps, pass.loss, lr, f.stepMs, static_cast<double>(m_tokensPerStep) / (f.stepMs / 1000.0));
    std::fflush(stdout);
}

// Dumps for comparisons: whole-model vectors, assembled over the world (collective); rank 0's losses.
void TrainingRun::dumpResults()
{
    if (!m_options.dumpParamsPath.empty())
        dumpWhole(m_stack, m_rank, m_options.dumpParamsPath, m_stack.gatherParameters());
    if (!m_options.dumpGradsPath.empty() && !m_losses.empty())
        dumpWhole(m_stack, m_rank, m_options.dumpGradsPath, m_stack.gatherCapturedGradients());
    if (m_rank == 0 && !m_options.dumpLossesPath.empty())
        dump(m_options.dumpLossesPath, 0, m_losses.data(), m_losses.size() * sizeof(double));
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
    LossScaler scaler(ps.lossScale, ps.precision == plan::Precision::Fp16);
    const DataLoader data = openData(m_plan, m_options.planDir);

    std::vector<ParamRange> owned;
    for (const OwnedRange &o : stack.owned())
        owned.push_back(o.range);
    AdamW optimizer(owned, {ts.beta1, ts.beta2, ts.eps, ts.weightDecay}, stack.device());
    optimizer.setDecayMask(stack.decayMask());

    TrainingRun run(m_plan, m_options, m_world, telemetry, coords, groups, stack, optimizer, scaler, data);
    for (int step = run.start(); step < ts.steps; ++step) {
        stepNumber = static_cast<std::uint64_t>(step) + 1;
        run.runStep(step, stepNumber);
    }
    run.dumpResults();
    telemetry.setProgress(static_cast<std::uint64_t>(ts.steps), "done");
    telemetry.close(proto::kExitOk, "completed", static_cast<std::uint64_t>(ts.steps));
    return proto::kExitOk;
}

} // namespace trellis::trainer
