// In-memory checkpoints (training.checkpoint.memory) under a real mpirun, and the memory store's
// holder on its own: resume from memory and the fallback to the disk, the store's permissions,
// the holder's ends (the run's done, the lease, a release) and its one-per-store lock, the holders' ring. Bitwise resume
// from memory for each layout is a row of tst_checkpoint's bitwiseResume.
#include "tests/backend/trainer/checkpoint/checkpoint_runs.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMap>
#include <QScopeGuard>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <functional>

#include <sys/stat.h>
#include <unistd.h>

namespace {

using namespace trellis::test;

// The pids holding an flock on the file at `path`, read from /proc/locks — a probe that takes no
// lock itself (flock -n would, for an instant, and a holder starting in that instant would leave).
QList<qint64> lockHolders(const QString &path)
{
    struct stat st {};
    if (::stat(path.toLocal8Bit().constData(), &st) != 0)
        return {};
    QFile locks(QStringLiteral("/proc/locks"));
    if (!locks.open(QIODevice::ReadOnly))
        return {};
    QList<qint64> pids;
    const QString inode = QStringLiteral(":%1").arg(quint64(st.st_ino));
    // "1: FLOCK  ADVISORY  WRITE 4242 00:1a:12345 0 EOF" ("->" lines wait for a lock; skipped)
    for (const QByteArray &line : locks.readAll().split('\n')) {
        const QStringList f = QString::fromLatin1(line).split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (f.size() >= 6 && f[1] == QLatin1String("FLOCK") && f[5].endsWith(inode))
            pids.append(f[4].toLongLong());
    }
    return pids;
}

// A store's ring log ("" when there is none).
QString readLog(const QString &store)
{
    QFile f(store + QStringLiteral("/ring.log"));
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

} // namespace

class TstMemoryCheckpoints : public QObject {
    Q_OBJECT
private slots:
    // In-memory checkpoints (training.checkpoint.memory) end to end, on one node: every step a save
    // into the node's memory store in /dev/shm (0700, its files 0600), kept by a holder that outlives
    // the job. Host memory short for an in-memory save's staging buffers (nomem at step 2, when only
    // an in-memory save is due): said, the in-memory checkpoints stop and the store goes, the disk's
    // go on, training as without. A crash at step 5 leaves the store with the save of step 4; a
    // damaged shard there is refused, named, and the disk's step 3 is used; the store lost
    // altogether (the node's memory gone), the disk's too. Every resume follows the uninterrupted
    // run bit for bit, and each run that completes leaves no shared memory behind.
    void inMemoryCheckpointsFallBackToTheDisk()
    {
        QTemporaryDir dir;
        const QString ckpt = dir.filePath(QStringLiteral("ckpt"));
        const QString plan = writePlan(dir.path(), QStringLiteral("p"), 2, 4, 1, 32, ckpt, {}, 0, memoryEvery1(1));
        const QString full = dir.filePath(QStringLiteral("full.loss"));
        const Run short_ = trainer(2, {QStringLiteral("--plan"), plan, QStringLiteral("--inject"), QStringLiteral("nomem@1:2"),
                                       QStringLiteral("--dump-losses"), full});
        QVERIFY2(short_.code == 0, qPrintable(short_.output));
        QVERIFY2(short_.output.contains(QStringLiteral("in-memory checkpoint at step 2 not written: rank 1: not enough host memory for "
                                                       "its staging buffers; in-memory checkpoints stop, disk checkpoints go on")),
                 qPrintable(short_.output));
        const QString store = memoryStoreOf(ckpt);
        QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(store), 5000); // given back
        QVERIFY(QFileInfo::exists(ckpt + QStringLiteral("/step-00000006/meta.json"))); // the disk's went on
        const auto a = readDump<double>(full);
        QCOMPARE(a.size(), size_t(8));

        const auto others = QFileDevice::ReadGroup | QFileDevice::WriteGroup | QFileDevice::ExeGroup | QFileDevice::ReadOther |
                            QFileDevice::WriteOther | QFileDevice::ExeOther;
        auto crashAndResume = [&](const QString &name, const std::function<void()> &meanwhile, const QStringList &expected) {
            QVERIFY(QDir(ckpt).removeRecursively());
            QCOMPARE(trainer(2, {QStringLiteral("--plan"), plan, QStringLiteral("--inject"), QStringLiteral("crash@1:5")}).code, 70);
            QVERIFY(QFileInfo::exists(store + QStringLiteral("/step-00000004/meta.json"))); // it outlived the job
            QCOMPARE(QFileInfo(store).permissions() & others, QFileDevice::Permissions()); // nobody else's
            QCOMPARE(QFileInfo(store + QStringLiteral("/step-00000004/rank-00000.bin")).permissions() & others, QFileDevice::Permissions());
            meanwhile();
            const QString losses = dir.filePath(name + QStringLiteral(".loss"));
            const Run resumed = trainer(2, {QStringLiteral("--plan"), plan, QStringLiteral("--resume"), QStringLiteral("--dump-losses"), losses});
            QVERIFY2(resumed.code == 0, qPrintable(resumed.output));
            for (const QString &line : expected)
                QVERIFY2(resumed.output.contains(line), qPrintable(line + QStringLiteral("\n") + resumed.output));
            const auto b = readDump<double>(losses);
            QCOMPARE(b.size(), size_t(5));
            QVERIFY(std::equal(b.begin(), b.end(), a.end() - 5)); // bit for bit
            QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(store), 5000);
        };
        const QString fromDisk =
            QStringLiteral("resumed from %1/step-00000003 (step 3) (no newer complete in-memory checkpoint in %2)").arg(ckpt, store);
        crashAndResume(
            QStringLiteral("damaged"),
            [&] {
                QFile f(store + QStringLiteral("/step-00000004/rank-00000.bin"));
                QVERIFY(f.open(QIODevice::ReadWrite));
                QVERIFY(f.seek(f.size() / 2));
                char c = 0;
                QVERIFY(f.getChar(&c));
                QVERIFY(f.seek(f.size() / 2));
                QVERIFY(f.putChar(static_cast<char>(c ^ 0x5a)));
            },
            {QStringLiteral("skipping checkpoint: %1/step-00000004/rank-00000.bin: checksum mismatch (the file is corrupt)").arg(store),
             fromDisk});
        if (QTest::currentTestFailed())
            return;
        crashAndResume(QStringLiteral("lost"), [&] { QVERIFY(QDir(store).removeRecursively()); }, {fromDisk});
    }

    // The memory store's holder (trellis-trainer --hold-checkpoints, no MPI): it removes the store
    // and ends when the run says it is done, and when no rank renewed the lease in time; one holder
    // a store; bad arguments are refused, named. --release-checkpoints gives a run's store back.
    void theMemoryStoreHolderEndsWithTheRun()
    {
        const QString store = QStringLiteral("/dev/shm/trellis-%1-ckpt-holdertest%2").arg(::getuid()).arg(QCoreApplication::applicationPid());
        auto hold = [&](const QStringList &more) {
            QProcess p;
            p.start(kTrainer, QStringList{QStringLiteral("--hold-checkpoints"), QStringLiteral("--store"), store} + more);
            p.waitForFinished(10000);
            return std::make_pair(p.exitCode(), QString::fromUtf8(p.readAllStandardError() + p.readAllStandardOutput()));
        };
        auto makeStore = [&] {
            QVERIFY(QDir().mkpath(store));
            QFile lease(store + QStringLiteral("/lease"));
            QVERIFY(lease.open(QIODevice::WriteOnly));
        };
        auto lockHeld = [&] { return !lockHolders(store + QStringLiteral("/holder.lock")).isEmpty(); };
        makeStore();
        QCOMPARE(hold({QStringLiteral("--detach")}).first, 0);
        QTRY_VERIFY_WITH_TIMEOUT(lockHeld(), 5000);
        const QList<qint64> first = lockHolders(store + QStringLiteral("/holder.lock"));
        QCOMPARE(first.size(), 1);
        QCOMPARE(hold({QStringLiteral("--detach")}).first, 0); // another holder: gone, the first keeps it
        QTest::qWait(1500); // past the second one's wait for the lock
        QCOMPARE(lockHolders(store + QStringLiteral("/holder.lock")), first);
        QFile done(store + QStringLiteral("/done"));
        QVERIFY(done.open(QIODevice::WriteOnly));
        done.close();
        QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(store), 5000); // the run said it is done

        makeStore();
        QCOMPARE(hold({QStringLiteral("--lease-s"), QStringLiteral("1"), QStringLiteral("--detach")}).first, 0);
        QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(store), 10000); // no rank renewed the lease for a second

        const auto help = hold({QStringLiteral("--help")});
        QCOMPARE(help.first, 0);
        QVERIFY2(help.second.contains(QStringLiteral("usage: trellis-trainer --hold-checkpoints")), qPrintable(help.second));
        const auto badLease = hold({QStringLiteral("--lease-s"), QStringLiteral("0")});
        QCOMPARE(badLease.first, 2);
        QVERIFY2(badLease.second.contains(QStringLiteral("--lease-s must be 1 to 604800 seconds, got '0'")), qPrintable(badLease.second));
        QProcess other;
        other.start(kTrainer, {QStringLiteral("--hold-checkpoints"), QStringLiteral("--store"), QStringLiteral("/tmp")});
        QVERIFY(other.waitForFinished(10000));
        QCOMPARE(other.exitCode(), 2); // never a folder that is not a memory store
        QVERIFY(QFileInfo::exists(QStringLiteral("/tmp")));

        // A run over for good (failed, stopped) on a remote host: the supervisor has the host give its
        // store back at once (--release-checkpoints with the checkpoint folder the ranks read), not
        // when the lease runs out; the store's name comes from the folder as the ranks' does.
        QTemporaryDir ckpt;
        const QString runStore = memoryStoreOf(ckpt.path());
        auto release = [&](const QStringList &arguments) {
            QProcess p;
            p.start(kTrainer, QStringList{QStringLiteral("--release-checkpoints")} + arguments);
            p.waitForFinished(10000);
            return std::make_pair(p.exitCode(), QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError()));
        };
        QVERIFY(QDir().mkpath(runStore));
        QFile runLease(runStore + QStringLiteral("/lease"));
        QVERIFY(runLease.open(QIODevice::WriteOnly));
        runLease.close();
        QProcess runHolder;
        runHolder.start(kTrainer, {QStringLiteral("--hold-checkpoints"), QStringLiteral("--store"), runStore, QStringLiteral("--detach")});
        QVERIFY(runHolder.waitForFinished(10000));
        QTRY_VERIFY_WITH_TIMEOUT(!lockHolders(runStore + QStringLiteral("/holder.lock")).isEmpty(), 5000);
        const auto released = release({QStringLiteral("--checkpoint-dir"), ckpt.path()});
        QVERIFY2(released.first == 0 && released.second.contains(QStringLiteral("released ") + runStore), qPrintable(released.second));
        QVERIFY(!QFileInfo::exists(runStore)); // gone when it answers, its holder with it
        const auto nothing = release({QStringLiteral("--checkpoint-dir"), ckpt.path()});
        QVERIFY2(nothing.first == 0 && nothing.second.contains(QStringLiteral("no in-memory checkpoints of ")), qPrintable(nothing.second));
        const auto releaseHelp = release({QStringLiteral("--help")});
        QVERIFY2(releaseHelp.first == 0 && releaseHelp.second.contains(QStringLiteral("usage: trellis-trainer --release-checkpoints")),
                 qPrintable(releaseHelp.second));
        const auto noDir = release({});
        QVERIFY2(noDir.first == 2 && noDir.second.contains(QStringLiteral("--checkpoint-dir DIR is required")), qPrintable(noDir.second));
    }

    // The holders' ring (several nodes; here three holders on this machine, over loopback TCP with
    // CURVE): a holder sends its store's newest complete save to the next holder, which keeps it
    // under peer/ and confirms it (ring.acked); a holder lets in only the previous holder's key —
    // a third one that knows the server's address and public key but is not the previous is
    // refused, said in the ring's log, and nothing of it is kept. Every store goes on `done`.
    void theRingCopiesAStoreToTheNextHolderOnly()
    {
        const QString base = QStringLiteral("/dev/shm/trellis-%1-ckpt-ringtest%2-").arg(::getuid()).arg(QCoreApplication::applicationPid());
        const QString a = base + QStringLiteral("a"), b = base + QStringLiteral("b"), c = base + QStringLiteral("c");
        auto cleanup = qScopeGuard([&] {
            for (const QString &store : {a, b, c}) {
                QFile done(store + QStringLiteral("/done"));
                if (done.open(QIODevice::WriteOnly))
                    done.close();
            }
        });
        auto self = [](const QString &store) {
            QMap<QString, QString> kv;
            QFile f(store + QStringLiteral("/ring.self"));
            if (f.open(QIODevice::ReadOnly))
                for (const QByteArray &line : f.readAll().split('\n'))
                    if (const int eq = line.indexOf('='); eq > 0)
                        kv[QString::fromLatin1(line.left(eq))] = QString::fromLatin1(line.mid(eq + 1));
            return kv;
        };
        auto write = [](const QString &path, const QString &text) {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(text.toUtf8());
        };
        for (const QString &store : {a, b, c}) {
            QVERIFY(QDir().mkpath(store));
            write(store + QStringLiteral("/lease"), {});
            QCOMPARE(QProcess::execute(kTrainer, {QStringLiteral("--hold-checkpoints"), QStringLiteral("--store"), store, QStringLiteral("--ring"),
                                                  QStringLiteral("--detach")}),
                     0);
        }
        for (const QString &store : {a, b, c})
            QTRY_VERIFY_WITH_TIMEOUT(self(store).value(QStringLiteral("port")).toInt() > 0, 5000);
        const auto sa = self(a), sb = self(b);
        const QString toB = QStringLiteral("addresses=127.0.0.1\nport=%1\nserver_public=%2\nkeep=2\n").arg(sb[QStringLiteral("port")], sb[QStringLiteral("server_public")]);
        write(a + QStringLiteral("/ring.next"), toB);
        write(c + QStringLiteral("/ring.next"), toB); // c knows where b listens and its key, but is not b's previous
        write(b + QStringLiteral("/ring.prev"), QStringLiteral("client_public=%1\n").arg(sa[QStringLiteral("client_public")]));
        // A save in a's store and another in c's (their ranks' shards and meta.json).
        for (const QString &store : {a, c}) {
            const QString step = store + QStringLiteral("/step-00000007");
            QVERIFY(QDir().mkpath(step));
            write(step + QStringLiteral("/rank-00000.bin"), QStringLiteral("shard of ") + store);
            write(step + QStringLiteral("/meta.json"), QStringLiteral(R"({"files": [{"name": "rank-00000.bin"}]})"));
        }
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(b + QStringLiteral("/peer/step-00000007/meta.json")), 10000);
        QFile copy(b + QStringLiteral("/peer/step-00000007/rank-00000.bin"));
        QVERIFY(copy.open(QIODevice::ReadOnly));
        QCOMPARE(QString::fromUtf8(copy.readAll()), QStringLiteral("shard of ") + a); // a's, not c's
        QCOMPARE(QFileInfo(b + QStringLiteral("/peer")).permissions() & (QFileDevice::ReadOther | QFileDevice::ReadGroup), QFileDevice::Permissions());
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(a + QStringLiteral("/ring.acked")), 5000);
        QFile acked(a + QStringLiteral("/ring.acked"));
        QVERIFY(acked.open(QIODevice::ReadOnly));
        QCOMPARE(acked.readAll().trimmed(), QByteArray("7"));
        QTRY_VERIFY_WITH_TIMEOUT(readLog(b).contains(QStringLiteral("refused a connection from 127.0.0.1")), 10000);
        QVERIFY(!QFileInfo::exists(c + QStringLiteral("/ring.acked")));
        cleanup.dismiss();
        for (const QString &store : {a, b, c})
            write(store + QStringLiteral("/done"), {});
        for (const QString &store : {a, b, c})
            QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(store), 5000);
    }
};

QTEST_GUILESS_MAIN(TstMemoryCheckpoints)
#include "tst_memory_checkpoints.moc"
