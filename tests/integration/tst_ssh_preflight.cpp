// What stops an ssh launch at preflight, against real hosts (tests/support/ssh_hosts_fixture.h):
// an unknown host key (each shown with its fingerprint, never accepted by itself), an unreachable
// host, a missing or mismatched trainer, a host with fewer cores than the plan's slots, a bad
// hostfile line — each named with the host (or file and line) and the reason, and nothing started
// or staged; a good hostfile gives the nodes. Skips (saying why) where namespaces or sshd are not
// available.
#include "tests/support/ssh_hosts_fixture.h"

#include <QFile>
#include <QProcess>
#include <QTest>
#include <QThread>

using namespace trellis::test;

class TstSshPreflight : public QObject, protected SshHostsFixture {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        if (const QString why = upHosts(); !why.isEmpty())
            QSKIP(qPrintable(why));
    }

    void cleanupTestCase() { downHosts(); }

    void unknownHostKeysStopAtPreflight()
    {
        const QString known = m_dir.filePath(QStringLiteral("known_empty"));
        const QString plan = writePlan(QStringLiteral("unknown-keys"), known);
        const Result pre = cli({QStringLiteral("preflight"), plan});
        QCOMPARE(pre.code, 1);
        // Each host's key is shown with its fingerprint, never accepted by itself.
        for (int i = 1; i <= 2; ++i) {
            const QString print = QString::fromUtf8([&] {
                QProcess p;
                p.start(QStringLiteral("ssh-keygen"), {QStringLiteral("-lf"), m_dir.filePath(QStringLiteral("h%1/host_key.pub").arg(i))});
                p.waitForFinished();
                return p.readAllStandardOutput();
            }()).section(QLatin1Char(' '), 1, 1);
            QVERIFY2(pre.out.contains(print), qPrintable(pre.out));
        }
        QVERIFY(!QFile::exists(known) || readAll(known).isEmpty());
        expectPreflightFailure(plan, m_addresses[0], QStringLiteral("not known"));
    }

    // The nodes from a hostfile (--hostfile): the same two hosts, their folders given per line.
    void hostfileGivesTheNodes()
    {
        const QString plan = writePlan(QStringLiteral("from-hostfile"), acceptedKnownHosts(), {}, 2, 2,
                                       QStringLiteral("placeholder-host"));
        const QString hosts = m_dir.filePath(QStringLiteral("hosts.txt"));
        QFile f(hosts);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QStringLiteral("# the test hosts\n%1 slots=2 remote_dir=%2\n%3:2222 slots=2 remote_dir=%4\n")
                    .arg(m_addresses[0], m_dir.filePath(QStringLiteral("h1/runs")), m_addresses[1], m_dir.filePath(QStringLiteral("h2/runs")))
                    .toUtf8());
        f.close();
        const Result pre = cli({QStringLiteral("preflight"), plan, QStringLiteral("--hostfile"), hosts});
        QVERIFY2(pre.code == 0, qPrintable(pre.out + pre.err));
        QVERIFY2(pre.out.contains(m_addresses[0]) && pre.out.contains(m_addresses[1]) && !pre.out.contains(QStringLiteral("placeholder")),
                 qPrintable(pre.out));
        // A bad line stops it before anything is reached, naming the file and the line.
        const QString bad = m_dir.filePath(QStringLiteral("hosts-bad.txt"));
        QFile b(bad);
        QVERIFY(b.open(QIODevice::WriteOnly));
        b.write(QStringLiteral("%1 slots=2\n%2 slots=two\n").arg(m_addresses[0], m_addresses[1]).toUtf8());
        b.close();
        const int runsBefore = recordedRuns();
        const Result refused = cli({QStringLiteral("--db"), m_db, QStringLiteral("run"), plan, QStringLiteral("--hostfile"), bad, QStringLiteral("--quiet")});
        QVERIFY(refused.code != 0);
        QVERIFY2(refused.err.contains(bad + QStringLiteral(":2: slots='two' is not a positive whole number")), qPrintable(refused.err));
        verifyNothingStarted(runsBefore);
    }

    void unreachableHostStopsAtPreflight()
    {
        const QString unreachable = m_addresses[0].section(QLatin1Char('.'), 0, 2) + QStringLiteral(".99");
        const QString plan = writePlan(QStringLiteral("unreachable"), acceptedKnownHosts(), {}, 2, 2, unreachable);
        expectPreflightFailure(plan, unreachable, QStringLiteral("no ssh answer"));
    }

    void missingTrainerStopsAtPreflight()
    {
        const QString plan = writePlan(QStringLiteral("missing-trainer"), acceptedKnownHosts(),
                                       QStringLiteral(R"(, "trainer": "/nonexistent/trellis-trainer")"));
        expectPreflightFailure(plan, m_addresses[1], QStringLiteral("no executable /nonexistent/trellis-trainer"));
    }

    void mismatchedTrainerStopsAtPreflight()
    {
        // Another build: the same program with one byte more.
        const QString other = m_dir.filePath(QStringLiteral("other-trellis-trainer"));
        QFile::remove(other);
        QVERIFY(QFile::copy(kTrainer, other));
        QFile f(other);
        QVERIFY(f.open(QIODevice::Append));
        f.write("x");
        f.close();
        QVERIFY(QFile::setPermissions(other, QFile::permissions(kTrainer)));
        const QString plan = writePlan(QStringLiteral("other-trainer"), acceptedKnownHosts(),
                                       QStringLiteral(R"(, "trainer": "%1")").arg(other));
        expectPreflightFailure(plan, m_addresses[0], QStringLiteral("this machine's is"));
    }

    void tooFewCoresStopsAtPreflight()
    {
        // One slot more than the host has cores (the namespaces share this machine's cores).
        const int cores = QThread::idealThreadCount();
        const QString plan = writePlan(QStringLiteral("crowded"), acceptedKnownHosts(), {}, cores + 1, 1, {},
                                       QStringLiteral("ssh"), QStringLiteral(R"("dp": %1, "micro_batch_size": 1)").arg(cores + 2));
        expectPreflightFailure(plan, m_addresses[0], QStringLiteral("%1 slots in the plan, %2 cores there").arg(cores + 1).arg(cores));
    }
};

QTEST_GUILESS_MAIN(TstSshPreflight)
#include "tst_ssh_preflight.moc"
