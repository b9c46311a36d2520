// See launch_target.h. The local target: mpirun on this machine (mpi_command.h), the telemetry on
// the run's private ipc:// socket, nothing to stage.
#include "launcher/targets/launch_target.h"

#include "launcher/targets/slurm_target.h"
#include "launcher/targets/ssh_target.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHostAddress>
#include <QHostInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QThread>
#include <QUdpSocket>

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

QString remoteTelemetryRoute(const QString &address, const QString &host, quint16 port, const QString &field, TelemetryRoute &route)
{
    QString bindAddress = address;
    if (bindAddress.isEmpty()) {
        QHostAddress toward(host);
        if (toward.isNull())
            for (const QHostAddress &a : QHostInfo::fromName(host).addresses())
                if (a.protocol() == QAbstractSocket::IPv4Protocol) {
                    toward = a;
                    break;
                }
        if (toward.isNull())
            return QStringLiteral("cannot resolve %1 to find the address the ranks reach this machine at; set %2").arg(host, field);
        QUdpSocket probe; // connecting a UDP socket sends nothing: it only asks the kernel for the route
        probe.connectToHost(toward, port);
        probe.waitForConnected(1000);
        bindAddress = probe.localAddress().toString();
        if (probe.localAddress().isNull() || bindAddress.isEmpty())
            return QStringLiteral("no route from this machine to %1; set %2").arg(toward.toString(), field);
    }
    std::string error;
    const auto keys = proto::generateCurveKeys(error);
    if (!keys)
        return QStringLiteral("telemetry keys: %1").arg(QString::fromStdString(error));
    route.keys = *keys;
    route.bind = "tcp://" + bindAddress.toStdString() + ":*";
    return {};
}

QString checkpointFolderName(qint64 step)
{
    return QStringLiteral("step-%1").arg(step, 8, 10, QLatin1Char('0'));
}

QString checkpointGaps(const QString &stepDir)
{
    QFile metaFile(stepDir + QStringLiteral("/meta.json"));
    if (!metaFile.open(QIODevice::ReadOnly))
        return QStringLiteral("%1/meta.json is missing").arg(stepDir);
    const QJsonDocument meta = QJsonDocument::fromJson(metaFile.read(1 << 20));
    const QJsonArray files = meta.object().value(QStringLiteral("files")).toArray();
    if (files.isEmpty())
        return QStringLiteral("%1/meta.json lists no shards").arg(stepDir);
    QStringList missing;
    for (const QJsonValue &f : files) {
        const QString name = f.toObject().value(QStringLiteral("name")).toString();
        const QFileInfo shard(stepDir + QLatin1Char('/') + name);
        if (name.isEmpty() || name.contains(QLatin1Char('/')) || !shard.isFile() ||
            shard.size() != static_cast<qint64>(f.toObject().value(QStringLiteral("bytes")).toDouble()))
            missing << (name.isEmpty() ? QStringLiteral("(unnamed)") : name);
    }
    if (missing.isEmpty())
        return {};
    return QStringLiteral("%1 lacks %2 (or %3 the recorded size)")
        .arg(stepDir, missing.join(QStringLiteral(", ")), missing.size() == 1 ? QStringLiteral("has not") : QStringLiteral("they have not"));
}

qint64 newestCompleteCheckpoint(const QString &dir)
{
    static const QRegularExpression name(QStringLiteral("^step-(\\d{8})$"));
    qint64 newest = 0;
    for (const QString &entry : QDir(dir).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        const auto m = name.match(entry);
        if (!m.hasMatch())
            continue;
        const qint64 step = m.captured(1).toLongLong();
        if (step > newest && checkpointGaps(dir + QLatin1Char('/') + entry).isEmpty())
            newest = step;
    }
    return newest;
}

} // namespace trellis::launcher
