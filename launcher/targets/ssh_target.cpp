// See ssh_target.h.
#include "launcher/targets/ssh_target.h"

#include "launcher/targets/ssh_text.h"
#include "backend/plan/plan_json.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <future>
#include <optional>

namespace trellis::launcher {

namespace ssh {

QString firstLine(const QByteArray &bytes)
{
    return QString::fromUtf8(bytes).section(QLatin1Char('\n'), 0, 0).trimmed();
}

// A remote path as the remote shell should see it: "~/x" is relative to the login folder, where
// every ssh command starts.
QString remotePath(const QString &path)
{
    if (path == QLatin1String("~"))
        return QStringLiteral(".");
    return path.startsWith(QLatin1String("~/")) ? path.mid(2) : path;
}

QString expandHome(const QString &path)
{
    if (path.startsWith(QLatin1String("~/")))
        return QDir::homePath() + path.mid(1);
    return path;
}

} // namespace ssh

using ssh::expandHome;
using ssh::firstLine;
using ssh::remotePath;

SshTarget::SshTarget(const plan::Plan &plan, TargetOptions options) : m_plan(plan), m_options(std::move(options))
{
    const plan::SshSpec &s = plan.launch.ssh;
    m_knownHosts = expandHome(QString::fromStdString(s.knownHosts.empty() ? std::string("~/.ssh/known_hosts") : s.knownHosts));
    for (std::size_t i = 0; i < plan.cluster.nodes.size(); ++i) {
        const plan::NodeSpec &n = plan.cluster.nodes[i];
        Node node;
        node.host = QString::fromStdString(n.host);
        node.alias = QStringLiteral("trellis-node-%1").arg(i);
        node.user = QString::fromStdString(n.user.empty() ? s.user : n.user);
        node.port = n.port > 0 ? n.port : s.port;
        node.identity = expandHome(QString::fromStdString(n.identityFile.empty() ? s.identityFile : n.identityFile));
        node.remoteDir = QString::fromStdString(n.remoteDir.empty() ? s.remoteDir : n.remoteDir);
        node.slotCount = n.slotCount;
        m_nodes.push_back(node);
    }
    m_configError = writeSshConfig();
}

QStringList SshTarget::hosts() const
{
    QStringList out;
    for (const auto &n : m_nodes)
        out << n.host;
    return out;
}

QString SshTarget::shellQuote(const QString &text)
{
    return QLatin1Char('\'') + QString(text).replace(QLatin1Char('\''), QStringLiteral("'\\''")) + QLatin1Char('\'');
}

// One Host block per node under an alias; values were validated (plan_validate's ssh alphabet).
QString SshTarget::writeSshConfig()
{
    QString dir = m_options.workDir;
    if (dir.isEmpty()) {
        static QTemporaryDir temp(QDir::tempPath() + QStringLiteral("/trellis-ssh-XXXXXX"));
        dir = temp.path();
    }
    m_configPath = dir + QStringLiteral("/ssh_config");
    if (m_configPath.contains(QLatin1Char(' ')))
        return QStringLiteral("the run folder %1 has a space in its path, which Open MPI's ssh options cannot carry").arg(dir);
    QString text = QStringLiteral("# Written by Trellis for one run: the plan's nodes, no password prompts, no unknown host keys.\n");
    for (const auto &n : m_nodes) {
        text += QStringLiteral("Host %1\n  HostName %2\n  Port %3\n").arg(n.alias, n.host).arg(n.port);
        if (!n.user.isEmpty())
            text += QStringLiteral("  User %1\n").arg(n.user);
        if (!n.identity.isEmpty())
            text += QStringLiteral("  IdentityFile %1\n  IdentitiesOnly yes\n").arg(n.identity);
        text += QStringLiteral("  UserKnownHostsFile %1\n  StrictHostKeyChecking yes\n  BatchMode yes\n  ConnectTimeout 10\n"
                               "  ServerAliveInterval 15\n  ServerAliveCountMax 4\n  LogLevel ERROR\n")
                    .arg(m_knownHosts);
    }
    QDir().mkpath(dir);
    QFile f(m_configPath);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(text.toUtf8()) < 0)
        return QStringLiteral("cannot write %1: %2").arg(m_configPath, f.errorString());
    f.setPermissions(QFile::ReadOwner | QFile::WriteOwner);
    return {};
}

SshTarget::Result SshTarget::run(const QString &program, const QStringList &arguments, const QByteArray &input, int timeoutMs) const
{
    Result r;
    QProcess p;
    p.start(program, arguments);
    if (!p.waitForStarted(10000))
        return r;
    r.started = true;
    if (!input.isEmpty())
        p.write(input);
    p.closeWriteChannel();
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished(2000);
        r.exitCode = -1;
        r.err = "timed out after " + QByteArray::number(timeoutMs / 1000) + " s";
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

SshTarget::Result SshTarget::ssh(const Node &node, const QString &remoteCommand, const QByteArray &input, int timeoutMs) const
{
    return run(m_options.sshPath, {QStringLiteral("-F"), m_configPath, QStringLiteral("--"), node.alias, remoteCommand}, input, timeoutMs);
}

QString SshTarget::keyName(const Node &node) const
{
    return node.port == 22 ? node.host : QStringLiteral("[%1]:%2").arg(node.host).arg(node.port);
}

QString SshTarget::prepareTelemetry(TelemetryRoute &route)
{
    if (m_nodes.empty())
        return QStringLiteral("the ssh target has no nodes");
    return remoteTelemetryRoute(QString::fromStdString(m_plan.launch.ssh.telemetryAddress), m_nodes.front().host,
                                static_cast<quint16>(m_nodes.front().port), QStringLiteral("launch.ssh.telemetry_address"), route);
}

QString SshTarget::stageNode(Node &node, const StageInput &input, const QByteArray &keyBytes) const
{
    if (node.remoteBase.isEmpty())
        return QStringLiteral("%1: not checked (run the preflight first)").arg(node.host);
    const QString dir = node.remoteBase + QLatin1Char('/') + input.runId;
    auto put = [&](const QString &name, const QByteArray &bytes, bool executable) -> QString {
        const QString path = dir + QLatin1Char('/') + name;
        const Result r = ssh(node, QStringLiteral("umask 077 && cat > %1%2").arg(shellQuote(path), executable ? QStringLiteral(" && chmod 700 ") + shellQuote(path) : QString()),
                             bytes, 120000);
        if (r.exitCode != 0)
            return QStringLiteral("%1: cannot write %2: %3").arg(node.host, path, firstLine(r.err));
        return {};
    };
    const Result made = ssh(node, QStringLiteral("mkdir -m 700 -p %1").arg(shellQuote(dir)));
    if (made.exitCode != 0)
        return QStringLiteral("%1: cannot create %2: %3").arg(node.host, dir, firstLine(made.err));
    node.runDir = dir;
    // The plan as this node reads it: data beside it, checkpoints in the run folder.
    plan::Plan staged = input.plan;
    const QFileInfo data(QString::fromStdString(input.plan.training.data.path));
    if (input.plan.training.data.source != "synthetic" && !input.plan.training.data.path.empty()) {
        // Streamed through tar (token shards can be large), renamed data-NAME on the way.
        if (!data.isFile() || !data.isReadable())
            return QStringLiteral("cannot read the data file %1 to stage it").arg(data.absoluteFilePath());
        const QString remote = QStringLiteral("tar -xf - --no-same-owner -C %1").arg(shellQuote(dir));
        const QStringList tarArguments{QStringLiteral("-c"), QStringLiteral("-f"), QStringLiteral("-"), QStringLiteral("-C"), data.absolutePath(),
                                       QStringLiteral("--transform=s|^|data-|"), QStringLiteral("--"), data.fileName()};
        if (const QString e = tarPipe(node, remote, tarArguments, false, 1800000); !e.isEmpty())
            return QStringLiteral("cannot stage the data file %1: %2").arg(data.absoluteFilePath(), e);
        staged.training.data.path = (dir + QStringLiteral("/data-") + data.fileName()).toStdString();
    }
    if (const QString from = QString::fromStdString(input.plan.training.init.from); !from.isEmpty()) {
        // The weights to start from, beside the plan like the data; streamed through tar (a model
        // can be tens of gigabytes).
        QStringList tarArguments{QStringLiteral("-c"), QStringLiteral("-f"), QStringLiteral("-"), QStringLiteral("-C"), from};
        for (const char *name : kInitFromFiles) {
            const QFileInfo file(QDir(from).filePath(QString::fromLatin1(name)));
            if (!file.isFile() || !file.isReadable())
                return QStringLiteral("cannot read %1 to stage training.init.from").arg(file.absoluteFilePath());
            tarArguments << QString::fromLatin1(name);
        }
        const QString remote = QStringLiteral("mkdir -m 700 -p %1 && tar -xf - --no-same-owner -C %1").arg(shellQuote(dir + QStringLiteral("/init")));
        if (const QString e = tarPipe(node, remote, tarArguments, false, 1800000); !e.isEmpty())
            return QStringLiteral("cannot stage training.init.from: %1").arg(e);
        staged.training.init.from = (dir + QStringLiteral("/init")).toStdString();
    }
    staged.training.checkpoint.dir = (dir + QStringLiteral("/checkpoints")).toStdString();
    if (const QString e = put(QStringLiteral("plan.json"), QByteArray::fromStdString(plan::planToJson(staged)), false); !e.isEmpty())
        return e;
    if (!keyBytes.isEmpty())
        if (const QString e = put(QStringLiteral("rank.keys"), keyBytes, false); !e.isEmpty())
            return e;
    if (m_plan.launch.ssh.stageTrainer) {
        QFile f(input.trainerPath);
        if (!f.open(QIODevice::ReadOnly))
            return QStringLiteral("cannot read the trainer %1 to stage it: %2").arg(input.trainerPath, f.errorString());
        if (const QString e = put(QStringLiteral("trellis-trainer"), f.readAll(), true); !e.isEmpty())
            return e;
    }
    return {};
}

QString SshTarget::stage(const StageInput &input)
{
    QByteArray keyBytes;
    if (input.rankKeys.hasClient()) {
        const proto::CurveKeys &k = input.rankKeys;
        keyBytes = QStringLiteral("server_public=%1\nclient_public=%2\nclient_secret=%3\n")
                       .arg(QString::fromStdString(k.serverPublic), QString::fromStdString(k.clientPublic), QString::fromStdString(k.clientSecret))
                       .toUtf8();
    }
    std::vector<std::future<QString>> work;
    for (auto &node : m_nodes)
        work.push_back(std::async(std::launch::async, [&, n = &node] { return stageNode(*n, input, keyBytes); }));
    QStringList errors;
    for (auto &w : work)
        if (QString e = w.get(); !e.isEmpty())
            errors << e;
    return errors.join(QLatin1Char('\n'));
}

QString SshTarget::reattach(const QString &runId)
{
    const Preflight p = preflight();
    QStringList missing;
    for (auto &node : m_nodes) {
        if (node.remoteBase.isEmpty())
            missing << node.host;
        else
            node.runDir = node.remoteBase + QLatin1Char('/') + runId;
    }
    return missing.isEmpty() ? QString() : QStringLiteral("cannot reach the run folders on %1:\n%2").arg(missing.join(QStringLiteral(", ")), p.failures());
}

std::vector<const SshTarget::Node *> SshTarget::nodesOf(const plan::Plan &plan) const
{
    std::vector<const Node *> out;
    for (const plan::NodeSpec &spec : plan.cluster.nodes) {
        const auto node = std::find_if(m_nodes.begin(), m_nodes.end(), [&](const Node &n) { return n.host.toStdString() == spec.host; });
        if (node != m_nodes.end() && spec.slotCount > 0)
            out.push_back(&*node);
    }
    return out;
}

QString SshTarget::tarPipe(const Node &node, const QString &remoteCommand, const QStringList &tarArguments, bool fromNode, int timeoutMs) const
{
    QProcess ssh, tar;
    if (fromNode)
        ssh.setStandardOutputProcess(&tar);
    else
        tar.setStandardOutputProcess(&ssh);
    ssh.start(m_options.sshPath, {QStringLiteral("-F"), m_configPath, QStringLiteral("--"), node.alias, remoteCommand});
    tar.start(QStringLiteral("tar"), tarArguments);
    if (!ssh.waitForStarted(10000) || !tar.waitForStarted(10000))
        return QStringLiteral("%1: cannot start ssh or tar").arg(node.host);
    QElapsedTimer clock;
    clock.start();
    bool finished = true;
    for (QProcess *p : {&ssh, &tar})
        if (!p->waitForFinished(std::max<qint64>(1, timeoutMs - clock.elapsed()))) {
            finished = false;
            break;
        }
    if (!finished) {
        ssh.kill();
        tar.kill();
        ssh.waitForFinished(2000);
        tar.waitForFinished(2000);
        return QStringLiteral("%1: no answer within %2 s").arg(node.host).arg(timeoutMs / 1000);
    }
    if (ssh.exitStatus() != QProcess::NormalExit || ssh.exitCode() != 0) {
        const QString why = firstLine(ssh.readAllStandardError());
        return QStringLiteral("%1: %2").arg(node.host, ssh.exitCode() == 255 ? QStringLiteral("unreachable (%1)").arg(why) : why);
    }
    if (tar.exitStatus() != QProcess::NormalExit || tar.exitCode() != 0)
        return QStringLiteral("%1: tar here failed: %2").arg(node.host, firstLine(tar.readAllStandardError()));
    return {};
}

QString SshTarget::gatherCheckpoint(const plan::Plan &plan, qint64 step, const QString &localDir) const
{
    const QString name = checkpointFolderName(step);
    const QString target = localDir + QLatin1Char('/') + name;
    if (checkpointGaps(target).isEmpty())
        return {}; // gathered already
    if (!QDir().mkpath(localDir))
        return QStringLiteral("cannot create %1").arg(localDir);
    QTemporaryDir work(localDir + QStringLiteral("/.gather-XXXXXX"));
    if (!work.isValid())
        return QStringLiteral("cannot create a folder in %1").arg(localDir);
    const std::vector<const Node *> nodes = nodesOf(plan);
    // Each host's folder of that step: complete where rank 0 ran (meta.json), partial elsewhere.
    std::vector<std::future<QString>> fetches;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const QString into = work.filePath(QString::number(i));
        QDir().mkpath(into);
        const Node *node = nodes[i];
        fetches.push_back(std::async(std::launch::async, [&, node, into] {
            if (node->runDir.isEmpty())
                return QStringLiteral("%1: its run folder is not known").arg(node->host);
            const QString remote = QStringLiteral("cd %1 && tar -cf - --ignore-failed-read %2 %3 2>/dev/null")
                                       .arg(shellQuote(node->runDir + QStringLiteral("/checkpoints")), name, name + QStringLiteral(".partial"));
            return tarPipe(*node, remote, {QStringLiteral("-x"), QStringLiteral("--no-same-owner"), QStringLiteral("-f"), QStringLiteral("-"),
                                           QStringLiteral("-C"), into},
                           true, 300000);
        }));
    }
    QStringList errors;
    for (auto &w : fetches)
        if (QString e = w.get(); !e.isEmpty())
            errors << e;
    if (!errors.isEmpty())
        return QStringLiteral("checkpoint of step %1 not gathered: %2").arg(step).arg(errors.join(QStringLiteral("; ")));
    // Merge: meta.json and every shard, from wherever they are.
    const QString merged = work.filePath(name);
    QDir().mkpath(merged);
    static const QRegularExpression fileName(QStringLiteral("^(meta\\.json|rank-\\d+\\.bin)$"));
    for (std::size_t i = 0; i < nodes.size(); ++i)
        for (const QString &sub : {name, name + QStringLiteral(".partial")}) {
            const QDir from(work.filePath(QString::number(i) + QLatin1Char('/') + sub));
            for (const QFileInfo &f : from.entryInfoList(QDir::Files)) {
                if (!fileName.match(f.fileName()).hasMatch() || QFile::exists(merged + QLatin1Char('/') + f.fileName()))
                    continue;
                if (f.fileName() == QLatin1String("meta.json") && sub != name)
                    continue; // written last by rank 0 into the final folder only
                if (!QFile::rename(f.absoluteFilePath(), merged + QLatin1Char('/') + f.fileName()))
                    return QStringLiteral("cannot move %1 into %2").arg(f.absoluteFilePath(), merged);
            }
        }
    if (const QString gaps = checkpointGaps(merged); !gaps.isEmpty())
        return QStringLiteral("checkpoint of step %1 is incomplete on the hosts: %2").arg(step).arg(QString(gaps).replace(merged, name));
    QDir(target).removeRecursively();
    if (!QDir().rename(merged, target))
        return QStringLiteral("cannot put %1 in place").arg(target);
    // The hosts' partial copies of this step and older ones (skipped for a newer one) are not needed
    // any more: free their space.
    static const QRegularExpression partialName(QStringLiteral("^step-(\\d{8})\\.partial$"));
    for (const Node *node : nodes) {
        const QString dir = node->runDir + QStringLiteral("/checkpoints");
        const Result listed = ssh(*node, QStringLiteral("cd %1 && ls -1d step-*.partial 2>/dev/null; true").arg(shellQuote(dir)));
        QStringList obsolete;
        for (const QString &entry : QString::fromUtf8(listed.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts))
            if (const auto m = partialName.match(entry.trimmed()); m.hasMatch() && m.captured(1).toLongLong() <= step)
                obsolete << shellQuote(dir + QLatin1Char('/') + entry.trimmed());
        if (!obsolete.isEmpty())
            ssh(*node, QStringLiteral("rm -rf ") + obsolete.join(QLatin1Char(' ')));
    }
    // Keep as many here as the plan keeps.
    const int keep = std::max(1, plan.training.checkpoint.keep);
    static const QRegularExpression stepName(QStringLiteral("^step-\\d{8}$"));
    QStringList complete;
    for (const QString &entry : QDir(localDir).entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
        if (stepName.match(entry).hasMatch() && checkpointGaps(localDir + QLatin1Char('/') + entry).isEmpty())
            complete << entry;
    for (int i = 0; i + keep < complete.size(); ++i)
        QDir(localDir + QLatin1Char('/') + complete[i]).removeRecursively();
    return {};
}

QString SshTarget::spreadCheckpoint(const plan::Plan &plan, qint64 step, const QString &localDir) const
{
    const QString name = checkpointFolderName(step);
    if (const QString gaps = checkpointGaps(localDir + QLatin1Char('/') + name); !gaps.isEmpty())
        return QStringLiteral("the checkpoint to resume from is not complete here: %1").arg(gaps);
    std::vector<std::future<QString>> work;
    for (const Node *node : nodesOf(plan))
        work.push_back(std::async(std::launch::async, [&, node] {
            if (node->runDir.isEmpty())
                return QStringLiteral("%1: its run folder is not known").arg(node->host);
            // Unpacked beside, then swapped in: a host never holds half a checkpoint under its name.
            const QString dir = shellQuote(node->runDir + QStringLiteral("/checkpoints"));
            const QString incoming = name + QStringLiteral(".incoming");
            const QString remote = QStringLiteral("mkdir -p %1 && cd %1 && rm -rf %2 && mkdir %2 && tar -xf - -C %2 && rm -rf %3 && mv %2/%3 %3 && rmdir %2")
                                       .arg(dir, incoming, name);
            return tarPipe(*node, remote, {QStringLiteral("-c"), QStringLiteral("-f"), QStringLiteral("-"), QStringLiteral("-C"), localDir, name}, false,
                           300000);
        }));
    QStringList errors;
    for (auto &w : work)
        if (QString e = w.get(); !e.isEmpty())
            errors << e;
    return errors.isEmpty() ? QString() : QStringLiteral("cannot put the checkpoint of step %1 on the hosts: %2").arg(step).arg(errors.join(QStringLiteral("; ")));
}

QString SshTarget::trainerOn(const Node &node, const plan::Plan &plan) const
{
    if (plan.launch.ssh.stageTrainer)
        return node.runDir + QStringLiteral("/trellis-trainer");
    return QString::fromStdString(plan.launch.ssh.trainer).isEmpty() ? QFileInfo(m_options.trainerPath).absoluteFilePath()
                                                                     : QString::fromStdString(plan.launch.ssh.trainer);
}

QString SshTarget::releaseMemoryCheckpoints(const plan::Plan &plan) const
{
    if (!plan.training.checkpoint.memory.given)
        return {};
    // Every host the run was staged on, a host a shrunk attempt left out included (its store, if it
    // still has one, is the run's too).
    std::vector<std::future<QString>> work;
    for (const Node &each : m_nodes)
        work.push_back(std::async(std::launch::async, [&, node = &each] {
            if (node->runDir.isEmpty())
                return QString(); // never staged: the run never ran there
            // The checkpoint folder as the node's ranks read it (stageNode), so the store's name is theirs.
            const QString remote = QStringLiteral("cd %1 && %2 --release-checkpoints --checkpoint-dir %3")
                                       .arg(shellQuote(node->runDir), shellQuote(trainerOn(*node, plan)),
                                            shellQuote(node->runDir + QStringLiteral("/checkpoints")));
            const Result r = ssh(*node, remote, {}, 15000);
            if (!r.started || r.exitCode != 0)
                return QStringLiteral("%1: %2").arg(node->host, r.exitCode == 255 ? QStringLiteral("unreachable (%1)").arg(firstLine(r.err))
                                                                                   : firstLine(r.err + r.out));
            return QString();
        }));
    QStringList errors;
    for (auto &w : work)
        if (QString e = w.get(); !e.isEmpty())
            errors << e;
    return errors.join(QStringLiteral("; "));
}

LaunchCommand SshTarget::command(const plan::Plan &plan, const LaunchRequest &r) const
{
    LaunchCommand c;
    c.program = r.mpirunPath;
    if (r.runningAsRoot)
        c.arguments << QStringLiteral("--allow-run-as-root");
    c.arguments << QStringLiteral("--tag-output");
    auto mca = [&](const QString &name, const QString &value) { c.arguments << QStringLiteral("--mca") << name << value; };
    mca(QStringLiteral("plm_rsh_agent"), m_options.sshPath);
    mca(QStringLiteral("plm_rsh_args"), QStringLiteral("-F ") + m_configPath);
    mca(QStringLiteral("plm_rsh_no_tree_spawn"), QStringLiteral("1")); // every ssh from here, with this config
    mca(QStringLiteral("btl_vader_single_copy_mechanism"), QStringLiteral("none"));
    if (plan.parallel.pp > 1)
        mca(QStringLiteral("btl_vader_eager_limit"), QStringLiteral("262144"));
    if (const QString net = QString::fromStdString(plan.launch.ssh.mpiInterface); !net.isEmpty()) {
        mca(QStringLiteral("oob_tcp_if_include"), net);
        mca(QStringLiteral("btl_tcp_if_include"), net);
    }
    c.arguments << QStringLiteral("-x") << QStringLiteral("OPENBLAS_NUM_THREADS=%1").arg(r.blasThreadsPerRank);
    std::string masterHost;
    for (const plan::NodeSpec &spec : plan.cluster.nodes)
        if (spec.slotCount > 0 && masterHost.empty())
            masterHost = spec.host;
    bool first = true;
    for (const plan::NodeSpec &spec : plan.cluster.nodes) {
        const auto node = std::find_if(m_nodes.begin(), m_nodes.end(), [&](const Node &n) { return n.host.toStdString() == spec.host; });
        if (node == m_nodes.end() || spec.slotCount <= 0)
            continue;
        if (!first)
            c.arguments << QStringLiteral(":");
        first = false;
        c.arguments << QStringLiteral("-np") << QString::number(spec.slotCount) << QStringLiteral("--host")
                    << QStringLiteral("%1:%2").arg(node->alias).arg(spec.slotCount) << QStringLiteral("-wdir") << node->runDir;
        // A job with its own trainer: rank 0's node (the first with slots) is torchrun's MASTER_ADDR.
        c.arguments << rankArguments(plan, r, trainerOn(*node, plan),
                                     node->runDir + QStringLiteral("/plan.json"), node->runDir + QStringLiteral("/rank.keys"),
                                     QString::fromStdString(masterHost), QString::fromStdString(plan.ownTrainer.dir));
    }
    allowRunAsRoot(c, r.runningAsRoot);
    return c;
}

} // namespace trellis::launcher
