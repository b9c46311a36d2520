// The per-rank training loop; see trainer.h.
#include "trainer/trainer.h"

#include "plan/mesh.h"
#include "protocol/exit_codes.h"
#include "protocol/telemetry.pb.h"
#include "trainer/adamw.h"
#include "trainer/checkpoint.h"
#include "trainer/data_loader.h"
#include "trainer/gpt_model.h"
#include "trainer/gradient_reducer.h"
#include "trainer/pipeline.h"
#include "trainer/sharded_data_parallel.h"
#include "trainer/telemetry_publisher.h"

#include <cblas.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

namespace trellis::trainer {
namespace {

using Clock = std::chrono::steady_clock;

double msBetween(Clock::time_point a, Clock::time_point b)
{
    return std::chrono::duration<double, std::milli>(b - a).count();
}

std::uint64_t peakRssBytes()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024; // ru_maxrss is in KiB on Linux
}

std::string hostName()
{
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    return host;
}

} // namespace

bool FaultInjection::parse(const std::string &text, FaultInjection &out, std::string &error)
{
    const auto at = text.find('@');
    const auto colon = text.find(':', at == std::string::npos ? 0 : at);
    if (at == std::string::npos || colon == std::string::npos) {
        error = "--inject expects KIND@RANK:STEP (e.g. crash@1:5), got '" + text + "'";
        return false;
    }
    const std::string kind = text.substr(0, at);
    if (kind == "crash") out.kind = FaultKind::Crash;
    else if (kind == "hang") out.kind = FaultKind::Hang;
    else if (kind == "slow") out.kind = FaultKind::Slow;
    else if (kind == "nan") out.kind = FaultKind::Nan;
    else {
        error = "--inject: unknown fault '" + kind + "' (expected crash, hang, slow or nan)";
        return false;
    }
    try {
        std::size_t used = 0;
        out.rank = std::stoi(text.substr(at + 1, colon - at - 1), &used);
        out.step = std::stoi(text.substr(colon + 1));
    } catch (const std::exception &) {
        error = "--inject: RANK and STEP must be integers in '" + text + "'";
        return false;
    }
    if (out.rank < 0 || out.step < 1) {
        error = "--inject: RANK must be >= 0 and STEP >= 1 in '" + text + "'";
        return false;
    }
    return true;
}

Trainer::Trainer(plan::Plan plan, TrainerOptions options, Communicator &world)
    : m_plan(std::move(plan)), m_options(std::move(options)), m_world(world)
{
}

int Trainer::run()
{
    const plan::ModelSpec &ms = m_plan.model;
    const plan::ParallelSpec &ps = m_plan.parallel;
    const plan::TrainingSpec &ts = m_plan.training;
    const int rank = m_world.rank();
    const plan::Mesh mesh(ps);
    const plan::MeshCoordinates coords = mesh.coordinatesOf(rank);
    const bool chief = rank == 0;

    TelemetryPublisher::Options topt;
    topt.endpoint = m_options.endpoint.empty() ? m_plan.telemetry.endpoint : m_options.endpoint;
    topt.runId = m_options.runId;
    topt.rank = rank;
    topt.heartbeatMs = m_plan.telemetry.heartbeatMs;
    TelemetryPublisher telemetry(topt);

    auto fail = [&](int code, const std::string &message, std::uint64_t step) {
        std::fprintf(stderr, "%s rank %d: %s\n", hostName().c_str(), rank, message.c_str());
        proto::Envelope e;
        auto *ev = e.mutable_event();
        ev->set_kind(code == proto::kExitNonFinite ? proto::Event::NON_FINITE : proto::Event::FAILURE);
        ev->set_step(step);
        ev->set_message(message);
        telemetry.publish(std::move(e));
        telemetry.close(code, message, step);
        return code;
    };

    GptConfig config;
    config.vocab = ms.vocab;
    config.maxSeqLen = ms.seqLen;
    config.layers = ms.layers;
    config.hidden = ms.hidden;
    config.heads = ms.heads;
    config.ffn = ms.ffn;
    config.tp = ps.tp;
    config.tpRank = coords.tp;
    config.sequenceParallel = ps.sequenceParallel;
    // Tensor parallelism: the ranks that share every coordinate but tp (consecutive ranks).
    std::unique_ptr<Communicator> tpGroup, tpDpGroup;
    if (ps.tp > 1) {
        tpGroup = m_world.split(rank / ps.tp, coords.tp, "tp");
        tpDpGroup = m_world.split(coords.tp, coords.dp, "dp");
    }
    GptModel<float> model(config);
    model.setTensorParallelGroup(tpGroup.get());
    model.initialize(ts.seed);
    model.setRecompute(ps.recompute == plan::Recompute::Full);

    {
        proto::Envelope e;
        auto *hello = e.mutable_hello();
        hello->set_host(hostName());
        hello->set_pid(static_cast<std::uint32_t>(getpid()));
        hello->set_device("cpu");
        hello->set_world_size(static_cast<std::uint32_t>(m_world.size()));
        auto *c = hello->mutable_coords();
        c->set_dp(coords.dp);
        c->set_tp(coords.tp);
        c->set_pp(coords.pp);
        c->set_cp(coords.cp);
        hello->set_trainer_version(TRELLIS_VERSION);
        hello->set_threads(static_cast<std::uint32_t>(openblas_get_num_threads()));
        hello->set_parameters(model.parameterCount());
        telemetry.publish(std::move(e));
    }

    // Relative paths in the plan (data, checkpoints) resolve against the plan's folder.
    auto resolvePath = [&](const std::string &path) {
        if (!path.empty() && std::filesystem::path(path).is_relative() && !m_options.planDir.empty())
            return (std::filesystem::path(m_options.planDir) / path).lexically_normal().string();
        return path;
    };
    const std::string dataPath = resolvePath(ts.data.path);
    std::optional<DataLoader> data;
    if (ts.data.source == "synthetic") {
        data = DataLoader::synthetic(1 << 20, ms.vocab, ms.seqLen, ts.seed);
    } else if (ts.data.source == "tokens") {
        auto loaded = DataLoader::fromTokenFile(dataPath, ms.seqLen, ms.vocab, ts.seed);
        if (!loaded)
            return fail(proto::kExitDataError, loaded.errorText(), 0);
        data = std::move(loaded).value();
    } else {
        if (ms.vocab < 256)
            return fail(proto::kExitDataError,
                        "model.vocab: byte-level text needs at least 256 tokens, got " + std::to_string(ms.vocab), 0);
        auto loaded = DataLoader::fromTextFile(dataPath, ms.seqLen, ts.seed);
        if (!loaded)
            return fail(proto::kExitDataError, loaded.errorText(), 0);
        data = std::move(loaded).value();
    }

    // Data parallelism. ZeRO 0/1: buckets cut from the end of the padded flat buffer, reduced while
    // backward runs; ZeRO-1 reduce-scatters instead and each rank updates only its chunk of every
    // bucket. ZeRO 2/3: the sharded unit-by-unit path (sharded_data_parallel.h).
    // Pipeline parallelism (pp > 1): groups from the mesh, the schedule generated and validated
    // (an invalid one never runs), the chunks of this stage; DP runs over the pipeline replicas.
    const int dp = ps.pp > 1 || ps.tp > 1 ? ps.dp : m_world.size();
    Communicator &dpComm = tpDpGroup ? *tpDpGroup : m_world; // data parallelism without a pipeline
    const bool zero1 = ps.zero == 1;
    const bool overlap = m_options.overlap && ps.overlapGradReduce;
    std::optional<GradientReducer> reducer;
    std::unique_ptr<ShardedDataParallel> sharded;
    std::unique_ptr<Communicator> ppGroup, dpGroup, sameTpGroup;
    std::optional<plan::Schedule> pipelineSchedule;
    std::unique_ptr<PipelineEngine> pipeline;
    std::vector<ParamRange> owned;
    if (ps.pp > 1) {
        auto generated = plan::generateSchedule(ps.schedule, ps.pp, ps.microBatches, ps.virtualStages);
        if (!generated)
            return fail(proto::kExitPlanInvalid, generated.errorText(), 0);
        pipelineSchedule = std::move(generated).value();
        if (const auto problems = plan::validateSchedule(*pipelineSchedule); !problems.empty())
            return fail(proto::kExitPlanInvalid, "schedule " + ps.schedule + " failed validation: " + problems.front(), 0);
        // Pipeline group: same tp and dp coordinates; DP group: same tp and pp; the ranks with this
        // tp coordinate assemble dumps.
        ppGroup = m_world.split(coords.tp + ps.tp * coords.dp, coords.pp, "pp");
        dpGroup = m_world.split(coords.tp + ps.tp * coords.pp, coords.dp, "dp");
        if (tpGroup)
            sameTpGroup = m_world.split(coords.tp, rank, "tp-peers");
        pipeline = std::make_unique<PipelineEngine>(model, ms, *pipelineSchedule, *ppGroup, *dpGroup, ps.zero,
                                                    ps.recompute == plan::Recompute::Full, tpGroup.get());
        owned = pipeline->owned();
        model.releaseFlatParameters(); // the stages hold their own copies
        model.releaseFlatGradients();
    } else if (ps.zero >= 2) {
        sharded = std::make_unique<ShardedDataParallel>(dpComm, model, ps.zero, overlap);
        owned = sharded->owned();
    } else {
        model.padTo(static_cast<std::size_t>(dp));
        const std::size_t padded = model.paddedCount();
        const double bucketMb = ps.bucketMb.value_or(25.0);
        const auto toElements = [](double mb) { return static_cast<std::size_t>(mb * 1024.0 * 1024.0 / sizeof(float)); };
        reducer.emplace(dpComm, model.paddedGradients(),
                        makeBuckets(padded, toElements(bucketMb), toElements(ps.firstBucketMb.value_or(bucketMb)),
                                    static_cast<std::size_t>(dp)),
                        zero1 ? GradientReducer::Mode::ReduceScatter : GradientReducer::Mode::AllReduce, overlap);
        if (zero1) {
            for (std::size_t i = 0; i < reducer->buckets().size(); ++i) {
                const Bucket chunk = reducer->ownedChunk(i);
                const std::size_t end = std::min(chunk.end, model.parameterCount()); // skip the padding
                if (chunk.begin < end)
                    owned.push_back({chunk.begin, end});
            }
        } else {
            owned.push_back({0, model.parameterCount()});
        }
    }
    std::vector<ParamRange> tpNormRanges;
    if (tpGroup)
        for (std::size_t i = 0; i < model.tensors().size(); ++i)
            if (!model.isReplicated(i) || coords.tp == 0)
                tpNormRanges.push_back({model.tensors()[i].offset, model.tensors()[i].offset + model.tensors()[i].size});
    AdamW optimizer(owned, {ts.beta1, ts.beta2, ts.eps, ts.weightDecay});
    {
        std::vector<bool> mask(model.parameterCount(), false);
        for (const auto &t : model.tensors())
            if (t.shape.size() == 2 && t.name != "wpe")
                std::fill(mask.begin() + static_cast<long>(t.offset), mask.begin() + static_cast<long>(t.offset + t.size), true);
        optimizer.setDecayMask(std::move(mask));
    }
    // Resume: parameters, moments and step from the newest complete checkpoint (any DP degree).
    const std::string checkpointDir = resolvePath(ts.checkpoint.dir);
    int firstStep = 0;
    if (m_options.resume && !checkpointDir.empty()) {
        TrainingState restored;
        const LoadResult loaded = loadCheckpoint(checkpointDir, m_plan, model.parameterCount(), owned, restored);
        for (const auto &why : loaded.skipped)
            if (chief)
                std::fprintf(stderr, "trellis-trainer: skipping checkpoint: %s\n", why.c_str());
        if (!loaded.error.empty())
            return fail(proto::kExitCheckpointError, loaded.error, 0);
        if (loaded.found) {
            if (pipeline)
                pipeline->setParameters(restored.parameters.data());
            else if (sharded)
                sharded->setParameters(restored.parameters.data());
            else
                std::copy(restored.parameters.begin(), restored.parameters.end(), model.paddedParameters());
            optimizer.restore(std::move(restored.m), std::move(restored.v), restored.adamStep);
            firstStep = static_cast<int>(restored.step);
            if (chief)
                std::printf("resumed from %s (step %d)\n", loaded.path.c_str(), firstStep);
            proto::Envelope e;
            e.mutable_event()->set_kind(proto::Event::RESTART);
            e.mutable_event()->set_step(restored.step);
            e.mutable_event()->set_message("resumed from " + loaded.path);
            telemetry.publish(std::move(e));
        } else if (chief) {
            std::printf("no checkpoint in %s: starting at step 0\n", checkpointDir.c_str());
        }
    }
    std::vector<double> losses;

    // In-place reduce-scatter stages one chunk per bucket in flight.
    std::uint64_t commBufferBytes = 0;
    if (zero1)
        for (const auto &b : reducer->buckets())
            commBufferBytes += b.size() / static_cast<std::size_t>(dp) * sizeof(float);
    const LrSchedule schedule{ts.lr, ts.minLr, ts.warmupSteps, ts.steps};
    const std::uint64_t tokensPerStep =
        static_cast<std::uint64_t>(ps.microBatchSize) * ps.microBatches * static_cast<std::uint64_t>(ms.seqLen);
    const auto &inject = m_options.inject;
    bool slow = false;

    for (int step = firstStep; step < ts.steps; ++step) {
        const std::uint64_t stepNumber = static_cast<std::uint64_t>(step) + 1;
        if (inject.kind != FaultKind::None && inject.rank == rank && inject.step == static_cast<int>(stepNumber)) {
            if (inject.kind == FaultKind::Crash) {
                std::fprintf(stderr, "%s rank %d: injected crash at step %d\n", hostName().c_str(), rank, inject.step);
                std::fflush(stderr);
                std::_Exit(proto::kExitInjectedCrash);
            }
            if (inject.kind == FaultKind::Hang) {
                std::fprintf(stderr, "%s rank %d: injected hang at step %d\n", hostName().c_str(), rank, inject.step);
                std::fflush(stderr);
                telemetry.setProgress(stepNumber, "forward");
                for (;;)
                    std::this_thread::sleep_for(std::chrono::seconds(1));
            }
            if (inject.kind == FaultKind::Slow)
                slow = true;
        }

        const auto t0 = Clock::now();
        const double commBefore = m_world.totalMs();
        std::vector<Communicator *> subGroups;
        for (Communicator *g : {ppGroup.get(), dpGroup.get(), tpGroup.get(), tpDpGroup.get()})
            if (g)
                subGroups.push_back(g);
        double groupMsBefore = 0;
        for (Communicator *g : subGroups)
            groupMsBefore += g->totalMs();
        double localLoss = 0;
        double bubbleMs = 0;
        if (pipeline) {
            std::vector<Batch> batches;
            std::vector<PipelineEngine::MicroBatch> micro;
            for (int mb = 0; mb < ps.microBatches; ++mb)
                batches.push_back(data->batch(static_cast<std::uint64_t>(step), coords.dp, ps.dp, mb, ps.microBatches,
                                              ps.microBatchSize));
            for (const Batch &b : batches)
                micro.push_back({b.tokens.data(), b.targets.data(), b.batch, b.seqLen});
            telemetry.setProgress(stepNumber, "pipeline");
            localLoss = pipeline->runSchedule(micro);
            bubbleMs = pipeline->bubbleMs();
        } else {
            if (sharded) {
                sharded->beginStep();
            } else {
                model.zeroGradients();
                reducer->beginStep();
            }
            for (int micro = 0; micro < ps.microBatches; ++micro) {
                const Batch b = data->batch(static_cast<std::uint64_t>(step), coords.dp, ps.dp, micro, ps.microBatches,
                                            ps.microBatchSize);
                telemetry.setProgress(stepNumber, "forward");
                const float loss = model.forward(b.tokens.data(), b.targets.data(), b.batch, b.seqLen);
                telemetry.setProgress(stepNumber, "backward");
                // Only the last micro-batch completes the gradients: reduce once, after accumulation.
                if (reducer && micro == ps.microBatches - 1)
                    model.setGradientsReadyHook([&reducer](std::size_t offset) { reducer->onGradientsReady(offset); });
                model.backward(1.0f / static_cast<float>(ps.microBatches));
                model.setGradientsReadyHook(nullptr);
                localLoss += loss / ps.microBatches;
            }
        }
        if (slow)
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        if (inject.kind == FaultKind::Nan && inject.rank == rank && static_cast<int>(stepNumber) >= inject.step)
            localLoss = std::nan("");
        telemetry.setProgress(stepNumber, "comm");
        double globalLoss = localLoss;
        if (pipeline) {
            pipeline->reduceGradients();
            // Only the last stage has the loss (on each of its tp ranks alike): sum over all
            // ranks, average over the replicas and the tp ranks.
            m_world.allReduce(&globalLoss, 1, ReduceOp::Sum);
            globalLoss /= ps.dp * ps.tp;
        } else {
            if (sharded)
                sharded->finishBackward();
            else
                reducer->finish();
            m_world.allReduce(&globalLoss, 1, ReduceOp::Avg);
        }

        if (!std::isfinite(globalLoss))
            return fail(proto::kExitNonFinite, "loss is " + std::to_string(globalLoss) + " at step " +
                                                   std::to_string(stepNumber), stepNumber);
        telemetry.setProgress(stepNumber, "optimizer");
        // Global gradient norm over what this rank owns, summed over the DP group when sharded.
        const double lr = schedule.at(step);
        double gradNorm = 0;
        if (pipeline) {
            double sumSquares = squaredNorm(pipeline->normSpans());
            if (zero1)
                dpGroup->allReduce(&sumSquares, 1, ReduceOp::Sum);
            ppGroup->allReduce(&sumSquares, 1, ReduceOp::Sum);
            if (tpGroup)
                tpGroup->allReduce(&sumSquares, 1, ReduceOp::Sum);
            gradNorm = std::sqrt(sumSquares);
            clipToNorm(pipeline->ownedGradientSpans(), gradNorm, ts.gradClip);
            optimizer.step(pipeline->ownedParameters(), pipeline->ownedGradients(), lr);
            telemetry.setProgress(stepNumber, "comm");
            pipeline->afterOptimizerStep();
        } else if (sharded) {
            const auto spans = sharded->ownedGradientSpans();
            double sumSquares = squaredNorm(spans);
            m_world.allReduce(&sumSquares, 1, ReduceOp::Sum);
            gradNorm = std::sqrt(sumSquares);
            clipToNorm(spans, gradNorm, ts.gradClip);
            optimizer.step(sharded->ownedParameters(), sharded->ownedGradients(), lr);
            telemetry.setProgress(stepNumber, "comm");
            sharded->afterOptimizerStep();
        } else {
            float *grads = model.paddedGradients();
            // With tp, every rank adds its shards of the split tensors and the first tp rank the
            // replicated ones, which every tp rank holds the same.
            double sumSquares = squaredNorm(grads, tpGroup ? tpNormRanges : owned);
            if (zero1)
                dpComm.allReduce(&sumSquares, 1, ReduceOp::Sum);
            if (tpGroup)
                tpGroup->allReduce(&sumSquares, 1, ReduceOp::Sum);
            gradNorm = std::sqrt(sumSquares);
            clipToNorm(grads, owned, gradNorm, ts.gradClip);
            optimizer.step(model.paddedParameters(), grads, lr);
        }
        if (zero1 && !pipeline) {
            telemetry.setProgress(stepNumber, "comm");
            float *params = model.paddedParameters();
            for (std::size_t i = 0; i < reducer->buckets().size(); ++i) {
                const Bucket &b = reducer->buckets()[i];
                const Bucket chunk = reducer->ownedChunk(i);
                m_world.allGather(params + chunk.begin, params + b.begin, chunk.size(), DataType::F32);
            }
        }
        const auto t3 = Clock::now();
        losses.push_back(globalLoss);

        if (ts.checkpoint.every > 0 && !checkpointDir.empty() &&
            (stepNumber % static_cast<std::uint64_t>(ts.checkpoint.every) == 0 || step + 1 == ts.steps)) {
            telemetry.setProgress(stepNumber, "checkpoint");
            TrainingState state;
            state.step = stepNumber;
            state.adamStep = optimizer.stepCount();
            // Without ZeRO every rank has the same moments: rank 0 alone writes them. At stage 3 no
            // rank has the whole model: each writes the parameters of the ranges it owns.
            // With a pipeline no rank has every layer: each writes its stage's ranges (without ZeRO
            // the first replica only: the others hold the same).
            const bool writesRanges = pipeline ? (ps.zero >= 1 || coords.dp == 0) : (ps.zero >= 1 || rank == 0);
            if (writesRanges) {
                state.ranges = owned;
                state.m = optimizer.firstMoments();
                state.v = optimizer.secondMoments();
            }
            if (pipeline && writesRanges)
                state.rangeParameters = pipeline->ownedParameterValues();
            else if (ps.zero == 3)
                state.rangeParameters = sharded->ownedParameterValues();
            else if (!pipeline && rank == 0)
                state.parameters.assign(model.parameters().begin(), model.parameters().end());
            const std::string error = saveCheckpoint(m_world, checkpointDir, m_plan, state, model.parameterCount(),
                                                     ts.checkpoint.keep);
            if (!error.empty())
                return fail(proto::kExitCheckpointError, error, stepNumber);
            proto::Envelope e;
            e.mutable_event()->set_kind(proto::Event::CHECKPOINT);
            e.mutable_event()->set_step(stepNumber);
            e.mutable_event()->set_message("checkpoint at step " + std::to_string(stepNumber));
            telemetry.publish(std::move(e));
        }
        const double asyncCommMs = pipeline ? 0.0 : sharded ? sharded->commMs() : reducer->commMs();
        const double asyncExposedMs = pipeline ? 0.0 : sharded ? sharded->exposedMs() : reducer->exposedMs();
        // Blocking time in every group's calls; pipeline receive waits are bubble, not communication.
        double totalCommMs = m_world.totalMs() - commBefore;
        for (Communicator *g : subGroups)
            totalCommMs += g->totalMs();
        totalCommMs -= groupMsBefore + bubbleMs;
        const double blockingCommMs = std::max(0.0, totalCommMs - asyncExposedMs);
        const double commMs = asyncCommMs + blockingCommMs;
        const double exposedMs = asyncExposedMs + blockingCommMs;

        const double stepMs = msBetween(t0, t3);
        proto::Envelope e;
        auto *r = e.mutable_step();
        r->set_step(stepNumber);
        r->set_total_steps(static_cast<std::uint64_t>(ts.steps));
        r->set_step_ms(stepMs);
        r->set_compute_ms(std::max(0.0, stepMs - exposedMs - bubbleMs));
        r->set_bubble_ms(bubbleMs);
        r->set_comm_ms(commMs);
        r->set_comm_exposed_ms(exposedMs);
        r->set_tokens(tokensPerStep);
        r->set_tokens_per_s(static_cast<double>(tokensPerStep) / (stepMs / 1000.0));
        r->set_loss(globalLoss);
        r->set_grad_norm(gradNorm);
        r->set_lr(lr);
        auto *mem = r->mutable_memory();
        mem->set_parameters(pipeline  ? pipeline->parameterBytes()
                            : sharded ? sharded->parameterBytes()
                                      : model.parameterCount() * sizeof(float));
        mem->set_gradients(pipeline  ? pipeline->gradientBytes()
                           : sharded ? sharded->gradientBytes()
                                     : model.parameterCount() * sizeof(float));
        mem->set_optimizer(optimizer.stateBytes());
        mem->set_activations(pipeline ? pipeline->activationBytes() : model.activationBytes());
        mem->set_comm_buffers(sharded ? sharded->peakBufferBytes() : commBufferBytes);
        mem->set_peak_rss(peakRssBytes());
        std::vector<Communicator *> groups{&m_world};
        groups.insert(groups.end(), subGroups.begin(), subGroups.end());
        for (Communicator *group : groups) {
            for (const auto &rec : group->takeRecords()) {
                proto::Envelope ce;
                auto *c = ce.mutable_collective();
                c->set_step(stepNumber);
                c->set_group(group->name());
                c->set_op(rec.op);
                c->set_bytes(rec.bytes);
                c->set_ms(rec.ms);
                c->set_count(rec.count);
                const double algGBps = rec.ms > 0 ? rec.bytes / (rec.ms * 1e6) : 0.0;
                c->set_bus_gbps(algGBps * busBandwidthFactor(rec.op, group->size()));
                telemetry.publish(std::move(ce));
            }
        }
        // Timeline spans every trace_every steps: the pipeline actions and the gradient collectives
        // after them (wall-clock nanoseconds).
        if (pipeline && m_plan.telemetry.traceEvery > 0 && stepNumber % static_cast<std::uint64_t>(m_plan.telemetry.traceEvery) == 0) {
            proto::Envelope se;
            auto *batch = se.mutable_spans();
            batch->set_step(stepNumber);
            for (const auto &sp : pipeline->spans()) {
                auto *out = batch->add_spans();
                out->set_name(sp.name);
                out->set_start_ns(sp.startNs);
                out->set_end_ns(sp.endNs);
                out->set_micro_batch(sp.microBatch);
                out->set_stage(sp.chunk);
            }
            telemetry.publish(std::move(se));
        }
        telemetry.publish(std::move(e));
        if (chief && !m_options.quiet)
            std::printf("step %5llu/%d  loss %.4f  lr %.2e  %.1f ms  %.0f tok/s/rank\n",
                        static_cast<unsigned long long>(stepNumber), ts.steps, globalLoss, lr, stepMs,
                        static_cast<double>(tokensPerStep) / (stepMs / 1000.0));
        std::fflush(stdout);
    }

    // Rank 0 writes PATH, rank r > 0 writes PATH.rank<r>: tests compare ranks and configurations.
    auto dump = [&](const std::string &path, const float *values) -> bool {
        if (path.empty())
            return true;
        const std::string target = rank == 0 ? path : path + ".rank" + std::to_string(rank);
        const std::string temp = target + ".tmp";
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        // The whole model's count: tensor-parallel dumps are gathered into the tp = 1 layout.
        const std::size_t count = tpGroup ? plan::parameterCount(ms) : model.parameterCount();
        out.write(reinterpret_cast<const char *>(values), static_cast<std::streamsize>(count * sizeof(float)));
        out.close();
        std::error_code ec;
        if (!out)
            return false;
        std::filesystem::rename(temp, target, ec);
        return !ec;
    };
    // ZeRO 2/3, pipelines and tensor parallelism hold shards: gather the whole vectors first
    // (collective, so every rank does it).
    std::vector<float> gatheredParams, gatheredGrads;
    Communicator &peers = sameTpGroup ? *sameTpGroup : m_world;
    if (pipeline && !m_options.dumpParamsPath.empty())
        gatheredParams = pipeline->gatherParameters(peers);
    if (pipeline && !m_options.dumpGradsPath.empty())
        gatheredGrads = pipeline->gatherGradients(peers);
    if (sharded && !m_options.dumpParamsPath.empty())
        gatheredParams = sharded->gatherParameters();
    if (sharded && !m_options.dumpGradsPath.empty())
        gatheredGrads = sharded->gatherGradients();
    if (tpGroup && !m_options.dumpParamsPath.empty())
        gatheredParams = model.gatherWhole(pipeline ? gatheredParams.data() : model.paddedParameters());
    if (tpGroup && !m_options.dumpGradsPath.empty())
        gatheredGrads = model.gatherWhole(pipeline ? gatheredGrads.data() : model.paddedGradients());
    const bool gathered = pipeline || sharded || tpGroup;
    if (!dump(m_options.dumpParamsPath, gathered ? gatheredParams.data() : model.paddedParameters()))
        return fail(proto::kExitIoError, m_options.dumpParamsPath + ": cannot be written", ts.steps);
    if (chief && !m_options.dumpLossesPath.empty()) {
        std::ofstream out(m_options.dumpLossesPath, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char *>(losses.data()), static_cast<std::streamsize>(losses.size() * sizeof(double)));
        if (!out)
            return fail(proto::kExitIoError, m_options.dumpLossesPath + ": cannot be written", ts.steps);
    }
    if (!dump(m_options.dumpGradsPath, gathered ? gatheredGrads.data() : model.paddedGradients()))
        return fail(proto::kExitIoError, m_options.dumpGradsPath + ": cannot be written", ts.steps);
    telemetry.setProgress(static_cast<std::uint64_t>(ts.steps), "done");
    telemetry.close(proto::kExitOk, "completed", static_cast<std::uint64_t>(ts.steps));
    return proto::kExitOk;
}

} // namespace trellis::trainer
