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

} // namespace trellis::launcher
