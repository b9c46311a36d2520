// The slurm target's pure parts: the batch script (validated #SBATCH values, every word of its one
// command quoted), scontrol's job line read into fields (and unexpected output refused), job ends
// mapped to exit codes and sentences, the "[slurm]" state lines the supervisor reads, and the
// target's command (slurm-job around mpirun, ranks in mesh order, keys by file). The real cluster
// is tests/integration/tst_slurm_launch.
#include "launcher/targets/slurm_target.h"
#include "backend/plan/plan_json.h"
#include "backend/plan/plan_validate.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace trellis::launcher;

class TstSlurmJob : public QObject {
    Q_OBJECT
private slots:
    void scriptHasTheJobsShapeAndQuotesEveryWord()
    {
        SlurmJobRequest r;
        r.dir = QStringLiteral("/shared/runs/R1");
        r.name = QStringLiteral("R1");
        r.nodes = 2;
        r.tasksPerNode = 4;
        r.partition = QStringLiteral("gpu");
        r.account = QStringLiteral("ml-team");
        r.time = QStringLiteral("01:30:00");
        r.gres = QStringLiteral("gpu:4");
        r.program = QStringLiteral("mpirun");
        // A word with a quote, a command substitution, a backquote and a semicolon: data, never
        // shell syntax. The substitutions would only create files in the test's own folder, which
        // the test then looks for (harmless even if quoting were broken).
        QTemporaryDir dir;
        const QString word = QStringLiteral("it's $(touch injected-dollar); `touch injected-tick`; x");
        r.arguments = {QStringLiteral("-np"), QStringLiteral("8"), word};
        const QString script = slurmBatchScript(r);
        for (const QString &line : {QStringLiteral("#SBATCH --job-name=R1"), QStringLiteral("#SBATCH --nodes=2"),
                                    QStringLiteral("#SBATCH --ntasks-per-node=4"), QStringLiteral("#SBATCH --partition=gpu"),
                                    QStringLiteral("#SBATCH --account=ml-team"), QStringLiteral("#SBATCH --time=01:30:00"),
                                    QStringLiteral("#SBATCH --gres=gpu:4"), QStringLiteral("#SBATCH --output=/shared/runs/R1/slurm-%j.out")})
            QVERIFY2(script.contains(line + QLatin1Char('\n')), qPrintable(line + QStringLiteral(" missing from\n") + script));
        QVERIFY(!script.contains(QStringLiteral("--qos"))); // empty values are left out
        QVERIFY(script.startsWith(QStringLiteral("#!/bin/sh\n")));

        // What a shell makes of the command line: exactly the words given, nothing run.
        const QString path = dir.filePath(QStringLiteral("job.sh"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(script.toUtf8().replace("exec 'mpirun'", "exec printf '%s\\n'"));
        f.close();
        QProcess sh;
        sh.setWorkingDirectory(dir.path());
        sh.start(QStringLiteral("/bin/sh"), {path});
        QVERIFY(sh.waitForFinished(10000));
        QCOMPARE(QString::fromUtf8(sh.readAllStandardOutput()), QStringLiteral("-np\n8\n") + word + QLatin1Char('\n'));
        QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("injected-dollar"))));
        QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("injected-tick"))));
    }

    void timeLimitsInSbatchForms()
    {
        for (const char *t : {"30", "30:00", "01:30:00", "2-00", "2-12:00", "2-12:00:00", "UNLIMITED", "INFINITE"})
            QVERIFY2(trellis::plan::isSlurmTime(t), t);
        for (const char *t : {"", "1 hour", "1:2:3:4", "-5", "a-01", "2-", ":30", "01::00", "1h", "2-1:2:3:4"})
            QVERIFY2(!trellis::plan::isSlurmTime(t), t);
    }

    void scontrolLinesAreRead()
    {
        QString error;
        const QByteArray line =
            "JobId=42 JobName=R1 UserId=root(0) JobState=PENDING Reason=Resources Dependency=(null) ExitCode=0:0 "
            "TimeLimit=01:00:00 Partition=debug NodeList=(null) Command=/shared/runs/my dir/slurm-job.sh WorkDir=/shared\n";
        const auto job = parseScontrolJob(line, error);
        QVERIFY2(job, qPrintable(error));
        QCOMPARE(job->value(QStringLiteral("JobId")), QStringLiteral("42"));
        QCOMPARE(job->value(QStringLiteral("JobState")), QStringLiteral("PENDING"));
        QCOMPARE(job->value(QStringLiteral("Reason")), QStringLiteral("Resources"));
        QCOMPARE(job->value(QStringLiteral("Command")), QStringLiteral("/shared/runs/my dir/slurm-job.sh")); // a value with a space
        QCOMPARE(job->value(QStringLiteral("Partition")), QStringLiteral("debug"));
        // Not a job line: an error naming what came, never a crash or a made-up state.
        for (const QByteArray &bad : {QByteArray(), QByteArray("slurm_load_jobs error: Socket timed out on send/recv operation"),
                                     QByteArray("JobId=7 nothing else"), QByteArray("\x01\x02 = = ==")}) {
            error.clear();
            QVERIFY(!parseScontrolJob(bad, error));
            QVERIFY2(error.startsWith(QStringLiteral("unexpected scontrol output")), qPrintable(error));
        }
    }

    void jobEndsMapToExitCodes()
    {
        QCOMPARE(slurmExitCode(QStringLiteral("COMPLETED"), QStringLiteral("0:0")), 0);
        QCOMPARE(slurmExitCode(QStringLiteral("FAILED"), QStringLiteral("70:0")), 70);
        QCOMPARE(slurmExitCode(QStringLiteral("FAILED"), QStringLiteral("0:9")), 137);
        QCOMPARE(slurmExitCode(QStringLiteral("FAILED"), QStringLiteral("0:0")), 1);
        QCOMPARE(slurmExitCode(QStringLiteral("CANCELLED"), QStringLiteral("0:15")), 143);
        QCOMPARE(slurmExitCode(QStringLiteral("CANCELLED by 0"), QStringLiteral("0:0")), 143);
        QCOMPARE(slurmExitCode(QStringLiteral("TIMEOUT"), QStringLiteral("0:0")), 124);
        QCOMPARE(slurmExitCode(QStringLiteral("OUT_OF_MEMORY"), QStringLiteral("0:125")), 137);
        QCOMPARE(slurmExitCode(QStringLiteral("NODE_FAIL"), QStringLiteral("0:0")), 75);
        QCOMPARE(slurmExitCode(QStringLiteral("PREEMPTED"), QStringLiteral("0:0")), 75);
        QCOMPARE(slurmExitCode(QStringLiteral("BOOT_FAIL"), QStringLiteral("0:0")), 75);
        for (const char *s : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED"})
            QVERIFY(isFinalSlurmState(QString::fromLatin1(s)));
        for (const char *s : {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", ""})
            QVERIFY(!isFinalSlurmState(QString::fromLatin1(s)));

        QMap<QString, QString> job{{QStringLiteral("JobId"), QStringLiteral("9")}, {QStringLiteral("JobState"), QStringLiteral("TIMEOUT")},
                                   {QStringLiteral("TimeLimit"), QStringLiteral("00:01:00")}, {QStringLiteral("NodeList"), QStringLiteral("host[1-2]")},
                                   {QStringLiteral("Reason"), QStringLiteral("TimeLimit")}};
        QCOMPARE(describeSlurmEnd(job), QStringLiteral("Slurm job 9 hit its time limit of 00:01:00 on host[1-2]"));
        job[QStringLiteral("JobState")] = QStringLiteral("NODE_FAIL");
        job[QStringLiteral("Reason")] = QStringLiteral("NodeDown");
        QCOMPARE(describeSlurmEnd(job), QStringLiteral("Slurm job 9 lost a node on host[1-2] (NodeDown)"));
        job[QStringLiteral("JobState")] = QStringLiteral("CANCELLED");
        job[QStringLiteral("Reason")] = QStringLiteral("Resources");
        QCOMPARE(describeSlurmEnd(job), QStringLiteral("Slurm job 9 was cancelled on host[1-2]"));
    }

    void stateLinesAreRead()
    {
        const auto pending = parseSlurmLine(
            QStringLiteral("[slurm] job=12 state=PENDING reason=Resources position=2/5 | Slurm job 12 pending (Resources), position 2 of 5 in the queue"));
        QVERIFY(pending);
        QCOMPARE(pending->jobId, QStringLiteral("12"));
        QCOMPARE(pending->state, QStringLiteral("PENDING"));
        QCOMPARE(pending->reason, QStringLiteral("Resources"));
        QCOMPARE(pending->position, 2);
        QCOMPARE(pending->queued, 5);
        QCOMPARE(pending->detail, QStringLiteral("Slurm job 12 pending (Resources), position 2 of 5 in the queue"));
        // The human part may say "job 12" without spoiling the fields.
        const auto submitted = parseSlurmLine(QStringLiteral("[slurm] job=12 state=SUBMITTED | submitted /x/slurm-job.sh as Slurm job 12"));
        QVERIFY(submitted);
        QCOMPARE(submitted->jobId, QStringLiteral("12"));
        const auto done = parseSlurmLine(QStringLiteral("[slurm] job=12 state=FAILED reason=NonZeroExitCode nodes=host[1-2] exit=70:0"));
        QVERIFY(done);
        QCOMPARE(done->exitCode, QStringLiteral("70:0"));
        QCOMPARE(done->nodes, QStringLiteral("host[1-2]"));
        for (const QString &bad : {QStringLiteral("[slurm] state=RUNNING"), QStringLiteral("[1,0]<stdout>:[slurm] job=1 state=X"),
                                   QStringLiteral("slurm job=1 state=RUNNING"), QStringLiteral("[slurm] job=3")})
            QVERIFY2(!parseSlurmLine(bad), qPrintable(bad));
    }

    void commandRunsTheJobUnderSlurmJob()
    {
        auto plan = trellis::plan::parsePlan(R"({"schema": "trellis.plan/1", "name": "s",
            "model": {"layers": 2, "hidden": 64, "heads": 4, "ffn": 256, "seq_len": 64, "vocab": 256},
            "cluster": {"nodes": [{"host": "a", "slots": 2}, {"host": "b", "slots": 2}]},
            "parallel": {"dp": 2, "pp": 2, "micro_batch_size": 2, "micro_batches": 2},
            "training": {"steps": 2},
            "launch": {"target": "slurm", "slurm": {"partition": "debug", "qos": "high", "time": "2-00:00:00", "mpi_interface": "10.0.0.0/24"}}})");
        QVERIFY2(plan, plan.errorText().c_str());
        QTemporaryDir dir;
        TargetOptions options;
        options.trainerPath = QStringLiteral("/opt/trellis/bin/trellis-trainer");
        options.workDir = dir.path();
        options.cliPath = QStringLiteral("/opt/trellis/bin/trellis-cli");
        SlurmTarget target(plan.value(), options);
        QCOMPARE(target.stage({QStringLiteral("R1"), plan.value(), options.trainerPath, {}}), QString());
        QCOMPARE(target.jobDir(), dir.path()); // no shared_dir: the run folder itself
        QVERIFY(QFileInfo::exists(dir.filePath(QStringLiteral("job-plan.json"))));
        LaunchRequest request;
        request.trainerPath = options.trainerPath;
        request.runId = QStringLiteral("R1");
        request.endpoint = QStringLiteral("tcp://10.0.0.1:5555");
        const LaunchCommand c = target.command(plan.value(), request);
        QCOMPARE(c.program, options.cliPath);
        const QString line = c.arguments.join(QLatin1Char(' '));
        QVERIFY2(line.startsWith(QStringLiteral("slurm-job --dir %1 --name R1 --nodes 2 --tasks-per-node 2 --partition debug --qos high "
                                                "--time 2-00:00:00 -- mpirun -np 4 ").arg(dir.path())),
                 qPrintable(line));
        QVERIFY2(line.contains(QStringLiteral("--mca btl_tcp_if_include 10.0.0.0/24")), qPrintable(line));
        QVERIFY2(line.contains(QStringLiteral("/opt/trellis/bin/trellis-trainer --plan %1/job-plan.json --run-id R1 --endpoint tcp://10.0.0.1:5555")
                                   .arg(dir.path())),
                 qPrintable(line));
        QVERIFY(!line.contains(QStringLiteral("--gres"))); // CPU nodes
    }
};

QTEST_GUILESS_MAIN(TstSlurmJob)
#include "tst_slurm_job.moc"
