// See machine_calibration.h.
#include "launcher/document/machine_calibration.h"
#include "launcher/programs.h"

#include <QProcess>

#include <utility>

namespace trellis::launcher {

MachineCalibration::MachineCalibration(QString calibrationPath, QObject *parent) : QObject(parent), m_path(std::move(calibrationPath)) {}

void MachineCalibration::setCalibrationPath(const QString &path)
{
    if (path != m_path)
        m_error.clear();
    m_path = path;
}

void MachineCalibration::start(int ranks)
{
    if (m_process || !m_error.isEmpty() || m_path.isEmpty())
        return;
    m_ranks = ranks;
    m_process = new QProcess(this);
    m_process->setProgram(supervisorProgram());
    m_process->setArguments({QStringLiteral("calibrate"), QStringLiteral("--ranks"), QString::number(ranks), QStringLiteral("--out"), m_path});
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    connect(m_process, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
        const QString said = QString::fromUtf8(m_process->readAll()).trimmed();
        if (status == QProcess::NormalExit && code == 0)
            end({});
        else
            end(said.isEmpty() ? QStringLiteral("trellis-cli calibrate ended with code %1").arg(code) : said.section(QLatin1Char('\n'), -1));
    });
    connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            end(QStringLiteral("%1 could not be started (%2)").arg(m_process->program(), m_process->errorString()));
    });
    m_process->start();
}

void MachineCalibration::end(const QString &error)
{
    if (!m_process)
        return;
    m_process->deleteLater();
    m_process = nullptr;
    m_error = error;
    emit finished(error);
}

} // namespace trellis::launcher
