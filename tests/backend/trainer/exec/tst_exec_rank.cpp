// trellis-trainer --exec (backend/trainer/exec): the rank shim of a job with its own trainer sets
// torchrun's variables from mpirun's and the telemetry's from its options, then execs the command
// as given (no shell); a command that cannot run is named with 127 or 126.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

class TstExecRank : public QObject {
    Q_OBJECT
    QString m_trainer = QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-trainer");

    // Runs the shim with mpirun's variables for rank `rank` of `size` (none when size is 0).
    int shim(const QStringList &args, QString &output, int rank = 1, int size = 2)
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char *name : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                                 "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                                 "OMPI_COMM_WORLD_LOCAL_SIZE", "PMIX_RANK", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"})
            env.remove(QString::fromLatin1(name));
        if (size > 0) {
            env.insert(QStringLiteral("OMPI_COMM_WORLD_RANK"), QString::number(rank));
            env.insert(QStringLiteral("OMPI_COMM_WORLD_SIZE"), QString::number(size));
            env.insert(QStringLiteral("OMPI_COMM_WORLD_LOCAL_RANK"), QString::number(rank));
            env.insert(QStringLiteral("OMPI_COMM_WORLD_LOCAL_SIZE"), QString::number(size));
        }
        QProcess p;
        p.setProcessEnvironment(env);
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(m_trainer, QStringList{QStringLiteral("--exec")} + args);
        if (!p.waitForFinished(30000))
            return -1;
        output = QString::fromUtf8(p.readAll());
        return p.exitCode();
    }

private slots:
    void setsTorchrunsAndTrellisVariables()
    {
        QTemporaryDir dir;
        QString out;
        const int code = shim({QStringLiteral("--run-id"), QStringLiteral("r1"), QStringLiteral("--endpoint"), QStringLiteral("ipc:///x"),
                               QStringLiteral("--protocol"), QStringLiteral("3"), QStringLiteral("--heartbeat-ms"), QStringLiteral("250"),
                               QStringLiteral("--master-addr"), QStringLiteral("node0"), QStringLiteral("--master-port"), QStringLiteral("29501"),
                               QStringLiteral("--restart-count"), QStringLiteral("2"), QStringLiteral("--checkpoint-dir"), QStringLiteral("ckpt"),
                               QStringLiteral("--dir"), dir.path(), QStringLiteral("--env"), QStringLiteral("GREETING=a b;c"),
                               QStringLiteral("--"), QStringLiteral("/bin/sh"), QStringLiteral("-c"),
                               QStringLiteral("env; pwd; echo \"arg=$0\""), QStringLiteral("$(not run)")},
                              out);
        QCOMPARE(code, 0);
        for (const char *line : {"RANK=1", "WORLD_SIZE=2", "LOCAL_RANK=1", "LOCAL_WORLD_SIZE=2", "MASTER_ADDR=node0", "MASTER_PORT=29501",
                                 "TRELLIS_RUN_ID=r1", "TRELLIS_TELEMETRY_ENDPOINT=ipc:///x", "TRELLIS_PROTOCOL_VERSION=3",
                                 "TRELLIS_HEARTBEAT_MS=250", "TRELLIS_RESTART_COUNT=2", "TORCHELASTIC_RESTART_COUNT=2",
                                 "GREETING=a b;c", "arg=$(not run)"})
            QVERIFY2(out.contains(QLatin1Char('\n') + QString::fromLatin1(line) + QLatin1Char('\n')) ||
                         out.startsWith(QString::fromLatin1(line) + QLatin1Char('\n')),
                     qPrintable(QStringLiteral("%1 missing in:\n%2").arg(QString::fromLatin1(line), out)));
        QVERIFY2(out.contains(QStringLiteral("\n") + dir.path() + QStringLiteral("\n")), qPrintable(out)); // ran in --dir
        // The checkpoint folder: made absolute against where the rank started, and created.
        const QString ckpt = QDir::currentPath() + QStringLiteral("/ckpt");
        QVERIFY2(out.contains(QStringLiteral("TRELLIS_CHECKPOINT_DIR=") + ckpt), qPrintable(out));
        QVERIFY(QDir(ckpt).exists());
        QDir(ckpt).removeRecursively();
    }

    void commandThatCannotRunIsNamed()
    {
        QTemporaryDir dir;
        QString out;
        QCOMPARE(shim({QStringLiteral("--"), dir.filePath(QStringLiteral("missing.py"))}, out), 127);
        QVERIFY2(out.contains(QStringLiteral("rank 1: cannot run '%1': No such file or directory").arg(dir.filePath(QStringLiteral("missing.py")))),
                 qPrintable(out));
        QFile plain(dir.filePath(QStringLiteral("plain.txt")));
        QVERIFY(plain.open(QIODevice::WriteOnly));
        plain.close();
        QCOMPARE(shim({QStringLiteral("--"), plain.fileName()}, out), 126);
        QVERIFY2(out.contains(QStringLiteral("Permission denied")), qPrintable(out));
    }

    void badUsage()
    {
        QString out;
        QCOMPARE(shim({QStringLiteral("--"), QStringLiteral("/bin/true")}, out, 0, 0), 2);
        QVERIFY2(out.contains(QStringLiteral("cannot tell this process's rank")), qPrintable(out));
        QCOMPARE(shim({QStringLiteral("--env"), QStringLiteral("1X=y"), QStringLiteral("--"), QStringLiteral("/bin/true")}, out), 2);
        QVERIFY2(out.contains(QStringLiteral("--env takes NAME=VALUE")), qPrintable(out));
        QCOMPARE(shim({QStringLiteral("--master-port")}, out), 2);
        QCOMPARE(shim({}, out), 2);
        QVERIFY2(out.contains(QStringLiteral("no command after --")), qPrintable(out));
        QCOMPARE(shim({QStringLiteral("--help")}, out), 0);
        QVERIFY2(out.contains(QStringLiteral("usage: trellis-trainer --exec")), qPrintable(out));
    }
};

QTEST_GUILESS_MAIN(TstExecRank)
#include "tst_exec_rank.moc"
