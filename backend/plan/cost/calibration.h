// This machine's calibration for the cost model: the entries, their JSON file, and how a CPU
// plan's device takes them. No Qt; the trainer measures, the launcher stores, the cost model uses.
#pragma once

#include "backend/plan/cost/cost_model.h"
#include "backend/plan/plan.h"
#include "backend/plan/result.h"

#include <string>
#include <vector>

namespace trellis::plan {

// Figures `trellis-cli calibrate` measured on this machine ("trellis.calibration/1" JSON): per
// world size, the rate at which one rank runs the model (GFLOP/s as the cost model counts), the
// link between ranks, and the step's update per parameter. trellis-trainer --calibrate measures
// one entry; the CLI collects them into the file.
struct CalibrationEntry {
    int ranks = 1;
    double gflopsPerRank = 0;
    double latencyUs = 0;
    double bandwidthGBps = 0;
    double gradientNsPerParameter = 0;
    double optimizerNsPerParameter = 0;
    // Checkpoints (0: not measured): a rank's copy into a staging buffer, GB/s a rank with every
    // rank copying at once; the machine's durable write (fsync'd) under TMPDIR, GB/s with every
    // rank writing at once.
    double hostCopyGBps = 0;
    double diskWriteGBps = 0;
};
inline constexpr const char *kCalibrationFormat = "trellis.calibration/1";
Result<std::vector<CalibrationEntry>> parseCalibration(const std::string &json);
std::string calibrationJson(const std::vector<CalibrationEntry> &entries);
// One entry as a single-line JSON object, the form trellis-trainer --calibrate prints.
std::string calibrationEntryJson(const CalibrationEntry &entry);
// For a CPU cluster: the device rate (at 100% efficiency) and the intra-node link from the entry
// measured with the plan's world size, or the nearest one. Other clusters are left alone.
void applyCalibration(const std::vector<CalibrationEntry> &entries, Plan &plan, DeviceSpec &device);

} // namespace trellis::plan
