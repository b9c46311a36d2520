// See job_keeper.h.
#include "launcher/job/job_keeper.h"

#include <QFile>
#include <QSaveFile>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace trellis::launcher {
namespace {

volatile sig_atomic_t g_child = 0;

void forward(int signo)
{
    if (g_child > 0)
        ::kill(static_cast<pid_t>(g_child), signo);
}

bool writeAll(int fd, const char *data, ssize_t size)
{
    while (size > 0) {
        const ssize_t n = ::write(fd, data, static_cast<size_t>(size));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        data += n;
        size -= n;
    }
    return true;
}

// In the forked child: the job's stdout and stderr go to the pipes, then PROGRAM replaces us.
[[noreturn]] void execJob(int outPipe, int errPipe, std::vector<char *> &argv)
{
    ::dup2(outPipe, STDOUT_FILENO);
    ::dup2(errPipe, STDERR_FILENO);
    std::signal(SIGPIPE, SIG_DFL);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "job-keeper: cannot run %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
}

// SIGTERM, SIGINT and SIGHUP sent to the keeper go on to the job.
void forwardSignalsTo(pid_t child)
{
    g_child = child;
    struct sigaction sa {};
    sa.sa_handler = forward;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int signo : {SIGTERM, SIGINT, SIGHUP})
        ::sigaction(signo, &sa, nullptr);
}

// Copy until both pipes close. Our own stdout/stderr may be gone (supervisor died): ignored.
// `pipes` and `files`: the job's stdout then stderr.
void copyOutput(std::array<int, 2> pipes, std::array<int, 2> files)
{
    pollfd fds[2] = {{pipes[0], POLLIN, 0}, {pipes[1], POLLIN, 0}};
    const int relays[2] = {STDOUT_FILENO, STDERR_FILENO};
    bool relayOk[2] = {true, true};
    int open = 2;
    char buffer[65536];
    while (open > 0) {
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                ::close(fds[i].fd);
                fds[i].fd = -1;
                --open;
                continue;
            }
            writeAll(files[i], buffer, n);
            if (relayOk[i])
                relayOk[i] = writeAll(relays[i], buffer, n);
        }
    }
}

// The job's wait status.
int waitForExit(pid_t child)
{
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

void writeJobStatus(const QString &dir, bool signalled, int code)
{
    QSaveFile statusFile(dir + QStringLiteral("/job.status"));
    if (statusFile.open(QIODevice::WriteOnly)) {
        statusFile.write(QByteArray(signalled ? "signal " : "exit ") + QByteArray::number(code) + '\n');
        statusFile.commit();
    }
}

} // namespace

JobStatus readJobStatus(const QString &runDir)
{
    JobStatus s;
    QFile f(runDir + QStringLiteral("/job.status"));
    if (!f.open(QIODevice::ReadOnly))
        return s;
    const QList<QByteArray> parts = f.read(64).trimmed().split(' ');
    if (parts.size() != 2)
        return s;
    bool ok = false;
    const int value = parts[1].toInt(&ok);
    if (!ok || (parts[0] != "exit" && parts[0] != "signal"))
        return s;
    s.known = true;
    s.signalled = parts[0] == "signal";
    s.code = value;
    return s;
}

int runJobKeeper(const QStringList &args)
{
    const qsizetype dash = args.indexOf(QStringLiteral("--"));
    if (args.size() < 3 || dash != 1) {
        std::fprintf(stderr, "usage: trellis-cli job-keeper DIR -- PROGRAM [ARGS...]\n"
                             "(started by a run's supervisor: runs PROGRAM, copies its output to DIR/job.out and\n"
                             "DIR/job.err, and writes DIR/job.status when it ends)\n");
        return 2;
    }
    const QString dir = args[0];
    std::signal(SIGPIPE, SIG_IGN); // a supervisor that died closes our stdout: go on
    int outPipe[2], errPipe[2];
    if (::pipe2(outPipe, O_CLOEXEC) != 0 || ::pipe2(errPipe, O_CLOEXEC) != 0) {
        std::perror("job-keeper: pipe");
        return 12;
    }
    const QByteArray outPath = QFile::encodeName(dir + QStringLiteral("/job.out"));
    const QByteArray errPath = QFile::encodeName(dir + QStringLiteral("/job.err"));
    const int outFile = ::open(outPath.constData(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    const int errFile = ::open(errPath.constData(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (outFile < 0 || errFile < 0) {
        std::fprintf(stderr, "job-keeper: cannot write %s: %s\n", outPath.constData(), std::strerror(errno));
        return 9;
    }
    std::vector<QByteArray> argv8;
    for (qsizetype i = dash + 1; i < args.size(); ++i)
        argv8.push_back(QFile::encodeName(args[i]));
    std::vector<char *> argv;
    for (auto &a : argv8)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    const pid_t child = ::fork();
    if (child < 0) {
        std::perror("job-keeper: fork");
        return 12;
    }
    if (child == 0)
        execJob(outPipe[1], errPipe[1], argv);
    forwardSignalsTo(child);
    ::close(outPipe[1]);
    ::close(errPipe[1]);

    copyOutput({outPipe[0], errPipe[0]}, {outFile, errFile});
    const int status = waitForExit(child);
    ::close(outFile);
    ::close(errFile);
    const bool signalled = WIFSIGNALED(status);
    const int code = signalled ? WTERMSIG(status) : WEXITSTATUS(status);
    writeJobStatus(dir, signalled, code);
    if (signalled) { // end the way the job did, so the supervisor sees a crash
        std::signal(code, SIG_DFL);
        ::raise(code);
    }
    return code;
}

} // namespace trellis::launcher
