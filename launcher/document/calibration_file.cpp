// See calibration_file.h.
#include "launcher/history_location.h"
#include "launcher/document/calibration_file.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include <algorithm>

namespace trellis::launcher {

QString defaultCalibrationPath(const QString &databasePath)
{
    return historyLocalFolder(databasePath) + QStringLiteral("/calibration.json");
}

QString applyCalibrationFile(const QString &path, bool required, plan::Plan &p, plan::DeviceSpec &device, bool &applied)
{
    applied = false;
    QFile f(path);
    if (!f.exists())
        return required ? QStringLiteral("%1: no such file").arg(path) : QString();
    if (!f.open(QIODevice::ReadOnly))
        return QStringLiteral("%1: cannot be read").arg(path);
    const auto entries = plan::parseCalibration(f.readAll().toStdString());
    if (!entries)
        return QStringLiteral("%1: %2").arg(path, QString::fromStdString(entries.errorText()));
    plan::applyCalibration(entries.value(), p, device);
    applied = !p.cluster.nodes.empty() && p.cluster.nodes.front().device == plan::DeviceKind::Cpu;
    return {};
}

bool wantsAutoCalibration(const plan::Plan &p, const QString &path)
{
    const bool cpu = !p.cluster.nodes.empty() && p.cluster.nodes.front().device == plan::DeviceKind::Cpu;
    return cpu && p.launch.target == plan::LaunchTarget::Local && !QFileInfo::exists(path) && qgetenv("TRELLIS_AUTO_CALIBRATE") != "0";
}

QString mergeCalibrationFile(const QString &path, const std::vector<plan::CalibrationEntry> &added)
{
    std::vector<plan::CalibrationEntry> entries;
    if (QFile f(path); f.exists()) {
        if (!f.open(QIODevice::ReadOnly))
            return QStringLiteral("%1: cannot be read").arg(path);
        const auto kept = plan::parseCalibration(f.readAll().toStdString());
        if (!kept)
            return QStringLiteral("%1: %2 (not replaced)").arg(path, QString::fromStdString(kept.errorText()));
        for (const plan::CalibrationEntry &e : kept.value())
            if (std::none_of(added.begin(), added.end(), [&](const plan::CalibrationEntry &a) { return a.ranks == e.ranks; }))
                entries.push_back(e);
    }
    entries.insert(entries.end(), added.begin(), added.end());
    std::sort(entries.begin(), entries.end(), [](const auto &a, const auto &b) { return a.ranks < b.ranks; });
    QDir().mkpath(QFileInfo(path).absolutePath());
    QSaveFile out(path); // written whole or not at all
    if (!out.open(QIODevice::WriteOnly) || out.write(QByteArray::fromStdString(plan::calibrationJson(entries))) < 0 || !out.commit())
        return QStringLiteral("%1: cannot be written (%2)").arg(path, out.errorString());
    return {};
}

} // namespace trellis::launcher
