// See job_process.h.
#include "launcher/job/job_process.h"

#include "launcher/job/job_keeper.h"
#include "launcher/registry/run_registry.h"

#include <QFile>

#include <cerrno>
#include <csignal>

namespace trellis::launcher {

JobProcess::JobProcess(QObject *parent) : QObject(parent)
{
    m_poll.setInterval(200);
    connect(&m_poll, &QTimer::timeout, this, &JobProcess::poll);
}

JobProcess::~JobProcess() = default;

void JobProcess::start(const QString &keeper, const QString &runDir, const QString &program, const QStringList &arguments,
                       const QProcessEnvironment &environment)
{
    m_runDir = runDir;
    QFile::remove(runDir + QStringLiteral("/job.status"));
    m_process = std::make_unique<QProcess>();
    m_process->setProcessEnvironment(environment);
    m_process->setWorkingDirectory(runDir);
    connect(m_process.get(), &QProcess::readyReadStandardOutput, this,
            [this] { emit output(false, m_process->readAllStandardOutput(), false); });
    connect(m_process.get(), &QProcess::readyReadStandardError, this,
            [this] { emit output(true, m_process->readAllStandardError(), false); });
    connect(m_process.get(), &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
        if (std::exchange(m_finished, true))
            return;
        emit output(false, m_process->readAllStandardOutput(), false);
        emit output(true, m_process->readAllStandardError(), false);
        // Crashed: Qt gives the signal number; the shell's convention (128 + signal) is what we use.
        const bool crashed = status == QProcess::CrashExit;
        emit finished(crashed ? 128 + exitCode : exitCode, crashed);
    });
    connect(m_process.get(), &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) {
            m_error = QStringLiteral("could not start %1: %2").arg(m_process->program(), m_process->errorString());
            m_finished = true;
            emit failedToStart(m_error);
        }
    });
    QStringList args{QStringLiteral("job-keeper"), runDir, QStringLiteral("--"), program};
    args += arguments;
    m_process->start(keeper, args);
    m_pid = m_process->processId();
    connect(m_process.get(), &QProcess::started, this, [this] { m_pid = m_process->processId(); });
}

void JobProcess::adopt(qint64 pid, const QString &runDir)
{
    m_pid = pid;
    m_runDir = runDir;
    for (int i = 0; i < 2; ++i)
        m_replayUntil[i] = QFile(runDir + (i ? QStringLiteral("/job.err") : QStringLiteral("/job.out"))).size();
    m_poll.start();
    QTimer::singleShot(0, this, &JobProcess::poll);
}

void JobProcess::poll()
{
    const bool alive = RunRegistry::processAlive(m_pid);
    for (int i = 0; i < 2; ++i) {
        QFile f(m_runDir + (i ? QStringLiteral("/job.err") : QStringLiteral("/job.out")));
        if (!f.open(QIODevice::ReadOnly) || f.size() <= m_offset[i] || !f.seek(m_offset[i]))
            continue;
        const QByteArray data = f.read(4 << 20);
        // Replay what was there when adopted, split where the replay ends.
        const qint64 replayBytes = std::clamp<qint64>(m_replayUntil[i] - m_offset[i], 0, data.size());
        m_offset[i] += data.size();
        if (replayBytes > 0)
            emit output(i == 1, data.left(replayBytes), true);
        if (replayBytes < data.size())
            emit output(i == 1, data.mid(replayBytes), false);
    }
    if (alive || m_finished)
        return;
    m_finished = true;
    m_poll.stop();
    const JobStatus s = readJobStatus(m_runDir);
    if (!s.known)
        emit finished(128 + SIGKILL, true); // the keeper itself was killed
    else
        emit finished(s.signalled ? 128 + s.code : s.code, s.signalled);
}

bool JobProcess::running() const
{
    if (m_process)
        return m_process->state() != QProcess::NotRunning;
    return m_pid > 0 && !m_finished;
}

void JobProcess::terminate()
{
    if (running() && m_pid > 0)
        ::kill(static_cast<pid_t>(m_pid), SIGTERM);
}

void JobProcess::kill()
{
    if (!running() || m_pid <= 0)
        return;
    // The keeper cannot forward SIGKILL: end mpirun first (it takes its ranks along), then it.
    const QString children = QStringLiteral("/proc/%1/task/%1/children").arg(m_pid);
    QFile f(children);
    if (f.open(QIODevice::ReadOnly))
        for (const QByteArray &child : f.readAll().split(' '))
            if (const qint64 c = child.trimmed().toLongLong(); c > 0)
                ::kill(static_cast<pid_t>(c), SIGKILL);
    ::kill(static_cast<pid_t>(m_pid), SIGKILL);
}

void JobProcess::killAndWait(int timeoutMs)
{
    if (!running())
        return;
    disconnect(this);
    kill();
    if (m_process)
        m_process->waitForFinished(timeoutMs);
}

} // namespace trellis::launcher
