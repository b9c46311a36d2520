// See launch_target.h. The local target: mpirun on this machine (mpi_command.h), the telemetry on
// the run's private ipc:// socket, nothing to stage.
#include "launcher/targets/launch_target.h"

#include "launcher/targets/slurm_target.h"
#include "launcher/targets/ssh_target.h"

#include <QFileInfo>
#include <QThread>

#include <algorithm>

namespace trellis::launcher {

namespace {

const char *statusText(PreflightCheck::Status s)
{
    switch (s) {
    case PreflightCheck::Status::Ok: return "ok";
    case PreflightCheck::Status::Warning: return "WARNING";
    case PreflightCheck::Status::Failed: return "FAILED";
    }
    return "?";
}

class LocalTarget final : public LaunchTarget {
public:
    LocalTarget(const plan::Plan &plan, TargetOptions options) : m_plan(plan), m_options(std::move(options)) {}
    QString name() const override { return QStringLiteral("local"); }
    QStringList hosts() const override { return {QStringLiteral("localhost")}; }
    Preflight preflight(const std::function<void(int, int)> &progress) override
    {
        Preflight p;
        const QFileInfo trainer(m_options.trainerPath);
        if (trainer.isExecutable())
            p.checks.push_back({{}, QStringLiteral("trainer"), PreflightCheck::Status::Ok, trainer.absoluteFilePath(), {}});
        else
            p.checks.push_back({{}, QStringLiteral("trainer"), PreflightCheck::Status::Failed,
                                QStringLiteral("%1 is not an executable file").arg(m_options.trainerPath),
                                QStringLiteral("build it (cmake --build build) or set TRELLIS_TRAINER")});
        const int cores = QThread::idealThreadCount(), ranks = m_plan.parallel.worldSize();
        p.checks.push_back({{}, QStringLiteral("cores"), ranks > cores ? PreflightCheck::Status::Warning : PreflightCheck::Status::Ok,
                            QStringLiteral("%1 ranks on %2 cores").arg(ranks).arg(cores),
                            ranks > cores ? QStringLiteral("ranks share cores (mpirun --oversubscribe): slower, still correct") : QString()});
        if (progress)
            progress(1, 1);
        return p;
    }
    QString prepareTelemetry(TelemetryRoute &) override { return {}; }
    QString stage(const StageInput &) override { return {}; }
    LaunchCommand command(const plan::Plan &plan, const LaunchRequest &request) const override
    {
        return buildLocalCommand(plan, request);
    }

private:
    plan::Plan m_plan;
    TargetOptions m_options;
};

} // namespace

bool Preflight::passed() const
{
    return std::none_of(checks.begin(), checks.end(), [](const PreflightCheck &c) { return c.status == PreflightCheck::Status::Failed; });
}

QString Preflight::table() const
{
    qsizetype hostWidth = 4, checkWidth = 5, statusWidth = 6;
    for (const auto &c : checks) {
        hostWidth = std::max(hostWidth, (c.host.isEmpty() ? QStringLiteral("(here)") : c.host).size());
        checkWidth = std::max(checkWidth, c.check.size());
    }
    QString out = QStringLiteral("%1  %2  %3  %4\n")
                      .arg(QStringLiteral("host"), -int(hostWidth))
                      .arg(QStringLiteral("check"), -int(checkWidth))
                      .arg(QStringLiteral("result"), -int(statusWidth))
                      .arg(QStringLiteral("detail"));
    for (const auto &c : checks) {
        out += QStringLiteral("%1  %2  %3  %4")
                   .arg(c.host.isEmpty() ? QStringLiteral("(here)") : c.host, -int(hostWidth))
                   .arg(c.check, -int(checkWidth))
                   .arg(QString::fromLatin1(statusText(c.status)), -int(statusWidth))
                   .arg(c.detail);
        if (!c.fix.isEmpty() && c.status != PreflightCheck::Status::Ok)
            out += QStringLiteral("\n%1  fix: %2").arg(QString(), int(hostWidth + checkWidth + statusWidth + 4)).arg(c.fix);
        out += QLatin1Char('\n');
    }
    return out;
}

QString Preflight::failures() const
{
    QStringList lines;
    for (const auto &c : checks)
        if (c.status == PreflightCheck::Status::Failed)
            lines << QStringLiteral("%1: %2: %3%4")
                         .arg(c.host.isEmpty() ? QStringLiteral("this machine") : c.host, c.check, c.detail,
                              c.fix.isEmpty() ? QString() : QStringLiteral(" (fix: %1)").arg(c.fix));
    return lines.join(QLatin1Char('\n'));
}

std::unique_ptr<LaunchTarget> makeLaunchTarget(const plan::Plan &plan, const TargetOptions &options, QString &error)
{
    switch (plan.launch.target) {
    case plan::LaunchTarget::Local: return std::make_unique<LocalTarget>(plan, options);
    case plan::LaunchTarget::Ssh: return std::make_unique<SshTarget>(plan, options);
    case plan::LaunchTarget::Slurm: return std::make_unique<SlurmTarget>(plan, options);
    }
    error = QStringLiteral("launch.target: the '%1' target cannot be started by this version").arg(QString::fromUtf8(plan::toString(plan.launch.target)));
    return nullptr;
}

} // namespace trellis::launcher
