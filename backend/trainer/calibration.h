// trellis-trainer --calibrate: this machine's figures for the cost model, measured with as many
// ranks as mpirun started, all working at once (so shared cores show): the rate at which the
// slowest rank runs the model's forward and backward, in GFLOP/s as the cost model counts FLOPs (GEMMs and
// attention; the norms, activations and softmax cost time but no FLOPs, so they lower the rate
// as they lower real throughput), and the link between ranks (latency and bandwidth fitted to
// all-reduces of 4 KiB and 4 MiB), and the per-parameter cost of the step's update. Rank 0
// prints one JSON line.
#pragma once

#include "trainer/communicator.h"

namespace trellis::trainer {

struct Calibration {
    int ranks = 1;
    double gflopsPerRank = 0;
    double latencyUs = 0;
    double bandwidthGBps = 0;
    // The per-step work outside forward and backward that scales with parameters, ns a parameter
    // on the slowest rank: zeroing the gradients and their squared norm (every parameter a rank
    // holds), and the AdamW update (every parameter it owns).
    double gradientNsPerParameter = 0;
    double optimizerNsPerParameter = 0;
};

Calibration runCalibration(Communicator &world);

} // namespace trellis::trainer
