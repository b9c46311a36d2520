// In-memory checkpoints across real hosts (tests/support/ssh_hosts_fixture.h: two network
// namespaces, each its own sshd and address; /dev/shm is this machine's, each host's store named
// by its host): every node's holder keeps its ranks' shards and sends them to the other's, over
// TCP with CURVE. A node lost whole — its ranks killed mid-run, its holder killed, its memory store
// gone — is restored from its copy on the other node: the restart gathers the shards over MPI and
// every rank resumes from memory, nothing read from the disk, and the run ends with the losses of
// an uninterrupted run. With that copy lost too, the run resumes from the disk. No store is left
// behind, by a run that completes or by one that fails for good. Skips (saying why) where namespaces or sshd are not available.
#include "tests/support/ssh_hosts_fixture.h"
#include "backend/protocol/memory_store_path.h"
#include "launcher/history/history_database.h"

#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QScopeGuard>
#include <QTest>

#include <csignal>
#include <map>
#include <optional>

using namespace trellis::test;

class TstSshMemoryCheckpoints : public QObject, protected SshHostsFixture {
    Q_OBJECT

    // The test plan with in-memory checkpoints every step (the newest 2 kept), disk checkpoints
    // every `diskEvery` steps and one restart.
    QString memoryPlan(const QString &name, const QString &known, const QString &target, int steps, int diskEvery)
    {
        const QString path = writePlan(name, known, {}, 2, 2, {}, target);
        QFile f(path);
        f.open(QIODevice::ReadOnly);
        QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
        f.close();
        QJsonObject training = root[QStringLiteral("training")].toObject();
        training[QStringLiteral("steps")] = steps;
        training[QStringLiteral("checkpoint")] =
            QJsonObject{{QStringLiteral("every"), diskEvery},
                        {QStringLiteral("keep"), 2},
                        {QStringLiteral("dir"), m_dir.filePath(name + QStringLiteral("-ckpt"))},
                        {QStringLiteral("memory"), QJsonObject{{QStringLiteral("every"), 1}, {QStringLiteral("keep"), 2}}}};
        root[QStringLiteral("training")] = training;
        QJsonObject launch = root[QStringLiteral("launch")].toObject();
        launch[QStringLiteral("restart")] = QJsonObject{{QStringLiteral("max_restarts"), 1}, {QStringLiteral("backoff_s"), 0.2}};
        root[QStringLiteral("launch")] = launch;
        f.open(QIODevice::WriteOnly | QIODevice::Truncate);
        f.write(QJsonDocument(root).toJson());
        return path;
    }

    // A host's memory store for the run `runId` (its checkpoint folder is in the host's run folder).
    QString storeOn(int host, const QString &runId)
    {
        const QString dir = m_dir.filePath(QStringLiteral("h%1/runs/%2/checkpoints").arg(host).arg(runId));
        return QStringLiteral("/dev/shm/") +
               QString::fromStdString(trellis::proto::memoryStoreName(dir.toStdString(), QStringLiteral("host%1").arg(host).toStdString()));
    }

    // The pid of the holder of `store` (0: none).
    static qint64 holderOf(const QString &store)
    {
        for (const QString &pid : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
            QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
            if (pid.toLongLong() > 0 && cmdline.open(QIODevice::ReadOnly)) {
                const QList<QByteArray> args = cmdline.readAll().split('\0');
                if (args.contains("--hold-checkpoints") && args.contains(store.toUtf8()))
                    return pid.toLongLong();
            }
        }
        return 0;
    }

private slots:
    void initTestCase()
    {
        if (const QString why = upHosts(); !why.isEmpty())
            QSKIP(qPrintable(why));
    }

    void cleanupTestCase() { downHosts(); }

    void aLostNodeIsRestoredFromItsPeerCopy_data()
    {
        QTest::addColumn<bool>("peerCopyLostToo");
        QTest::newRow("from the peer copy") << false;
        QTest::newRow("both copies lost: the disk") << true;
    }

    void aLostNodeIsRestoredFromItsPeerCopy()
    {
        QFETCH(bool, peerCopyLostToo);
        const QString known = acceptedKnownHosts();
        const int steps = 24;
        const QString tag = peerCopyLostToo ? QStringLiteral("both") : QStringLiteral("peer");
        const QString plan = memoryPlan(QStringLiteral("memory-hosts-") + tag, known, QStringLiteral("ssh"), steps, 4);
        const QString local = memoryPlan(QStringLiteral("memory-local-") + tag, known, QStringLiteral("local"), steps, 100);
        const QString db = m_dir.filePath(QStringLiteral("memory-%1.db").arg(tag));
        const Result reference = cli({QStringLiteral("--db"), db, QStringLiteral("run"), local, QStringLiteral("--quiet")}, 300000);
        QVERIFY2(reference.code == 0, qPrintable(reference.err));

        // Rank 0 slowed by 200 ms a step, so the node's loss lands mid-run.
        QProcess run;
        run.start(QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-cli"), {QStringLiteral("--db"), db, QStringLiteral("run"), plan,
                                                                          QStringLiteral("--quiet"), QStringLiteral("--inject"),
                                                                          QStringLiteral("slow@0:1")});
        QVERIFY(run.waitForStarted());
        QString runId;
        QList<qint64> host2Ranks;
        QElapsedTimer waited;
        waited.start();
        // Past step 10, and host1 keeps a copy of host2's shards (the ring works).
        while (waited.elapsed() < 120000 && run.state() == QProcess::Running) {
            QTest::qWait(100);
            trellis::launcher::HistoryDatabase h;
            if (!h.open(db, false).isEmpty())
                continue;
            const auto last = h.findRun(QStringLiteral("last"));
            if (!last || !last->name.startsWith(QStringLiteral("memory-hosts")) || last->stepsDone < 10)
                continue;
            const auto data = h.loadRun(last->id);
            if (!data)
                continue;
            runId = data->run.runId;
            host2Ranks.clear();
            for (const auto &rank : data->ranks)
                if (rank.host == QStringLiteral("host2"))
                    host2Ranks << rank.pid;
            if (host2Ranks.size() == 2 && !QDir(storeOn(1, runId) + QStringLiteral("/peer")).entryList({QStringLiteral("step-*")}).isEmpty())
                break;
        }
        const QString store1 = storeOn(1, runId), store2 = storeOn(2, runId);
        QVERIFY2(host2Ranks.size() == 2 && QFileInfo::exists(store2),
                 qPrintable(QStringLiteral("the run never reached step 10 with a copy on host1: ") + QString::fromUtf8(run.readAllStandardError()) +
                            QStringLiteral("\nhost1's ring log:\n") + readAll(store1 + QStringLiteral("/ring.log")) +
                            QStringLiteral("\nhost2's ring log:\n") + readAll(store2 + QStringLiteral("/ring.log"))));
        QVERIFY2(!QDir(store1 + QStringLiteral("/peer")).entryList({QStringLiteral("step-*")}).isEmpty(),
                 qPrintable(QStringLiteral("no peer copy on host1; its ring log: ") + readAll(store1 + QStringLiteral("/ring.log"))));
        // host2 lost: its ranks stopped first (no save of theirs lands after this), its holder and its
        // memory gone, then its ranks killed.
        for (const qint64 pid : host2Ranks)
            QVERIFY(::kill(static_cast<pid_t>(pid), SIGSTOP) == 0);
        const qint64 holder2 = holderOf(store2);
        QVERIFY(holder2 > 0);
        QVERIFY(::kill(static_cast<pid_t>(holder2), SIGKILL) == 0);
        QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(QStringLiteral("/proc/%1").arg(holder2)), 5000);
        QVERIFY(QDir(store2).removeRecursively());
        if (peerCopyLostToo)
            QVERIFY(QDir(store1 + QStringLiteral("/peer")).removeRecursively());
        for (const qint64 pid : host2Ranks)
            ::kill(static_cast<pid_t>(pid), SIGKILL);
        QVERIFY(run.waitForFinished(240000));
        const QString err = QString::fromUtf8(run.readAllStandardError());
        QVERIFY2(run.exitCode() == 0, qPrintable(err));

        trellis::launcher::HistoryDatabase h;
        QCOMPARE(h.open(db, false), QString());
        std::optional<trellis::launcher::RunData> straight, restarted;
        for (const auto &r : h.listRuns()) {
            if (r.name.startsWith(QStringLiteral("memory-local")))
                straight = h.loadRun(r.id);
            if (r.name.startsWith(QStringLiteral("memory-hosts")))
                restarted = h.loadRun(r.id);
        }
        QVERIFY(straight && restarted);
        const auto removeRunFolders = qScopeGuard([&] {
            for (const QString &hostDir : {QStringLiteral("h1/runs/"), QStringLiteral("h2/runs/")})
                QDir(m_dir.filePath(hostDir + runId)).removeRecursively();
        });
        QCOMPARE(restarted->run.status, QStringLiteral("completed"));
        QStringList story;
        QString resumed;
        for (const auto &e : restarted->events) {
            if (e.kind != QStringLiteral("checkpoint"))
                story << QStringLiteral("%1 %2: %3").arg(e.kind).arg(e.step).arg(e.message);
            if (e.kind == QStringLiteral("restart") && e.message.startsWith(QStringLiteral("resumed from")))
                resumed = e.message;
        }
        const QString whole = story.join(QLatin1Char('\n'));
        if (peerCopyLostToo) {
            // Nothing whole in memory: the disk's newest (every 4 steps), said why.
            QVERIFY2(resumed.contains(QStringLiteral("(no newer complete in-memory checkpoint in ")) &&
                         resumed.contains(QStringLiteral("none whole across the 2 nodes' stores and their peer copies")),
                     qPrintable(whole));
        } else {
            // From memory: host2's shards from its copy on host1, over MPI.
            QVERIFY2(resumed.startsWith(QStringLiteral("resumed from memory: ")) && resumed.contains(QStringLiteral(" from peer copies)")) &&
                         !resumed.contains(QStringLiteral(" 0 from peer copies")),
                     qPrintable(whole));
        }
        // The loss of every step (the last stage's), against the run that was never interrupted.
        const auto lossA = lossesOf(db, straight->run.runId, 3), lossB = lossesOf(db, runId, 3);
        QCOMPARE(lossA.size(), std::size_t(steps));
        QCOMPARE(lossB.size(), std::size_t(steps));
        const QString differ = lossesDiffer(lossB, lossA, QStringLiteral("over ssh, resumed"));
        QVERIFY2(differ.isEmpty(), qPrintable(differ + QLatin1Char('\n') + whole));
        // Both stores go with the run (the ranks' done marker; their holders end).
        QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(store1) && !QFileInfo::exists(store2), 10000);
    }

    // A run that fails for good (a rank on host2 crashes, no restart left): its ranks never say they
    // are done, so each host's store would wait out its holder's 600 s lease; the supervisor has every
    // host give its store back before the run is recorded failed.
    void aRunThatFailsForGoodGivesEveryHostsStoreBack()
    {
        const QString plan = memoryPlan(QStringLiteral("memory-fails"), acceptedKnownHosts(), QStringLiteral("ssh"), 40, 100);
        QFile f(plan);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
        f.close();
        QJsonObject launch = root[QStringLiteral("launch")].toObject();
        launch[QStringLiteral("restart")] = QJsonObject{{QStringLiteral("max_restarts"), 0}};
        root[QStringLiteral("launch")] = launch;
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(QJsonDocument(root).toJson());
        f.close();
        const QString db = m_dir.filePath(QStringLiteral("memory-fails.db"));
        QProcess run;
        run.start(QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-cli"),
                  {QStringLiteral("--db"), db, QStringLiteral("run"), plan, QStringLiteral("--quiet"), QStringLiteral("--inject"), QStringLiteral("crash@2:30")});
        QVERIFY(run.waitForStarted());
        QString runId;
        bool bothHeld = false; // each host's store seen with a save in it while the run lived
        QElapsedTimer waited;
        waited.start();
        while (waited.elapsed() < 120000 && run.state() == QProcess::Running && !bothHeld) {
            QTest::qWait(50);
            if (runId.isEmpty()) {
                trellis::launcher::HistoryDatabase h;
                if (!h.open(db, false).isEmpty())
                    continue;
                if (const auto last = h.findRun(QStringLiteral("last")))
                    if (const auto data = h.loadRun(last->id))
                        runId = data->run.runId;
                continue;
            }
            bothHeld = !QDir(storeOn(1, runId)).entryList({QStringLiteral("step-*")}).isEmpty() &&
                       !QDir(storeOn(2, runId)).entryList({QStringLiteral("step-*")}).isEmpty() && holderOf(storeOn(1, runId)) > 0 &&
                       holderOf(storeOn(2, runId)) > 0;
        }
        QVERIFY(run.waitForFinished(240000));
        const QString err = QString::fromUtf8(run.readAllStandardError());
        const auto removeRunFolders = qScopeGuard([&] {
            for (const QString &hostDir : {QStringLiteral("h1/runs/"), QStringLiteral("h2/runs/")})
                QDir(m_dir.filePath(hostDir + runId)).removeRecursively();
        });
        QVERIFY2(bothHeld, qPrintable(QStringLiteral("the hosts' stores were never seen holding a save: ") + err));
        QVERIFY2(run.exitCode() != 0, qPrintable(err));
        // Gone when the run has ended, not 600 s later; their holders with them.
        const QString store1 = storeOn(1, runId), store2 = storeOn(2, runId);
        QVERIFY2(!QFileInfo::exists(store1) && !QFileInfo::exists(store2), qPrintable(err));
        QCOMPARE(holderOf(store1), 0);
        QCOMPARE(holderOf(store2), 0);
        trellis::launcher::HistoryDatabase h;
        QCOMPARE(h.open(db, false), QString());
        const auto data = h.loadRun(h.findRun(QStringLiteral("last"))->id);
        QVERIFY(data);
        QCOMPARE(data->run.status, QStringLiteral("failed"));
        for (const auto &e : data->events)
            QVERIFY2(!e.message.contains(QStringLiteral("not given back")), qPrintable(e.message));
    }
};

QTEST_GUILESS_MAIN(TstSshMemoryCheckpoints)
#include "tst_ssh_memory_checkpoints.moc"
