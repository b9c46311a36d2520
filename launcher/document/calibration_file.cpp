// See calibration_file.h.
#include "launcher/history_location.h"
#include "launcher/document/calibration_file.h"

#include <QFile>
#include <QFileInfo>

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

} // namespace trellis::launcher
