// The training loop of one rank: data-parallel GPT training on the CPU. Reads a validated plan,
// builds the model from the same seed on every rank, averages gradients over the DP group and
// reports every step through the telemetry publisher.
#pragma once

#include "plan/plan.h"
#include "trainer/communicator.h"

#include <cstdint>
#include <string>

namespace trellis::trainer {

enum class FaultKind { None, Crash, Hang, Slow, Nan };

// --inject KIND@RANK:STEP — fault injection for tests of supervision and failure handling.
struct FaultInjection {
    FaultKind kind = FaultKind::None;
    int rank = -1;
    int step = -1; // 1-based step at whose start the fault happens

    static bool parse(const std::string &text, FaultInjection &out, std::string &error);
};

struct TrainerOptions {
    std::string planDir;       // data paths in the plan resolve against this folder
    std::string runId;
    std::string endpoint;      // overrides plan.telemetry.endpoint when not empty
    FaultInjection inject;
    std::string dumpParamsPath; // final parameters (raw float32): rank 0 to PATH, rank r to PATH.rank<r>
    std::string dumpGradsPath;  // last step's reduced gradients, same naming
    std::string dumpLossesPath; // rank 0: the loss of every step this process ran, float64, in order
    bool overlap = true;        // start bucket reductions during backward (off: all after backward)
    bool resume = false;        // continue from the newest complete checkpoint in checkpoint.dir
    bool quiet = false;         // no per-step lines on stdout
};

class Trainer {
public:
    Trainer(plan::Plan plan, TrainerOptions options, Communicator &world);
    // Trains to completion; returns a proto::ExitCode.
    int run();

private:
    plan::Plan m_plan;
    TrainerOptions m_options;
    Communicator &m_world;
};

} // namespace trellis::trainer
