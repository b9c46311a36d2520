// The training loop of one rank: reads a validated plan, composes the parallel strategies it asks
// for (parallel/parallel_stack.h), and runs the steps — forward and backward of the step's
// micro-batches, gradient reduction, global norm, clipping, AdamW, checkpoints — reporting every
// step through the telemetry publisher. Every exception ends the run with an Event and a
// documented exit code (protocol/exit_codes.h), never a crash.
#pragma once

#include "backend/plan/plan.h"
#include "backend/protocol/curve_keys.h"
#include "backend/trainer/comm/mpi_communicator.h"
#include "backend/trainer/faults/fault_injection.h"

#include <cstdint>
#include <string>

namespace trellis::trainer {

class TelemetryPublisher;

// This job is one replica group of a run with fault_tolerance (issue #71): the plan's dp splits into
// `groups` jobs alike, this is group `group` (its dp ranks are the plan's group·dp/R ..), and its
// ranks average their gradients with the other groups' through the run's lighthouse
// (backend/trainer/comm/replica_link.h). groups 0: a job of its own.
struct ReplicaGroupOptions {
    int group = 0;
    int groups = 0;
    std::string lighthouse;               // tcp://HOST:PORT
    std::string address = "127.0.0.1";    // where the other groups reach this rank
    bool given() const { return groups > 0; }
};

struct TrainerOptions {
    std::string planDir;       // data paths in the plan resolve against this folder
    std::string runId;
    std::string endpoint;      // overrides plan.telemetry.endpoint when not empty
    proto::CurveKeys telemetryKeys; // client keys: telemetry over CURVE (remote hosts)
    std::string telemetryKeysPath;  // their file (a node relay reads it)
    bool nodeRelay = false;         // telemetry through a relay per node (backend/trainer/telemetry/node_relay.h)
    FaultInjection inject;
    std::string dumpParamsPath; // final parameters, whole model (raw float32): rank 0 to PATH, rank r to PATH.rank<r>
    std::string dumpGradsPath;  // the first step's reduced gradients before clipping, whole model, same naming
    std::string dumpBatchPath;  // rank 0: its first step's micro-batches, tokens then targets (int32) each
    std::string dumpLossesPath; // rank 0: the loss of every step this process ran, float64, in order
    bool overlap = true;        // start bucket reductions during backward (off: all after backward)
    bool resume = false;        // continue from the newest complete checkpoint in checkpoint.dir
    bool quiet = false;         // no per-step lines on stdout
    ReplicaGroupOptions replica;
};

class Trainer {
public:
    Trainer(plan::Plan plan, TrainerOptions options, MpiCommunicator &world);
    // Trains to completion; returns a proto::ExitCode.
    int run();

private:
    int train(TelemetryPublisher &telemetry, std::uint64_t &step);

    plan::Plan m_plan;
    TrainerOptions m_options;
    MpiCommunicator &m_world;
};

} // namespace trellis::trainer
