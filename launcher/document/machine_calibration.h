// Calibrating this machine without being asked: the workbench's estimate of a CPU plan that runs
// here, on a machine with no calibration yet (wantsAutoCalibration, calibration_file.h), starts
// `trellis-cli calibrate` for the plan's world size in a process of its own and estimates again
// when it is done. Nothing waits on the process: it says when it has ended.
#pragma once

#include <QObject>
#include <QString>

class QProcess;

namespace trellis::launcher {

class MachineCalibration : public QObject {
    Q_OBJECT
public:
    explicit MachineCalibration(QString calibrationPath, QObject *parent = nullptr);
    // Starts measuring for `ranks` ranks into the calibration file; nothing when one is running,
    // or when one failed before (it would fail again: the error stays, said by error()).
    void start(int ranks);
    // Another history's file (the workbench opened another): a failure before is forgotten.
    void setCalibrationPath(const QString &path);
    bool running() const { return m_process != nullptr; }
    int ranks() const { return m_ranks; }
    QString error() const { return m_error; }

signals:
    void finished(const QString &error); // "" when the file now holds the measurement

private:
    void end(const QString &error);
    QString m_path;
    QProcess *m_process = nullptr;
    int m_ranks = 0;
    QString m_error;
};

} // namespace trellis::launcher
