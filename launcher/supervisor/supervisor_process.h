// Starting a run's supervisor from the workbench: `trellis-cli run` in a session of its own
// (setsid), detached, so the run outlives the window. Nothing here waits on the process: the
// caller follows the run through its live feed (RunFeed) and the run registry.
#pragma once

#include "launcher/programs.h"
#include "launcher/supervisor/supervisor.h" // RunOptions
#include "backend/plan/plan.h"

#include <QString>

namespace trellis::launcher {

struct SupervisorStart {
    QString error;     // "" when it started
    QString runId;
    qint64 pid = 0;    // the supervisor (trellis-cli run)
    QString logPath;   // its output: why it refused the run, when it did
    QString planPath;  // the plan it was given (relative paths made absolute)
};

// `plan` (loaded from planPath, maybe edited since) is written with absolute paths into the runs
// folder beside the history database, and a supervisor is started for it. options: trainerPath
// ($TRELLIS_TRAINER for the supervisor), extraTrainerArgs ("--inject X"), hangTimeoutS.
SupervisorStart startSupervisor(const plan::Plan &plan, const QString &planPath, const QString &databasePath,
                                const RunOptions &options = {});

// Starts a new supervisor (trellis-cli adopt, detached) for a run whose supervisor died while its
// job goes on (RunRegistry::orphaned()).
SupervisorStart adoptOrphan(const QString &runId, const QString &databasePath);

// Asks a run's supervisor to stop the run (SIGTERM); "" or why not.
QString stopSupervisedRun(const QString &runId);

// The workbench's "Listen for jobs": `trellis-cli collect --bind BIND` for this history, detached
// (setsid), its output in a log beside the history's runs. runId stays empty.
SupervisorStart startCollector(const QString &databasePath, const QString &bind);
// What a collector's log says once it listens: its address and the jobs' key file (both empty
// until then), or the error it stopped with.
struct CollectorListening {
    QString address, jobKeys, error;
};
CollectorListening collectorListening(const QString &logPath);

} // namespace trellis::launcher
