// The ssh target: mpirun on this machine starts the ranks on cluster.nodes over ssh (Open MPI's rsh
// launcher with an ssh config this target writes: BatchMode, StrictHostKeyChecking, the plan's
// port, user and identity per node; every ssh starts here, no tree spawn through the nodes).
//   preflight  all nodes in parallel: host key known (an unknown key is shown with its fingerprint
//              and refused until accepted; a changed key is refused), reachable with key login,
//              the trainer there at this machine's version and build (sha-256), the same Open MPI,
//              slots <= cores, clock skew, free disk in the run folder.
//   telemetry  the receiver binds TCP on the address the nodes route to (or
//              launch.ssh.telemetry_address) as a CURVE server with fresh per-run keys; the ranks'
//              keys are staged to each node as a 0600 file (never on a command line).
//   stage      no shared filesystem assumed: a 0700 folder per run under each node's remote_dir
//              gets the plan (data and checkpoint paths rewritten to it), the keys, the data file
//              and, with launch.ssh.stage_trainer, the trainer.
//   command    one mpirun app context per node (its -wdir, its plan path), ranks in the plan's order.
//   checkpoints  unless launch.ssh.shared_remote_dir, each host keeps its own ranks' shards: every
//              checkpoint is gathered (tar over ssh) into this machine's checkpoint folder, and
//              before a restart the newest complete one is put back on every host of the attempt.
//              A run over for good has each host give back its in-memory checkpoints' store
//              (trellis-trainer --release-checkpoints) instead of leaving it to the store's lease.
// Remote commands are fixed text with plan values single-quoted (and those values validated to a
// safe alphabet by plan validation).
#pragma once

#include "launcher/targets/launch_target.h"

#include <QByteArray>

namespace trellis::launcher {

class SshTarget final : public LaunchTarget {
public:
    SshTarget(const plan::Plan &plan, TargetOptions options);
    QString name() const override { return QStringLiteral("ssh"); }
    QStringList hosts() const override;
    Preflight preflight(const std::function<void(int, int)> &progress = {}) override;
    QString prepareTelemetry(TelemetryRoute &route) override;
    QString stage(const StageInput &input) override;
    LaunchCommand command(const plan::Plan &plan, const LaunchRequest &request) const override;
    QString reattach(const QString &runId) override;
    bool gathersCheckpoints() const override { return !m_plan.launch.ssh.sharedRemoteDir; }
    QString gatherCheckpoint(const plan::Plan &plan, qint64 step, const QString &localDir) const override;
    QString spreadCheckpoint(const plan::Plan &plan, qint64 step, const QString &localDir) const override;
    QString releaseMemoryCheckpoints(const plan::Plan &plan) const override;

    // Adds `host`'s key (as it shows it now) to the known-hosts file. With `fingerprint`
    // ("SHA256:..."), only a key with that fingerprint is accepted. Returns "" or why not;
    // `accepted` lists what was added ("ED25519 SHA256:...").
    QString acceptHostKey(const QString &host, const QString &fingerprint, QStringList *accepted);
    QString knownHostsPath() const { return m_knownHosts; }
    QString sshConfigPath() const { return m_configPath; }
    // 'text' as one word for a POSIX shell.
    static QString shellQuote(const QString &text);

    struct Node {
        QString host, alias, user, identity, remoteDir;
        int port = 22;
        int slotCount = 0;
        QString remoteBase; // absolute, after preflight
        QString runDir;     // absolute, after staging
    };
    struct Result {
        bool started = false;
        int exitCode = -1;
        QByteArray out, err;
    };

private:
    QString writeSshConfig();
    Result ssh(const Node &node, const QString &remoteCommand, const QByteArray &input = {}, int timeoutMs = 30000) const;
    Result run(const QString &program, const QStringList &arguments, const QByteArray &input = {}, int timeoutMs = 30000) const;
    QString keyName(const Node &node) const; // as known_hosts names it: host or [host]:port
    std::vector<PreflightCheck> checkNode(Node &node, const struct LocalFacts &here) const;
    PreflightCheck checkHostKey(const Node &node) const;   // "host key" Ok, or the failure that stops checkNode
    PreflightCheck unknownHostKey(const Node &node) const; // the host's offered keys, or that it does not answer
    QString stageNode(Node &node, const StageInput &input, const QByteArray &keyBytes) const;
    // `remoteCommand` on `node` with a local `tar tarArguments` on the other end of its stdout
    // (fromNode) or stdin; "" or why not.
    QString tarPipe(const Node &node, const QString &remoteCommand, const QStringList &tarArguments, bool fromNode, int timeoutMs) const;
    std::vector<const Node *> nodesOf(const plan::Plan &plan) const; // the attempt's nodes
    QString trainerOn(const Node &node, const plan::Plan &plan) const; // the trainer's path there

    plan::Plan m_plan;
    TargetOptions m_options;
    std::vector<Node> m_nodes;
    QString m_knownHosts;
    QString m_configPath;
    QString m_configError;
};

} // namespace trellis::launcher
