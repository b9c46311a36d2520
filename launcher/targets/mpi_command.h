// Builds the mpirun command for a local run as an argument list (never a shell string, so plan
// values cannot inject shell syntax). Pure function of the plan and the request: unit-testable
// without starting anything.
#pragma once

#include "backend/plan/plan.h"

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
    // A plan with its own trainer (own_trainer.command): what its ranks are told besides the telemetry.
    int masterPort = 0;        // torchrun's MASTER_PORT, chosen free for every attempt
    int restartCount = 0;      // TRELLIS_RESTART_COUNT: 0 on the first attempt
    QString checkpointDir;     // TRELLIS_CHECKPOINT_DIR
};

struct LaunchCommand {
    QString program;
    QStringList arguments;
    QMap<QString, QString> environment; // added to the launcher's environment
    // For display and logs only: the arguments quoted as a shell would need them.
    QString displayString() const;
};

LaunchCommand buildLocalCommand(const plan::Plan &plan, const LaunchRequest &request);
// What every rank runs, after mpirun's options: `trainer --plan PLAN ...`, or for a plan with its
// own trainer (own_trainer.command) `trainer --exec ... -- COMMAND...` (backend/trainer/exec), which
// sets torchrun's variables and the telemetry's and runs the command without a shell; --node-relay when the
// plan's telemetry.relay asks for relays at its size (backend/trainer/telemetry/node_relay.h). keysPath:
// the ranks' CURVE key file where they run ("" none); masterAddr: rank 0's host ("" keeps the
// MASTER_ADDR mpirun passes on); dir: the command's folder there ("" the rank's working folder).
QStringList rankArguments(const plan::Plan &plan, const LaunchRequest &request, const QString &trainer, const QString &planPath,
                          const QString &keysPath, const QString &masterAddr, const QString &dir);
// A TCP port free on this machine now (0 when none could be found): a fresh MASTER_PORT per attempt.
int freeLocalPort();
// What Open MPI needs to start as root: the environment pair it asks for (--allow-run-as-root is
// an argument, added by the caller where its options go).
void allowRunAsRoot(LaunchCommand &command, bool runningAsRoot);

} // namespace trellis::launcher
