// The job (mpirun) as the supervisor sees it, wherever it came from. start(): this supervisor
// starts it under the job keeper (supervisor/job_keeper.h) as a child QProcess and reads its
// output from the keeper's pipes. adopt(): a job whose supervisor died, found through its keeper's
// pid; its output is read from the keeper's files and its end from the keeper's status file.
// Either way: output() for each chunk of stdout/stderr, finished() once, terminate()/kill().
// Threading: lives on the supervisor's main thread; nothing here blocks.
#pragma once

#include <QObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTimer>

#include <memory>

namespace trellis::launcher {

class JobProcess : public QObject {
    Q_OBJECT
public:
    explicit JobProcess(QObject *parent = nullptr);
    ~JobProcess() override;

    // keeper: the job-keeper program (trellis-cli); runDir: where job.out/err/status go.
    void start(const QString &keeper, const QString &runDir, const QString &program, const QStringList &arguments,
               const QProcessEnvironment &environment);
    // Follows the job of keeper `pid`; output already in the files before this call is replayed
    // with `replay` set (for failure messages, not to be logged again).
    void adopt(qint64 pid, const QString &runDir);

    bool running() const;
    qint64 keeperPid() const { return m_pid; }
    void terminate(); // SIGTERM to the keeper, which forwards it to mpirun (and mpirun to the ranks)
    void kill();      // SIGKILL to the keeper and its job
    QString errorString() const { return m_error; }
    // The destructor's last resort: kill a child job and wait for it.
    void killAndWait(int timeoutMs);

signals:
    void output(bool isStderr, const QByteArray &data, bool replay);
    void finished(int exitCode, bool crashed); // crashed: exitCode is 128 + the signal
    void failedToStart(const QString &why);

private:
    void poll(); // adopted: new output, and whether the keeper is gone

    std::unique_ptr<QProcess> m_process; // a child keeper
    qint64 m_pid = 0;
    QString m_runDir;
    QTimer m_poll;                       // an adopted keeper
    qint64 m_offset[2] = {0, 0};
    qint64 m_replayUntil[2] = {0, 0};
    bool m_finished = false;
    QString m_error;
};

} // namespace trellis::launcher
