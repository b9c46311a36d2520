// trellis-trainer --calibrate: this machine's figures for the cost model, measured with as many
// ranks as mpirun started, all working at once (so shared cores show): the rate at which the
// slowest rank runs the model's forward and backward, in GFLOP/s as the cost model counts FLOPs (GEMMs and
// attention; the norms, activations and softmax cost time but no FLOPs, so they lower the rate
// as they lower real throughput), and the link between ranks (latency and bandwidth fitted to
// all-reduces of 4 KiB and 4 MiB), the per-parameter cost of the step's update, and what a
// checkpoint costs: a rank's copy into a staging buffer and the machine's durable write (under
// TMPDIR: point it at the checkpoints' file system to measure that one). Rank 0 prints one JSON line.
#pragma once

#include "backend/plan/cost/calibration.h"
#include "backend/trainer/comm/mpi_communicator.h"

namespace trellis::trainer {

// The entry the cost model reads (backend/plan/cost/calibration.h).
using Calibration = plan::CalibrationEntry;

Calibration runCalibration(MpiCommunicator &world);

} // namespace trellis::trainer
