// Who owns which run on this machine. A run's supervisor claims the run in the user's private run
// directory ($XDG_RUNTIME_DIR/trellis, else /tmp/trellis-<uid>; mode 0700, owned by the user, or
// refused): an exclusive lock on <run>.lock held for the supervisor's lifetime, and <run>.json
// saying where its history, feed and telemetry sockets are. The lock makes "two supervisors never
// own the same run" a fact the kernel keeps, and a supervisor that died (even by kill -9) releases
// it at once, so running() is never fooled by a stale file. The sockets live in the same directory,
// so no other user can connect to them.
#pragma once

#include "launcher/run_types.h"

#include <QDateTime>
#include <QList>
#include <QString>

#include <memory>
#include <optional>

namespace trellis::launcher {

struct RunRecord {
    QString runId;
    qint64 pid = 0;            // the supervisor
    QString database;          // absolute path of the history database it writes
    QString planPath;
    QString logPath;           // the supervisor's own output (detached runs)
    QDateTime startedAt;
    qint64 keeperPid = 0;      // the job keeper of the current attempt (see job_keeper.h), 0 before
    QString runDir;            // the run's folder (job.out, job.err, job.status, plan.json)
    int attempt = 0;
    bool watchedOnly = false;  // a job Trellis did not launch, watched by `collect` (pid): it cannot be stopped here
    QString feedEndpoint() const;
    QString telemetryEndpoint() const;
};

class RunClaim {
public:
    ~RunClaim();
    RunClaim(const RunClaim &) = delete;
    RunClaim &operator=(const RunClaim &) = delete;
    const RunRecord &record() const { return m_record; }
    // A launch attempt started its job keeper: recorded for a supervisor that may adopt the job.
    void jobStarted(qint64 keeperPid, const QString &runDir, int attempt);

private:
    friend class RunRegistry;
    RunClaim(int fd, RunRecord record, QString lockPath, QString recordPath);
    void write();
    int m_fd;
    RunRecord m_record;
    QString m_lockPath, m_recordPath;
};

class RunRegistry {
public:
    // The private directory, created if needed; "" with *error set when it is unsafe or unusable.
    static QString directory(QString *error = nullptr);
    // A run id as the registry accepts it: letters, digits, '.', '_', '-'; 1-64 characters.
    static bool validRunId(const QString &runId);
    // Claims `record.runId` for this process; null with *error naming the owner when it is taken.
    static std::unique_ptr<RunClaim> claim(const RunRecord &record, QString *error);
    // Runs whose supervisor is alive (their lock is held), newest first. Leftovers of dead
    // supervisors are removed on the way.
    static QList<RunRecord> running();
    // Runs whose supervisor died while their job goes on (its keeper alive): adopt them
    // (trellis-cli adopt RUN). Newest first.
    static QList<RunRecord> orphaned();
    // Alive and not a zombie.
    static bool processAlive(qint64 pid);
    // What the history needs to tell abandoned runs (HistoryDatabase::setRunLiveness).
    static RunLiveness liveness();
    static std::optional<RunRecord> find(const QString &runId);
    // The run's sockets in the private directory.
    static QString feedEndpoint(const QString &runId);
    static QString telemetryEndpoint(const QString &runId);
};

} // namespace trellis::launcher
