// Two test hosts on this machine for the ssh launch suites (tst_ssh_launch, tst_ssh_preflight):
// network namespaces on a private bridge, each with its own address, sshd (own host key, key-only
// login) and staging folder (tests/support/netns_hosts.sh); a history; test plans over the two
// hosts; the checks that a refused launch started nothing. A suite's initTestCase calls
// upHosts() (empty: ready; else why this machine cannot make them, for QSKIP) and its
// cleanupTestCase downHosts(); every namespace, link and sshd made is removed, also after a failure.
#pragma once

#include "tests/support/cli_test_support.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QStringList>
#include <QTemporaryDir>
#include <QTest>

#include <string>

namespace trellis::test {

inline const QString kNetnsHosts = QStringLiteral(TRELLIS_SOURCE_DIR "/tests/support/netns_hosts.sh");
inline const QString kTrainer = QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-trainer");

// netns_hosts.sh ARGS, to its end (a minute at most).
inline Result netnsHosts(const QStringList &args)
{
    return runProgram(QStringLiteral("bash"), QStringList{kNetnsHosts} + args, 60000);
}

class SshHostsFixture {
protected:
    QTemporaryDir m_dir{QDir::tempPath() + QStringLiteral("/trellis-ssh-test-XXXXXX")};
    QString m_net;             // the bridge's /24
    QStringList m_addresses;   // host1, host2
    QString m_db;
    bool m_up = false;
    QString m_relay = QStringLiteral("off"); // the test plans' telemetry.relay

    // The test plan: pp 2 × dp 2, a node of `slotsA` and one of `slotsB` slots; `extra` goes into launch.ssh.
    QString writePlan(const QString &name, const QString &knownHosts, const QString &extraSsh = {}, int slotsA = 2, int slotsB = 2,
                      const QString &hostB = {}, const QString &target = QStringLiteral("ssh"),
                      const QString &parallel = QStringLiteral(R"("dp": 2, "pp": 2, "micro_batch_size": 2, "micro_batches": 2)"))
    {
        const QString path = m_dir.filePath(name + QStringLiteral(".json"));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            return {};
        f.write(QStringLiteral(R"({"schema": "trellis.plan/1", "name": "%1",
          "model": {"layers": 2, "hidden": 64, "heads": 4, "ffn": 256, "seq_len": 64, "vocab": 256},
          "cluster": {"nodes": [{"host": "%2", "slots": %3, "remote_dir": "%4"}, {"host": "%5", "slots": %6, "remote_dir": "%7"}]},
          "parallel": {%14},
          "training": {"steps": 8, "lr": 0.003, "seed": 7, "data": {"source": "text", "path": "%8"}},
          "telemetry": {"relay": "%15"},
          "launch": {"target": "%9", "ssh": {"port": 2222, "identity_file": "%10", "known_hosts": "%11", "mpi_interface": "%12"%13}}})")
                    .arg(name, m_addresses[0])
                    .arg(slotsA)
                    .arg(m_dir.filePath(QStringLiteral("h1/runs")), hostB.isEmpty() ? m_addresses[1] : hostB)
                    .arg(slotsB)
                    .arg(m_dir.filePath(QStringLiteral("h2/runs")), QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt"), target,
                         m_dir.filePath(QStringLiteral("client_key")), knownHosts, m_net, extraSsh)
                    .arg(parallel, m_relay)
                    .toUtf8());
        return path;
    }

    // The one run folder a host's runs folder holds; "" when it holds none or several.
    static QString onlyRunFolder(const QDir &runs)
    {
        const QStringList folders = runs.entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        return folders.size() == 1 ? folders.first() : QString();
    }

    // Nothing was started or staged: no run folder on either host, no run in the history.
    int recordedRuns()
    {
        static const QRegularExpression runLine(QStringLiteral("^ +\\d+  \\d{8}-\\d{6}-"), QRegularExpression::MultilineOption);
        return int(cli({QStringLiteral("--db"), m_db, QStringLiteral("runs")}).out.count(runLine));
    }

    void verifyNothingStarted(int runsBefore)
    {
        for (const QString &h : {QStringLiteral("h1/runs"), QStringLiteral("h2/runs")}) {
            const QDir runs(m_dir.filePath(h));
            QVERIFY2(runs.entryList(QDir::Dirs | QDir::NoDotAndDotDot).isEmpty(), qPrintable(h + QStringLiteral(" has a run folder")));
        }
        QCOMPARE(recordedRuns(), runsBefore);
    }

    void expectPreflightFailure(const QString &plan, const QString &host, const QString &reason)
    {
        const int runsBefore = recordedRuns();
        const Result r = cli({QStringLiteral("--db"), m_db, QStringLiteral("run"), plan, QStringLiteral("--quiet")}, 120000);
        QVERIFY2(r.code != 0, qPrintable(r.out + r.err));
        QVERIFY2(r.err.contains(QStringLiteral("preflight failed")), qPrintable(r.err));
        const QRegularExpression line(QRegularExpression::escape(host) + QStringLiteral(": [a-z ]+: .*") + QRegularExpression::escape(reason));
        QVERIFY2(line.match(r.err).hasMatch(), qPrintable(QStringLiteral("expected '%1 ... %2' in:\n%3").arg(host, reason, r.err)));
        verifyNothingStarted(runsBefore);
    }

    // The hosts up: "" when they are, else why they cannot be made here (the caller skips).
    // A failure after that is a test failure (QVERIFY), and m_up stays false.
    QString upHosts()
    {
        const Result check = netnsHosts({QStringLiteral("check")});
        if (check.code != 0)
            return QStringLiteral("ssh hosts in network namespaces are not possible here: %1").arg((check.out + check.err).trimmed());
        const Result up = netnsHosts({QStringLiteral("up"), m_dir.path(), QStringLiteral("2")});
        [&] {
            QVERIFY2(up.code == 0, qPrintable(up.out + up.err));
            m_up = true;
            for (const QString &line : readAll(m_dir.filePath(QStringLiteral("hosts"))).split(QLatin1Char('\n'), Qt::SkipEmptyParts))
                m_addresses << line.section(QLatin1Char(' '), 1, 1);
            QCOMPARE(m_addresses.size(), 2);
            m_net = m_addresses[0].section(QLatin1Char('.'), 0, 2) + QStringLiteral(".0/24");
            m_db = m_dir.filePath(QStringLiteral("history.db"));
            QDir().mkpath(m_dir.filePath(QStringLiteral("h1/runs")));
            QDir().mkpath(m_dir.filePath(QStringLiteral("h2/runs")));
        }();
        return {};
    }

    void downHosts()
    {
        if (m_up)
            QCOMPARE(netnsHosts({QStringLiteral("down"), m_dir.path()}).code, 0);
    }

    // A known_hosts file holding both hosts' keys, accepted through `preflight --accept-host-key`
    // the first time it is asked for (what a user does once): the suites' runs use it.
    QString acceptedKnownHosts()
    {
        const QString known = m_dir.filePath(QStringLiteral("known_hosts_run"));
        if (!QFile::exists(known) || readAll(known).isEmpty()) {
            const QString plan = writePlan(QStringLiteral("accept-keys"), known);
            const Result accept = cli({QStringLiteral("preflight"), plan, QStringLiteral("--accept-host-key"), m_addresses.join(QLatin1Char(','))});
            if (accept.code != 0)
                qWarning("accepting the test hosts' keys failed: %s", qPrintable(accept.out + accept.err));
        }
        return known;
    }
};

} // namespace trellis::test
