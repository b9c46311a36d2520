// See slurm_target.h.
#include "launcher/targets/slurm_target.h"

#include "launcher/programs.h"
#include "backend/plan/plan_json.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>

namespace trellis::launcher {

using Status = PreflightCheck::Status;

namespace {

QString firstLine(const QByteArray &bytes)
{
    return QString::fromUtf8(bytes).trimmed().section(QLatin1Char('\n'), 0, 0).trimmed();
}

// 'text' as one word for a POSIX shell.
QString quoted(const QString &text)
{
    return QLatin1Char('\'') + QString(text).replace(QLatin1Char('\''), QStringLiteral("'\\''")) + QLatin1Char('\'');
}

// The line of `sinfo -h -o %P|%a|%D|%c|%G` output for `partition`, or for the default partition
// when that is empty; "" when sinfo did not list it.
QString sinfoPartitionLine(const QByteArray &sinfoOut, const std::string &partition)
{
    for (const QString &line : QString::fromUtf8(sinfoOut).split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        const QString name = line.section(QLatin1Char('|'), 0, 0); // the default partition's ends in '*'
        if (partition.empty() ? name.endsWith(QLatin1Char('*')) : QString(name).remove(QLatin1Char('*')) == QString::fromStdString(partition))
            return line;
    }
    return {};
}

} // namespace

SlurmTarget::SlurmTarget(const plan::Plan &plan, TargetOptions options) : m_plan(plan), m_options(std::move(options)) {}

QStringList SlurmTarget::hosts() const
{
    // Slurm picks the nodes; until it has, they are named by what the plan asks for.
    QStringList out;
    for (std::size_t i = 0; i < m_plan.cluster.nodes.size(); ++i)
        out << QStringLiteral("slurm node %1").arg(i + 1);
    return out;
}

QString SlurmTarget::jobDirFor(const QString &runId) const
{
    const QString shared = QString::fromStdString(m_plan.launch.slurm.sharedDir);
    if (shared.isEmpty())
        return m_options.workDir;
    return QDir::cleanPath(shared + QLatin1Char('/') + runId);
}

Preflight SlurmTarget::preflight(const std::function<void(int, int)> &progress)
{
    Preflight p;
    const int total = 5;
    int done = 0;
    auto step = [&] {
        if (progress)
            progress(++done, total);
    };
    // The first two checks stop the preflight when they fail: without Slurm's programs or its
    // controller the rest cannot be asked.
    p.checks.push_back(checkSlurmPrograms());
    if (p.checks.back().status == Status::Failed) {
        if (progress)
            progress(total, total);
        return p;
    }
    step();
    p.checks.push_back(checkController());
    if (p.checks.back().status == Status::Failed) {
        if (progress)
            progress(total, total);
        return p;
    }
    step();
    p.checks.push_back(checkPartition());
    step();
    p.checks.push_back(checkSharedFolder());
    step();
    p.checks.push_back(checkTrainer());
    step();
    return p;
}

// 1. Slurm's programs.
PreflightCheck SlurmTarget::checkSlurmPrograms() const
{
    QStringList missing;
    for (const QString &program : {QStringLiteral("sbatch"), QStringLiteral("squeue"), QStringLiteral("scontrol"), QStringLiteral("scancel"),
                                   QStringLiteral("sinfo")})
        if (QStandardPaths::findExecutable(program).isEmpty())
            missing << program;
    if (!missing.isEmpty())
        return {{}, QStringLiteral("slurm"), Status::Failed, QStringLiteral("not found on PATH: %1").arg(missing.join(QStringLiteral(", "))),
                QStringLiteral("install Slurm's client programs (Debian: slurm-client) and set SLURM_CONF if the cluster needs it")};
    return {{}, QStringLiteral("slurm"), Status::Ok, QStringLiteral("sbatch, squeue, scontrol, scancel and sinfo found")};
}

// 2. The controller.
PreflightCheck SlurmTarget::checkController() const
{
    const SlurmCall ping = callSlurm(QStringLiteral("scontrol"), {QStringLiteral("ping")});
    const QString pingText = firstLine(ping.out).isEmpty() ? firstLine(ping.err) : firstLine(ping.out);
    if (ping.exitCode != 0 || !pingText.contains(QLatin1String("UP")))
        return {{}, QStringLiteral("controller"), Status::Failed,
                pingText.isEmpty() ? QStringLiteral("slurmctld does not answer") : pingText,
                QStringLiteral("check that slurmctld runs and that SLURM_CONF (or /etc/slurm/slurm.conf) names it")};
    return {{}, QStringLiteral("controller"), Status::Ok, pingText};
}

// 3. The partition: up, enough nodes with enough CPUs (and GPUs).
PreflightCheck SlurmTarget::checkPartition() const
{
    const plan::SlurmSpec &s = m_plan.launch.slurm;
    QStringList sinfoArgs{QStringLiteral("-h"), QStringLiteral("-o"), QStringLiteral("%P|%a|%D|%c|%G")};
    if (!s.partition.empty())
        sinfoArgs << QStringLiteral("-p") << QString::fromStdString(s.partition);
    const SlurmCall info = callSlurm(QStringLiteral("sinfo"), sinfoArgs, 15000);
    const int nodesWanted = static_cast<int>(m_plan.cluster.nodes.size());
    const int perNode = m_plan.cluster.nodes.empty() ? 0 : m_plan.cluster.nodes.front().slotCount;
    const bool gpus = !m_plan.cluster.nodes.empty() && m_plan.cluster.nodes.front().device == plan::DeviceKind::Cuda;
    const QString partitionLine = sinfoPartitionLine(info.out, s.partition);
    const QString partitionName = s.partition.empty() ? QStringLiteral("the default partition") : QStringLiteral("partition %1").arg(QString::fromStdString(s.partition));
    if (info.exitCode != 0 || partitionLine.isEmpty())
        return {{}, QStringLiteral("partition"), Status::Failed,
                info.exitCode != 0 ? QStringLiteral("sinfo failed: %1").arg(firstLine(info.err))
                                   : QStringLiteral("%1 does not exist on this cluster").arg(partitionName),
                QStringLiteral("set launch.slurm.partition to one `sinfo -s` lists")};
    const QStringList f = partitionLine.split(QLatin1Char('|'));
    const QString avail = f.value(1), gres = f.value(4);
    const int nodeCount = f.value(2).toInt();
    const int cpus = f.value(3).remove(QLatin1Char('+')).toInt();
    if (avail != QLatin1String("up"))
        return {{}, QStringLiteral("partition"), Status::Failed, QStringLiteral("%1 is %2").arg(partitionName, avail),
                QStringLiteral("ask the cluster's administrators, or choose another partition")};
    if (nodeCount < nodesWanted)
        return {{}, QStringLiteral("partition"), Status::Failed,
                QStringLiteral("%1 has %2 nodes; the plan asks for %3").arg(partitionName).arg(nodeCount).arg(nodesWanted),
                QStringLiteral("use fewer nodes (cluster.nodes) or a larger partition")};
    if (cpus > 0 && cpus < perNode)
        return {{}, QStringLiteral("partition"), Status::Failed,
                QStringLiteral("%1's nodes have %2 CPUs; the plan puts %3 ranks on each").arg(partitionName).arg(cpus).arg(perNode),
                QStringLiteral("lower cluster.nodes[].perNode to %1 or use more nodes").arg(cpus)};
    if (gpus && !gres.contains(QLatin1String("gpu")))
        return {{}, QStringLiteral("partition"), Status::Failed, QStringLiteral("%1's nodes offer no GPUs (gres %2)").arg(partitionName, gres),
                QStringLiteral("choose a GPU partition")};
    return {{}, QStringLiteral("partition"), Status::Ok,
            QStringLiteral("%1 is up: %2 nodes of %3 CPUs%4; the job asks for %5 × %6 tasks")
                .arg(partitionName)
                .arg(nodeCount)
                .arg(cpus)
                .arg(gres.isEmpty() || gres == QLatin1String("(null)") ? QString() : QStringLiteral(", gres ") + gres)
                .arg(nodesWanted)
                .arg(perNode)};
}

// 4. The job folder, on the filesystem the nodes share.
PreflightCheck SlurmTarget::checkSharedFolder() const
{
    const plan::SlurmSpec &s = m_plan.launch.slurm;
    const QString base = s.sharedDir.empty() ? m_options.workDir : QString::fromStdString(s.sharedDir);
    const QFileInfo baseInfo(base);
    if (base.isEmpty() || !baseInfo.isDir() || !baseInfo.isWritable())
        return {{}, QStringLiteral("shared folder"), Status::Failed,
                QStringLiteral("%1 is not a writable folder here").arg(base.isEmpty() ? QStringLiteral("(none)") : base),
                QStringLiteral("create it, or set launch.slurm.shared_dir to a folder the nodes and this machine share")};
    return {{}, QStringLiteral("shared folder"), s.sharedDir.empty() ? Status::Warning : Status::Ok,
            s.sharedDir.empty() ? QStringLiteral("the run folder %1 is used; the nodes must see it at the same path").arg(base)
                                : QStringLiteral("%1 is writable here").arg(base),
            s.sharedDir.empty() ? QStringLiteral("set launch.slurm.shared_dir to a folder on the cluster's shared filesystem") : QString()};
}

// 5. The trainer, as the nodes will find it.
PreflightCheck SlurmTarget::checkTrainer() const
{
    const plan::SlurmSpec &s = m_plan.launch.slurm;
    const QString trainer = s.trainer.empty() ? QFileInfo(m_options.trainerPath).absoluteFilePath() : QString::fromStdString(s.trainer);
    if (QFileInfo(trainer).isExecutable())
        return {{}, QStringLiteral("trainer"), Status::Ok, QStringLiteral("%1 (the nodes run it at this path)").arg(trainer)};
    if (!s.trainer.empty())
        return {{}, QStringLiteral("trainer"), Status::Warning,
                QStringLiteral("%1 is not here; the job will look for it on the nodes").arg(trainer),
                QStringLiteral("make sure every node has it at that path")};
    return {{}, QStringLiteral("trainer"), Status::Failed, QStringLiteral("%1 is not an executable file").arg(trainer),
            QStringLiteral("build trellis-trainer or set launch.slurm.trainer")};
}

QString SlurmTarget::prepareTelemetry(TelemetryRoute &route)
{
    const QString address = QString::fromStdString(m_plan.launch.slurm.telemetryAddress);
    const QString field = QStringLiteral("launch.slurm.telemetry_address");
    if (!address.isEmpty())
        return remoteTelemetryRoute(address, {}, 0, field, route);
    // The address this machine sends from toward the controller: on its network, the nodes'.
    const SlurmCall config = callSlurm(QStringLiteral("scontrol"), {QStringLiteral("show"), QStringLiteral("config")});
    static const QRegularExpression ctld(QStringLiteral("^SlurmctldHost\\[0\\]\\s*=\\s*([^\\s(]+)(?:\\(([^)]+)\\))?"),
                                         QRegularExpression::MultilineOption);
    const auto m = ctld.match(QString::fromUtf8(config.out));
    if (!m.hasMatch())
        return QStringLiteral("cannot find the Slurm controller's address (scontrol show config); set %1").arg(field);
    return remoteTelemetryRoute({}, m.captured(2).isEmpty() ? m.captured(1) : m.captured(2), 6817, field, route);
}

QString SlurmTarget::stage(const StageInput &input)
{
    m_jobDir = jobDirFor(input.runId);
    if (m_jobDir.isEmpty() || !QDir().mkpath(m_jobDir))
        return QStringLiteral("cannot create the job folder %1").arg(m_jobDir);
    QFile::setPermissions(m_jobDir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    plan::Plan staged = input.plan;
    const auto &data = input.plan.training.data;
    if (data.source != "synthetic" && !data.path.empty()) {
        const QFileInfo file(QString::fromStdString(data.path));
        const QString target = m_jobDir + QStringLiteral("/data-") + file.fileName();
        QFile::remove(target);
        if (!QFile::copy(file.absoluteFilePath(), target))
            return QStringLiteral("cannot copy the data file %1 to %2").arg(file.absoluteFilePath(), target);
        staged.training.data.path = target.toStdString();
    }
    if (const QString from = QString::fromStdString(input.plan.training.init.from); !from.isEmpty()) {
        // The weights to start from, in the job folder like the data.
        const QString to = m_jobDir + QStringLiteral("/init");
        if (!QDir().mkpath(to))
            return QStringLiteral("cannot create %1").arg(to);
        for (const char *name : kInitFromFiles) {
            const QString source = QDir(from).filePath(QString::fromLatin1(name)), target = to + QLatin1Char('/') + QString::fromLatin1(name);
            QFile::remove(target);
            if (!QFile::copy(source, target))
                return QStringLiteral("cannot copy %1 to %2 to stage training.init.from").arg(source, target);
        }
        staged.training.init.from = to.toStdString();
    }
    staged.training.checkpoint.dir = (m_jobDir + QStringLiteral("/checkpoints")).toStdString();
    QFile planFile(m_jobDir + QStringLiteral("/job-plan.json"));
    if (!planFile.open(QIODevice::WriteOnly | QIODevice::Truncate) || planFile.write(QByteArray::fromStdString(plan::planToJson(staged))) < 0)
        return QStringLiteral("cannot write %1: %2").arg(planFile.fileName(), planFile.errorString());
    planFile.close();
    if (input.rankKeys.hasClient())
        if (const std::string e = proto::writeCurveKeys((m_jobDir + QStringLiteral("/rank.keys")).toStdString(), input.rankKeys); !e.empty())
            return QString::fromStdString(e);
    return {};
}

QString SlurmTarget::reattach(const QString &runId)
{
    m_jobDir = jobDirFor(runId);
    return QFileInfo(m_jobDir + QStringLiteral("/job-plan.json")).isFile()
               ? QString()
               : QStringLiteral("the job folder %1 has no job-plan.json").arg(m_jobDir);
}

LaunchCommand SlurmTarget::command(const plan::Plan &plan, const LaunchRequest &r) const
{
    const plan::SlurmSpec &s = plan.launch.slurm;
    LaunchCommand c;
    c.program = m_options.cliPath.isEmpty() ? supervisorProgram() : m_options.cliPath;
    const int nodes = static_cast<int>(plan.cluster.nodes.size());
    const int perNode = nodes > 0 ? plan.cluster.nodes.front().slotCount : 1;
    c.arguments << QStringLiteral("slurm-job") << QStringLiteral("--dir") << m_jobDir << QStringLiteral("--name") << r.runId
                << QStringLiteral("--nodes") << QString::number(nodes) << QStringLiteral("--tasks-per-node") << QString::number(perNode);
    auto option = [&](const char *name, const std::string &value) {
        if (!value.empty())
            c.arguments << QString::fromLatin1(name) << QString::fromStdString(value);
    };
    option("--partition", s.partition);
    option("--account", s.account);
    option("--qos", s.qos);
    option("--time", s.time);
    if (nodes > 0 && plan.cluster.nodes.front().device == plan::DeviceKind::Cuda)
        c.arguments << QStringLiteral("--gres") << QStringLiteral("gpu:%1").arg(perNode);
    if (const QString poll = qEnvironmentVariable("TRELLIS_SLURM_POLL_MS"); !poll.isEmpty())
        c.arguments << QStringLiteral("--poll-ms") << poll;
    c.arguments << QStringLiteral("--") << r.mpirunPath;
    // Inside the allocation Open MPI reads the nodes and perNode from Slurm and starts its daemons
    // with srun; ranks fill the first node, then the next: the plan's mesh order.
    c.arguments << QStringLiteral("-np") << QString::number(plan.parallel.worldSize());
    if (r.runningAsRoot)
        c.arguments << QStringLiteral("--allow-run-as-root");
    c.arguments << QStringLiteral("--tag-output") << QStringLiteral("--map-by") << QStringLiteral("slot");
    auto mca = [&](const QString &name, const QString &value) { c.arguments << QStringLiteral("--mca") << name << value; };
    mca(QStringLiteral("btl_vader_single_copy_mechanism"), QStringLiteral("none"));
    if (plan.parallel.pp > 1)
        mca(QStringLiteral("btl_vader_eager_limit"), QStringLiteral("262144"));
    if (const QString net = QString::fromStdString(s.mpiInterface); !net.isEmpty()) {
        mca(QStringLiteral("oob_tcp_if_include"), net);
        mca(QStringLiteral("btl_tcp_if_include"), net);
    }
    c.arguments << QStringLiteral("-x") << QStringLiteral("OPENBLAS_NUM_THREADS=%1").arg(r.blasThreadsPerRank);
    // A job with its own trainer: `slurm-job` runs on the allocation's first node, where mpirun puts
    // rank 0, and sets MASTER_ADDR to that node's name; -x hands it to every rank.
    if (plan.ownTrainer.external())
        c.arguments << QStringLiteral("-x") << QStringLiteral("MASTER_ADDR");
    const QString keys = m_jobDir + QStringLiteral("/rank.keys");
    c.arguments << rankArguments(plan, r, s.trainer.empty() ? QFileInfo(r.trainerPath).absoluteFilePath() : QString::fromStdString(s.trainer),
                                 m_jobDir + QStringLiteral("/job-plan.json"), QFileInfo::exists(keys) ? keys : QString(), {},
                                 QString::fromStdString(plan.ownTrainer.dir));
    allowRunAsRoot(c, r.runningAsRoot);
    return c;
}

// ---- The batch job -----------------------------------------------------------------------------

SlurmCall callSlurm(const QString &program, const QStringList &arguments, int timeoutMs)
{
    SlurmCall r;
    QProcess p;
    p.start(program, arguments);
    if (!p.waitForStarted(10000)) {
        r.err = QStringLiteral("cannot start %1: %2").arg(program, p.errorString()).toUtf8();
        return r;
    }
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished(2000);
        r.err = QStringLiteral("%1 gave no answer within %2 s").arg(program).arg(timeoutMs / 1000).toUtf8();
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

QString slurmBatchScript(const SlurmJobRequest &r)
{
    QString s = QStringLiteral("#!/bin/sh\n");
    s += QStringLiteral("# Written by trellis-cli slurm-job for run %1; submitted as it is with sbatch.\n").arg(r.name);
    auto line = [&](const QString &option, const QString &value) {
        if (!value.isEmpty())
            s += QStringLiteral("#SBATCH --%1=%2\n").arg(option, value);
    };
    line(QStringLiteral("job-name"), r.name);
    line(QStringLiteral("nodes"), QString::number(r.nodes));
    line(QStringLiteral("ntasks-per-node"), QString::number(r.tasksPerNode));
    line(QStringLiteral("partition"), r.partition);
    line(QStringLiteral("account"), r.account);
    line(QStringLiteral("qos"), r.qos);
    line(QStringLiteral("time"), r.time);
    line(QStringLiteral("gres"), r.gres);
    line(QStringLiteral("chdir"), r.dir);
    line(QStringLiteral("output"), r.dir + QStringLiteral("/slurm-%j.out"));
    line(QStringLiteral("error"), r.dir + QStringLiteral("/slurm-%j.err"));
    // torchrun's MASTER_ADDR for a job with its own trainer (rank 0 runs on this, the first node):
    // its name, or where the name resolves to nothing (nodes known to Slurm by address alone) its
    // first address.
    s += QStringLiteral("MASTER_ADDR=\"$(hostname)\"; getent hosts \"$MASTER_ADDR\" >/dev/null 2>&1 || "
                        "MASTER_ADDR=\"$(hostname -I | cut -d' ' -f1)\"; export MASTER_ADDR\n");
    s += QStringLiteral("exec");
    for (const QString &word : QStringList{r.program} + r.arguments)
        s += QLatin1Char(' ') + quoted(word);
    s += QLatin1Char('\n');
    return s;
}

std::optional<QMap<QString, QString>> parseScontrolJob(const QByteArray &output, QString &error)
{
    // One line of Key=Value words; a value may hold spaces (Command=, Reason=), so a word without
    // '=' (or not starting with a key) continues the previous value.
    static const QRegularExpression key(QStringLiteral("^([A-Za-z][A-Za-z0-9_/:]*)=(.*)$"));
    QMap<QString, QString> fields;
    QString last;
    const QString text = QString::fromUtf8(output).trimmed();
    for (const QString &word : text.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts)) {
        if (const auto m = key.match(word); m.hasMatch()) {
            last = m.captured(1);
            fields[last] = m.captured(2);
        } else if (!last.isEmpty()) {
            fields[last] += QLatin1Char(' ') + word;
        }
    }
    if (!fields.contains(QStringLiteral("JobId")) || !fields.contains(QStringLiteral("JobState"))) {
        error = QStringLiteral("unexpected scontrol output: %1").arg(text.left(200).isEmpty() ? QStringLiteral("(nothing)") : text.left(200));
        return std::nullopt;
    }
    return fields;
}

bool isFinalSlurmState(const QString &state)
{
    static const QStringList finals{QStringLiteral("COMPLETED"), QStringLiteral("FAILED"), QStringLiteral("CANCELLED"),
                                    QStringLiteral("TIMEOUT"), QStringLiteral("NODE_FAIL"), QStringLiteral("PREEMPTED"),
                                    QStringLiteral("BOOT_FAIL"), QStringLiteral("DEADLINE"), QStringLiteral("OUT_OF_MEMORY"),
                                    QStringLiteral("SPECIAL_EXIT"), QStringLiteral("REVOKED")};
    return finals.contains(state.section(QLatin1Char(' '), 0, 0).section(QLatin1Char('+'), 0, 0));
}

int slurmExitCode(const QString &state, const QString &exitCodeField)
{
    const QString s = state.section(QLatin1Char(' '), 0, 0).section(QLatin1Char('+'), 0, 0);
    const int code = exitCodeField.section(QLatin1Char(':'), 0, 0).toInt();
    const int signal = exitCodeField.section(QLatin1Char(':'), 1, 1).toInt();
    if (s == QLatin1String("COMPLETED"))
        return code == 0 && signal == 0 ? 0 : (code != 0 ? code : 128 + signal);
    if (s == QLatin1String("FAILED"))
        return code != 0 ? code : signal != 0 ? 128 + signal : 1;
    if (s == QLatin1String("CANCELLED"))
        return 143;
    if (s == QLatin1String("TIMEOUT") || s == QLatin1String("DEADLINE"))
        return 124;
    if (s == QLatin1String("OUT_OF_MEMORY"))
        return 137;
    if (s == QLatin1String("NODE_FAIL") || s == QLatin1String("PREEMPTED") || s == QLatin1String("BOOT_FAIL"))
        return 75;
    return 1;
}

QString describeSlurmEnd(const QMap<QString, QString> &job)
{
    const QString state = job.value(QStringLiteral("JobState")).section(QLatin1Char(' '), 0, 0);
    const QString id = job.value(QStringLiteral("JobId"));
    const QString nodes = job.value(QStringLiteral("NodeList"));
    const QString onNodes = nodes.isEmpty() || nodes == QLatin1String("(null)") ? QString() : QStringLiteral(" on %1").arg(nodes);
    const QString reason = job.value(QStringLiteral("Reason"));
    const QString why = reason.isEmpty() || reason == QLatin1String("None") ? QString() : QStringLiteral(" (%1)").arg(reason);
    if (state == QLatin1String("COMPLETED"))
        return QStringLiteral("Slurm job %1 completed%2").arg(id, onNodes);
    if (state == QLatin1String("FAILED"))
        return QStringLiteral("Slurm job %1 failed with exit code %2%3%4").arg(id, job.value(QStringLiteral("ExitCode")), onNodes, why);
    if (state == QLatin1String("CANCELLED")) // its reason is what it waited for, not why it ended
        return QStringLiteral("Slurm job %1 was cancelled%2").arg(id, onNodes);
    if (state == QLatin1String("TIMEOUT"))
        return QStringLiteral("Slurm job %1 hit its time limit of %2%3").arg(id, job.value(QStringLiteral("TimeLimit")), onNodes);
    if (state == QLatin1String("NODE_FAIL"))
        return QStringLiteral("Slurm job %1 lost a node%2%3").arg(id, onNodes, why);
    if (state == QLatin1String("OUT_OF_MEMORY"))
        return QStringLiteral("Slurm job %1 ran out of memory%2").arg(id, onNodes);
    return QStringLiteral("Slurm job %1 ended %2%3%4").arg(id, state, onNodes, why);
}

std::optional<SlurmLine> parseSlurmLine(const QString &line)
{
    if (!line.startsWith(QLatin1String("[slurm] job=")))
        return std::nullopt;
    SlurmLine l;
    const int bar = line.indexOf(QLatin1String(" | "));
    if (bar >= 0)
        l.detail = line.mid(bar + 3);
    for (const QString &word : line.mid(8, bar < 0 ? -1 : bar - 8).split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const QString k = word.section(QLatin1Char('='), 0, 0), v = word.section(QLatin1Char('='), 1);
        if (k == QLatin1String("job")) l.jobId = v;
        else if (k == QLatin1String("state")) l.state = v;
        else if (k == QLatin1String("reason")) l.reason = v;
        else if (k == QLatin1String("nodes")) l.nodes = v;
        else if (k == QLatin1String("exit")) l.exitCode = v;
        else if (k == QLatin1String("position")) {
            l.position = v.section(QLatin1Char('/'), 0, 0).toInt();
            l.queued = v.section(QLatin1Char('/'), 1, 1).toInt();
        }
    }
    if (l.jobId.isEmpty() || l.state.isEmpty())
        return std::nullopt;
    return l;
}

} // namespace trellis::launcher
