// Local mpirun command line. OpenMPI 4.1 specifics: --oversubscribe beyond the core count,
// --allow-run-as-root for root, --tag-output so each line names its rank ("[job,rank]<stdout>:"),
// and the shared-memory BTL's single-copy mechanism switched off because CMA needs ptrace
// permissions that containers and hardened kernels often withhold. Pipeline runs raise the
// shared-memory eager limit to 256 KiB: a larger message goes by rendezvous, which only moves while
// both ranks are inside MPI calls, so a stage's activation or gradient would wait for the sender's
// next action instead of arriving during it (measured: bubble 0.50 → 0.13 for gpipe at pp = 2).
// 256 KiB is the largest value this BTL honoured here; 1 MiB silently fell back.
#include "launcher/targets/mpi_command.h"

#include "backend/protocol/framing.h"

#include <QRegularExpression>
#include <QTcpServer>

namespace trellis::launcher {

QString LaunchCommand::displayString() const
{
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_@%+=:,./-]+$"));
    QStringList parts;
    for (auto it = environment.begin(); it != environment.end(); ++it)
        parts << it.key() + QLatin1Char('=') + it.value();
    for (const QString &a : QStringList{program} + arguments)
        parts << (plain.match(a).hasMatch() ? a : QLatin1Char('\'') + QString(a).replace(QLatin1Char('\''), QStringLiteral("'\\''")) + QLatin1Char('\''));
    return parts.join(QLatin1Char(' '));
}

LaunchCommand buildLocalCommand(const plan::Plan &plan, const LaunchRequest &r)
{
    const int ranks = plan.parallel.worldSize();
    LaunchCommand c;
    c.program = r.mpirunPath;
    c.arguments << QStringLiteral("-np") << QString::number(ranks);
    if (ranks > r.availableCores)
        c.arguments << QStringLiteral("--oversubscribe") << QStringLiteral("--bind-to") << QStringLiteral("none");
    if (r.runningAsRoot)
        c.arguments << QStringLiteral("--allow-run-as-root");
    c.arguments << QStringLiteral("--tag-output");
    c.arguments << QStringLiteral("--mca") << QStringLiteral("btl_vader_single_copy_mechanism") << QStringLiteral("none");
    if (plan.parallel.pp > 1)
        c.arguments << QStringLiteral("--mca") << QStringLiteral("btl_vader_eager_limit") << QStringLiteral("262144");
    c.arguments << QStringLiteral("-x") << QStringLiteral("OPENBLAS_NUM_THREADS=%1").arg(r.blasThreadsPerRank);
    c.arguments << rankArguments(plan, r, r.trainerPath, r.planPath, {}, QStringLiteral("127.0.0.1"),
                                 QString::fromStdString(plan.ownTrainer.dir));
    allowRunAsRoot(c, r.runningAsRoot);
    return c;
}

QStringList rankArguments(const plan::Plan &plan, const LaunchRequest &r, const QString &trainer, const QString &planPath,
                          const QString &keysPath, const QString &masterAddr, const QString &dir)
{
    QStringList a{trainer};
    if (!plan.ownTrainer.external()) {
        a << QStringLiteral("--plan") << planPath;
        if (!r.runId.isEmpty())
            a << QStringLiteral("--run-id") << r.runId;
        if (!r.endpoint.isEmpty()) {
            a << QStringLiteral("--endpoint") << r.endpoint;
            if (!keysPath.isEmpty())
                a << QStringLiteral("--telemetry-keys") << keysPath;
            if (plan.telemetry.relaysFor(plan.parallel.worldSize()))
                a << QStringLiteral("--node-relay");
        }
        a << r.extraTrainerArgs;
        return a;
    }
    a << QStringLiteral("--exec");
    if (!r.runId.isEmpty())
        a << QStringLiteral("--run-id") << r.runId;
    if (!r.endpoint.isEmpty()) {
        a << QStringLiteral("--endpoint") << r.endpoint << QStringLiteral("--protocol") << QString::number(proto::kProtocolVersion);
        if (!keysPath.isEmpty())
            a << QStringLiteral("--telemetry-keys") << keysPath;
    }
    a << QStringLiteral("--heartbeat-ms") << QString::number(plan.telemetry.heartbeatMs);
    if (!r.endpoint.isEmpty() && plan.telemetry.relaysFor(plan.parallel.worldSize()))
        a << QStringLiteral("--node-relay");
    if (!masterAddr.isEmpty())
        a << QStringLiteral("--master-addr") << masterAddr;
    if (r.masterPort > 0)
        a << QStringLiteral("--master-port") << QString::number(r.masterPort);
    a << QStringLiteral("--restart-count") << QString::number(r.restartCount);
    if (!r.checkpointDir.isEmpty())
        a << QStringLiteral("--checkpoint-dir") << r.checkpointDir;
    if (!dir.isEmpty())
        a << QStringLiteral("--dir") << dir;
    for (const auto &[name, value] : plan.ownTrainer.env)
        a << QStringLiteral("--env") << QString::fromStdString(name + "=" + value);
    a << QStringLiteral("--");
    for (const std::string &part : plan.ownTrainer.command)
        a << QString::fromStdString(part);
    return a;
}

int freeLocalPort()
{
    // The kernel picks a free port for a socket bound to port 0; it is released at once and
    // handed to the job, which binds it a moment later (a race only with another process doing
    // the same, as torchrun's own choice has).
    QTcpServer probe;
    if (!probe.listen(QHostAddress::Any, 0))
        return 0;
    const int port = probe.serverPort();
    probe.close();
    return port;
}

void allowRunAsRoot(LaunchCommand &c, bool runningAsRoot)
{
    if (!runningAsRoot)
        return;
    c.environment.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT"), QStringLiteral("1"));
    c.environment.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"), QStringLiteral("1"));
}

} // namespace trellis::launcher
