// The slurm launch target against a real Slurm cluster on this machine (tests/support/
// slurm_cluster.sh): munged, slurmctld and one slurmd per test host, each host a network namespace
// with its own address and host name, all from Debian's packages. A 4-rank pipeline × data-parallel
// plan submitted through `trellis-cli run` runs on both nodes and completes, every rank's telemetry
// (CURVE over TCP) in the history and its losses equal to the same plan run locally; a job waiting
// behind another shows pending with its reason and queue position, and stopped from Trellis ends
// cancelled in Slurm; a job that fails says why (Slurm's state and exit code, the rank that
// failed); requests the partition cannot hold stop at preflight with nothing recorded. Skips
// (saying why) where namespaces or the Slurm packages are missing; stops every daemon and removes
// every namespace it made, also after a failure.
#include "tests/support/cli_test_support.h"
#include "backend/protocol/relay.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <cmath>
#include <map>

using namespace trellis::test;

namespace {

const QString kCluster = QStringLiteral(TRELLIS_SOURCE_DIR "/tests/support/slurm_cluster.sh");

Result program(const QString &name, const QStringList &args, int timeoutMs = 60000)
{
    return runProgram(name, args, timeoutMs);
}

} // namespace

class TstSlurmLaunch : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir{QDir::tempPath() + QStringLiteral("/trellis-slurm-test-XXXXXX")};
    QString m_net; // the bridge's /24
    QString m_db;
    bool m_up = false;

    // pp 2 × dp 2 on `nodes` Slurm nodes of `perNode` slots; `slurm` adds to launch.slurm.
    QString writePlan(const QString &name, const QString &target = QStringLiteral("slurm"), int nodes = 2, int perNode = 2,
                      const QString &slurm = {}, int steps = 8, const QString &relay = QStringLiteral("off"))
    {
        QStringList nodeList;
        for (int i = 0; i < nodes; ++i)
            nodeList << QStringLiteral(R"({"host": "node%1", "slots": %2})").arg(i + 1).arg(perNode);
        const QString path = m_dir.filePath(name + QStringLiteral(".json"));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            return {};
        f.write(QStringLiteral(R"({"schema": "trellis.plan/1", "name": "%1",
          "model": {"layers": 2, "hidden": 64, "heads": 4, "ffn": 256, "seq_len": 64, "vocab": 256},
          "cluster": {"nodes": [%2]},
          "parallel": {"dp": %3, "pp": 2, "micro_batch_size": 2, "micro_batches": 2},
          "training": {"steps": %4, "lr": 0.003, "seed": 7, "data": {"source": "text", "path": "%5"}},
          "telemetry": {"relay": "%10"},
          "launch": {"target": "%6", "slurm": {"time": "00:10:00", "mpi_interface": "%7", "shared_dir": "%8"%9}}})")
                    .arg(name, nodeList.join(QStringLiteral(", ")))
                    .arg(nodes * perNode / 2)
                    .arg(steps)
                    .arg(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt"), target, m_net, m_dir.filePath(QStringLiteral("shared")),
                         slurm, relay)
                    .toUtf8());
        return path;
    }

    int recordedRuns()
    {
        static const QRegularExpression runLine(QStringLiteral("^ +\\d+  \\d{8}-\\d{6}-"), QRegularExpression::MultilineOption);
        return int(cli({QStringLiteral("--db"), m_db, QStringLiteral("runs")}).out.count(runLine));
    }

    QString events(const QString &run)
    {
        return cli({QStringLiteral("--db"), m_db, QStringLiteral("export"), run, QStringLiteral("--format"), QStringLiteral("csv"),
                    QStringLiteral("--table"), QStringLiteral("events")})
            .out;
    }

    // Waits until `events(run)` matches `pattern`; returns whether it did within `timeoutMs`.
    bool waitForEvent(const QString &run, const QRegularExpression &pattern, int timeoutMs)
    {
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < timeoutMs) {
            if (pattern.match(events(run)).hasMatch())
                return true;
            QThread::msleep(300);
        }
        return false;
    }

    void expectPreflightFailure(const QString &plan, const QString &reason)
    {
        const int runsBefore = recordedRuns();
        const Result r = cli({QStringLiteral("--db"), m_db, QStringLiteral("run"), plan, QStringLiteral("--quiet")}, 120000);
        QVERIFY2(r.code != 0, qPrintable(r.out + r.err));
        QVERIFY2(r.err.contains(QStringLiteral("preflight failed")), qPrintable(r.err));
        QVERIFY2(r.err.contains(reason), qPrintable(QStringLiteral("expected '%1' in:\n%2").arg(reason, r.err)));
        QCOMPARE(recordedRuns(), runsBefore);
        QCOMPARE(program(QStringLiteral("squeue"), {QStringLiteral("-h")}).out.trimmed(), QString()); // nothing submitted
    }

private slots:
    void initTestCase()
    {
        const Result check = program(QStringLiteral("bash"), {kCluster, QStringLiteral("check")});
        if (check.code != 0)
            QSKIP(qPrintable(QStringLiteral("a Slurm cluster in network namespaces is not possible here: %1").arg((check.out + check.err).trimmed())));
        const Result up = program(QStringLiteral("bash"), {kCluster, QStringLiteral("up"), m_dir.path(), QStringLiteral("2")}, 120000);
        QVERIFY2(up.code == 0, qPrintable(up.out + up.err));
        m_up = true;
        qputenv("SLURM_CONF", m_dir.filePath(QStringLiteral("slurm.conf")).toUtf8());
        qputenv("TRELLIS_SLURM_POLL_MS", "300");
        const QString first = readAll(m_dir.filePath(QStringLiteral("hosts"))).section(QLatin1Char('\n'), 0, 0);
        m_net = first.section(QLatin1Char(' '), 1, 1).section(QLatin1Char('.'), 0, 2) + QStringLiteral(".0/24");
        m_db = m_dir.filePath(QStringLiteral("history.db"));
        QVERIFY(QDir().mkpath(m_dir.filePath(QStringLiteral("shared"))));
    }

    void cleanupTestCase()
    {
        if (m_up)
            QCOMPARE(program(QStringLiteral("bash"), {kCluster, QStringLiteral("down"), m_dir.path()}).code, 0);
    }

    void cleanup()
    {
        if (m_up) // no job of a failed test stays in the way of the next
            program(QStringLiteral("scancel"), {QStringLiteral("--user=root")});
    }

    void planRunsOnTwoNodesAndCompletes()
    {
        // The partition named (sinfo marks the default one "debug*"); telemetry through a relay
        // on each node (telemetry.relay on; auto would from 64 ranks).
        const QString plan = writePlan(QStringLiteral("two-nodes"), QStringLiteral("slurm"), 2, 2, QStringLiteral(R"(, "partition": "debug")"), 8,
                                       QStringLiteral("on"));
        const Result r = cli({QStringLiteral("--db"), m_db, QStringLiteral("run"), plan});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        static const QRegularExpression runLine(QStringLiteral("^run (\\S+)"), QRegularExpression::MultilineOption);
        const QString slurmRun = runLine.match(r.out).captured(1);
        static const QRegularExpression running(QStringLiteral("Slurm job (\\d+) running on host\\[1-2\\]"));
        const auto job = running.match(r.err);
        QVERIFY2(job.hasMatch(), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("Slurm job %1 completed on host[1-2]").arg(job.captured(1))), qPrintable(r.err));
        // Slurm says so too.
        const Result shown = program(QStringLiteral("scontrol"), {QStringLiteral("show"), QStringLiteral("job"), QStringLiteral("-o"), job.captured(1)});
        QVERIFY2(shown.out.contains(QStringLiteral("JobState=COMPLETED")), qPrintable(shown.out + shown.err));
        QVERIFY2(shown.out.contains(QStringLiteral("NumTasks=4")), qPrintable(shown.out));

        // Every rank's telemetry reached the history, from the node it ran on, nothing lost.
        const Result ranks = cli({QStringLiteral("--db"), m_db, QStringLiteral("export"), QStringLiteral("last"), QStringLiteral("--format"),
                                  QStringLiteral("csv"), QStringLiteral("--table"), QStringLiteral("ranks")});
        const QStringList rows = ranks.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(rows.size(), 5);
        for (int rank = 0; rank < 4; ++rank) {
            const QStringList f = rows[rank + 1].split(QLatin1Char(','));
            QCOMPARE(f[1].toInt(), rank);
            QCOMPARE(f[2], rank < 2 ? QStringLiteral("host1") : QStringLiteral("host2"));
            QCOMPARE(f.last(), QStringLiteral("0"));
        }
        const Result steps = cli({QStringLiteral("--db"), m_db, QStringLiteral("export"), QStringLiteral("last"), QStringLiteral("--format"),
                                  QStringLiteral("csv"), QStringLiteral("--table"), QStringLiteral("steps")});
        QCOMPARE(steps.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts).size(), 1 + 4 * 8);
        // It went through each node's relay (ranks 0, 1 on host1 and 2, 3 on host2), started by
        // the ranks inside the batch job, each ended by its ranks' Goodbyes with nothing refused.
        for (int first : {0, 2}) {
            std::string error;
            const QString folder = QString::fromStdString(trellis::proto::relayFolder(slurmRun.toStdString(), "node" + std::to_string(first), error));
            QVERIFY2(error.empty(), error.c_str());
            QTRY_VERIFY2_WITH_TIMEOUT(readAll(folder + QStringLiteral("/relay.log")).contains(QStringLiteral("relay: ended (every rank said goodbye)")),
                                      qPrintable(folder + QStringLiteral(": ") + readAll(folder + QStringLiteral("/relay.log"))), 10000);
            const QString log = readAll(folder + QStringLiteral("/relay.log"));
            QVERIFY2(log.contains(QStringLiteral("ranks %1,%2:").arg(first).arg(first + 1)) && log.contains(QStringLiteral(", 0 refused")),
                     qPrintable(log));
        }
        // The job's states are the run's events.
        const QString ev = events(QStringLiteral("last"));
        for (const QString &state : {QStringLiteral("submitted"), QStringLiteral("running on host[1-2]"), QStringLiteral("completed on host[1-2]")})
            QVERIFY2(ev.contains(state), qPrintable(state + QStringLiteral(" not among\n") + ev));
        // The job folder on the shared filesystem: the script, the plan, private keys, the output.
        const QStringList folders = QDir(m_dir.filePath(QStringLiteral("shared"))).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        QCOMPARE(folders.size(), 1);
        const QString jobDir = m_dir.filePath(QStringLiteral("shared/") + folders.first());
        for (const QString &name : {QStringLiteral("slurm-job.sh"), QStringLiteral("job-plan.json"), QStringLiteral("rank.keys"),
                                    QStringLiteral("data-licenses.txt"), QStringLiteral("slurm-%1.out").arg(job.captured(1))})
            QVERIFY2(QFile::exists(jobDir + QLatin1Char('/') + name), qPrintable(name));
        QCOMPARE(QFile::permissions(jobDir + QStringLiteral("/rank.keys")) & (QFile::ReadGroup | QFile::ReadOther), QFileDevice::Permissions());
        QVERIFY(readAll(jobDir + QStringLiteral("/slurm-job.sh")).contains(QStringLiteral("#SBATCH --ntasks-per-node=2\n")));

        // The same plan on this machine: the same loss at every step.
        const QString local = writePlan(QStringLiteral("two-nodes-local"), QStringLiteral("local"));
        const Result localRun = cli({QStringLiteral("--db"), m_db, QStringLiteral("run"), local, QStringLiteral("--quiet")});
        QVERIFY2(localRun.code == 0, qPrintable(localRun.out + localRun.err));
        const QString localRunId = runLine.match(localRun.out).captured(1);
        const auto slurm = lossesOf(m_db, slurmRun, 3), here = lossesOf(m_db, localRunId, 3); // the last stage reports the loss
        QCOMPARE(slurm.size(), std::size_t(8));
        QCOMPARE(here.size(), std::size_t(8));
        const QString differ = lossesDiffer(slurm, here, QStringLiteral("under Slurm"));
        QVERIFY2(differ.isEmpty(), qPrintable(differ));
    }

    // A job with its own trainer under Slurm: the batch job's mpirun runs the shim on both nodes;
    // MASTER_ADDR is the batch host (where rank 0 runs) for every rank; the Python client's
    // telemetry reaches the history from each node through the node's relay, which the shim started
    // (telemetry.relay on) and which holds the node's CURVE connection (the key file in the job folder).
    void ownTrainerRunsOnTwoNodes()
    {
        const QString path = writePlan(QStringLiteral("own-trainer"), QStringLiteral("slurm"), 2, 2, {}, 8, QStringLiteral("on"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QJsonObject plan = QJsonDocument::fromJson(f.readAll()).object();
        f.close();
        const QString out = m_dir.filePath(QStringLiteral("shared/own-out"));
        plan.insert(QStringLiteral("own_trainer"),
                    QJsonObject{{QStringLiteral("command"), QJsonArray{QStringLiteral("/usr/bin/python3"),
                                                                       QStringLiteral(TRELLIS_SOURCE_DIR "/tests/pytorch/report_rank.py"), out,
                                                                       QStringLiteral("6")}},
                                {QStringLiteral("env"), QJsonObject{{QStringLiteral("PYTHONPATH"), QStringLiteral(TRELLIS_SOURCE_DIR "/python")}}}});
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(QJsonDocument(plan).toJson());
        f.close();
        const Result r = cli({QStringLiteral("--db"), m_db, QStringLiteral("run"), path, QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        QString master;
        for (int rank = 0; rank < 4; ++rank) {
            const QJsonObject seen = QJsonDocument::fromJson(readAll(QStringLiteral("%1/rank-%2.json").arg(out).arg(rank)).toUtf8()).object();
            QVERIFY2(!seen.isEmpty(), qPrintable(QStringLiteral("rank %1 wrote nothing; %2").arg(rank).arg(r.out + r.err)));
            QCOMPARE(seen.value(QStringLiteral("host")).toString(), rank < 2 ? QStringLiteral("host1") : QStringLiteral("host2"));
            QCOMPARE(seen.value(QStringLiteral("WORLD_SIZE")).toString(), QStringLiteral("4"));
            QCOMPARE(seen.value(QStringLiteral("LOCAL_RANK")).toString(), QString::number(rank % 2));
            if (rank == 0)
                master = seen.value(QStringLiteral("host")).toString();
            QCOMPARE(seen.value(QStringLiteral("MASTER_ADDR")).toString(), master); // rank 0's node, for everyone
            QVERIFY(seen.value(QStringLiteral("MASTER_PORT")).toString().toInt() > 0);
            QVERIFY(seen.value(QStringLiteral("TRELLIS_TELEMETRY_KEYS")).isNull()); // moved: the relay's socket needs none
            QVERIFY(seen.value(QStringLiteral("TRELLIS_RELAY_UPSTREAM_KEYS")).toString().endsWith(QStringLiteral("/rank.keys")));
            QVERIFY(seen.value(QStringLiteral("TRELLIS_RELAY_UPSTREAM")).toString().startsWith(QStringLiteral("tcp://")));
            QCOMPARE(seen.value(QStringLiteral("TRELLIS_RELAY_NAME")).toString(), rank < 2 ? QStringLiteral("node0") : QStringLiteral("node2"));
            QVERIFY(seen.value(QStringLiteral("TRELLIS_TELEMETRY_ENDPOINT")).toString().startsWith(QStringLiteral("ipc://")));
            QVERIFY(seen.value(QStringLiteral("active")).toBool());
        }
        static const QRegularExpression runLine(QStringLiteral("^run (\\S+)"), QRegularExpression::MultilineOption);
        const std::string runId = runLine.match(r.out).captured(1).toStdString();
        for (int first : {0, 2}) {
            std::string error;
            const QString folder = QString::fromStdString(trellis::proto::relayFolder(runId, "node" + std::to_string(first), error));
            QTRY_VERIFY2_WITH_TIMEOUT(readAll(folder + QStringLiteral("/relay.log")).contains(QStringLiteral("relay: ended (every rank said goodbye)")),
                                      qPrintable(folder + QStringLiteral(": ") + readAll(folder + QStringLiteral("/relay.log"))), 10000);
        }
        const Result steps = cli({QStringLiteral("--db"), m_db, QStringLiteral("export"), QStringLiteral("last"), QStringLiteral("--format"),
                                  QStringLiteral("csv"), QStringLiteral("--table"), QStringLiteral("steps")});
        QCOMPARE(steps.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts).size(), 1 + 4 * 6);
    }

    // training.init.from under Slurm: the transformers-layout weights (exported from a local run's
    // checkpoint) are copied into the job folder and the job starts from them, step by step as the
    // same start on this machine, below the loss the source run began with.
    void initFromWeightsAreStagedInTheJobFolder()
    {
        std::map<int, double> before;
        QString error;
        const QString weights = trainAndExportWeights(m_db, writePlan(QStringLiteral("init-source"), QStringLiteral("local")), m_dir.path(), before, error);
        QVERIFY2(!weights.isEmpty(), qPrintable(error));
        const QString plan = writePlan(QStringLiteral("init-job")), local = writePlan(QStringLiteral("init-local"), QStringLiteral("local"));
        for (const QString &p : {plan, local})
            QVERIFY(setTrainingFields(p, {{QStringLiteral("init"), QJsonObject{{QStringLiteral("from"), weights}}}}));
        const QStringList jobsBefore = QDir(m_dir.filePath(QStringLiteral("shared"))).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        const Result r = cli({QStringLiteral("--db"), m_db, QStringLiteral("run"), plan, QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const auto slurm = lossesOf(m_db, QStringLiteral("last"), 3);
        QStringList jobs = QDir(m_dir.filePath(QStringLiteral("shared"))).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        for (const QString &old : jobsBefore)
            jobs.removeAll(old);
        QCOMPARE(jobs.size(), 1);
        const QString jobDir = m_dir.filePath(QStringLiteral("shared/") + jobs.first());
        for (const QString &name : {QStringLiteral("init/config.json"), QStringLiteral("init/model.safetensors")})
            QVERIFY2(QFileInfo(jobDir + QLatin1Char('/') + name).size() > 0, qPrintable(name));
        const QJsonObject staged = QJsonDocument::fromJson(readAll(jobDir + QStringLiteral("/job-plan.json")).toUtf8()).object();
        QCOMPARE(staged[QStringLiteral("training")].toObject()[QStringLiteral("init")].toObject()[QStringLiteral("from")].toString(),
                 jobDir + QStringLiteral("/init"));
        const Result localRun = cli({QStringLiteral("--db"), m_db, QStringLiteral("run"), local, QStringLiteral("--quiet")});
        QVERIFY2(localRun.code == 0, qPrintable(localRun.out + localRun.err));
        const auto here = lossesOf(m_db, QStringLiteral("last"), 3);
        QCOMPARE(slurm.size(), std::size_t(8));
        QCOMPARE(here.size(), std::size_t(8));
        const QString differ = lossesDiffer(slurm, here, QStringLiteral("under Slurm"));
        QVERIFY2(differ.isEmpty(), qPrintable(differ));
        QVERIFY2(slurm.at(1) < before.at(1) - 0.05, qPrintable(QStringLiteral("started at %1, the source run at %2").arg(slurm.at(1)).arg(before.at(1))));
    }

    void waitingJobShowsReasonAndIsCancelledFromTrellis()
    {
        // Another job holds both nodes: ours waits for resources, first in the queue.
        const Result blocker = program(QStringLiteral("sbatch"), {QStringLiteral("--parsable"), QStringLiteral("-N"), QStringLiteral("2"),
                                                                  QStringLiteral("-n"), QStringLiteral("4"), QStringLiteral("--output=/dev/null"),
                                                                  QStringLiteral("--wrap"), QStringLiteral("sleep 300")});
        QVERIFY2(blocker.code == 0, qPrintable(blocker.err));
        const QString plan = writePlan(QStringLiteral("waiting"));
        const Result started = cli({QStringLiteral("--db"), m_db, QStringLiteral("run"), plan, QStringLiteral("--detach")});
        QVERIFY2(started.code == 0, qPrintable(started.out + started.err));
        static const QRegularExpression runLine(QStringLiteral("^run (\\S+)"), QRegularExpression::MultilineOption);
        const QString run = runLine.match(started.out).captured(1);
        QVERIFY2(!run.isEmpty(), qPrintable(started.out));
        QVERIFY2(waitForEvent(run, QRegularExpression(QStringLiteral("Slurm job \\d+ pending \\(Resources\\), position 1 of 1 in the queue")), 60000),
                 qPrintable(events(run)));
        // Still waiting: not taken for a hang however long it waits (hang_timeout_s is 60; the
        // queue clock is not the launch clock), and its state is the run's.
        const Result ps = cli({QStringLiteral("--db"), m_db, QStringLiteral("runs")});
        QVERIFY2(ps.out.contains(run.left(15)), qPrintable(ps.out));

        const Result stop = cli({QStringLiteral("--db"), m_db, QStringLiteral("stop"), run});
        QVERIFY2(stop.code == 0, qPrintable(stop.out + stop.err));
        QVERIFY2(waitForEvent(run, QRegularExpression(QStringLiteral("Slurm job (\\d+) was cancelled")), 60000), qPrintable(events(run)));
        const QString jobId = QRegularExpression(QStringLiteral("Slurm job (\\d+) was cancelled")).match(events(run)).captured(1);
        const Result shown = program(QStringLiteral("scontrol"), {QStringLiteral("show"), QStringLiteral("job"), QStringLiteral("-o"), jobId});
        QVERIFY2(shown.out.contains(QStringLiteral("JobState=CANCELLED")), qPrintable(shown.out + shown.err));
        // The run ends stopped.
        QElapsedTimer clock;
        clock.start();
        QString list;
        while (clock.elapsed() < 30000) {
            list = cli({QStringLiteral("--db"), m_db, QStringLiteral("runs")}).out;
            if (QRegularExpression(QRegularExpression::escape(run) + QStringLiteral(".*stopped")).match(list).hasMatch())
                break;
            QThread::msleep(300);
        }
        QVERIFY2(QRegularExpression(QRegularExpression::escape(run) + QStringLiteral(".*stopped")).match(list).hasMatch(), qPrintable(list));
        program(QStringLiteral("scancel"), {blocker.out.trimmed()});
    }

    void failingJobSaysWhy()
    {
        const QString plan = writePlan(QStringLiteral("failing"));
        const Result r = cli({QStringLiteral("--db"), m_db, QStringLiteral("run"), plan, QStringLiteral("--quiet"), QStringLiteral("--inject"),
                              QStringLiteral("crash@2:3")});
        QCOMPARE(r.code, 1);
        static const QRegularExpression why(QStringLiteral("failed: Slurm job \\d+ failed with exit code 70:0 on host\\[1-2\\] \\(NonZeroExitCode\\); "
                                                           "exit code 70 .*rank 2 on host2 exited with code 70"));
        QVERIFY2(why.match(r.err).hasMatch(), qPrintable(r.err));
    }

    // A job over its time limit (one minute, Slurm's smallest) is ended by Slurm: the run fails as
    // a timeout, saying so, with exit code 124. Takes a minute and a half (Slurm checks limits on
    // its own timer).
    void timeLimitEndsAsTimeout()
    {
        const QString plan = writePlan(QStringLiteral("over-time"), QStringLiteral("slurm"), 2, 2, QStringLiteral(R"(, "time": "1")"), 1000000);
        {
            QFile f(plan); // the time given in writePlan is overridden by the one above: keep only ours
            QVERIFY(f.open(QIODevice::ReadOnly));
            QString text = QString::fromUtf8(f.readAll());
            f.close();
            text.replace(QStringLiteral(R"("time": "00:10:00", )"), QString());
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write(text.toUtf8());
        }
        const Result r = cli({QStringLiteral("--db"), m_db, QStringLiteral("run"), plan, QStringLiteral("--quiet")}, 300000);
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(QStringLiteral("hit its time limit of 00:01:00 on host[1-2]; exit code 124")), qPrintable(r.err));
    }

    void requestsThePartitionCannotHoldStopAtPreflight()
    {
        expectPreflightFailure(writePlan(QStringLiteral("no-partition"), QStringLiteral("slurm"), 2, 2, QStringLiteral(R"(, "partition": "nosuch")")),
                               QStringLiteral("partition nosuch does not exist on this cluster"));
        expectPreflightFailure(writePlan(QStringLiteral("three-nodes"), QStringLiteral("slurm"), 4, 2),
                               QStringLiteral("the default partition has 2 nodes; the plan asks for 4"));
        expectPreflightFailure(writePlan(QStringLiteral("fat-nodes"), QStringLiteral("slurm"), 2, 4),
                               QStringLiteral("the default partition's nodes have 2 CPUs; the plan puts 4 ranks on each"));
    }
};

QTEST_GUILESS_MAIN(TstSlurmLaunch)
#include "tst_slurm_launch.moc"
