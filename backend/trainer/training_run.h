// The steps of one rank's run, over the parts Trainer::train sets up (trainer.h): where the run
// starts (a checkpoint, or transformers-layout weights), each step — data, forward and backward of
// the micro-batches, gradient reduction, the global norm, clipping, AdamW, the checkpoint, the
// step's telemetry — and the dumps it leaves for comparisons. It talks to the ParallelStack only:
// nothing here branches on a kind of parallelism (what a strategy keeps beside the model, such as
// local updates' outer state, goes through the stack's generic calls).
// training_run.cpp: the steps; training_run_state.cpp: the start, checkpoints and dumps.
// Threading: the training thread only.
#pragma once

#include "backend/plan/mesh.h"
#include "backend/plan/plan.h"
#include "backend/protocol/telemetry.pb.h"
#include "backend/trainer/checkpoint/checkpoint.h"
#include "backend/trainer/comm/mpi_communicator.h"
#include "backend/trainer/comm/replica_link.h"
#include "backend/trainer/comm/process_groups.h"
#include "backend/trainer/data/data_loader.h"
#include "backend/trainer/faults/fault_injection.h"
#include "backend/trainer/optimizer/adamw.h"
#include "backend/trainer/parallel/parallel_stack.h"
#include "backend/trainer/precision/loss_scaler.h"
#include "backend/trainer/telemetry/telemetry_publisher.h"
#include "backend/trainer/trainer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace trellis::trainer {

// Relative paths in the plan (data, checkpoints, initial weights) resolve against the plan's folder.
std::string resolvePlanPath(const std::string &planDir, const std::string &path);
// Rank 0 writes PATH, rank r > 0 writes PATH.rank<r> (written aside, then renamed).
void dumpToFile(const std::string &path, int rank, const void *data, std::size_t bytes);

// A step's forward and backward, reduced: the loss over every rank and this rank's own.
struct StepPass {
    StepOutput out;
    double localLoss = 0, loss = 0;
};

class TrainingRun {
public:
    TrainingRun(const plan::Plan &plan, const TrainerOptions &options, MpiCommunicator &world, TelemetryPublisher &telemetry,
                const plan::MeshCoordinates &coords, ProcessGroups &groups, ParallelStack &stack, AdamW &optimizer,
                LossScaler &scaler, const DataLoader &data);

    // Resume: parameters, moments and step from the newest complete checkpoint (any layout); else a
    // fresh start, from transformers-layout weights when training.init.from names them. Returns the
    // first step to run.
    int start();
    // One step; false when the replica groups dropped it (fault_tolerance): nothing of it was
    // applied, and the same step (the same data) is to be trained again.
    bool runStep(int step, std::uint64_t stepNumber);
    // After the last step (every rank): the saves in flight put in place (waiting for their
    // writes), and the memory store closed — the run is over.
    void end();
    // Dumps for comparisons: whole-model vectors, assembled over the world (collective); rank 0's losses.
    void dumpResults();

private:
    // training_run_memory.cpp
    void openMemoryCheckpoints();
    void joinMemoryRing(const std::vector<std::int32_t> &leaders);
    std::vector<std::string> memoryFoldersToResumeFrom(std::string &note);
    // training_run_state.cpp
    bool resume();
    void requireSameCheckpoint(bool found, std::uint64_t step);
    void restoreOwnState(const std::string &saved);
    void initialiseFromWeights();
    // True when the boundary did checkpoint work (put a save in place, or began one), for the
    // checkpoint folder and the memory store.
    bool checkpointIfDue(int step, std::uint64_t stepNumber);
    // One writer's part of it: `due` a save of its own.
    bool boundary(CheckpointWriter &writer, bool due, bool last, std::uint64_t stepNumber);
    // A save due while the one before is still being written: skipped, and said (rank 0; the
    // checkpoint folder's only).
    void skipCheckpoint(const CheckpointWriter &writer, std::uint64_t stepNumber);
    // Puts the writer's save in flight in place (waiting for its write) and says so.
    void finishCheckpoint(CheckpointWriter &writer);
    void landed(CheckpointWriter &writer, const CheckpointWriter::Outcome &o);
    // Rank 0: the saves now in place, said (`wait`: the one being put in place waited for).
    void sayCompleted(CheckpointWriter &writer, bool wait);
    void saveState(CheckpointWriter &writer, const std::string &dir, int keep, std::uint64_t step);
    // begun: the save's folder was made (rank 0 removes it); false: it failed before (staging).
    void saveFailed(CheckpointWriter &writer, std::uint64_t step, const std::string &error, bool begun = true);
    // training_run.cpp
    std::vector<Batch> loadBatches(int step);
    StepPass forwardBackward(int step, std::uint64_t stepNumber, const std::vector<Batch> &batches, double lossScale);
    bool overflowed(std::uint64_t stepNumber, const StepPass &pass, double gradNorm);
    void skipNonFinite(std::uint64_t stepNumber, const StepPass &pass, double gradNorm);
    void update(double gradNorm, double lr);
    void report(std::uint64_t stepNumber, const StepPass &pass, double stepMs, double blockingMs, double gradNorm, double lr,
                double lossScale, bool skipped);
    void publishEvent(proto::Event::Kind kind, std::uint64_t step, const std::string &message);
    // Replica groups (training_run_replica.cpp): the link to the other groups started; the step's
    // quorum; the reduced gradients and the loss averaged with the other groups' and the step
    // voted on — false (said) when dropped.
    void joinReplicaGroups();
    void beginReplicaStep(int step);
    bool commitReplicaStep(std::uint64_t stepNumber, StepPass &pass);

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
    CheckpointWriter m_checkpoints; // its staging buffers kept between saves
    // training.checkpoint.memory: the node's memory store ("" none, or no longer) and its writer
    // (always async, its files private).
    std::string m_memoryStore;
    CheckpointWriter m_memoryCheckpoints{true, true};
    bool m_nodeLeader = false; // this rank is its node's first: it opens, renews and closes the store
    int m_nodes = 1;           // the job's nodes (several: each node's store copied to the next's)
    int m_memorySaves = 0; // in place (rank 0)
    std::uint64_t m_memoryCheckpointStep = 0; // the newest in place (rank 0's step reports say it)
    // This step's checkpoint figures for its report (StepFigures): the boundary's time on
    // checkpoints, whether a shard was written beside the step, the write time of the save put in
    // place at the boundary.
    double m_checkpointMs = 0, m_checkpointWriteMs = 0;
    bool m_checkpointBehind = false;
    FaultInjector m_faults;
    const LrSchedule m_schedule;
    const std::uint64_t m_tokensPerStep;
    int m_firstStep = 0;
    std::vector<double> m_losses;
    int m_skippedInARow = 0;
    std::unique_ptr<ReplicaLink> m_replica; // this job is a replica group (options.replica)
    ReplicaQuorum m_quorum;
    std::uint64_t m_droppedSteps = 0;
};

} // namespace trellis::trainer
