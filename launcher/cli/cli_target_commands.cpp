// trellis-cli preflight: the plan's launch target checks its hosts before anything starts (see
// targets/launch_target.h), and may first accept host keys a person has compared.
#include "launcher/cli/cli_support.h"
#include "launcher/supervisor/supervisor.h"
#include "launcher/targets/ssh_target.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

namespace trellis::launcher::cli {

int cmdPreflight(const Args &a)
{
    if (a.positional.size() != 1)
        return usageError(QStringLiteral("preflight takes one plan file"));
    const auto thePlan = loadValidPlan(a.positional.first(), a.options.value(QStringLiteral("--hostfile")));
    if (!thePlan)
        return 1;
    QTemporaryDir work(QDir::tempPath() + QStringLiteral("/trellis-preflight-XXXXXX"));
    TargetOptions options;
    options.trainerPath = Supervisor::defaultTrainerPath(&*thePlan);
    options.workDir = work.path();
    QString error;
    auto target = makeLaunchTarget(*thePlan, options, error);
    if (!target)
        return fail(error);
    if (a.options.contains(QStringLiteral("--accept-host-key"))) {
        auto *ssh = dynamic_cast<SshTarget *>(target.get());
        if (!ssh)
            return usageError(QStringLiteral("--accept-host-key: the plan's launch.target is not ssh"));
        for (const QString &item : a.options[QStringLiteral("--accept-host-key")].split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            const QString host = item.section(QLatin1Char('='), 0, 0), fingerprint = item.section(QLatin1Char('='), 1);
            QStringList accepted;
            if (const QString e = ssh->acceptHostKey(host, fingerprint, &accepted); !e.isEmpty())
                return fail(e);
            out() << "accepted " << host << ": " << accepted.join(QStringLiteral(", ")) << " into " << ssh->knownHostsPath() << "\n";
        }
    }
    const Preflight result = target->preflight();
    if (a.flags.contains(QStringLiteral("--json"))) {
        QJsonArray rows;
        for (const auto &c : result.checks)
            rows.append(QJsonObject{{QStringLiteral("host"), c.host},
                                    {QStringLiteral("check"), c.check},
                                    {QStringLiteral("status"), c.status == PreflightCheck::Status::Ok        ? QStringLiteral("ok")
                                                               : c.status == PreflightCheck::Status::Warning ? QStringLiteral("warning")
                                                                                                             : QStringLiteral("failed")},
                                    {QStringLiteral("detail"), c.detail},
                                    {QStringLiteral("fix"), c.fix}});
        out() << QJsonDocument(QJsonObject{{QStringLiteral("target"), target->name()},
                                           {QStringLiteral("passed"), result.passed()},
                                           {QStringLiteral("checks"), rows}})
                     .toJson();
    } else {
        out() << "preflight of " << target->name() << " target (" << target->hosts().join(QStringLiteral(", ")) << ")\n"
              << result.table() << (result.passed() ? "passed\n" : "FAILED: nothing would start\n");
    }
    out().flush();
    return result.passed() ? 0 : 1;
}

} // namespace trellis::launcher::cli
