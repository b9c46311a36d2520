// What a rank tells the launcher about itself and each step, as protocol envelopes: Hello once,
// then per step a StepReport (time breakdown, loss, memory by category), one CollectiveStats per
// (group, operation) it communicated in, and every trace_every steps the timeline spans.
// Threading: training thread only (publishing never blocks; see telemetry_publisher.h).
#pragma once

#include "backend/plan/mesh.h"
#include "backend/trainer/comm/communicator.h"
#include "backend/trainer/parallel/strategy.h"
#include "backend/trainer/telemetry/telemetry_publisher.h"

#include <cstdint>
#include <vector>

namespace trellis::trainer {

std::string hostName();

// precision: "fp32", "bf16", "fp16"; kernels: how this rank's kernels run it (empty: say nothing).
void publishHello(TelemetryPublisher &telemetry, int worldSize, const plan::MeshCoordinates &coords,
                  std::uint64_t parameters, const std::string &device = "cpu", const std::string &precision = "fp32",
                  const std::string &kernels = {});

struct StepFigures {
    std::uint64_t step = 0, totalSteps = 0, tokens = 0;
    double stepMs = 0, bubbleMs = 0, commMs = 0, exposedMs = 0;
    double loss = 0, gradNorm = 0, lr = 0;
    std::uint64_t parameterBytes = 0, masterBytes = 0, gradientBytes = 0, optimizerBytes = 0, activationBytes = 0,
                  bufferBytes = 0;
    std::uint64_t deviceAllocated = 0, devicePeak = 0, deviceReserved = 0; // from the device's allocator
    double lossScale = 0;              // fp16 only
    std::uint64_t skippedSteps = 0;    // fp16: overflow skips so far
    bool updateSkipped = false;
    std::uint64_t outerSteps = 0, dpBytes = 0, dpDenseBytes = 0; // local updates, gradient compression: so far
    double checkpointMs = 0;      // the step boundary's time on checkpoints, outside stepMs
    bool checkpointBehind = false; // a shard was written behind this step
    double checkpointWriteMs = 0; // the write time of the save put in place at this boundary
    std::uint64_t memoryCheckpointStep = 0; // the newest in-memory checkpoint in place (0: none)
    ExpertLoad experts; // empty: none reported
};

// The step report, the collectives each group recorded since the last call (taken from them) and,
// when `spans` is not null, the timeline.
void publishStep(TelemetryPublisher &telemetry, const StepFigures &figures, const std::vector<DeviceCommunicator *> &groups,
                 const std::vector<TimelineSpan> *spans);

// A failure Event (NaN/inf, or any failure) and Goodbye with the exit code; returns the code.
int publishFailure(TelemetryPublisher &telemetry, int rank, int code, const std::string &message, std::uint64_t step);

} // namespace trellis::trainer
