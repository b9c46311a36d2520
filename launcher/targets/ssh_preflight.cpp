// SshTarget's preflight (see ssh_target.h): host keys, and what each node has — reach, cores,
// clock, run folder and free space, the trainer's build and Open MPI — checked in parallel.
#include "launcher/targets/ssh_target.h"
#include "launcher/targets/ssh_text.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <future>
#include <optional>

namespace trellis::launcher {

using Status = PreflightCheck::Status;
using ssh::firstLine;
using ssh::remotePath;

struct LocalFacts {
    QString mpiVersion;     // first line of `mpirun --version` here
    QString trainerVersion; // first line of `trellis-trainer --version` here
    QString trainerSha;     // sha-256 of this machine's trainer
    qint64 needBytes = 0;   // free space a node's run folder needs
};

namespace {

QString fileSha256(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(&f);
    return QString::fromLatin1(hash.result().toHex());
}

// Why an ssh that exited 255 failed, and what to do, from its stderr.
PreflightCheck reachFailure(const SshTarget::Node &node, const QByteArray &err, const QString &knownHosts)
{
    const QString text = QString::fromUtf8(err);
    const QString where = QStringLiteral("%1 port %2").arg(node.host).arg(node.port);
    PreflightCheck c{node.host, QStringLiteral("reach"), Status::Failed, {}, {}};
    if (text.contains(QLatin1String("IDENTIFICATION HAS CHANGED")) || text.contains(QLatin1String("Host key verification failed"))) {
        c.check = QStringLiteral("host key");
        c.detail = QStringLiteral("the key %1 shows differs from the one in %2 (a reinstalled host, or someone in between)")
                       .arg(where, knownHosts);
        c.fix = QStringLiteral("if the host was reinstalled, remove the old key (ssh-keygen -R '[%1]:%2' -f %3) and accept the new one")
                    .arg(node.host).arg(node.port).arg(knownHosts);
    } else if (text.contains(QLatin1String("Permission denied"))) {
        c.detail = QStringLiteral("%1 refused the key login%2").arg(where, node.user.isEmpty() ? QString() : QStringLiteral(" as %1").arg(node.user));
        c.fix = QStringLiteral("put the public half of %1 into that user's authorized_keys there (no password prompts are used)")
                    .arg(node.identity.isEmpty() ? QStringLiteral("your ssh key") : node.identity);
    } else if (text.contains(QLatin1String("Connection refused"))) {
        c.detail = QStringLiteral("nothing listens for ssh at %1").arg(where);
        c.fix = QStringLiteral("start sshd there or set the node's port (launch.ssh.port, cluster.nodes[].port)");
    } else {
        c.detail = QStringLiteral("cannot reach %1: %2").arg(where, firstLine(err).isEmpty() ? QStringLiteral("no answer") : firstLine(err));
        c.fix = QStringLiteral("check the host name, the network and the port");
    }
    return c;
}

} // namespace

namespace {

// The shell command that probes a node: its cores, clock, run folder (created 0700) and free
// space, the trainer's version and build (when `quotedTrainer` is not ''), and its Open MPI.
QString nodeProbeCommand(const QString &quotedDir, const QString &quotedTrainer)
{
    return QStringLiteral(
               "d=%1; t=%2; echo \"cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc)\"; echo \"time=$(date +%s.%N)\"; "
               "if mkdir -p \"$d\" 2>/dev/null && chmod 700 \"$d\" && cd \"$d\" 2>/dev/null; then echo \"dir=$(pwd -P)\"; "
               "echo \"free_kb=$(df -Pk . | awk 'NR==2 {print $4}')\"; else echo dir_error=1; fi; "
               "if [ -n \"$t\" ]; then if [ -f \"$t\" ] && [ -x \"$t\" ]; then echo \"trainer_version=$(\"$t\" --version 2>&1 | head -n 1)\"; "
               "echo \"trainer_sha=$(sha256sum \"$t\" | cut -d ' ' -f 1)\"; else echo trainer_missing=1; fi; fi; "
               "echo \"mpi=$(mpirun --version 2>&1 | head -n 1)\"")
        .arg(quotedDir, quotedTrainer);
}

// The probe's "key=value" lines.
QMap<QString, QString> parseProbeFacts(const QByteArray &output)
{
    QMap<QString, QString> facts;
    for (const QString &line : QString::fromUtf8(output).split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        if (const int eq = line.indexOf(QLatin1Char('=')); eq > 0)
            facts.insert(line.left(eq), line.mid(eq + 1).trimmed());
    return facts;
}

PreflightCheck coresCheck(const SshTarget::Node &node, const QMap<QString, QString> &facts)
{
    const int cores = facts.value(QStringLiteral("cores")).toInt();
    if (cores <= 0)
        return {node.host, QStringLiteral("cores"), Status::Warning, QStringLiteral("could not count the cores"), {}};
    if (node.slotCount > cores)
        return {node.host, QStringLiteral("cores"), Status::Failed, QStringLiteral("%1 slots in the plan, %2 cores there").arg(node.slotCount).arg(cores),
                QStringLiteral("give this node at most %1 slots (cluster.nodes[].slots) and the ranks to other nodes").arg(cores)};
    return {node.host, QStringLiteral("cores"), Status::Ok, QStringLiteral("%1 slots, %2 cores").arg(node.slotCount).arg(cores)};
}

// checkTrainer: the trainer is not staged, so the node's own `trainer` must be this machine's build.
PreflightCheck trainerCheck(const QString &host, const QMap<QString, QString> &facts, const LocalFacts &here, bool checkTrainer,
                            const QString &trainer)
{
    if (!checkTrainer)
        return {host, QStringLiteral("trainer"), Status::Ok, QStringLiteral("staged from this machine (build %1)").arg(here.trainerSha.left(12))};
    if (facts.contains(QStringLiteral("trainer_missing")))
        return {host, QStringLiteral("trainer"), Status::Failed, QStringLiteral("no executable %1 there").arg(trainer),
                QStringLiteral("install this build there, point launch.ssh.trainer at it, or set launch.ssh.stage_trainer: true")};
    if (facts.value(QStringLiteral("trainer_version")) != here.trainerVersion || facts.value(QStringLiteral("trainer_sha")) != here.trainerSha)
        return {host, QStringLiteral("trainer"), Status::Failed,
                QStringLiteral("%1 there is '%2' (build %3), this machine's is '%4' (build %5)")
                    .arg(trainer, facts.value(QStringLiteral("trainer_version")), facts.value(QStringLiteral("trainer_sha")).left(12),
                         here.trainerVersion, here.trainerSha.left(12)),
                QStringLiteral("install the same build there or set launch.ssh.stage_trainer: true")};
    return {host, QStringLiteral("trainer"), Status::Ok, QStringLiteral("%1, build %2").arg(here.trainerVersion, here.trainerSha.left(12))};
}

PreflightCheck mpiCheck(const QString &host, const QMap<QString, QString> &facts, const LocalFacts &here)
{
    const QString mpi = facts.value(QStringLiteral("mpi"));
    if (mpi != here.mpiVersion)
        return {host, QStringLiteral("mpi"), Status::Failed, QStringLiteral("'%1' there, '%2' here").arg(mpi, here.mpiVersion),
                QStringLiteral("install the same Open MPI on every node and here: ranks of different versions cannot start together")};
    return {host, QStringLiteral("mpi"), Status::Ok, mpi};
}

// Clock: the remote time against the middle of the round trip, less what the trip hides.
// Nothing when the probe did not report the remote time.
std::optional<PreflightCheck> clockCheck(const QString &host, const QMap<QString, QString> &facts, qint64 sentMs, qint64 backMs)
{
    bool timeOk = false;
    const double remoteS = facts.value(QStringLiteral("time")).toDouble(&timeOk);
    if (!timeOk)
        return std::nullopt;
    const double skew = remoteS - (sentMs + backMs) / 2000.0;
    const double slack = (backMs - sentMs) / 2000.0;
    const double beyond = std::max(0.0, std::abs(skew) - slack);
    if (beyond > 1.0)
        return PreflightCheck{host, QStringLiteral("clock"), Status::Warning,
                              QStringLiteral("%1 s %2 this machine").arg(std::abs(skew), 0, 'f', 1).arg(skew > 0 ? QStringLiteral("ahead of") : QStringLiteral("behind")),
                              QStringLiteral("run chrony or ntpd on the nodes: timelines of ranks on different nodes shift by this much")};
    return PreflightCheck{host, QStringLiteral("clock"), Status::Ok,
                          QStringLiteral("within 1 s of this machine (measured to %1 s)").arg(slack, 0, 'f', 2)};
}

// The run folder there; records its absolute path in node.remoteBase when the probe could enter it.
PreflightCheck diskCheck(SshTarget::Node &node, const QMap<QString, QString> &facts, const LocalFacts &here)
{
    if (facts.contains(QStringLiteral("dir_error")) || !facts.contains(QStringLiteral("dir")))
        return {node.host, QStringLiteral("disk"), Status::Failed, QStringLiteral("cannot create or enter %1 there").arg(node.remoteDir),
                QStringLiteral("choose a writable launch.ssh.remote_dir (or cluster.nodes[].remote_dir)")};
    node.remoteBase = facts.value(QStringLiteral("dir"));
    const qint64 freeBytes = facts.value(QStringLiteral("free_kb")).toLongLong() * 1024;
    if (freeBytes < here.needBytes)
        return {node.host, QStringLiteral("disk"), Status::Failed,
                QStringLiteral("%1 MiB free in %2, the run needs %3 MiB").arg(freeBytes >> 20).arg(node.remoteBase).arg(here.needBytes >> 20),
                QStringLiteral("free space there or choose another remote_dir")};
    return {node.host, QStringLiteral("disk"), Status::Ok, QStringLiteral("%1 MiB free in %2").arg(freeBytes >> 20).arg(node.remoteBase)};
}

} // namespace

// The host key first: never let ssh meet an unknown key (BatchMode would refuse it anyway).
// An Ok "host key" check when the key is known; otherwise the failure that stops the node's checks.
PreflightCheck SshTarget::checkHostKey(const Node &node) const
{
    const Result known = run(m_options.sshKeygenPath, {QStringLiteral("-F"), keyName(node), QStringLiteral("-f"), m_knownHosts});
    if (known.exitCode != 0)
        return unknownHostKey(node);
    return {node.host, QStringLiteral("host key"), Status::Ok, QStringLiteral("known (%1)").arg(m_knownHosts)};
}

// The host's key is not in the known-hosts file: a failed "reach" when it does not answer, else a
// failed "host key" showing the fingerprints it offers (the first one pinned for the accept command).
PreflightCheck SshTarget::unknownHostKey(const Node &node) const
{
    const Result scan = run(m_options.sshKeyscanPath, {QStringLiteral("-T"), QStringLiteral("5"), QStringLiteral("-p"),
                                                       QString::number(node.port), QStringLiteral("--"), node.host}, {}, 15000);
    if (scan.out.trimmed().isEmpty())
        return {node.host, QStringLiteral("reach"), Status::Failed, QStringLiteral("no ssh answer from %1 port %2").arg(node.host).arg(node.port),
                QStringLiteral("check the host name, the network and the port")};
    const Result prints = run(m_options.sshKeygenPath, {QStringLiteral("-l"), QStringLiteral("-f"), QStringLiteral("-")}, scan.out);
    QStringList fingerprints;
    QString pin; // the first key's fingerprint, for the accept command
    for (const QString &line : QString::fromUtf8(prints.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        const QStringList f = line.split(QLatin1Char(' '), Qt::SkipEmptyParts); // bits SHA256:... host (TYPE)
        if (f.size() >= 4) {
            fingerprints << f.last().mid(1, f.last().size() - 2) + QLatin1Char(' ') + f[1];
            if (pin.isEmpty())
                pin = f[1];
        }
    }
    PreflightCheck check{node.host, QStringLiteral("host key"), Status::Failed,
                         QStringLiteral("not known in %1; the host shows %2").arg(m_knownHosts, fingerprints.join(QStringLiteral(", "))),
                         QStringLiteral("compare with the host's own key (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub there), then: "
                                        "trellis-cli preflight PLAN --accept-host-key %1=%2")
                             .arg(node.host, pin)};
    check.fingerprint = pin;
    return check;
}

std::vector<PreflightCheck> SshTarget::checkNode(Node &node, const LocalFacts &here) const
{
    std::vector<PreflightCheck> out;
    out.push_back(checkHostKey(node));
    if (out.back().status != Status::Ok)
        return out;

    const bool checkTrainer = !m_plan.launch.ssh.stageTrainer;
    const QString trainer = checkTrainer ? trainerOn(node, m_plan) : QString(); // the one the ranks run
    const QString probe = nodeProbeCommand(shellQuote(remotePath(node.remoteDir)), checkTrainer ? shellQuote(trainer) : QStringLiteral("''"));
    const qint64 sentMs = QDateTime::currentMSecsSinceEpoch();
    const Result r = ssh(node, probe);
    const qint64 backMs = QDateTime::currentMSecsSinceEpoch();
    if (!r.started) {
        out.push_back({node.host, QStringLiteral("reach"), Status::Failed, QStringLiteral("cannot run %1").arg(m_options.sshPath),
                       QStringLiteral("install openssh-client")});
        return out;
    }
    if (r.exitCode == 255 || r.exitCode < 0) {
        out.push_back(reachFailure(node, r.err, m_knownHosts));
        return out;
    }
    const QMap<QString, QString> facts = parseProbeFacts(r.out);
    out.push_back({node.host, QStringLiteral("reach"), Status::Ok,
                   QStringLiteral("key login%1 in %2 ms").arg(node.user.isEmpty() ? QString() : QStringLiteral(" as ") + node.user).arg(backMs - sentMs)});
    out.push_back(coresCheck(node, facts));
    out.push_back(trainerCheck(node.host, facts, here, checkTrainer, trainer));
    out.push_back(mpiCheck(node.host, facts, here));
    if (const std::optional<PreflightCheck> clock = clockCheck(node.host, facts, sentMs, backMs))
        out.push_back(*clock);
    out.push_back(diskCheck(node, facts, here));
    return out;
}

Preflight SshTarget::preflight(const std::function<void(int, int)> &progress)
{
    Preflight result;
    if (!m_configError.isEmpty()) {
        result.checks.push_back({{}, QStringLiteral("ssh config"), Status::Failed, m_configError, {}});
        return result;
    }
    LocalFacts here;
    here.mpiVersion = firstLine(run(m_options.mpirunPath, {QStringLiteral("--version")}).out);
    const QFileInfo trainer(m_options.trainerPath);
    if (!trainer.isExecutable()) {
        result.checks.push_back({{}, QStringLiteral("trainer"), Status::Failed,
                                 QStringLiteral("%1 is not an executable file here").arg(m_options.trainerPath),
                                 QStringLiteral("build it (cmake --build build) or set TRELLIS_TRAINER")});
        return result;
    }
    here.trainerVersion = firstLine(run(trainer.absoluteFilePath(), {QStringLiteral("--version")}).out);
    here.trainerSha = fileSha256(trainer.absoluteFilePath());
    // Logs and the staged files, plus the checkpoints it keeps (weights and two Adam moments, fp32).
    here.needBytes = 64ll << 20;
    if (m_plan.launch.ssh.stageTrainer)
        here.needBytes += trainer.size();
    if (m_plan.training.checkpoint.every > 0)
        here.needBytes += static_cast<qint64>(plan::parameterCount(m_plan.model)) * 12 * (m_plan.training.checkpoint.keep + 1);

    std::vector<std::future<std::vector<PreflightCheck>>> work;
    std::atomic<int> done{0};
    const int total = static_cast<int>(m_nodes.size());
    for (auto &node : m_nodes)
        work.push_back(std::async(std::launch::async, [&, n = &node] {
            auto checks = checkNode(*n, here);
            if (progress)
                progress(++done, total);
            return checks;
        }));
    for (auto &w : work)
        for (auto &c : w.get())
            result.checks.push_back(std::move(c));
    return result;
}

QString SshTarget::acceptHostKey(const QString &host, const QString &fingerprint, QStringList *accepted)
{
    const auto node = std::find_if(m_nodes.begin(), m_nodes.end(), [&](const Node &n) { return n.host == host; });
    if (node == m_nodes.end())
        return QStringLiteral("%1 is not one of the plan's nodes (%2)").arg(host, hosts().join(QStringLiteral(", ")));
    const Result scan = run(m_options.sshKeyscanPath, {QStringLiteral("-T"), QStringLiteral("5"), QStringLiteral("-p"),
                                                       QString::number(node->port), QStringLiteral("--"), node->host}, {}, 15000);
    QByteArray keep;
    for (const QByteArray &line : scan.out.split('\n')) {
        if (line.trimmed().isEmpty() || line.startsWith('#'))
            continue;
        const Result print = run(m_options.sshKeygenPath, {QStringLiteral("-l"), QStringLiteral("-f"), QStringLiteral("-")}, line + '\n');
        const QStringList f = QString::fromUtf8(print.out).trimmed().split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (f.size() < 4)
            continue;
        if (!fingerprint.isEmpty() && f[1] != fingerprint)
            continue;
        keep += line + '\n';
        if (accepted)
            *accepted << f.last().mid(1, f.last().size() - 2) + QLatin1Char(' ') + f[1];
    }
    if (keep.isEmpty())
        return fingerprint.isEmpty() ? QStringLiteral("no ssh answer from %1 port %2").arg(node->host).arg(node->port)
                                     : QStringLiteral("%1 shows no key with fingerprint %2: nothing accepted").arg(node->host, fingerprint);
    QDir().mkpath(QFileInfo(m_knownHosts).absolutePath());
    QFile f(m_knownHosts);
    const bool existed = f.exists();
    if (!f.open(QIODevice::Append) || f.write(keep) != keep.size())
        return QStringLiteral("cannot write %1: %2").arg(m_knownHosts, f.errorString());
    if (!existed)
        f.setPermissions(QFile::ReadOwner | QFile::WriteOwner);
    return {};
}

} // namespace trellis::launcher
