// Local mpirun command line. OpenMPI 4.1 specifics: --oversubscribe beyond the core count,
// --allow-run-as-root for root, --tag-output so each line names its rank ("[job,rank]<stdout>:"),
// and the shared-memory BTL's single-copy mechanism switched off because CMA needs ptrace
// permissions that containers and hardened kernels often withhold. Pipeline runs raise the
// shared-memory eager limit to 256 KiB: a larger message goes by rendezvous, which only moves while
// both ranks are inside MPI calls, so a stage's activation or gradient would wait for the sender's
// next action instead of arriving during it (measured: bubble 0.50 → 0.13 for gpipe at pp = 2).
// 256 KiB is the largest value this BTL honoured here; 1 MiB silently fell back.
#include "launcher/targets/mpi_command.h"

#include <QRegularExpression>

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
    c.arguments << r.trainerPath << QStringLiteral("--plan") << r.planPath;
    if (!r.runId.isEmpty())
        c.arguments << QStringLiteral("--run-id") << r.runId;
    if (!r.endpoint.isEmpty())
        c.arguments << QStringLiteral("--endpoint") << r.endpoint;
    c.arguments << r.extraTrainerArgs;
    allowRunAsRoot(c, r.runningAsRoot);
    return c;
}

void allowRunAsRoot(LaunchCommand &c, bool runningAsRoot)
{
    if (!runningAsRoot)
        return;
    c.environment.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT"), QStringLiteral("1"));
    c.environment.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"), QStringLiteral("1"));
}

} // namespace trellis::launcher
