// This machine's calibration (`trellis-cli calibrate`) on disk: where it is kept and how a plan's
// device figures take it. Shared by the CLI's estimate and search and the workbench's estimate
// panel (which calls it off the GUI thread).
#pragma once

#include "backend/plan/cost/calibration.h"
#include "backend/plan/cost/cost_model.h"

#include <QString>

namespace trellis::launcher {

// calibration.json beside the history database.
QString defaultCalibrationPath(const QString &databasePath);

// Applies the calibration in `path` to a CPU plan's device and links. A missing file is an error
// only when `required`; a file that is not a calibration always is. `applied` tells whether the
// figures were used (CPU clusters only).
QString applyCalibrationFile(const QString &path, bool required, plan::Plan &plan, plan::DeviceSpec &device, bool &applied);

// Whether estimating this plan should first calibrate this machine, unasked: a CPU plan that runs
// here (launch target local) and no calibration file yet, unless $TRELLIS_AUTO_CALIBRATE is 0.
// The estimate of an uncalibrated CPU is off by a few times (default rates); one calibration for
// the plan's world size takes seconds (`trellis-cli calibrate`, docs/planning.md).
bool wantsAutoCalibration(const plan::Plan &plan, const QString &path);

// Writes `path` holding its entries with `added` in place of those of the same world sizes; ""
// or why not (a file there that is not a calibration is not replaced).
QString mergeCalibrationFile(const QString &path, const std::vector<plan::CalibrationEntry> &added);

} // namespace trellis::launcher
