// The steps of a run (training_run.h): the data, forward and backward, the reduced gradients, the
// update or its skip, and the step's figures published.
#include "backend/trainer/training_run.h"

#include "backend/protocol/exit_codes.h"
#include "backend/trainer/common/trainer_error.h"
#include "backend/trainer/non_finite.h"
#include "backend/trainer/telemetry/step_telemetry.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <utility>

namespace trellis::trainer {
namespace {

using Clock = std::chrono::steady_clock;

double msBetween(Clock::time_point a, Clock::time_point b)
{
    return std::chrono::duration<double, std::milli>(b - a).count();
}

// Blocking time in every group's calls so far (the step's is the difference of two readings).
double blockingMsOf(const ProcessGroups &groups)
{
    double ms = 0;
    for (const DeviceCommunicator *g : groups.all())
        ms += g->totalMs();
    return ms;
}

} // namespace

TrainingRun::TrainingRun(const plan::Plan &plan, const TrainerOptions &options, MpiCommunicator &world,
                         TelemetryPublisher &telemetry, const plan::MeshCoordinates &coords, ProcessGroups &groups,
                         ParallelStack &stack, AdamW &optimizer, LossScaler &scaler, const DataLoader &data)
    : m_plan(plan), m_options(options), m_world(world), m_telemetry(telemetry), m_coords(coords), m_groups(groups),
      m_stack(stack), m_optimizer(optimizer), m_scaler(scaler), m_data(data), m_rank(world.rank()),
      m_checkpointDir(resolvePlanPath(options.planDir, plan.training.checkpoint.dir)),
      m_checkpoints(plan.training.checkpoint.mode == plan::CheckpointMode::Async), m_faults(options.inject, m_rank),
      m_schedule{plan.training.lr, plan.training.minLr, plan.training.warmupSteps, plan.training.steps},
      m_tokensPerStep(static_cast<std::uint64_t>(plan.parallel.microBatchSize) * plan.parallel.microBatches *
                      static_cast<std::uint64_t>(plan.model.seqLen))
{
}

bool TrainingRun::runStep(int step, std::uint64_t stepNumber)
{
    if (m_replica)
        beginReplicaStep(step);
    m_faults.beforeStep(stepNumber, m_telemetry);
    double stagedWaitMs = 0; // training held for the last save's copy (checkpoint time, not the step's)
    if (m_faults.poisonAt(stepNumber)) {
        stagedWaitMs += m_checkpoints.waitStaged() + m_memoryCheckpoints.waitStaged(); // the saves copy the state before the fault
        if (!m_stack.poison("lnf.weight") && !m_stack.tensors().empty())
            m_stack.poison(m_stack.tensors().front().name);
    }
    // a save begun at the last boundary is written beside this step
    m_checkpointBehind = m_checkpoints.pending() || m_memoryCheckpoints.pending();
    const auto t0 = Clock::now();
    const double blockingBefore = blockingMsOf(m_groups);
    const std::vector<Batch> batches = loadBatches(step);

    m_stack.beginStep();
    const double lossScale = m_scaler.scale();
    StepPass pass = forwardBackward(step, stepNumber, batches, lossScale);
    if (m_replica && !commitReplicaStep(stepNumber, pass))
        return false;

    m_telemetry.setProgress(stepNumber, "checkpoint");
    // the update changes what a save begun at the last boundary copies
    stagedWaitMs += m_checkpoints.waitStaged() + m_memoryCheckpoints.waitStaged();
    m_telemetry.setProgress(stepNumber, "optimizer");
    const double lr = m_schedule.at(step);
    const double gradNorm = m_stack.gradientNorm();
    const bool skipped = overflowed(stepNumber, pass, gradNorm);
    if (!skipped && (!std::isfinite(pass.loss) || !std::isfinite(gradNorm))) {
        skipNonFinite(stepNumber, pass, gradNorm);
        return true;
    }
    if (!skipped)
        update(gradNorm, lr);
    m_telemetry.setProgress(stepNumber, "comm");
    m_stack.afterOptimizerStep(); // skipped: the gathers only refresh the same values
    const auto t1 = Clock::now();
    if (const std::string note = m_stack.takeStepNote(); !note.empty() && m_rank == 0)
        publishEvent(proto::Event::INFO, stepNumber, note);
    m_losses.push_back(pass.loss);
    const auto boundary = Clock::now();
    const bool checkpointed = checkpointIfDue(step, stepNumber);
    // 0: a boundary with nothing to save and no copy waited for
    m_checkpointMs = (checkpointed ? msBetween(boundary, Clock::now()) : 0.0) + stagedWaitMs;
    report(stepNumber, pass, msBetween(t0, t1) - stagedWaitMs, blockingMsOf(m_groups) - blockingBefore, gradNorm, lr, lossScale,
           skipped);
    return true;
}

// This dp replica's share of the global batch; every pipeline stage takes the same. Rank 0 dumps
// its first step's micro-batches when asked to.
std::vector<Batch> TrainingRun::loadBatches(int step)
{
    const plan::ParallelSpec &ps = m_plan.parallel;
    // A replica group's dp ranks are the run's group·dp .. (ps.dp is the group's).
    const int groups = std::max(1, m_options.replica.groups);
    const int dpRank = m_options.replica.group * ps.dp + m_coords.dp;
    std::vector<Batch> batches;
    for (int mb = 0; mb < ps.microBatches; ++mb)
        batches.push_back(m_data.batch(static_cast<std::uint64_t>(step), dpRank, ps.dp * groups, mb, ps.microBatches, ps.microBatchSize));
    if (step == m_firstStep && m_rank == 0 && !m_options.dumpBatchPath.empty()) {
        std::vector<std::int32_t> all;
        for (const Batch &b : batches) {
            all.insert(all.end(), b.tokens.begin(), b.tokens.end());
            all.insert(all.end(), b.targets.begin(), b.targets.end());
        }
        dumpToFile(m_options.dumpBatchPath, 0, all.data(), all.size() * sizeof(std::int32_t));
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
    m_faults.afterCompute(stepNumber);
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

// The step's figures to the supervisor (and rank 0's line on stdout). blockingMs: the time in
// every group's calls; beyond the async reductions' waits it is exposed communication, and
// pipeline receive waits are bubble, not communication.
void TrainingRun::report(std::uint64_t stepNumber, const StepPass &pass, double stepMs, double blockingMs, double gradNorm,
                         double lr, double lossScale, bool skipped)
{
    blockingMs = std::max(0.0, blockingMs - pass.out.bubbleMs - m_stack.asyncExposedMs());
    StepFigures f;
    f.step = stepNumber;
    f.totalSteps = static_cast<std::uint64_t>(m_plan.training.steps);
    f.tokens = m_tokensPerStep;
    f.stepMs = stepMs;
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
    f.checkpointMs = m_checkpointMs;
    f.checkpointBehind = m_checkpointBehind;
    f.checkpointWriteMs = std::exchange(m_checkpointWriteMs, 0.0);
    f.memoryCheckpointStep = m_memoryCheckpointStep;
    f.gradientBytes = m_stack.gradientBytes();
    f.optimizerBytes = m_optimizer.stateBytes() + m_stack.strategyOptimizerBytes();
    f.activationBytes = m_stack.activationBytes();
    f.deviceAllocated = m_stack.device().allocatedBytes();
    f.devicePeak = m_stack.device().peakBytes();
    f.deviceReserved = m_stack.device().reservedBytes();
    f.bufferBytes = m_stack.bufferBytes();
    ExpertLoad load = m_stack.takeExpertLoad(); // taken every step; tp ranks > 0 route alike and stay quiet
    if (m_groups.tp().rank() == 0)
        f.experts = std::move(load);
    const bool traced = m_plan.telemetry.traceEvery > 0 && !m_stack.spans().empty() &&
                        stepNumber % static_cast<std::uint64_t>(m_plan.telemetry.traceEvery) == 0;
    publishStep(m_telemetry, f, m_groups.all(), traced ? &m_stack.spans() : nullptr);
    if (m_rank == 0 && !m_options.quiet)
        std::printf("step %5llu/%d  loss %.4f  lr %.2e  %.1f ms  %.0f tok/s/rank\n", static_cast<unsigned long long>(stepNumber),
                    m_plan.training.steps, pass.loss, lr, f.stepMs, static_cast<double>(m_tokensPerStep) / (f.stepMs / 1000.0));
    std::fflush(stdout);
}

void TrainingRun::publishEvent(proto::Event::Kind kind, std::uint64_t step, const std::string &message)
{
    proto::Envelope e;
    e.mutable_event()->set_kind(kind);
    e.mutable_event()->set_step(step);
    e.mutable_event()->set_message(message);
    m_telemetry.publish(std::move(e));
}

} // namespace trellis::trainer
