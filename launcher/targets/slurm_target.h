// The slurm target: each launch attempt is one batch job. The job keeper runs `trellis-cli
// slurm-job` (runSlurmJob below), which writes the batch script, submits it with sbatch, follows
// the job with scontrol/squeue (sacct once Slurm has forgotten it), copies the job's output to its
// own as it grows, cancels it with scancel on SIGTERM, and ends with an exit code mapped from the
// job's end. State changes are printed as "[slurm] job=ID state=STATE reason=... position=P/N
// nodes=..." lines, which the supervisor reads for the queue state it shows and records.
//   preflight  Slurm's programs here, the controller answering, the partition up with enough
//              nodes of enough CPUs (and GPUs for CUDA nodes), the shared folder writable, the
//              trainer visible.
//   telemetry  as ssh: the receiver binds TCP on the address routed toward the controller (or
//              launch.slurm.telemetry_address) as a CURVE server; the ranks' keys go to a 0600 file.
//   stage      a shared filesystem is assumed (as on nearly every Slurm cluster): the job folder is
//              launch.slurm.shared_dir/RUN_ID, or the run folder itself when shared_dir is empty;
//              it gets the plan (data copied beside it, checkpoints inside), the keys and the script.
//   command    trellis-cli slurm-job ... -- mpirun ... trellis-trainer ...: inside the allocation
//              Open MPI starts its daemons through Slurm and places ranks node by node, in mesh order.
// Nothing reaches a shell unquoted: the script's #SBATCH lines carry only validated values, and its
// one command line has every word single-quoted.
#pragma once

#include "launcher/targets/launch_target.h"

#include <QMap>

#include <optional>

namespace trellis::launcher {

class SlurmTarget final : public LaunchTarget {
public:
    SlurmTarget(const plan::Plan &plan, TargetOptions options);
    QString name() const override { return QStringLiteral("slurm"); }
    QStringList hosts() const override;
    Preflight preflight(const std::function<void(int, int)> &progress = {}) override;
    QString prepareTelemetry(TelemetryRoute &route) override;
    QString stage(const StageInput &input) override;
    QString reattach(const QString &runId) override;
    LaunchCommand command(const plan::Plan &plan, const LaunchRequest &request) const override;

    QString jobDir() const { return m_jobDir; } // after stage() or reattach()

private:
    QString jobDirFor(const QString &runId) const;
    // The preflight's checks, in the order it runs them.
    PreflightCheck checkSlurmPrograms() const;
    PreflightCheck checkController() const;
    PreflightCheck checkPartition() const;
    PreflightCheck checkSharedFolder() const;
    PreflightCheck checkTrainer() const;

    plan::Plan m_plan;
    TargetOptions m_options;
    QString m_jobDir;
};

// ---- The batch job, for `trellis-cli slurm-job` and its tests --------------------------------

struct SlurmJobRequest {
    QString dir;        // the job folder (shared): script, output files, job id
    QString name;       // the job name (the run id)
    int nodes = 1;
    int tasksPerNode = 1;
    QString partition, account, qos, time, gres;
    int pollMs = 2000;  // how often the job's state is asked for
    QString program;    // what the job runs (mpirun) and its arguments
    QStringList arguments;
};

// The batch script: #SBATCH lines (validated values only) and one command, every word quoted.
QString slurmBatchScript(const SlurmJobRequest &request);
// `scontrol show job -o ID` output as key -> value; nullopt with `error` when it is not that.
std::optional<QMap<QString, QString>> parseScontrolJob(const QByteArray &output, QString &error);
// Whether a job state is final (COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...).
bool isFinalSlurmState(const QString &state);
// The exit code `slurm-job` ends with for a finished job: 0 completed, the job's own exit code
// (or 128 + its signal) when it failed, 143 cancelled, 124 time limit, 137 out of memory, 75
// node failure or preemption (EX_TEMPFAIL: worth a restart), 1 otherwise.
int slurmExitCode(const QString &state, const QString &exitCodeField);
// A sentence for a final state ("hit its time limit of 00:01:00", "a node failed: host2").
QString describeSlurmEnd(const QMap<QString, QString> &job);

// A Slurm program run to its end (blocking: preflight and slurm-job only, never a GUI thread).
// When it does not start or answer, exitCode is -1 and err says why.
struct SlurmCall {
    int exitCode = -1;
    QByteArray out, err;
};
SlurmCall callSlurm(const QString &program, const QStringList &arguments, int timeoutMs = 30000);

// `trellis-cli slurm-job ARGS` (args after "slurm-job"); returns the process's exit code.
int runSlurmJob(const QStringList &args);

// A "[slurm] job=... state=..." line as the controller reads it.
struct SlurmLine {
    QString jobId, state, reason, nodes, exitCode, detail;
    int position = 0, queued = 0;
};
std::optional<SlurmLine> parseSlurmLine(const QString &line);

} // namespace trellis::launcher
