// Where a run's ranks are started, behind one interface (docs/architecture.md §6): `local` (mpirun on this
// machine) and `ssh` (mpirun reaching cluster.nodes over ssh). Each checks what it needs before
// anything starts (preflight), puts the run's files where the ranks will read them (stage), says
// where the telemetry receiver binds and with which keys, and builds the launch command as an
// argument list — never a shell string with plan values in it. The supervisor starts, tracks,
// stops and collects the per-rank output of that command the same way for every target.
// Threading: preflight() and stage() block (seconds, hosts in parallel): never on a GUI thread.
#pragma once

#include "launcher/targets/mpi_command.h"
#include "backend/plan/plan.h"
#include "backend/protocol/curve_keys.h"

#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <vector>

namespace trellis::launcher {

struct PreflightCheck {
    enum class Status { Ok, Warning, Failed };
    PreflightCheck() = default;
    PreflightCheck(QString host_, QString check_, Status status_, QString detail_, QString fix_ = {})
        : host(std::move(host_)), check(std::move(check_)), status(status_), detail(std::move(detail_)), fix(std::move(fix_))
    {
    }
    QString host;  // as the plan names it; "" for this machine
    QString check; // reach, host key, trainer, mpi, cores, clock, disk
    Status status = Status::Ok;
    QString detail; // what was found
    QString fix;    // what to do about a failure or a warning
    QString fingerprint; // an unknown host key's ("SHA256:..."), to accept it by
};

struct Preflight {
    std::vector<PreflightCheck> checks;
    bool passed() const;   // no check failed (warnings allowed)
    QString table() const; // aligned, one row per check, for the CLI and logs
    QString failures() const; // "host: check: detail (fix: ...)", one line each
};

// What the ranks connect to, and how the receiver binds.
struct TelemetryRoute {
    std::string bind;       // "" : the receiver's default (the run's ipc:// socket or loopback)
    proto::CurveKeys keys;  // for the receiver (server) and, staged, the ranks (client); empty: none
};

// What stage() is given: the run and the plan as frozen in the run folder on this machine.
// What a run started from transformers-layout weights (training.init.from, a folder) reads of them:
// the targets that copy a run's inputs to its hosts copy these into the run's folder `init/`.
inline const char *const kInitFromFiles[] = {"config.json", "model.safetensors"};

struct StageInput {
    QString runId;
    plan::Plan plan;    // with absolute local paths (Supervisor::withAbsolutePaths)
    QString trainerPath; // this machine's trainer
    proto::CurveKeys rankKeys; // the ranks' keys, written to each host (none: no file)
};

class LaunchTarget {
public:
    virtual ~LaunchTarget() = default;
    virtual QString name() const = 0;
    // Hosts the ranks run on, in rank order (a host per node).
    virtual QStringList hosts() const = 0;
    // Checks before anything starts; progress(done, total) is called as hosts finish (any thread).
    virtual Preflight preflight(const std::function<void(int, int)> &progress = {}) = 0;
    // Where the receiver binds; for remote hosts also fresh CURVE keys. "" or why not.
    virtual QString prepareTelemetry(TelemetryRoute &route) = 0;
    // Puts the plan, keys (and, if asked, the trainer) where the ranks run. "" or why not.
    virtual QString stage(const StageInput &input) = 0;
    // An adopted run: its files were staged by an earlier supervisor; find them again. "" or why not.
    virtual QString reattach(const QString &runId) { Q_UNUSED(runId); return {}; }
    // The launch command of one attempt (plan: the attempt's plan, perhaps shrunk).
    virtual LaunchCommand command(const plan::Plan &plan, const LaunchRequest &request) const = 0;

    // Checkpoints on hosts that share no folder (ssh without launch.ssh.shared_remote_dir): each
    // host holds its own ranks' shards. Such a target gathers every checkpoint the ranks report
    // into `localDir` on this machine and, before a restart, puts the chosen one back on the hosts
    // of the attempt's plan. Both block (hosts in parallel) and may run on any thread; "" or why not.
    virtual bool gathersCheckpoints() const { return false; }
    virtual QString gatherCheckpoint(const plan::Plan &plan, qint64 step, const QString &localDir) const
    {
        Q_UNUSED(plan); Q_UNUSED(step); Q_UNUSED(localDir);
        return {};
    }
    virtual QString spreadCheckpoint(const plan::Plan &plan, qint64 step, const QString &localDir) const
    {
        Q_UNUSED(plan); Q_UNUSED(step); Q_UNUSED(localDir);
        return {};
    }
    // The run is over for good (failed, stopped): the memory stores its in-memory checkpoints
    // (training.checkpoint.memory) took on the run's hosts are given back now rather than when
    // their holders' leases run out. Blocks (hosts in parallel, a host that does not answer given
    // up on); "" or what could not be released (the lease still ends it). Targets whose ranks run on
    // this machine have nothing to do here: the supervisor removes this machine's store itself.
    virtual QString releaseMemoryCheckpoints(const plan::Plan &plan) const
    {
        Q_UNUSED(plan);
        return {};
    }
};

// Remote ranks' telemetry route: a CURVE server with fresh keys, bound on `address`, or (when "") on
// the address this machine sends from toward `host` (a name or address; `port` only picks the
// route). Failures name `field`, where a person sets the address by hand. "" or why not.
QString remoteTelemetryRoute(const QString &address, const QString &host, quint16 port, const QString &field, TelemetryRoute &route);

// "step-00000042": a checkpoint's folder name (backend/trainer/checkpoint/checkpoint.h).
QString checkpointFolderName(qint64 step);
// The newest checkpoint in `dir` with its meta.json and every shard it lists at the listed size;
// 0 when none.
qint64 newestCompleteCheckpoint(const QString &dir);
// Whether `stepDir` holds meta.json and every shard it lists, at the listed size; "" or what is missing.
QString checkpointGaps(const QString &stepDir);

struct TargetOptions {
    QString trainerPath;                         // this machine's trellis-trainer
    QString mpirunPath = QStringLiteral("mpirun");
    QString sshPath = QStringLiteral("ssh");
    QString sshKeygenPath = QStringLiteral("ssh-keygen");
    QString sshKeyscanPath = QStringLiteral("ssh-keyscan");
    QString workDir;                             // the run folder: the ssh config, the slurm job folder by default
    QString cliPath;                             // trellis-cli (slurm: runs `slurm-job` under the keeper); "" : beside this program
};

// The plan's launch.target; nullptr with `error` for a target this version cannot start.
std::unique_ptr<LaunchTarget> makeLaunchTarget(const plan::Plan &plan, const TargetOptions &options, QString &error);

} // namespace trellis::launcher
