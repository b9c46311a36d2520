// Builds the mpirun command for a local run as an argument list (never a shell string, so plan
// values cannot inject shell syntax). Pure function of the plan and the request: unit-testable
// without starting anything.
#pragma once

#include "plan/plan.h"

#include <QMap>
#include <QString>
#include <QStringList>

namespace trellis::launcher {

struct LaunchRequest {
    QString mpirunPath = QStringLiteral("mpirun");
    QString trainerPath;
    QString planPath;
    QString runId;
    QString endpoint;          // telemetry endpoint the ranks connect to
    QStringList extraTrainerArgs; // e.g. {"--inject", "crash@1:3"}
    int availableCores = 1;    // oversubscribe when ranks exceed this
    bool runningAsRoot = false;
    int blasThreadsPerRank = 1;
};

struct LaunchCommand {
    QString program;
    QStringList arguments;
    QMap<QString, QString> environment; // added to the launcher's environment
    // For display and logs only: the arguments quoted as a shell would need them.
    QString displayString() const;
};

LaunchCommand buildLocalCommand(const plan::Plan &plan, const LaunchRequest &request);
// What Open MPI needs to start as root: the environment pair it asks for (--allow-run-as-root is
// an argument, added by the caller where its options go).
void allowRunAsRoot(LaunchCommand &command, bool runningAsRoot);

} // namespace trellis::launcher
