// Nothing acknowledged before it is stored (docs/architecture.md §9): `trellis-cli simulate` runs —
// real supervisor, real ranks speaking the acknowledged protocol over ZeroMQ — whose history fails
// under them in each way the writer knows, each ending with every rank's every step in the history
// once (or, where a bound gives rows up, the loss counted at the ranks and said):
//   an SQLite history on a small tmpfs that fills mid-run and is freed again (root: mount);
//   a history on a full or read-only file system refused at start, before any rank (root);
//   an ext4 file system the kernel turns read-only mid-run (errors=remount-ro): what was
//   acknowledged before is on the disk, the rest said not written, exit 3 (root, a loop device);
//   a row refused for its own data (a trigger) given up alone after a few tries, counted;
//   the writer's memory bound reached while the history stays locked: given up, counted, said;
//   PostgreSQL whose step-block COPY fails for a while (a trigger);
//   the PostgreSQL server stopped between a transaction's statements and its commit;
//   two supervisors merging one spool at the same moment; a spool merged after the run went on.
#include "launcher/history/history_database.h"
#include "launcher/history/history_spool.h"
#include "launcher/history/history_writer.h"
#include "launcher/history_location.h"
#include "tests/support/cli_test_support.h"
#include "tests/support/history_checks.h"
#include "tests/support/history_engines.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMap>
#include <QProcess>
#include <QSet>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

#include <unistd.h>

using namespace trellis::launcher;
using trellis::test::cli;
using trellis::test::failure;
using trellis::test::kCli;
using trellis::test::Result;
using trellis::test::storedReports;

namespace {

QStringList simulateArgs(const QString &db, const QString &runId, int ranks, int seconds)
{
    return {QStringLiteral("--db"), db, QStringLiteral("simulate"), QStringLiteral("--ranks"), QString::number(ranks), QStringLiteral("--hz"),
            QStringLiteral("20"), QStringLiteral("--seconds"), QString::number(seconds), QStringLiteral("--quiet"), QStringLiteral("--run-id"), runId};
}

bool shell(const QString &program, const QStringList &args)
{
    QProcess p;
    p.start(program, args);
    return p.waitForFinished(60000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

// Waits until the run has reached `steps` in the history (read on a connection of its own).
bool reached(const QString &db, const QString &runId, qint64 steps, int timeoutMs = 120000)
{
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < timeoutMs) {
        {
            HistoryDatabase h;
            if (h.open(db, false).isEmpty())
                if (const auto run = h.findRun(runId); run && run->stepsDone >= steps)
                    return true;
        }
        QTest::qWait(100);
    }
    return false;
}

// "" when every rank of the run has every step once, its telemetry complete (every message up to
// its goodbye acknowledged, none lost or dropped); else what is missing.
QString everyStepOnce(const QString &db, const QString &runId, int ranks)
{
    HistoryDatabase h;
    if (const QString e = h.open(db, false); !e.isEmpty())
        return e;
    const auto run = h.findRun(runId);
    if (!run)
        return QStringLiteral("no run ") + runId;
    if (run->status != QLatin1String("completed"))
        return QStringLiteral("run %1 is %2").arg(runId, run->status);
    const auto data = h.loadRun(run->id);
    QMap<int, QSet<qint64>> steps;
    for (const StepRow &s : data->steps)
        steps[s.rank].insert(s.step);
    if (steps.size() != ranks)
        return QStringLiteral("%1 ranks have steps, not %2").arg(steps.size()).arg(ranks);
    for (auto it = steps.begin(); it != steps.end(); ++it)
        if (it->size() != run->stepsDone || !it->contains(1) || !it->contains(run->stepsDone))
            return QStringLiteral("rank %1 has %2 of %3 steps").arg(it.key()).arg(it->size()).arg(run->stepsDone);
    if (const qint64 stored = storedReports(h, run->id); stored != ranks * run->stepsDone)
        return QStringLiteral("%1 step reports stored for %2 rank-steps").arg(stored).arg(ranks * run->stepsDone);
    for (const RankRow &rank : data->ranks)
        if (rank.goodbyeSeq + 1 != rank.receivedSeq || rank.lost != 0 || rank.dropped != 0)
            return QStringLiteral("rank %1: received %2, goodbye %3, lost %4, dropped %5")
                .arg(rank.rank)
                .arg(rank.receivedSeq)
                .arg(rank.goodbyeSeq)
                .arg(rank.lost)
                .arg(rank.dropped);
    return {};
}

// The history's words in the run's events.
QString historyEvents(const QString &db, const QString &runId)
{
    HistoryDatabase h;
    if (!h.open(db, false).isEmpty())
        return {};
    const auto run = h.findRun(runId);
    if (!run)
        return {};
    QStringList said;
    const auto data = h.loadRun(run->id);
    for (const EventRow &e : data->events)
        if (e.kind == QLatin1String("history"))
            said << e.message;
    return said.join(QLatin1Char('\n'));
}

// Waits for a supervisor's end; "" when it ended well with every step of its run stored once and
// the history's words `said` in its events, else what is wrong.
QString endedWithEveryStep(QProcess &supervisor, const QString &db, const QString &runId, int ranks, const QStringList &said)
{
    if (!supervisor.waitForFinished(90000) || supervisor.exitCode() != 0)
        return QStringLiteral("the supervisor did not end well: %1").arg(QString::fromUtf8(supervisor.readAllStandardError()));
    if (const QString missing = everyStepOnce(db, runId, ranks); !missing.isEmpty())
        return missing;
    const QString events = historyEvents(db, runId);
    for (const QString &words : said)
        if (!events.contains(words))
            return QStringLiteral("the history never said \"%1\"; it said: %2").arg(words, events);
    return {};
}

// Runs `statements` on a history (made if new): a test's trigger or fault table; "" or the error.
QString applySql(const QString &db, std::initializer_list<const char *> statements)
{
    HistoryDatabase h;
    if (const QString e = h.open(db); !e.isEmpty())
        return e;
    QSqlQuery q(h.connection());
    for (const char *sql : statements)
        if (!q.exec(QLatin1String(sql)))
            return q.lastError().text();
    return {};
}

// Arms or disarms a test's fault (its `fault` table, read by its trigger); false when it could not.
bool armFault(const QString &db, bool on)
{
    HistoryDatabase h;
    return h.open(db, false).isEmpty() &&
           QSqlQuery(h.connection()).exec(QStringLiteral("UPDATE fault SET armed = %1").arg(on ? "true" : "false"));
}

// Holds an SQLite history locked (an exclusive transaction of another connection) for `ms`; "" or
// why it could not.
QString holdLocked(const QString &db, int ms)
{
    QString error;
    {
        QSqlDatabase locker = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("locker"));
        locker.setDatabaseName(db);
        QSqlQuery q(locker);
        if (!locker.open() || !q.exec(QStringLiteral("BEGIN EXCLUSIVE"))) {
            error = q.lastError().text() + locker.lastError().text();
        } else {
            QTest::qWait(ms);
            if (!q.exec(QStringLiteral("COMMIT")))
                error = q.lastError().text();
        }
        q.finish();
        locker.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("locker"));
    return error;
}

// Each rank's steps in a run's loaded data.
QMap<int, QSet<qint64>> stepsByRank(const RunData &data)
{
    QMap<int, QSet<qint64>> steps;
    for (const StepRow &s : data.steps)
        steps[s.rank].insert(s.step);
    return steps;
}

// A small tmpfs at `dir` for a test that fills it (root only); unmounted by its destructor.
class SmallDisk {
public:
    explicit SmallDisk(const QString &dir) : m_dir(dir)
    {
        QDir().mkpath(dir);
        m_mounted = shell(QStringLiteral("mount"), {QStringLiteral("-t"), QStringLiteral("tmpfs"), QStringLiteral("-o"), QStringLiteral("size=8m"),
                                                    QStringLiteral("tmpfs"), dir});
    }
    ~SmallDisk()
    {
        if (m_mounted)
            shell(QStringLiteral("umount"), {QStringLiteral("-l"), m_dir});
    }
    bool mounted() const { return m_mounted; }
    // Fills the file system to its last byte with a filler file; freed by free().
    void fill() const
    {
        QProcess dd;
        dd.start(QStringLiteral("dd"), {QStringLiteral("if=/dev/zero"), QStringLiteral("of=") + m_dir + QStringLiteral("/filler"), QStringLiteral("bs=4k")});
        dd.waitForFinished(60000); // ends with "No space left on device"
    }
    bool free() const { return QFile::remove(m_dir + QStringLiteral("/filler")); }
    bool readOnly(bool ro) const
    {
        return shell(QStringLiteral("mount"), {QStringLiteral("-o"), ro ? QStringLiteral("remount,ro") : QStringLiteral("remount,rw"), m_dir});
    }

private:
    QString m_dir;
    bool m_mounted = false;
};

// An ext4 file system in an image on a loop device, mounted at `dir` with errors=remount-ro (root
// only): trip() makes the kernel report an error on it, and the kernel turns it read-only under
// the open history, as after an I/O error. (`mount -o remount,ro` is refused, "busy", while a
// file on it is open for writing — the history always is — so it cannot stand in.) It stays
// read-only until unmounted; mountAgain() mounts it afresh for reading what is on the disk.
class ErrorProneDisk {
public:
    ErrorProneDisk(const QString &image, const QString &dir) : m_image(image), m_dir(dir)
    {
        QDir().mkpath(dir);
        QFile f(image);
        if (!f.open(QIODevice::WriteOnly) || !f.resize(64 << 20))
            return;
        f.close();
        QProcess losetup;
        losetup.start(QStringLiteral("losetup"), {QStringLiteral("--find"), QStringLiteral("--show"), image});
        if (!losetup.waitForFinished(30000) || losetup.exitCode() != 0)
            return;
        m_loop = QString::fromUtf8(losetup.readAllStandardOutput()).trimmed();
        m_mounted = shell(QStringLiteral("mkfs.ext4"), {QStringLiteral("-q"), m_loop}) && mount();
    }
    ~ErrorProneDisk()
    {
        if (m_mounted)
            shell(QStringLiteral("umount"), {QStringLiteral("-l"), m_dir});
        if (!m_loop.isEmpty())
            shell(QStringLiteral("losetup"), {QStringLiteral("-d"), m_loop});
    }
    bool mounted() const { return m_mounted; }
    QString why() const
    {
        return m_loop.isEmpty() ? QStringLiteral("no loop device could be set up for %1").arg(m_image)
                                : QStringLiteral("%1 could not be made an ext4 file system and mounted").arg(m_loop);
    }
    // The kernel's own error path (ext4's trigger_fs_error): the journal is aborted and the file
    // system is read-only from then on.
    bool trip() const
    {
        QFile trigger(QStringLiteral("/sys/fs/ext4/%1/trigger_fs_error").arg(QFileInfo(m_loop).fileName()));
        return trigger.open(QIODevice::WriteOnly) && trigger.write("trellis test\n") > 0;
    }
    bool readOnly() const
    {
        QFile mounts(QStringLiteral("/proc/mounts"));
        if (!mounts.open(QIODevice::ReadOnly))
            return false;
        for (const QByteArray &line : mounts.readAll().split('\n'))
            if (const QList<QByteArray> f = line.split(' '); f.size() > 3 && f[1] == QFile::encodeName(m_dir))
                return f[3].split(',').contains("ro") || f[3].contains("emergency_ro");
        return false;
    }
    bool mountAgain()
    {
        m_mounted = !shell(QStringLiteral("umount"), {m_dir});
        return !m_mounted && (m_mounted = mount());
    }

private:
    bool mount() const
    {
        return shell(QStringLiteral("mount"), {QStringLiteral("-o"), QStringLiteral("errors=remount-ro"), m_loop, m_dir});
    }
    QString m_image, m_dir, m_loop;
    bool m_mounted = false;
};

// A plan of `steps` on 2 data-parallel ranks of the tiny model (a few ms a step).
QString tinyPlan(const QString &path, int steps)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write(QStringLiteral(R"({"schema": "trellis.plan/1", "name": "tiny",
      "model": {"layers": 2, "hidden": 64, "heads": 4, "ffn": 256, "seq_len": 64, "vocab": 256},
      "cluster": {"nodes": [{"host": "localhost", "slots": 2}]},
      "parallel": {"dp": 2, "micro_batch_size": 2},
      "training": {"steps": %1, "lr": 0.003, "min_lr": 0.0003, "seed": 7,
                   "data": {"source": "text", "path": "%2"}}})")
                .arg(steps)
                .arg(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt"))
                .toUtf8());
    return path;
}

} // namespace

class TstHistoryFaults : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    trellis::test::HistoryEngines m_server;
    bool m_root = ::geteuid() == 0;

    QString rootReason() const
    {
        return QStringLiteral("needs root to mount a small tmpfs (CI and this project's machines run as root)");
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        // Spools and a server history's run folders go to the suite's own data folder.
        qputenv("XDG_DATA_HOME", QFile::encodeName(m_dir.filePath(QStringLiteral("data"))));
        qputenv("TRELLIS_TEST_HISTORY", "postgresql");
        QCOMPARE(m_server.start(), QString());
    }
    void cleanupTestCase() { m_server.stop(); }

    // The user's report: the history's disk fills mid-run and is freed 3 s later. Nothing the
    // writer could not commit is acknowledged; it is kept (the ranks keep theirs too) and written
    // once the disk has room, so every rank's every step is there, once.
    void aFullDiskLosesNothing()
    {
        if (!m_root)
            QSKIP(qPrintable(rootReason()));
        SmallDisk disk(m_dir.filePath(QStringLiteral("full")));
        QVERIFY(disk.mounted());
        const QString db = m_dir.filePath(QStringLiteral("full/history.sqlite"));
        QProcess supervisor;
        supervisor.start(kCli, simulateArgs(db, QStringLiteral("full-disk"), 4, 8));
        QVERIFY(reached(db, QStringLiteral("full-disk"), 20));
        disk.fill();
        QTest::qWait(3000);
        QVERIFY(disk.free());
        // The fault bit (the writer saw the full disk) and was said, and its end too.
        const QString wrong = endedWithEveryStep(supervisor, db, QStringLiteral("full-disk"), 4,
                                                 {QStringLiteral("cannot be written"), QStringLiteral("takes writes again")});
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
    }

    // The history's file system turns read-only mid-run, as ext4 does after an I/O error, and stays
    // so: the real trainer trains on to its end (exit 3, not a failed run, no hang: every rank said
    // goodbye); what could not be written is said with the reason, never acknowledged as stored.
    // Mounted again, the history holds what was acknowledged before the error — every rank's steps
    // from 1, none missing — on the disk, not only in a page cache the error threw away
    // (synchronous=FULL; with NORMAL the history here was empty).
    void aFileSystemTurnedReadOnlyMidRunKeepsWhatWasAcknowledged()
    {
        if (!m_root)
            QSKIP(qPrintable(rootReason()));
        ErrorProneDisk disk(m_dir.filePath(QStringLiteral("ext4.img")), m_dir.filePath(QStringLiteral("ext4")));
        QVERIFY2(disk.mounted(), qPrintable(disk.why()));
        const QString db = m_dir.filePath(QStringLiteral("ext4/history.sqlite"));
        const QString plan = tinyPlan(m_dir.filePath(QStringLiteral("tiny.json")), 800);
        QProcess supervisor;
        supervisor.start(kCli, {QStringLiteral("--db"), db, QStringLiteral("run"), plan, QStringLiteral("--quiet"), QStringLiteral("--run-id"), QStringLiteral("ro")});
        QVERIFY(reached(db, QStringLiteral("ro"), 50));
        QVERIFY(disk.trip());
        QVERIFY(disk.readOnly());
        QVERIFY(supervisor.waitForFinished(120000));
        const QString out = QString::fromUtf8(supervisor.readAllStandardOutput());
        const QString err = QString::fromUtf8(supervisor.readAllStandardError());
        QVERIFY2(supervisor.exitCode() == 3 && out.contains(QStringLiteral("completed 800 steps")), qPrintable(out + err));
        QVERIFY2(err.contains(QStringLiteral("cannot be written")) && err.contains(QStringLiteral("could not take the run's last rows")) &&
                     err.contains(QStringLiteral("never acknowledged as stored")),
                 qPrintable(err));
        QVERIFY(disk.mountAgain());
        HistoryDatabase h;
        QCOMPARE(h.open(db, false), QString());
        QSqlQuery check(h.connection());
        QVERIFY(check.exec(QStringLiteral("PRAGMA integrity_check")) && check.next());
        QCOMPARE(check.value(0).toString(), QStringLiteral("ok"));
        const auto run = h.findRun(QStringLiteral("ro"));
        QVERIFY2(run, "nothing of the run is on the disk: acknowledged commits were lost with the file system");
        QVERIFY2(run->stepsDone >= 50 && run->stepsDone < 800, qPrintable(QString::number(run->stepsDone)));
        const QMap<int, QSet<qint64>> steps = stepsByRank(*h.loadRun(run->id));
        QCOMPARE(steps.size(), 2);
        // Each rank's steps from 1, none missing; the run's count is its furthest rank's (a rank's
        // telemetry may lag another's when the disk goes), and no more than is stored.
        qint64 furthest = 0;
        for (auto it = steps.begin(); it != steps.end(); ++it) {
            const qint64 newest = *std::max_element(it->begin(), it->end());
            furthest = std::max(furthest, newest);
            QVERIFY2(it->size() == newest, qPrintable(QStringLiteral("rank %1: %2 steps stored up to step %3").arg(it.key()).arg(it->size()).arg(newest)));
        }
        QVERIFY2(furthest >= run->stepsDone, qPrintable(QStringLiteral("the run says %1 steps, its ranks' furthest stored step is %2")
                                                            .arg(run->stepsDone)
                                                            .arg(furthest)));
    }

    // A history whose first write fails is refused at once, with its path and the reason, before
    // any rank starts; nothing is made there.
    void aHistoryThatCannotBeWrittenIsRefusedAtStart_data()
    {
        QTest::addColumn<bool>("readOnly");
        QTest::newRow("full disk") << false;
        QTest::newRow("read-only file system") << true;
    }
    void aHistoryThatCannotBeWrittenIsRefusedAtStart()
    {
        QFETCH(bool, readOnly);
        if (!m_root)
            QSKIP(qPrintable(rootReason()));
        const QString folder = m_dir.filePath(readOnly ? QStringLiteral("ro") : QStringLiteral("nospace"));
        SmallDisk disk(folder);
        QVERIFY(disk.mounted());
        const QString db = folder + QStringLiteral("/history.sqlite");
        QVERIFY(cli(simulateArgs(db, QStringLiteral("before"), 1, 1)).code == 0); // a history with a run in it
        if (readOnly)
            QVERIFY(disk.readOnly(true));
        else
            disk.fill();
        const Result r = cli(simulateArgs(db, QStringLiteral("refused"), 2, 2), 60000);
        // The first write of the run (its plan, beside the history) or of the history itself fails:
        // refused with the path and the system's reason.
        QVERIFY2(r.code != 0, qPrintable(failure(r)));
        const QString reason = readOnly ? QStringLiteral("Read-only file system") : QStringLiteral("No space left on device");
        QVERIFY2(r.err.contains(folder) && r.err.contains(reason), qPrintable(failure(r)));
        QVERIFY2(!r.out.contains(QStringLiteral("rank")), qPrintable(r.out));
        {
            // The history writer's own first write, which a supervisor makes before any rank starts.
            HistoryWriter writer(db);
            const QString e = writer.start();
            QVERIFY2(e.contains(db) && e.contains(QStringLiteral("cannot be written")) &&
                         (e.contains(QStringLiteral("full")) || e.contains(QStringLiteral("read"))),
                     qPrintable(e));
        }
        if (readOnly)
            disk.readOnly(false);
        disk.free();
        HistoryDatabase h;
        QCOMPARE(h.open(db, false), QString());
        QVERIFY(h.findRun(QStringLiteral("before")));
        QVERIFY(!h.findRun(QStringLiteral("refused")));
    }

    // One row the database refuses for its own data (here a trigger refusing rank 1's hello) cannot
    // block the history: it is retried a few times, then given up alone — said in the run's events
    // and counted as lost at its rank — while everything else of the run is stored.
    void aRowThatAlwaysFailsIsGivenUpAlone()
    {
        const QString db = m_dir.filePath(QStringLiteral("poisoned.sqlite"));
        QCOMPARE(applySql(db, {"CREATE TRIGGER refuse_rank_1 BEFORE INSERT ON ranks WHEN NEW.rank = 1 AND NEW.host IS NOT NULL "
                               "AND NEW.host <> '' BEGIN SELECT RAISE(ABORT, 'rank 1 refused by the test'); END"}),
                 QString());
        const Result r = cli(simulateArgs(db, QStringLiteral("poisoned"), 3, 3));
        QVERIFY2(r.code == 0, qPrintable(failure(r)));
        HistoryDatabase h;
        QCOMPARE(h.open(db, false), QString());
        const auto run = h.findRun(QStringLiteral("poisoned"));
        QVERIFY(run);
        QCOMPARE(run->status, QStringLiteral("completed"));
        const auto data = h.loadRun(run->id);
        const QMap<int, QSet<qint64>> steps = stepsByRank(*data);
        QCOMPARE(steps.size(), 3);
        for (const QSet<qint64> &mine : steps)
            QCOMPARE(mine.size(), run->stepsDone); // the rest of the run, rank 1's steps included, is all there
        for (const RankRow &rank : data->ranks)
            QCOMPARE(rank.lost, rank.rank == 1 ? 1 : 0); // its hello, counted as lost at rank 1
        const QString said = historyEvents(db, QStringLiteral("poisoned"));
        QVERIFY2(said.contains(QStringLiteral("refused the rank of run poisoned (rank 1) 5 times")) &&
                     said.contains(QStringLiteral("rank 1 refused by the test")) && said.contains(QStringLiteral("given up")),
                 qPrintable(said));
    }

    // The history stays locked longer than the writer may keep rows in memory (its bound set low):
    // the oldest telemetry is given up — counted as lost at each rank, said — and never claimed
    // stored; everything else is written once the lock goes.
    void theMemoryBoundGivesUpCountedNeverStored()
    {
        const QString db = m_dir.filePath(QStringLiteral("bounded.sqlite"));
        QProcess supervisor;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("TRELLIS_HISTORY_MAX_KEPT_OPS"), QStringLiteral("30"));
        supervisor.setProcessEnvironment(env);
        supervisor.start(kCli, simulateArgs(db, QStringLiteral("bounded"), 3, 10));
        if (!reached(db, QStringLiteral("bounded"), 10)) // what the supervisor said, and whether it is still there
            QFAIL(qPrintable(QStringLiteral("the run never reached step 10 in the history; the supervisor is %1 and said: %2")
                                 .arg(supervisor.state() == QProcess::Running ? QStringLiteral("running")
                                                                              : QStringLiteral("gone (exit %1)").arg(supervisor.exitCode()),
                                      QString::fromUtf8(supervisor.readAllStandardError()).right(3000))));
        QCOMPARE(holdLocked(db, 7000), QString());
        QVERIFY(supervisor.waitForFinished(90000));
        QVERIFY2(supervisor.exitCode() == 0, supervisor.readAllStandardError().constData());
        HistoryDatabase h;
        QCOMPARE(h.open(db, false), QString());
        const auto run = h.findRun(QStringLiteral("bounded"));
        QVERIFY(run);
        QCOMPARE(run->status, QStringLiteral("completed"));
        const auto data = h.loadRun(run->id);
        const QMap<int, QSet<qint64>> steps = stepsByRank(*data);
        qint64 missing = 0;
        for (const RankRow &rank : data->ranks) {
            const qint64 gone = run->stepsDone - steps.value(rank.rank).size();
            missing += gone;
            // Every step not stored is counted as lost at its rank (with the rank's other reports given up).
            QVERIFY2(rank.lost >= gone, qPrintable(QStringLiteral("rank %1: %2 steps missing, %3 counted lost").arg(rank.rank).arg(gone).arg(rank.lost)));
            QCOMPARE(rank.goodbyeSeq + 1, rank.receivedSeq);
        }
        QVERIFY2(missing > 0, "the bound was never reached: the test did not test it");
        QVERIFY2(storedReports(h, run->id) == 3 * run->stepsDone - missing, "a step stored twice");
        const QString said = historyEvents(db, QStringLiteral("bounded"));
        QVERIFY2(said.contains(QStringLiteral("memory bound (30 operations)")) && said.contains(QStringLiteral("counted as lost")), qPrintable(said));
    }

    // Every rank has trained its last step and said goodbye, and waits for its history to take
    // its telemetry (locked here past the hang timeout): no step will finish again, yet nothing is
    // hung — the run completes with every step once once the lock goes, no hang said. (Before, the
    // "no step finished" backstop ended such a run as a hang.)
    void ranksThatSaidGoodbyeAreNoHang()
    {
        const QString db = m_dir.filePath(QStringLiteral("goodbye.sqlite"));
        QProcess supervisor;
        supervisor.start(kCli, simulateArgs(db, QStringLiteral("goodbye"), 2, 2) << QStringLiteral("--hang-timeout") << QStringLiteral("2"));
        QVERIFY(reached(db, QStringLiteral("goodbye"), 1));
        QCOMPARE(holdLocked(db, 8000), QString()); // the run's 2 s end under it, then 6 s of waiting
        const QString wrong = endedWithEveryStep(supervisor, db, QStringLiteral("goodbye"), 2, {QStringLiteral("locked")});
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
        HistoryDatabase h;
        QCOMPARE(h.open(db, false), QString());
        const auto data = h.loadRun(h.findRun(QStringLiteral("goodbye"))->id);
        QVERIFY(data);
        for (const EventRow &e : data->events)
            QVERIFY2(e.kind != QLatin1String("hang") && e.kind != QLatin1String("stall"), qPrintable(e.message));
    }

    // PostgreSQL refuses the step blocks' COPY for 2 s (a trigger raising): the transaction fails as
    // a whole, nothing of it is acknowledged, and it is written again once the COPY goes through.
    void aFailingStepCopyLosesNothing()
    {
        const QString url = m_server.fresh(m_dir, {});
        QVERIFY(!url.isEmpty());
        QCOMPARE(applySql(url, {"CREATE TABLE fault(armed BOOLEAN NOT NULL)", "INSERT INTO fault VALUES(false)",
                                "CREATE FUNCTION refuse_blocks() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                                "IF (SELECT armed FROM fault) THEN RAISE EXCEPTION 'step blocks refused by the test'; END IF; "
                                "RETURN NEW; END $$",
                                "CREATE TRIGGER refuse_blocks BEFORE INSERT ON step_blocks FOR EACH ROW EXECUTE FUNCTION refuse_blocks()"}),
                 QString());
        QProcess supervisor;
        supervisor.start(kCli, simulateArgs(url, QStringLiteral("copy-fails"), 3, 6));
        QVERIFY(reached(url, QStringLiteral("copy-fails"), 20));
        QVERIFY(armFault(url, true));
        QTest::qWait(2000);
        QVERIFY(armFault(url, false));
        const QString wrong = endedWithEveryStep(supervisor, url, QStringLiteral("copy-fails"), 3,
                                                 {QStringLiteral("step blocks refused by the test"), QStringLiteral("takes writes again")});
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
    }

    // The server stops between a transaction's statements and its commit (a deferred trigger
    // holds the commit for 3 s; the server is stopped meanwhile): the commit's answer never came,
    // so nothing of it is acknowledged; it is spooled and merged once the server is back, once.
    void aServerStoppedBeforeCommitLosesNothing()
    {
        const QString url = m_server.fresh(m_dir, {});
        QVERIFY(!url.isEmpty());
        QCOMPARE(applySql(url, {"CREATE TABLE fault(armed BOOLEAN NOT NULL)", "INSERT INTO fault VALUES(false)",
                                "CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                                "IF (SELECT armed FROM fault) THEN PERFORM pg_sleep(3); END IF; RETURN NULL; END $$",
                                "CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON step_blocks DEFERRABLE INITIALLY DEFERRED "
                                "FOR EACH ROW EXECUTE FUNCTION slow_commit()"}),
                 QString());
        QProcess supervisor;
        supervisor.start(kCli, simulateArgs(url, QStringLiteral("stopped-in-commit"), 3, 8));
        QVERIFY(reached(url, QStringLiteral("stopped-in-commit"), 20));
        QVERIFY(armFault(url, true));
        QTest::qWait(1500); // the writer's next commit is now waiting in the trigger
        QVERIFY(m_server.down());
        QTest::qWait(1000);
        QVERIFY(m_server.up());
        QVERIFY(armFault(url, false));
        const QString wrong = endedWithEveryStep(supervisor, url, QStringLiteral("stopped-in-commit"), 3,
                                                 {QStringLiteral("cannot be reached"), QStringLiteral("reachable again")});
        QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
    }

    // A run ends while its server is away, leaving a spool; two supervisors start at the same
    // moment once it is back, and both take the leftover spool up. Held at the server until both
    // wait on it, they merge it once between them: every step once, every event once.
    void twoSupervisorsMergeOneSpoolOnce()
    {
        const QString url = m_server.fresh(m_dir, {});
        QVERIFY(!url.isEmpty());
        const QDir spool(m_dir.filePath(QStringLiteral("data/trellis/spool")));
        QProcess first;
        first.start(kCli, simulateArgs(url, QStringLiteral("merged-once"), 2, 3));
        QVERIFY(reached(url, QStringLiteral("merged-once"), 10));
        QVERIFY(m_server.down());
        QVERIFY(first.waitForFinished(60000));
        QCOMPARE(first.exitCode(), 0);
        const QStringList left = spool.entryList({QStringLiteral("*.sqlite")}, QDir::Files);
        QVERIFY(!left.isEmpty());
        QVERIFY(m_server.up());
        // Both supervisors' merges wait on spool_merges until the test lets them go together.
        QSqlDatabase gate = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), QStringLiteral("gate"));
        {
            ServerConnection c;
            parseServerConnection(url, &c);
            gate.setHostName(c.host);
            gate.setPort(c.port.toInt());
            gate.setDatabaseName(c.dbname);
            gate.setUserName(c.user);
        }
        QVERIFY2(gate.open(), qPrintable(gate.lastError().text()));
        QProcess a, b;
        {
            QSqlQuery lock(gate);
            QVERIFY(gate.transaction());
            QVERIFY2(lock.exec(QStringLiteral("LOCK TABLE spool_merges IN ACCESS EXCLUSIVE MODE")), qPrintable(lock.lastError().text()));
            a.start(kCli, simulateArgs(url, QStringLiteral("merger-a"), 1, 1));
            b.start(kCli, simulateArgs(url, QStringLiteral("merger-b"), 1, 1));
            QTest::qWait(3000);
            QVERIFY(gate.commit());
        }
        gate.close();
        QSqlDatabase::removeDatabase(QStringLiteral("gate"));
        QVERIFY(a.waitForFinished(60000) && b.waitForFinished(60000));
        QVERIFY2(a.exitCode() == 0 && b.exitCode() == 0, (a.readAllStandardError() + b.readAllStandardError()).constData());
        const QString missing = everyStepOnce(url, QStringLiteral("merged-once"), 2);
        QVERIFY2(missing.isEmpty(), qPrintable(missing));
        HistoryDatabase h;
        QCOMPARE(h.open(url, false), QString());
        const auto data = h.loadRun(h.findRun(QStringLiteral("merged-once"))->id);
        QSet<QString> events;
        for (const EventRow &e : data->events) {
            const QString key = QStringLiteral("%1|%2|%3|%4").arg(e.kind, e.message).arg(e.step).arg(e.rank);
            QVERIFY2(!events.contains(key), qPrintable(QStringLiteral("an event twice: ") + key));
            events.insert(key);
        }
        QVERIFY(spool.entryList({QStringLiteral("*.sqlite")}, QDir::Files).isEmpty());
        for (const QString &merger : {QStringLiteral("merger-a"), QStringLiteral("merger-b")})
            QVERIFY2(!historyEvents(url, merger).contains(QStringLiteral("cannot be written to the history server")), qPrintable(historyEvents(url, merger)));
    }

    // A spool merged after its run went on and ended on the server (another supervisor merged a
    // later spool first, or the run was adopted and finished there): nothing moves backwards — the
    // run stays completed with its end, each rank's cursor where the server has it.
    void aSpoolMergedLateMovesNothingBackwards()
    {
        const QString url = m_server.fresh(m_dir, {});
        QVERIFY(!url.isEmpty());
        QVERIFY(cli(simulateArgs(url, QStringLiteral("went-on"), 2, 1)).code == 0);
        HistoryDatabase server;
        QCOMPARE(server.open(url, false), QString());
        const auto before = server.findRun(QStringLiteral("went-on"));
        QCOMPARE(before->status, QStringLiteral("completed"));
        const auto beforeRanks = server.loadRun(before->id)->ranks;
        // A spool of an earlier moment of the same run: running, cursors behind.
        const QString path = m_dir.filePath(QStringLiteral("late-spool.sqlite"));
        HistoryDatabase spool;
        QCOMPARE(spool.open(path), QString());
        QCOMPARE(spoolRuns(spool, {QStringLiteral("went-on")}), QString());
        QSqlQuery q(spool.connection());
        QVERIFY(q.exec(QStringLiteral("UPDATE runs SET status = 'running', ended_at = NULL")));
        QVERIFY(q.exec(QStringLiteral("INSERT INTO ranks(run, rank, received_seq) SELECT id, 0, 3 FROM runs")));
        QVERIFY(q.exec(QStringLiteral("INSERT INTO ranks(run, rank, received_seq) SELECT id, 1, 3 FROM runs")));
        q.finish();
        QCOMPARE(mergeSpool(spool, server), QString());
        const auto after = server.findRun(QStringLiteral("went-on"));
        QCOMPARE(after->status, QStringLiteral("completed"));
        QCOMPARE(after->endedAt, before->endedAt);
        const auto afterRanks = server.loadRun(after->id)->ranks;
        QCOMPARE(afterRanks.size(), beforeRanks.size());
        for (int i = 0; i < afterRanks.size(); ++i)
            QCOMPARE(afterRanks[i].receivedSeq, beforeRanks[i].receivedSeq);
    }
};

QTEST_GUILESS_MAIN(TstHistoryFaults)
#include "tst_history_faults.moc"
