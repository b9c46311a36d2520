// Where a run starts and what it leaves (training_run.h): resume from the newest checkpoint or
// start from transformers-layout weights, checkpoints as the plan asks, and the dumps for
// comparisons.
#include "backend/trainer/training_run.h"

#include "backend/protocol/exit_codes.h"
#include "backend/trainer/checkpoint/checkpoint.h"
#include "backend/trainer/checkpoint/memory_store.h"
#include "backend/trainer/common/trainer_error.h"
#include "backend/trainer/telemetry/node_relay.h"
#include "backend/trainer/transformers/hf_layout.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <new>
#include <thread>

namespace trellis::trainer {
namespace {

// The dumps for comparisons that hold the whole model: gathered over the world (collective), in
// transformers' layout where the path ends in .safetensors (rank 0 writes it), else raw float32.
void dumpWhole(ParallelStack &stack, int rank, const std::string &path, const std::vector<float> &values)
{
    if (!path.ends_with(".safetensors")) {
        dumpToFile(path, rank, values.data(), values.size() * sizeof(float));
        return;
    }
    GptConfig whole = stack.config();
    whole.tp = whole.cp = whole.ep = 1;
    whole.tpRank = whole.cpRank = whole.epRank = 0;
    if (rank == 0)
        if (const std::string e = writeHuggingFaceTensors(whole, values, path, "trellis-trainer dump"); !e.empty())
            throw TrainerError(proto::kExitIoError, e);
}

} // namespace

std::string resolvePlanPath(const std::string &planDir, const std::string &path)
{
    if (!path.empty() && std::filesystem::path(path).is_relative() && !planDir.empty())
        return (std::filesystem::path(planDir) / path).lexically_normal().string();
    return path;
}

void dumpToFile(const std::string &path, int rank, const void *data, std::size_t bytes)
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

int TrainingRun::start()
{
    joinReplicaGroups();
    openMemoryCheckpoints();
    const bool resumed = m_options.resume && !m_checkpointDir.empty() && resume();
    if (!resumed && !m_plan.training.init.from.empty())
        initialiseFromWeights();
    return m_firstStep;
}

bool TrainingRun::resume()
{
    TrainingState restored;
    std::string memoryNote;
    const std::vector<std::string> dirs = memoryFoldersToResumeFrom(memoryNote);
    const LoadResult loaded = loadCheckpoint(dirs, m_plan, m_stack.wholeParameterCount(),
                                             m_stack.ownedWhole(), restored, m_stack.replica(), m_rank);
    for (const auto &why : loaded.skipped)
        if (m_rank == 0)
            std::fprintf(stderr, "trellis-trainer: skipping checkpoint: %s\n", why.c_str());
    if (!loaded.error.empty())
        throw TrainerError(proto::kExitCheckpointError, loaded.error);
    if (loaded.found) {
        m_stack.setParameters(restored.parameters); // local updates: the anchor too, the momentum 0
        m_stack.restoreOuterState({restored.replica, restored.replicas, restored.dpSync, restored.innerSteps, restored.outerSteps},
                                  restored.anchor, restored.outerMomentum);
        m_optimizer.restore(restored.m, restored.v, restored.adamStep);
        m_scaler.restore(restored.lossScale, restored.lossScaleClean);
        m_firstStep = static_cast<int>(restored.step);
        // Where from: the memory store (no disk read), or the disk — and, with in-memory checkpoints,
        // that no complete copy was in memory.
        const bool fromMemory = loaded.source == 0 && !dirs[0].empty();
        const std::string from = (fromMemory ? "memory: " : "") + loaded.path;
        const std::string why = fromMemory ? memoryNote
                                : !m_memoryStore.empty() ? " (no newer complete in-memory checkpoint in " + m_memoryStore + memoryNote + ")"
                                                         : "";
        if (m_rank == 0)
            std::printf("resumed from %s (step %d)%s\n", from.c_str(), m_firstStep, why.c_str());
        publishEvent(proto::Event::RESTART, restored.step, "resumed from " + from + why);
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

// A fresh start from transformers-layout weights (training.init.from), cut onto this layout.
void TrainingRun::initialiseFromWeights()
{
    const std::string from = resolvePlanPath(m_options.planDir, m_plan.training.init.from);
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

// At each step boundary, for the checkpoint folder and the memory store each (their saves are
// independent; a store's saves never overlap): a save in flight (async) is put in place once every
// rank's write has ended — asked collectively, a boundary at a time, so training does not wait for
// the disk there — and waited for only when the next save is due (training.checkpoint.when_busy
// wait, the default; skip: that save is skipped, and said), before the run's last save, or when an
// injected fault ends the run at the next step (so that a test's crash finds the same checkpoints
// whatever the disk). Then a new save begins when one is due: the state copied into the writer's
// staging buffers, the shard written behind training (async) or at once (sync, put in place
// before the step ends). In-memory saves are always async, and none is made at the last step (the
// run is over: its store goes with it).
bool TrainingRun::checkpointIfDue(int step, std::uint64_t stepNumber)
{
    const plan::CheckpointSpec &c = m_plan.training.checkpoint;
    const bool last = step + 1 == m_plan.training.steps;
    const bool diskDue = c.every > 0 && !m_checkpointDir.empty() && (stepNumber % static_cast<std::uint64_t>(c.every) == 0 || last);
    const bool memoryDue =
        !m_memoryStore.empty() && !last && c.memory.every > 0 && stepNumber % static_cast<std::uint64_t>(c.memory.every) == 0;
    if (m_nodeLeader && !m_memoryStore.empty())
        renewMemoryStoreLease(m_memoryStore);
    bool worked = boundary(m_checkpoints, diskDue, last, stepNumber);
    if (!m_memoryStore.empty()) // (it may have stopped at the disk's boundary: no store, no save)
        worked = boundary(m_memoryCheckpoints, memoryDue, last, stepNumber) || worked;
    return worked;
}

bool TrainingRun::boundary(CheckpointWriter &writer, bool due, bool last, std::uint64_t stepNumber)
{
    bool worked = false;
    if (writer.pending()) {
        // Its write waited for: before the run's last save and before an injected fault that ends
        // the run (then rank 0 puts it in place at once too), and when the next save is due
        // (when_busy wait; put in place behind training as ever).
        const bool now = last || m_faults.endsRunAt(stepNumber + 1);
        const bool wait = now || (due && m_plan.training.checkpoint.whenBusy == plan::CheckpointWhenBusy::Wait);
        const CheckpointWriter::Outcome o = writer.land(m_world, wait, now, due && !last ? stepNumber : 0);
        if (o.landed) {
            landed(writer, o);
            worked = true;
        }
        if (now)
            sayCompleted(writer, true);
    }
    sayCompleted(writer, false);
    if (!due)
        return worked;
    if (writer.pending()) {
        skipCheckpoint(writer, stepNumber);
        return worked;
    }
    const bool memory = &writer == &m_memoryCheckpoints;
    m_telemetry.setProgress(stepNumber, "checkpoint");
    saveState(writer, memory ? m_memoryStore : m_checkpointDir, memory ? m_plan.training.checkpoint.memory.keep : m_plan.training.checkpoint.keep,
              stepNumber);
    // Sync saves are in place before the step ends; so is an in-memory save before an injected
    // fault that ends the run (a test's crash finds it whatever the machine's speed).
    if (memory ? m_faults.endsRunAt(stepNumber + 1) : m_plan.training.checkpoint.mode == plan::CheckpointMode::Sync)
        finishCheckpoint(writer);
    return true;
}

void TrainingRun::skipCheckpoint(const CheckpointWriter &writer, std::uint64_t stepNumber)
{
    if (m_rank != 0 || &writer == &m_memoryCheckpoints) // in-memory saves come every few steps: the next one is soon
        return;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - writer.begunAt()).count();
    char text[256];
    std::snprintf(text, sizeof text,
                  "checkpoint at step %llu skipped: the save of step %llu is still being written (%.1f s so far); "
                  "the next save due is tried again",
                  static_cast<unsigned long long>(stepNumber), static_cast<unsigned long long>(writer.pendingStep()), seconds);
    if (!m_options.quiet)
        std::printf("%s\n", text);
    publishEvent(proto::Event::INFO, stepNumber, text);
}

void TrainingRun::end()
{
    finishCheckpoint(m_checkpoints);
    finishCheckpoint(m_memoryCheckpoints);
    if (!m_memoryStore.empty() && m_nodeLeader)
        closeMemoryStore(m_memoryStore); // the run is over: its holder removes the store
}

void TrainingRun::finishCheckpoint(CheckpointWriter &writer)
{
    if (writer.pending()) {
        const CheckpointWriter::Outcome o = writer.land(m_world, true, true);
        if (o.landed)
            landed(writer, o);
    }
    sayCompleted(writer, true);
}

// A save landed on every rank: its shards written (or not: then discarded, said), its write time
// for this step's report. Rank 0 puts its folder in place and says so (sayCompleted).
void TrainingRun::landed(CheckpointWriter &writer, const CheckpointWriter::Outcome &o)
{
    if (!o.error.empty()) {
        saveFailed(writer, o.step, o.error);
        return;
    }
    if (&writer == &m_checkpoints)
        m_checkpointWriteMs = o.writeMs;
}

// Rank 0: the saves now in place, each said once — a checkpoint event with what it cost; the
// first in-memory one, and the newest in-memory step for the step reports. One that could not be
// put in place is said as a failed save (its partial folder removed; the earlier ones kept).
void TrainingRun::sayCompleted(CheckpointWriter &writer, bool wait)
{
    const bool memory = &writer == &m_memoryCheckpoints;
    while (const std::optional<CheckpointWriter::Outcome> done = writer.completed(wait)) {
        if (m_rank != 0 && done->error.empty())
            continue; // another node's first rank put its node's folder in place: rank 0 says the save
        if (!done->error.empty()) {
            const std::string text = (memory ? "in-memory checkpoint at step " : "checkpoint at step ") + std::to_string(done->step) +
                                     " not written: " + done->error + "; the earlier checkpoints are kept, training goes on";
            std::fprintf(stderr, "%s\n", text.c_str());
            publishEvent(proto::Event::INFO, done->step, text);
            continue;
        }
        if (memory) {
            m_memoryCheckpointStep = done->step;
            const int every = m_plan.training.checkpoint.memory.every;
            // Said once (one a step would drown the run's events), as information: a checkpoint event
            // is a save on disk — the supervisor gathers it from remote hosts and counts it for restarts.
            if (++m_memorySaves == 1)
                publishEvent(proto::Event::INFO, done->step,
                             "in-memory checkpoint at step " + std::to_string(done->step) + " in " + m_memoryStore + " (written in " +
                                 std::to_string(static_cast<long long>(done->writeMs)) + " ms; one " +
                                 (every == 1 ? std::string("every step") : "every " + std::to_string(every) + " steps") +
                                 ", the newest " + std::to_string(m_plan.training.checkpoint.memory.keep) + " kept)");
            continue;
        }
        const std::string forTheWrite = done->dueStep && done->waitedMs >= 0.5
                                            ? ", " + std::to_string(static_cast<long long>(done->waitedMs)) +
                                                  " ms of it for the write, as the save of step " + std::to_string(done->dueStep) + " was due"
                                            : std::string();
        char figures[320];
        if (m_plan.training.checkpoint.mode == plan::CheckpointMode::Sync)
            std::snprintf(figures, sizeof figures, " (sync: training waited %.1f ms)", done->blockedMs + done->waitedMs);
        else
            std::snprintf(figures, sizeof figures, " (async: training waited %.1f ms%s; copied and written behind it in %.1f ms)",
                          done->blockedMs + done->stagedWaitMs + done->waitedMs, forTheWrite.c_str(), done->writeMs);
        publishEvent(proto::Event::CHECKPOINT, done->step, "checkpoint at step " + std::to_string(done->step) + figures);
    }
}

// Every range this rank owns, its parameters and moments, in the whole model's index; what the
// strategies keep beside them (a replica's outer state, a rank's own opaque state) — copied into
// the writer's staging buffers (kept between saves), and the save begun.
void TrainingRun::saveState(CheckpointWriter &writer, const std::string &dir, int keep, std::uint64_t step)
{
    const bool memory = &writer == &m_memoryCheckpoints;
    const auto copyStarted = std::chrono::steady_clock::now();
    TrainingState &state = writer.staging();
    state.step = step;
    state.adamStep = m_optimizer.stepCount();
    state.precision = plan::toString(m_plan.parallel.precision);
    state.lossScale = m_scaler.enabled() ? m_scaler.scale() : 0;
    state.lossScaleClean = m_scaler.enabled() ? m_scaler.cleanSteps() : 0;
    const ReplicaState replica = m_stack.replicaState();
    state.replica = replica.replica;
    state.replicas = replica.replicas;
    state.dpSync = replica.dpSync;
    state.innerSteps = replica.innerSteps;
    state.outerSteps = replica.outerSteps;
    state.extra = m_stack.ownState();
    state.parameters.clear();
    state.ranges.clear();
    state.anchor.clear();
    state.outerMomentum.clear();
    // Straight into the staging buffers, one copy of each element, the moments included: sized once
    // (the same every save, so after the first neither allocated nor zeroed again), then filled.
    // Host memory too short for them fails this save alone, on every rank alike (they agree).
    const std::vector<CheckpointPiece> pieces = m_stack.checkpointPieces();
    std::size_t total = 0;
    for (const CheckpointPiece &p : pieces)
        total += p.whole.end - p.whole.begin;
    std::string noMemory;
    try {
        if (m_faults.noMemoryAt(step))
            throw std::bad_alloc();
        state.rangeParameters.resize(total);
        state.m.resize(total);
        state.v.resize(total);
    } catch (const std::bad_alloc &) {
        char text[160];
        std::snprintf(text, sizeof text, "rank %d: not enough host memory for its staging buffers (%.1f MB)", m_rank,
                      static_cast<double>(total) * 3 * sizeof(float) / 1e6);
        noMemory = text;
        state.rangeParameters = {}; // what was had is given back
        state.m = {};
        state.v = {};
    }
    const std::int32_t shortRank = m_world.host().allReduce(noMemory.empty() ? std::int32_t{-1} : std::int32_t{m_rank}, ReduceOp::Max);
    if (shortRank >= 0) {
        saveFailed(writer, step,
                   noMemory.empty() ? "rank " + std::to_string(shortRank) + ": not enough host memory for its staging buffers" : noMemory,
                   false);
        return;
    }
    // The copy itself: behind training where the state is in host memory (async on CPUs: the
    // writing thread copies while the next step's forward and backward only read the state, and
    // the update waits for it — CheckpointWriter::waitStaged), else here, before the step ends.
    const bool late = m_faults.slowCopyAt(step);
    auto stage = [this, pieces, &state, late] {
        if (late)
            std::this_thread::sleep_for(std::chrono::milliseconds(kSlowCopyMs));
        std::size_t at = 0;
        for (const CheckpointPiece &p : pieces) {
            const std::size_t n = p.whole.end - p.whole.begin;
            state.ranges.push_back(p.whole);
            m_stack.device().toHost(state.rangeParameters.data() + at, p.params, n * sizeof(float));
            m_optimizer.copyMoments(p.moment, n, state.m.data() + at, state.v.data() + at);
            m_stack.outerStateOf(p, state.anchor, state.outerMomentum);
            at += n;
        }
    };
    const bool async = memory || m_plan.training.checkpoint.mode == plan::CheckpointMode::Async;
    const bool behind = async && m_stack.device().hostAccessible();
    if (!behind)
        stage();
    const double stagingMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - copyStarted).count();
    const std::string error = writer.begin(m_world, dir, m_plan, m_stack.wholeParameterCount(), keep,
                                           behind ? std::function<void()>(stage) : nullptr, stagingMs);
    if (!error.empty())
        saveFailed(writer, step, error);
}

// A save that could not be written at run time (a full disk, a folder that cannot be made): the
// ranks agreed on it in the writer's collectives, so every rank goes on alike. Said — the rank
// that failed names its file — and the checkpoints before it are kept; training goes on, and the
// next save due tries again. An in-memory save that fails (shared memory full, host memory short)
// ends the in-memory checkpoints: the run goes on with the disk's.
void TrainingRun::saveFailed(CheckpointWriter &writer, std::uint64_t step, const std::string &error, bool begun)
{
    if (begun)
        writer.discard(m_world);
    if (&writer == &m_memoryCheckpoints) {
        const std::string text = "in-memory checkpoint at step " + std::to_string(step) + " not written: " + error +
                                 "; in-memory checkpoints stop, disk checkpoints go on";
        if (m_rank == 0)
            std::fprintf(stderr, "%s\n", text.c_str());
        if (m_nodeLeader)
            closeMemoryStore(m_memoryStore); // the shared memory given back
        publishEvent(proto::Event::INFO, step, text);
        m_memoryStore.clear();
        return;
    }
    if (m_rank == 0) // said even with --quiet: it is not progress
        std::fprintf(stderr, "checkpoint at step %llu not written: %s; the earlier checkpoints are kept, training goes on\n",
                     static_cast<unsigned long long>(step), error.c_str());
    publishEvent(proto::Event::INFO, step,
                 "checkpoint at step " + std::to_string(step) + " not written: " + error +
                     "; the earlier checkpoints are kept, training goes on");
}

void TrainingRun::dumpResults()
{
    if (!m_options.dumpParamsPath.empty())
        dumpWhole(m_stack, m_rank, m_options.dumpParamsPath, m_stack.gatherParameters());
    if (!m_options.dumpGradsPath.empty() && !m_losses.empty())
        dumpWhole(m_stack, m_rank, m_options.dumpGradsPath, m_stack.gatherCapturedGradients());
    if (m_rank == 0 && !m_options.dumpLossesPath.empty())
        dumpToFile(m_options.dumpLossesPath, 0, m_losses.data(), m_losses.size() * sizeof(double));
}

} // namespace trellis::trainer
