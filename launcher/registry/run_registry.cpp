// See run_registry.h.
#include "launcher/registry/run_registry.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSaveFile>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <csignal>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace trellis::launcher {
namespace {

QString recordPathOf(const QString &dir, const QString &runId) { return dir + QLatin1Char('/') + runId + QStringLiteral(".json"); }
constexpr qint64 kStaleLockS = 3600; // a lock file without a record, held by nobody, this old is removed

QString lockPathOf(const QString &dir, const QString &runId) { return dir + QLatin1Char('/') + runId + QStringLiteral(".lock"); }

std::optional<RunRecord> readRecord(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly) || f.size() > 65536)
        return std::nullopt;
    const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
    RunRecord r;
    r.runId = o.value(QStringLiteral("run_id")).toString();
    r.pid = o.value(QStringLiteral("pid")).toInteger();
    r.database = o.value(QStringLiteral("database")).toString();
    r.planPath = o.value(QStringLiteral("plan")).toString();
    r.logPath = o.value(QStringLiteral("log")).toString();
    r.startedAt = QDateTime::fromString(o.value(QStringLiteral("started_at")).toString(), Qt::ISODateWithMs);
    r.keeperPid = o.value(QStringLiteral("keeper_pid")).toInteger();
    r.runDir = o.value(QStringLiteral("run_dir")).toString();
    r.attempt = o.value(QStringLiteral("attempt")).toInt();
    r.watchedOnly = o.value(QStringLiteral("watched_only")).toBool();
    if (!RunRegistry::validRunId(r.runId))
        return std::nullopt;
    return r;
}

// True when some process holds the run's lock (its supervisor is alive).
bool lockHeld(const QString &lockPath)
{
    const int fd = ::open(QFile::encodeName(lockPath).constData(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(fd);
    return held;
}

} // namespace

QString RunRecord::feedEndpoint() const { return RunRegistry::feedEndpoint(runId); }
QString RunRecord::telemetryEndpoint() const { return RunRegistry::telemetryEndpoint(runId); }

QString RunRegistry::feedEndpoint(const QString &runId)
{
    return QStringLiteral("ipc://%1/%2.feed").arg(directory(), runId);
}

QString RunRegistry::telemetryEndpoint(const QString &runId)
{
    return QStringLiteral("ipc://%1/%2.telemetry").arg(directory(), runId);
}

QString RunRegistry::directory(QString *error)
{
    const QString runtime = qEnvironmentVariable("XDG_RUNTIME_DIR");
    const QString dir = !runtime.isEmpty() && QFileInfo(runtime).isDir() ? runtime + QStringLiteral("/trellis")
                                                                         : QStringLiteral("/tmp/trellis-%1").arg(::getuid());
    const QByteArray path = QFile::encodeName(dir);
    if (::mkdir(path.constData(), 0700) != 0 && errno != EEXIST) {
        if (error)
            *error = QStringLiteral("run directory %1: cannot create it (%2)").arg(dir, QString::fromLocal8Bit(std::strerror(errno)));
        return {};
    }
    struct stat st {};
    if (::lstat(path.constData(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        if (error)
            *error = QStringLiteral("run directory %1: not a directory").arg(dir);
        return {};
    }
    // Another user's directory (or one others can enter) would let them reach the run's sockets.
    if (st.st_uid != ::getuid()) {
        if (error)
            *error = QStringLiteral("run directory %1 belongs to uid %2, not to you (uid %3); refusing to use it")
                         .arg(dir)
                         .arg(st.st_uid)
                         .arg(::getuid());
        return {};
    }
    if ((st.st_mode & 077) != 0) {
        if (error)
            *error = QStringLiteral("run directory %1 is open to other users (mode %2); it must be 0700")
                         .arg(dir)
                         .arg(st.st_mode & 0777, 4, 8, QLatin1Char('0'));
        return {};
    }
    return dir;
}

bool RunRegistry::validRunId(const QString &runId)
{
    static const QRegularExpression pattern(QStringLiteral("^[A-Za-z0-9._-]{1,64}$"));
    return pattern.match(runId).hasMatch() && runId != QLatin1String(".") && runId != QLatin1String("..");
}

RunClaim::RunClaim(int fd, RunRecord record, QString lockPath, QString recordPath)
    : m_fd(fd), m_record(std::move(record)), m_lockPath(std::move(lockPath)), m_recordPath(std::move(recordPath))
{
}

RunClaim::~RunClaim()
{
    // The record first, then the lock: a reader never sees a record without an owner for long.
    QFile::remove(m_recordPath);
    // The run's sockets (ZeroMQ leaves an ipc:// file behind when the process ends first).
    const QString base = m_lockPath.chopped(5);
    QFile::remove(base + QStringLiteral(".feed"));
    QFile::remove(base + QStringLiteral(".telemetry"));
    QFile::remove(m_lockPath);
    ::close(m_fd);
}

std::unique_ptr<RunClaim> RunRegistry::claim(const RunRecord &record, QString *error)
{
    if (!validRunId(record.runId)) {
        *error = QStringLiteral("run id '%1' is not valid (letters, digits, '.', '_', '-'; at most 64)").arg(record.runId);
        return nullptr;
    }
    const QString dir = directory(error);
    if (dir.isEmpty())
        return nullptr;
    const QString lockPath = lockPathOf(dir, record.runId);
    int fd = -1;
    bool locked = false;
    // A stale lock file may be removed (scan()) between opening it and locking it: the lock then
    // holds a file no longer at the path, so it is taken again on the path's new file.
    for (int tries = 0; tries < 3 && !locked; ++tries) {
        if (fd >= 0)
            ::close(fd);
        fd = ::open(QFile::encodeName(lockPath).constData(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) {
            *error = QStringLiteral("cannot create %1 (%2)").arg(lockPath, QString::fromLocal8Bit(std::strerror(errno)));
            return nullptr;
        }
        if (::flock(fd, LOCK_EX | LOCK_NB) != 0)
            break;
        struct stat held {};
        struct stat named {};
        locked = ::fstat(fd, &held) == 0 && ::stat(QFile::encodeName(lockPath).constData(), &named) == 0 &&
                 held.st_ino == named.st_ino && held.st_dev == named.st_dev;
    }
    if (!locked) {
        ::close(fd);
        const auto owner = readRecord(recordPathOf(dir, record.runId));
        *error = owner ? QStringLiteral("run %1 is already owned by its supervisor (pid %2); attach to it instead")
                             .arg(record.runId)
                             .arg(owner->pid)
                       : QStringLiteral("run %1 is already owned by another supervisor").arg(record.runId);
        return nullptr;
    }
    RunRecord r = record;
    r.pid = QCoreApplication::applicationPid();
    if (!r.startedAt.isValid())
        r.startedAt = QDateTime::currentDateTimeUtc();
    const QString recordPath = recordPathOf(dir, r.runId);
    auto claim = std::unique_ptr<RunClaim>(new RunClaim(fd, std::move(r), lockPath, recordPath));
    claim->write();
    return claim;
}

void RunClaim::jobStarted(qint64 keeperPid, const QString &runDir, int attempt)
{
    m_record.keeperPid = keeperPid;
    m_record.runDir = runDir;
    m_record.attempt = attempt;
    write();
}

void RunClaim::write()
{
    const RunRecord &r = m_record;
    QJsonObject o{{QStringLiteral("run_id"), r.runId},
                  {QStringLiteral("pid"), r.pid},
                  {QStringLiteral("database"), r.database},
                  {QStringLiteral("plan"), r.planPath},
                  {QStringLiteral("log"), r.logPath},
                  {QStringLiteral("started_at"), r.startedAt.toString(Qt::ISODateWithMs)},
                  {QStringLiteral("keeper_pid"), r.keeperPid},
                  {QStringLiteral("run_dir"), r.runDir},
                  {QStringLiteral("attempt"), r.attempt},
                  {QStringLiteral("watched_only"), r.watchedOnly}};
    QSaveFile file(m_recordPath);
    if (file.open(QIODevice::WriteOnly))
        file.write(QJsonDocument(o).toJson());
    file.commit();
}


namespace {

// Every record in the directory, each with whether its supervisor is alive (its lock held) and
// whether its job is (its keeper); leftovers of runs with neither are removed on the way.
struct Found {
    RunRecord record;
    bool supervised = false;
    bool jobAlive = false;
};

// Whether `pid` is this run's job keeper still: alive, and its command line the keeper's of the
// run's folder — not another process that took the pid over once the keeper was gone (a busy
// machine with a pid_max of 32768 hands pids out again within minutes).
bool keeperAlive(qint64 pid, const QString &runId)
{
    if (!RunRegistry::processAlive(pid))
        return false;
    QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
    if (!cmdline.open(QIODevice::ReadOnly))
        return true; // no /proc here: the pid alone
    const QByteArray text = cmdline.readAll();
    return text.contains(QByteArrayLiteral("job-keeper")) && text.contains(runId.toUtf8());
}

QList<Found> scan()
{
    QList<Found> out;
    const QString dir = RunRegistry::directory();
    if (dir.isEmpty())
        return out;
    for (const QFileInfo &info : QDir(dir).entryInfoList({QStringLiteral("*.json")}, QDir::Files)) {
        const QString runId = info.completeBaseName();
        if (!RunRegistry::validRunId(runId))
            continue;
        const bool supervised = lockHeld(lockPathOf(dir, runId));
        const auto record = readRecord(info.absoluteFilePath());
        const bool jobAlive = record && keeperAlive(record->keeperPid, runId);
        if (!supervised && !jobAlive) {
            // Its supervisor is gone (it would have removed these itself had it ended normally)
            // and so is its job. A new owner would hold the lock again before writing a record.
            QFile::remove(info.absoluteFilePath());
            for (const char *suffix : {".feed", ".telemetry"})
                QFile::remove(dir + QLatin1Char('/') + runId + QLatin1String(suffix));
            continue;
        }
        if (record)
            out.append({*record, supervised, jobAlive});
    }
    // Lock files without a record, an hour old and held by nobody: a supervisor killed before it
    // wrote its record, or whose record went above. Removed while this process holds the lock, so
    // a supervisor claiming the run meanwhile finds it gone and takes the path's new file.
    for (const QFileInfo &info : QDir(dir).entryInfoList({QStringLiteral("*.lock")}, QDir::Files)) {
        const QString runId = info.completeBaseName();
        if (!RunRegistry::validRunId(runId) || QFileInfo::exists(recordPathOf(dir, runId)) ||
            info.lastModified().secsTo(QDateTime::currentDateTimeUtc()) < kStaleLockS)
            continue;
        const int fd = ::open(QFile::encodeName(info.absoluteFilePath()).constData(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (::flock(fd, LOCK_EX | LOCK_NB) == 0)
            QFile::remove(info.absoluteFilePath());
        ::close(fd);
    }
    std::sort(out.begin(), out.end(), [](const Found &a, const Found &b) { return a.record.startedAt > b.record.startedAt; });
    return out;
}

} // namespace

QList<RunRecord> RunRegistry::running()
{
    QList<RunRecord> out;
    for (const Found &f : scan())
        if (f.supervised)
            out.append(f.record);
    return out;
}

QList<RunRecord> RunRegistry::orphaned()
{
    QList<RunRecord> out;
    for (const Found &f : scan())
        if (!f.supervised && f.jobAlive)
            out.append(f.record);
    return out;
}

bool RunRegistry::processAlive(qint64 pid)
{
    if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM))
        return false;
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return true;
    const QByteArray text = stat.read(512);
    const qsizetype close = text.lastIndexOf(')');
    return close < 0 || close + 2 >= text.size() || text[close + 2] != 'Z';
}

std::optional<RunRecord> RunRegistry::find(const QString &runId)
{
    for (const RunRecord &r : running())
        if (r.runId == runId)
            return r;
    return std::nullopt;
}

RunLiveness RunRegistry::liveness()
{
    RunLiveness l;
    // A run whose job goes on, or whose claim a live process holds (an adopter between taking the
    // claim and recording itself as the run's supervisor), is not abandoned.
    l.runsWithLiveJobs = [] {
        QSet<QString> ids;
        for (const Found &f : scan())
            if (f.jobAlive || f.supervised)
                ids.insert(f.record.runId);
        return ids;
    };
    l.processAlive = &RunRegistry::processAlive;
    return l;
}

} // namespace trellis::launcher
