// The run registry's leftovers (launcher/registry/run_registry.h): a lock file without a record,
// an hour old and held by nobody — a supervisor killed before it wrote its record — is removed by
// the next scan; one that is held, fresh, or beside a live record stays; a run is claimed on its
// path afterwards as before.
#include "launcher/registry/run_registry.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/time.h>
#include <unistd.h>

using namespace trellis::launcher;

namespace {

QString touch(const QString &dir, const QString &name, qint64 ageS)
{
    const QString path = dir + QLatin1Char('/') + name;
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.close();
    const std::time_t then = std::time(nullptr) - ageS;
    const struct timeval times[2] = {{then, 0}, {then, 0}};
    ::utimes(QFile::encodeName(path).constData(), times);
    return path;
}

// The registry in a folder of the test's own for the guard's life (XDG_RUNTIME_DIR, put back after).
struct OwnRuntimeDir {
    QTemporaryDir dir;
    QByteArray saved = qgetenv("XDG_RUNTIME_DIR");
    OwnRuntimeDir() { qputenv("XDG_RUNTIME_DIR", dir.path().toUtf8()); }
    ~OwnRuntimeDir()
    {
        if (saved.isNull())
            qunsetenv("XDG_RUNTIME_DIR");
        else
            qputenv("XDG_RUNTIME_DIR", saved);
    }
};

} // namespace

class TstRunRegistry : public QObject {
    Q_OBJECT
private slots:
    void staleLockFilesAreRemoved()
    {
        const OwnRuntimeDir runtime;
        const QString dir = RunRegistry::directory();
        QVERIFY(!dir.isEmpty());
        const QString stale = touch(dir, QStringLiteral("20260101-000000-dead.lock"), 7200);
        const QString fresh = touch(dir, QStringLiteral("20260101-000000-new0.lock"), 60);
        const QString held = touch(dir, QStringLiteral("20260101-000000-held.lock"), 7200);
        const QString notARun = touch(dir, QStringLiteral("not a run.lock"), 7200);
        const int fd = ::open(QFile::encodeName(held).constData(), O_RDONLY);
        QVERIFY(fd >= 0 && ::flock(fd, LOCK_SH) == 0); // a live supervisor's

        QVERIFY(RunRegistry::running().isEmpty());
        QVERIFY(!QFileInfo::exists(stale));
        QVERIFY(QFileInfo::exists(fresh));
        QVERIFY(QFileInfo::exists(held));
        QVERIFY(QFileInfo::exists(notARun));
        ::close(fd);

        // The removed run's id can be claimed again, its lock on the path's new file.
        RunRecord record;
        record.runId = QStringLiteral("20260101-000000-dead");
        QString error;
        auto claim = RunRegistry::claim(record, &error);
        QVERIFY2(claim, qPrintable(error));
        QVERIFY(QFileInfo::exists(stale));
        QVERIFY(RunRegistry::claim(record, &error) == nullptr); // owned
        QVERIFY2(error.contains(QStringLiteral("already owned")), qPrintable(error));
    }

    // A run whose supervisor is gone and whose job keeper's pid now belongs to another process (pids
    // are handed out again: 32768 of them on a busy test machine) is not a run with a live job:
    // its record goes. One whose pid is its keeper's (a process named as the run's job keeper) stays.
    void aKeeperPidTakenOverIsNoLiveJob()
    {
        const OwnRuntimeDir runtime;
        const QString dir = RunRegistry::directory();
        QVERIFY(!dir.isEmpty());
        auto recordWith = [&](const QString &runId, qint64 keeperPid) {
            QFile f(dir + QLatin1Char('/') + runId + QStringLiteral(".json"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QStringLiteral(R"({"run_id": "%1", "pid": 999999, "keeper_pid": %2, "run_dir": "/runs/%1", "attempt": 1})")
                        .arg(runId)
                        .arg(keeperPid)
                        .toUtf8());
        };
        QProcess other; // a live process that is nobody's job keeper
        other.start(QStringLiteral("sleep"), {QStringLiteral("30")});
        QVERIFY(other.waitForStarted());
        QProcess keeper; // one whose command line is the run's keeper's
        keeper.start(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), QStringLiteral("sleep 30"), QStringLiteral("job-keeper"),
                                                 QStringLiteral("/runs/20260101-000000-kept")});
        QVERIFY(keeper.waitForStarted());
        recordWith(QStringLiteral("20260101-000000-took"), other.processId());
        recordWith(QStringLiteral("20260101-000000-kept"), keeper.processId());
        QStringList orphaned; // a live job, its supervisor gone
        for (const RunRecord &r : RunRegistry::orphaned())
            orphaned << r.runId;
        QCOMPARE(orphaned, QStringList{QStringLiteral("20260101-000000-kept")});
        QVERIFY(!QFileInfo::exists(dir + QStringLiteral("/20260101-000000-took.json")));
        other.kill();
        keeper.kill();
        other.waitForFinished();
        keeper.waitForFinished();
    }
};

QTEST_GUILESS_MAIN(TstRunRegistry)
#include "tst_run_registry.moc"
