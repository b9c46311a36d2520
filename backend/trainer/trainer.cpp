// The per-rank training loop; see trainer.h. Everything that depends on the kind of parallelism
// sits behind ParallelStack: this file has no branch on it.
#include "trainer/trainer.h"

#include "plan/mesh.h"
#include "protocol/exit_codes.h"
#include "trainer/adamw.h"
#include "trainer/checkpoint.h"
#include "trainer/comm/process_groups.h"
#include "trainer/data_loader.h"
#include "trainer/interop/hf_layout.h"
#include "kernels/cpu/half_gemm.h"
#include "trainer/non_finite.h"
#include "trainer/parallel/parallel_stack.h"
#include "trainer/precision/loss_scaler.h"
#include "trainer/step_telemetry.h"
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
    const std::vector<float> m = optimizer.firstMoments(), v = optimizer.secondMoments();
    for (const CheckpointPiece &p : stack.checkpointPieces()) {
        const std::size_t n = p.whole.end - p.whole.begin;
        state.ranges.push_back(p.whole);
        state.rangeParameters.resize(state.rangeParameters.size() + n);
        stack.device().toHost(state.rangeParameters.data() + state.rangeParameters.size() - n, p.params, n * sizeof(float));
        state.m.insert(state.m.end(), m.begin() + static_cast<long>(p.moment), m.begin() + static_cast<long>(p.moment + n));
        state.v.insert(state.v.end(), v.begin() + static_cast<long>(p.moment), v.begin() + static_cast<long>(p.moment + n));
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
    ParallelStack stack(m_plan, groups, {m_options.overlap && ps.overlapGradReduce});
    const std::string kernelsLine = kernelsNote(ps.precision, stack.device());
    publishHello(telemetry, m_world.size(), coords, stack.parameterCount(), stack.device().name(),
                 plan::toString(ps.precision), kernelsLine);
    if (rank == 0 && !m_options.quiet && !kernelsLine.empty())
        std::printf("precision %s: %s\n", plan::toString(ps.precision), kernelsLine.c_str());
    LossScaler scaler(ps.lossScale, ps.precision == plan::Precision::Fp16);
    const DataLoader data = openData(m_plan, m_options.planDir);

    std::vector<ParamRange> owned;
    for (const OwnedRange &o : stack.owned())
        owned.push_back(o.range);
    AdamW optimizer(owned, {ts.beta1, ts.beta2, ts.eps, ts.weightDecay}, stack.device());
    optimizer.setDecayMask(stack.decayMask());

    // Resume: parameters, moments and step from the newest complete checkpoint (any layout).
    const std::string checkpointDir = resolve(m_options.planDir, ts.checkpoint.dir);
    int firstStep = 0;
    bool resumed = false;
    if (m_options.resume && !checkpointDir.empty()) {
        TrainingState restored;
        const LoadResult loaded = loadCheckpoint(checkpointDir, m_plan, stack.wholeParameterCount(), stack.ownedWhole(), restored);
        for (const auto &why : loaded.skipped)
            if (rank == 0)
                std::fprintf(stderr, "trellis-trainer: skipping checkpoint: %s\n", why.c_str());
        if (!loaded.error.empty())
            throw TrainerError(proto::kExitCheckpointError, loaded.error);
        if (loaded.found) {
            resumed = true;
            stack.setParameters(restored.parameters);
            optimizer.restore(restored.m, restored.v, restored.adamStep);
            scaler.restore(restored.lossScale, restored.lossScaleClean);
            firstStep = static_cast<int>(restored.step);
            if (rank == 0)
                std::printf("resumed from %s (step %d)\n", loaded.path.c_str(), firstStep);
            proto::Envelope e;
            e.mutable_event()->set_kind(proto::Event::RESTART);
            e.mutable_event()->set_step(restored.step);
            e.mutable_event()->set_message("resumed from " + loaded.path);
            telemetry.publish(std::move(e));
        } else if (rank == 0) {
            std::printf("no checkpoint in %s: starting at step 0\n", checkpointDir.c_str());
        }
        // Every rank must resume from the same step: folders that differ between hosts are refused.
        const std::int64_t mine = loaded.found ? static_cast<std::int64_t>(restored.step) : -1;
        const std::vector<std::int64_t> every = m_world.host().allGather(mine);
        for (std::size_t r = 0; r < every.size(); ++r)
            if (every[r] != every[0]) {
                auto what = [](std::int64_t s) { return s < 0 ? std::string("no checkpoint") : "step " + std::to_string(s); };
                throw TrainerError(proto::kExitCheckpointError,
                                   "ranks found different checkpoints in " + checkpointDir + ": rank 0 " + what(every[0]) + ", rank " +
                                       std::to_string(r) + " " + what(every[r]) +
                                       " (every rank must see the same checkpoints: a folder every host shares, or the copies "
                                       "the ssh target puts on each host before a restart)");
            }
    }

    // A fresh start from transformers-layout weights (training.init.from), cut onto this layout.
    if (!resumed && !ts.init.from.empty()) {
        const std::string from = resolve(m_options.planDir, ts.init.from);
        GptConfig whole = stack.config();
        whole.tp = whole.cp = whole.ep = 1;
        whole.tpRank = whole.cpRank = whole.epRank = 0;
        std::vector<float> weights;
        if (const std::string e = importHuggingFace(whole, from, weights); !e.empty())
            throw TrainerError(proto::kExitPlanInvalid, "training.init.from: " + e);
        stack.setParameters(weights);
        if (rank == 0 && !m_options.quiet)
            std::printf("initialised from %s\n", from.c_str());
    }

    FaultInjector faults(m_options.inject, rank);
    const LrSchedule schedule{ts.lr, ts.minLr, ts.warmupSteps, ts.steps};
    const std::uint64_t tokensPerStep = static_cast<std::uint64_t>(ps.microBatchSize) * ps.microBatches *
                                        static_cast<std::uint64_t>(m_plan.model.seqLen);
    std::vector<double> losses;
    int skippedInARow = 0;
    for (int step = firstStep; step < ts.steps; ++step) {
        stepNumber = static_cast<std::uint64_t>(step) + 1;
        faults.beforeStep(stepNumber, telemetry);
        if (faults.poisonAt(stepNumber) && !stack.poison("lnf.weight") && !stack.tensors().empty())
            stack.poison(stack.tensors().front().name);
        const auto t0 = Clock::now();
        double blockingMs = 0;
        for (const DeviceCommunicator *g : groups.all())
            blockingMs -= g->totalMs();
        // This dp replica's share of the global batch; every pipeline stage takes the same.
        std::vector<Batch> batches;
        std::vector<MicroBatch> micro;
        for (int mb = 0; mb < ps.microBatches; ++mb)
            batches.push_back(data.batch(static_cast<std::uint64_t>(step), coords.dp, ps.dp, mb, ps.microBatches, ps.microBatchSize));
        for (const Batch &b : batches)
            micro.push_back({b.tokens.data(), b.targets.data(), b.batch, b.seqLen});
        if (step == firstStep && rank == 0 && !m_options.dumpBatchPath.empty()) {
            std::vector<std::int32_t> all;
            for (const Batch &b : batches) {
                all.insert(all.end(), b.tokens.begin(), b.tokens.end());
                all.insert(all.end(), b.targets.begin(), b.targets.end());
            }
            dump(m_options.dumpBatchPath, 0, all.data(), all.size() * sizeof(std::int32_t));
        }

        stack.beginStep();
        const double lossScale = scaler.scale();
        const StepOutput out =
            stack.run(micro, [&](const char *phase) { telemetry.setProgress(stepNumber, phase); }, lossScale);
        faults.afterCompute();
        telemetry.setProgress(stepNumber, "comm");
        stack.reduceGradients();
        if (scaler.enabled())
            stack.scaleGradients(1.0 / lossScale); // back to the loss's own gradients
        const double localLoss = faults.loss(out.hasLoss ? out.loss : 0.0, stepNumber);
        const double loss = stack.globalLoss(localLoss);
        if (step == firstStep && !m_options.dumpGradsPath.empty())
            stack.captureGradients();

        telemetry.setProgress(stepNumber, "optimizer");
        const double lr = schedule.at(step);
        const double gradNorm = stack.gradientNorm();
        // fp16: an overflow anywhere (every rank's verdict, agreed over the world) skips the update
        // and backs the scale off — expected now and then, counted and reported, not an error.
        bool skipped = false;
        if (scaler.enabled()) {
            const std::int32_t overflow =
                m_world.host().allReduce(std::int32_t(std::isfinite(gradNorm) && std::isfinite(loss) ? 0 : 1), ReduceOp::Max);
            skipped = scaler.update(overflow != 0);
            if (skipped && scaler.tooManySkipped())
                throw TrainerError(proto::kExitNonFinite,
                                   diagnoseNonFinite(stack, m_world, stepNumber, loss, gradNorm, std::isfinite(localLoss)) +
                                       "; " + std::to_string(scaler.skippedInARow()) +
                                       " steps in a row overflowed in fp16 (parallel.loss_scale.max_skipped " +
                                       std::to_string(ps.lossScale.maxSkipped) + ", scale now " +
                                       formatScale(scaler.scale()) + ")");
            if (skipped && rank == 0 && !m_options.quiet)
                std::fprintf(stderr, "trellis-trainer: step %llu overflowed in fp16: update skipped, loss scale %s\n",
                             static_cast<unsigned long long>(stepNumber), formatScale(scaler.scale()).c_str());
        }
        if (!skipped && (!std::isfinite(loss) || !std::isfinite(gradNorm))) {
            // Name the step, the rank and the first tensor; stop, or skip the update (on_non_finite).
            const std::string why = diagnoseNonFinite(stack, m_world, stepNumber, loss, gradNorm,
                                                      std::isfinite(localLoss));
            if (ts.onNonFinite == plan::NonFinitePolicy::Stop)
                throw TrainerError(proto::kExitNonFinite, why);
            if (++skippedInARow > 10)
                throw TrainerError(proto::kExitNonFinite, why + "; 10 steps in a row were skipped already");
            stack.afterOptimizerStep(); // nothing was updated: the gathers only refresh the same values
            if (rank == 0) {
                std::fprintf(stderr, "trellis-trainer: skipping the update of step %llu: %s\n",
                             static_cast<unsigned long long>(stepNumber), why.c_str());
                proto::Envelope e;
                e.mutable_event()->set_kind(proto::Event::NON_FINITE);
                e.mutable_event()->set_step(stepNumber);
                e.mutable_event()->set_message("skipped the update of step " + std::to_string(stepNumber) + ": " + why);
                telemetry.publish(std::move(e));
            }
            continue;
        }
        if (!skipped) {
            skippedInARow = 0;
            std::vector<std::span<float>> grads;
            std::vector<float *> params;
            std::vector<const float *> gradPointers;
            for (const OwnedRange &o : stack.owned()) {
                grads.emplace_back(o.grads, o.range.end - o.range.begin);
                params.push_back(o.params);
                gradPointers.push_back(o.grads);
            }
            clipToNorm(grads, gradNorm, ts.gradClip, stack.device());
            optimizer.step(params, gradPointers, lr);
        }
        telemetry.setProgress(stepNumber, "comm");
        stack.afterOptimizerStep(); // skipped: the gathers only refresh the same values
        const auto t1 = Clock::now();
        losses.push_back(loss);

        if (ts.checkpoint.every > 0 && !checkpointDir.empty() &&
            (stepNumber % static_cast<std::uint64_t>(ts.checkpoint.every) == 0 || step + 1 == ts.steps)) {
            telemetry.setProgress(stepNumber, "checkpoint");
            saveState(m_world, stack, optimizer, scaler, m_plan, checkpointDir, stepNumber);
            proto::Envelope e;
            e.mutable_event()->set_kind(proto::Event::CHECKPOINT);
            e.mutable_event()->set_step(stepNumber);
            e.mutable_event()->set_message("checkpoint at step " + std::to_string(stepNumber));
            telemetry.publish(std::move(e));
        }

        // Blocking time in every group's calls beyond the async reductions' waits; pipeline
        // receive waits are bubble, not communication.
        for (const DeviceCommunicator *g : groups.all())
            blockingMs += g->totalMs();
        blockingMs = std::max(0.0, blockingMs - out.bubbleMs - stack.asyncExposedMs());
        StepFigures f;
        f.step = stepNumber;
        f.totalSteps = static_cast<std::uint64_t>(ts.steps);
        f.tokens = tokensPerStep;
        f.stepMs = msBetween(t0, t1);
        f.bubbleMs = out.bubbleMs;
        f.commMs = stack.asyncCommMs() + blockingMs;
        f.exposedMs = stack.asyncExposedMs() + blockingMs;
        f.loss = loss;
        f.gradNorm = gradNorm;
        f.lr = lr;
        f.parameterBytes = stack.parameterBytes();
        f.masterBytes = stack.masterBytes();
        f.lossScale = scaler.enabled() ? lossScale : 0.0;
        f.skippedSteps = scaler.skippedTotal();
        f.updateSkipped = skipped;
        f.gradientBytes = stack.gradientBytes();
        f.optimizerBytes = optimizer.stateBytes();
        f.activationBytes = stack.activationBytes();
        f.bufferBytes = stack.bufferBytes();
        ExpertLoad load = stack.takeExpertLoad(); // taken every step; tp ranks > 0 route alike and stay quiet
        if (groups.tp().rank() == 0)
            f.experts = std::move(load);
        const bool traced = m_plan.telemetry.traceEvery > 0 && !stack.spans().empty() &&
                            stepNumber % static_cast<std::uint64_t>(m_plan.telemetry.traceEvery) == 0;
        publishStep(telemetry, f, groups.all(), traced ? &stack.spans() : nullptr);
        if (rank == 0 && !m_options.quiet)
            std::printf("step %5llu/%d  loss %.4f  lr %.2e  %.1f ms  %.0f tok/s/rank\n",
                        static_cast<unsigned long long>(stepNumber), ts.steps, loss, lr, f.stepMs,
                        static_cast<double>(tokensPerStep) / (f.stepMs / 1000.0));
        std::fflush(stdout);
    }

    // Dumps for comparisons: whole-model vectors, assembled over the world (collective).
    // A path ending in .safetensors gets the vector in transformers' layout (rank 0 writes it).
    auto dumpWhole = [&](const std::string &path, const std::vector<float> &values) {
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
    };
    if (!m_options.dumpParamsPath.empty())
        dumpWhole(m_options.dumpParamsPath, stack.gatherParameters());
    if (!m_options.dumpGradsPath.empty() && !losses.empty())
        dumpWhole(m_options.dumpGradsPath, stack.gatherCapturedGradients());
    if (rank == 0 && !m_options.dumpLossesPath.empty())
        dump(m_options.dumpLossesPath, 0, losses.data(), losses.size() * sizeof(double));
    telemetry.setProgress(static_cast<std::uint64_t>(ts.steps), "done");
    telemetry.close(proto::kExitOk, "completed", static_cast<std::uint64_t>(ts.steps));
    return proto::kExitOk;
}

} // namespace trellis::trainer
