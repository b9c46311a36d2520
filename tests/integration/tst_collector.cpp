// Jobs Trellis did not launch, watched through `trellis-cli collect` (docs/collector.md), with real
// parts: the collector process, trellis-trainer started by hand under mpirun, a PyTorch DDP job
// started torchrun-style (its processes given torchrun's variables, as torchrun does) with the
// Python client, CURVE keys, the SQLite history.
//  - two jobs at once become two runs, every rank's every step in the history, ending when the
//    jobs end; the hand-started trainer's losses are bit-equal to the same plan run by Trellis;
//  - a rank stopped (SIGSTOP) in a watched job is named as a stall with its collective, the hang
//    told and the job left running; killed, the job's silence ends its run;
//  - a collector stopped, and one killed, mid-job and started again on its address: the runs go
//    on with every rank's every step once; a job that ended while none listened ends stopped; a
//    damaged watching.json is named;
//  - a client with another collector's keys trains on without telemetry and the collector logs the
//    refusal; Joins of another protocol version, a rank beyond its world, a job without an id are
//    answered with why; a port in use and a key file others can read stop the collector, named.
#include "tests/support/cli_test_support.h"
#include "launcher/history/history_database.h"
#include "backend/protocol/collector_join.h"
#include "backend/protocol/framing.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <cstring>
#include <memory>
#include <tuple>

#include <sys/stat.h>

using namespace trellis::launcher;
using trellis::test::kCli;
using trellis::test::Result;

namespace {

const QString kPython = QStringLiteral("/usr/bin/python3");
const QString kTrainer = QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-trainer");

// `trellis-cli collect` on a loopback port of its own, for one test.
struct CollectorProcess {
    QProcess process;
    QString address, keys, out, err;

    bool start(const QString &db, const QStringList &extra = {}, const QString &bind = QStringLiteral("tcp://127.0.0.1:*"))
    {
        process.start(kCli, QStringList{QStringLiteral("--db"), db, QStringLiteral("collect"), QStringLiteral("--bind"), bind} + extra);
        if (!process.waitForStarted())
            return false;
        static const QRegularExpression give(QStringLiteral("TRELLIS_COLLECTOR=(\\S+) TRELLIS_COLLECTOR_KEYS=(\\S+)"));
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 15000) {
            process.waitForReadyRead(200);
            read();
            const auto m = give.match(out);
            if (m.hasMatch()) {
                address = m.captured(1);
                keys = m.captured(2);
                return true;
            }
            if (process.state() == QProcess::NotRunning)
                return false;
        }
        return false;
    }
    void read()
    {
        out += QString::fromUtf8(process.readAllStandardOutput());
        err += QString::fromUtf8(process.readAllStandardError());
    }
    // Waits until stdout holds `count` matches of `pattern`.
    bool waitFor(const QRegularExpression &pattern, int count, int timeoutMs)
    {
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < timeoutMs) {
            read();
            if (out.count(pattern) + err.count(pattern) >= count)
                return true;
            process.waitForReadyRead(200);
        }
        read();
        return false;
    }
    ~CollectorProcess()
    {
        if (process.state() != QProcess::NotRunning) {
            process.terminate();
            if (!process.waitForFinished(20000))
                process.kill();
            process.waitForFinished();
        }
    }
};

QProcessEnvironment jobEnvironment(const CollectorProcess &c, const QString &keys = {})
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("TRELLIS_COLLECTOR"), c.address);
    env.insert(QStringLiteral("TRELLIS_COLLECTOR_KEYS"), keys.isEmpty() ? c.keys : keys);
    env.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT"), QStringLiteral("1"));
    env.insert(QStringLiteral("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"), QStringLiteral("1"));
    env.insert(QStringLiteral("OPENBLAS_NUM_THREADS"), QStringLiteral("1"));
    env.insert(QStringLiteral("OMP_NUM_THREADS"), QStringLiteral("1"));
    env.insert(QStringLiteral("PYTHONPATH"), QStringLiteral(TRELLIS_SOURCE_DIR "/python"));
    env.remove(QStringLiteral("TRELLIS_TELEMETRY_ENDPOINT"));
    return env;
}

// mpirun -np RANKS trellis-trainer --plan PLAN [ARGS], started by hand (not by Trellis).
void startTrainer(QProcess &p, const QProcessEnvironment &env, const QString &plan, int ranks, const QStringList &extra = {})
{
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral("mpirun"), QStringList{QStringLiteral("-np"), QString::number(ranks), QStringLiteral("--oversubscribe"),
                                                   QStringLiteral("-x"), QStringLiteral("TRELLIS_COLLECTOR"), QStringLiteral("-x"),
                                                   QStringLiteral("TRELLIS_COLLECTOR_KEYS"), QStringLiteral("-x"),
                                                   QStringLiteral("OPENBLAS_NUM_THREADS"), kTrainer, QStringLiteral("--plan"), plan} +
                                          extra);
    p.waitForStarted();
}

// examples/pytorch/train_ddp.py on `ranks` processes given torchrun's variables, as torchrun gives
// them (Debian's torch 1.13 torchrun does not start under Python 3.11).
std::vector<std::unique_ptr<QProcess>> startTorchJob(const QProcessEnvironment &base, int ranks, int steps, int port)
{
    std::vector<std::unique_ptr<QProcess>> out;
    for (int r = 0; r < ranks; ++r) {
        QProcessEnvironment env = base;
        env.insert(QStringLiteral("RANK"), QString::number(r));
        env.insert(QStringLiteral("LOCAL_RANK"), QString::number(r));
        env.insert(QStringLiteral("WORLD_SIZE"), QString::number(ranks));
        env.insert(QStringLiteral("LOCAL_WORLD_SIZE"), QString::number(ranks));
        env.insert(QStringLiteral("MASTER_ADDR"), QStringLiteral("127.0.0.1"));
        env.insert(QStringLiteral("MASTER_PORT"), QString::number(port));
        auto p = std::make_unique<QProcess>();
        p->setProcessEnvironment(env);
        p->setWorkingDirectory(QStringLiteral(TRELLIS_SOURCE_DIR "/examples/pytorch"));
        p->setProcessChannelMode(QProcess::MergedChannels);
        p->start(kPython, {QStringLiteral("train_ddp.py"), QStringLiteral("--steps"), QString::number(steps)});
        out.push_back(std::move(p));
    }
    return out;
}

// The short test plan on `ranks` ranks, `tp` of them a tensor-parallel group (the rest data-parallel).
QString planWith(const QTemporaryDir &dir, const QString &name, int ranks, int steps, int tp = 1)
{
    QFile source(QStringLiteral(TRELLIS_SOURCE_DIR "/tests/data/plans/dp4_short.json"));
    source.open(QIODevice::ReadOnly);
    QJsonObject plan = QJsonDocument::fromJson(source.readAll()).object();
    plan[QStringLiteral("name")] = name;
    QJsonObject parallel = plan[QStringLiteral("parallel")].toObject();
    parallel[QStringLiteral("dp")] = ranks / tp;
    parallel[QStringLiteral("tp")] = tp;
    plan[QStringLiteral("parallel")] = parallel;
    QJsonObject cluster{{QStringLiteral("nodes"),
                         QJsonArray{QJsonObject{{QStringLiteral("host"), QStringLiteral("localhost")}, {QStringLiteral("slots"), ranks}}}}};
    plan[QStringLiteral("cluster")] = cluster;
    QJsonObject training = plan[QStringLiteral("training")].toObject();
    training[QStringLiteral("steps")] = steps;
    QJsonObject data = training[QStringLiteral("data")].toObject();
    data[QStringLiteral("path")] = QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt");
    training[QStringLiteral("data")] = data;
    plan[QStringLiteral("training")] = training;
    const QString path = dir.filePath(name + QStringLiteral(".json"));
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(QJsonDocument(plan).toJson());
    return path;
}

// The run of the history named `name` (the newest), loaded whole once it has ended (the history
// writer commits a moment after the collector says so).
std::optional<RunData> runNamed(const QString &db, const QString &name)
{
    std::optional<RunData> found;
    for (int attempt = 0; attempt < 50; ++attempt) {
        HistoryDatabase h;
        if (!h.open(db, false).isEmpty())
            return std::nullopt;
        for (const RunSummary &r : h.listRuns())
            if (r.name == name) {
                found = h.loadRun(r.id);
                break;
            }
        if (found && found->run.status != QLatin1String("running"))
            return found;
        QTest::qWait(100);
    }
    return found;
}

bool everyStepOfEveryRank(const RunData &run, int ranks, int steps)
{
    QSet<QPair<int, qint64>> seen;
    for (const StepRow &s : run.steps)
        seen.insert({s.rank, s.step});
    return seen.size() == ranks * steps && run.ranks.size() == ranks;
}

} // namespace

class TstCollector : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        if (QProcess::execute(kPython, {QStringLiteral("-c"), QStringLiteral("import torch, zmq, google.protobuf")}) != 0)
            QSKIP("needs Debian's python3-torch, python3-zmq and python3-protobuf (scripts/install-deps.sh)");
    }

    void twoHandStartedJobsAreTwoRuns()
    {
        const QString db = m_dir.filePath(QStringLiteral("two.sqlite"));
        CollectorProcess c;
        QVERIFY2(c.start(db), qPrintable(c.out + c.err));
        QCOMPARE(QFileInfo(c.keys).permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther), QFileDevice::Permissions());
        const QString plan = planWith(m_dir, QStringLiteral("by-hand"), 2, 12);
        QProcess trainer;
        startTrainer(trainer, jobEnvironment(c), plan, 2);
        auto torch = startTorchJob(jobEnvironment(c), 2, 20, 29631);
        QVERIFY(trainer.waitForFinished(180000));
        QVERIFY2(trainer.exitCode() == 0, trainer.readAll().right(2000).constData());
        for (auto &p : torch) {
            QVERIFY(p->waitForFinished(180000));
            QVERIFY2(p->exitCode() == 0, p->readAll().right(2000).constData());
        }
        // Each run ends when its job does: the collector says so (every rank said goodbye).
        static const QRegularExpression completed(QStringLiteral("run \\S+ completed: the job ended"));
        QVERIFY2(c.waitFor(completed, 2, 30000), qPrintable(c.out + c.err));
        const auto byHand = runNamed(db, QStringLiteral("by-hand"));
        QVERIFY(byHand);
        QCOMPARE(byHand->run.status, QStringLiteral("completed"));
        QCOMPARE(byHand->run.target, QStringLiteral("collected"));
        QCOMPARE(toString(byHand->run.kind), QStringLiteral("collected"));
        QVERIFY(everyStepOfEveryRank(*byHand, 2, 12));
        QVERIFY2(c.out.contains(QStringLiteral("job by-hand (mpirun ")), qPrintable(c.out));
        const auto torchRun = runNamed(db, QStringLiteral("train_ddp"));
        QVERIFY(torchRun);
        QCOMPARE(torchRun->run.status, QStringLiteral("completed"));
        QVERIFY(everyStepOfEveryRank(*torchRun, 2, 20));
        QVERIFY2(c.out.contains(QStringLiteral("job train_ddp (torchrun 127.0.0.1:29631), 2 ranks (trellis_telemetry")), qPrintable(c.out));
        // Nothing lost or changed on the way: the same plan run by Trellis has the same losses.
        const Result launched = trellis::test::cli({QStringLiteral("--db"), db, QStringLiteral("run"), plan, QStringLiteral("--quiet")});
        QVERIFY2(launched.code == 0, qPrintable(trellis::test::failure(launched)));
        const QString launchedId = launched.out.section(QLatin1Char('\n'), 0, 0).mid(4).trimmed();
        for (int rank = 0; rank < 2; ++rank) {
            const auto collected = trellis::test::lossesOf(db, byHand->run.runId, rank);
            QCOMPARE(collected.size(), std::size_t(12));
            QVERIFY(collected == trellis::test::lossesOf(db, launchedId, rank));
        }
    }

    // A rank stopped for good in a watched job: a stall named with the collective the others wait
    // in, the hang told (the job is left running: Trellis did not start it); killed by its owner,
    // the job goes silent and its run ends so. The job is two tensor-parallel pairs, {0,1} and
    // {2,3}, data-parallel across: a plan the collector does not know. (That a rank holding up a
    // group other than the world is named from the members sent with each wait is shown by
    // tests/pytorch/pair_groups.py, where only the members tell the holder; here the stopped rank is
    // the one silent rank either way.)
    void stoppedRankInAWatchedJob()
    {
        const QString db = m_dir.filePath(QStringLiteral("stop.sqlite"));
        CollectorProcess c;
        QVERIFY2(c.start(db, {QStringLiteral("--hang-confirm"), QStringLiteral("3")}), qPrintable(c.out + c.err));
        const QString plan = planWith(m_dir, QStringLiteral("stopped-by-hand"), 4, 400, 2);
        QProcess trainer;
        startTrainer(trainer, jobEnvironment(c), plan, 4, {QStringLiteral("--inject"), QStringLiteral("stop@1:10")});
        const auto killJob = qScopeGuard([&] {
            QProcess::execute(QStringLiteral("pkill"), {QStringLiteral("-KILL"), QStringLiteral("-f"), plan});
            trainer.waitForFinished(10000);
        });
        static const QRegularExpression stall(QStringLiteral("stall: rank 1 on \\S+ stopped responding .*ranks 2,3 wait in dp all_reduce"));
        QVERIFY2(c.waitFor(stall, 1, 60000), qPrintable(c.err));
        static const QRegularExpression hang(QStringLiteral("hang: .* left running"));
        QVERIFY2(c.waitFor(hang, 1, 30000), qPrintable(c.err));
        QVERIFY2(!trainer.waitForFinished(200), qPrintable(QString::fromUtf8(trainer.readAll().right(3000)) + c.err)); // told, not acted on
        QCOMPARE(c.err.count(QStringLiteral("hang: ")), 1); // once, however long it stays so
        QProcess::execute(QStringLiteral("pkill"), {QStringLiteral("-KILL"), QStringLiteral("-f"), plan});
        static const QRegularExpression silent(QStringLiteral("run \\S+ failed: the job went silent"));
        QVERIFY2(c.waitFor(silent, 1, 60000), qPrintable(c.out + c.err));
        const auto run = runNamed(db, QStringLiteral("stopped-by-hand"));
        QVERIFY(run);
        QCOMPARE(run->run.status, QStringLiteral("failed"));
        QVERIFY(!run->stalls.isEmpty());
        QCOMPARE(run->stalls.first().holders, QList<int>{1});
    }

    // A job whose own launcher starts it again after a failure (torchrun's elastic restart: the
    // same job, TORCHELASTIC_RESTART_COUNT one higher) continues its run as the next attempt.
    void aJobStartedAgainContinuesItsRun()
    {
        const QString db = m_dir.filePath(QStringLiteral("elastic.sqlite"));
        CollectorProcess c;
        QVERIFY2(c.start(db, {QStringLiteral("--hang-confirm"), QStringLiteral("10")}), qPrintable(c.out + c.err));
        const QString script = QStringLiteral("import sys, trellis_telemetry\n"
                                              "run = trellis_telemetry.init()\n"
                                              "for s in range(1, 6):\n"
                                              "    run.step(s, loss=5.0 - 0.1 * s, tokens=64, total_steps=5)\n"
                                              "if sys.argv[1] == 'fail':\n"
                                              "    raise RuntimeError('the first attempt fails')\n");
        auto attempt = [&](int count, const QString &how) {
            QProcessEnvironment env = jobEnvironment(c);
            env.insert(QStringLiteral("TRELLIS_JOB_NAME"), QStringLiteral("elastic"));
            env.insert(QStringLiteral("TORCHELASTIC_RUN_ID"), QStringLiteral("elastic-1"));
            env.insert(QStringLiteral("TORCHELASTIC_RESTART_COUNT"), QString::number(count));
            env.insert(QStringLiteral("RANK"), QStringLiteral("0"));
            env.insert(QStringLiteral("WORLD_SIZE"), QStringLiteral("1"));
            QProcess p;
            p.setProcessEnvironment(env);
            p.setProcessChannelMode(QProcess::MergedChannels);
            p.start(kPython, {QStringLiteral("-c"), script, how});
            p.waitForFinished(60000);
            return p.exitCode();
        };
        QCOMPARE(attempt(0, QStringLiteral("fail")), 1);
        QCOMPARE(attempt(1, QStringLiteral("pass")), 0);
        static const QRegularExpression completed(QStringLiteral("run \\S+ completed: the job ended"));
        QVERIFY2(c.waitFor(completed, 1, 30000), qPrintable(c.out + c.err));
        QCOMPARE(c.out.count(QStringLiteral(": job elastic (torchrun elastic-1)")), 1); // one run for both attempts
        const auto run = runNamed(db, QStringLiteral("elastic"));
        QVERIFY(run);
        QCOMPARE(run->run.status, QStringLiteral("completed"));
        bool restarted = false;
        for (const EventRow &e : run->events)
            restarted = restarted || e.message.contains(QStringLiteral("the job's own launcher started attempt 1"));
        QVERIFY(restarted);
    }

    // A collector stopped (SIGTERM) and then one killed (SIGKILL) in the middle of two jobs, each
    // started again on the same address: both runs go on, nothing lost — every rank's every step in
    // the history, once — and each ends when its job does. A job that ends while no collector
    // listens ends its run as stopped once one starts again and hears nothing from it.
    void aCollectorStartedAgainLosesNothing()
    {
        const QString db = m_dir.filePath(QStringLiteral("again.sqlite"));
        const QStringList confirm{QStringLiteral("--hang-confirm"), QStringLiteral("4")};
        auto c = std::make_unique<CollectorProcess>();
        QVERIFY2(c->start(db, confirm), qPrintable(c->out + c->err));
        const QString bind = QStringLiteral("tcp://127.0.0.1:") + c->address.section(QLatin1Char(':'), -1);
        const QProcessEnvironment env = jobEnvironment(*c);
        // A paced PyTorch-style job (the Python client, 2 ranks) and trellis-trainer by hand under
        // mpirun (2 ranks, rank 0 200 ms slower a step, so the whole job is).
        const QString paced = QStringLiteral("import sys, time, trellis_telemetry\n"
                                             "run = trellis_telemetry.init()\n"
                                             "steps = int(sys.argv[1])\n"
                                             "for s in range(1, steps + 1):\n"
                                             "    time.sleep(0.04)\n"
                                             "    run.step(s, loss=1.0 / s, tokens=64, total_steps=steps)\n");
        auto pythonJob = [&](const QString &name, int ranks, int steps) {
            std::vector<std::unique_ptr<QProcess>> job;
            for (int r = 0; r < ranks; ++r) {
                QProcessEnvironment e = env;
                e.insert(QStringLiteral("TRELLIS_JOB_NAME"), name);
                e.insert(QStringLiteral("TRELLIS_JOB_ID"), name + QStringLiteral("-1"));
                e.insert(QStringLiteral("RANK"), QString::number(r));
                e.insert(QStringLiteral("WORLD_SIZE"), QString::number(ranks));
                auto p = std::make_unique<QProcess>();
                p->setProcessEnvironment(e);
                p->setProcessChannelMode(QProcess::MergedChannels);
                p->start(kPython, {QStringLiteral("-c"), paced, QString::number(steps)});
                job.push_back(std::move(p));
            }
            return job;
        };
        auto python = pythonJob(QStringLiteral("paced"), 2, 400);
        const QString plan = planWith(m_dir, QStringLiteral("again-by-hand"), 2, 80);
        QProcess trainer;
        startTrainer(trainer, env, plan, 2, {QStringLiteral("--inject"), QStringLiteral("slow@0:1")});
        const auto cleanUp = qScopeGuard([&] {
            QProcess::execute(QStringLiteral("pkill"), {QStringLiteral("-KILL"), QStringLiteral("-f"), plan});
            for (auto &p : python)
                p->kill();
        });
        static const QRegularExpression joined(QStringLiteral("run \\S+: job (paced|again-by-hand) "));
        QVERIFY2(c->waitFor(joined, 2, 60000), qPrintable(c->out + c->err));
        QTest::qWait(1500);
        // Stopped: the runs end as stopped, saying a collector started again takes them up.
        c->process.terminate();
        QVERIFY(c->process.waitForFinished(30000));
        c->read();
        QCOMPARE(c->out.count(QStringLiteral(" stopped: the collector stopped while the job ran")), 2);
        QTest::qWait(1000);
        static const QRegularExpression takenUp(QStringLiteral("run \\S+: job (paced|again-by-hand|gone) .*, taken up again"));
        c = std::make_unique<CollectorProcess>();
        QVERIFY2(c->start(db, confirm, bind), qPrintable(c->out + c->err));
        QVERIFY2(c->waitFor(takenUp, 2, 10000), qPrintable(c->out + c->err));
        // A third job joins this collector; then the collector is killed, and the job with it.
        auto gone = pythonJob(QStringLiteral("gone"), 1, 100000);
        static const QRegularExpression goneJoined(QStringLiteral("run \\S+: job gone "));
        QVERIFY2(c->waitFor(goneJoined, 1, 30000), qPrintable(c->out + c->err));
        QTest::qWait(1500);
        c->process.kill();
        QVERIFY(c->process.waitForFinished(10000));
        gone.front()->kill();
        gone.front()->waitForFinished(10000);
        QTest::qWait(1000);
        c = std::make_unique<CollectorProcess>();
        QVERIFY2(c->start(db, confirm, bind), qPrintable(c->out + c->err));
        QVERIFY2(c->waitFor(takenUp, 3, 10000), qPrintable(c->out + c->err));
        QVERIFY(trainer.waitForFinished(120000));
        QVERIFY2(trainer.exitCode() == 0, trainer.readAll().right(2000).constData());
        for (auto &p : python) {
            QVERIFY(p->waitForFinished(120000));
            QVERIFY2(p->exitCode() == 0, p->readAll().right(2000).constData());
        }
        static const QRegularExpression completed(QStringLiteral("run \\S+ completed: the job ended"));
        QVERIFY2(c->waitFor(completed, 2, 30000), qPrintable(c->out + c->err));
        static const QRegularExpression noneCameBack(QStringLiteral("run \\S+ stopped: no rank of the job reported within 4 s"));
        QVERIFY2(c->waitFor(noneCameBack, 1, 30000), qPrintable(c->out + c->err));
        for (const auto &[name, ranks, steps] : {std::tuple{QStringLiteral("paced"), 2, 400}, std::tuple{QStringLiteral("again-by-hand"), 2, 80}}) {
            const auto run = runNamed(db, name);
            QVERIFY(run);
            QCOMPARE(run->run.status, QStringLiteral("completed"));
            QVERIFY2(everyStepOfEveryRank(*run, ranks, steps), qPrintable(name));
            QCOMPARE(run->steps.size(), ranks * steps); // each once
            int resumed = 0;
            for (const EventRow &e : run->events)
                resumed += e.kind == QLatin1String("resumed") ? 1 : 0;
            QCOMPARE(resumed, 2);
        }
        const auto goneRun = runNamed(db, QStringLiteral("gone"));
        QVERIFY(goneRun);
        QCOMPARE(goneRun->run.status, QStringLiteral("stopped"));
        // Ended for good: a collector started once more takes up nothing.
        c->process.terminate();
        QVERIFY(c->process.waitForFinished(30000));
        c = std::make_unique<CollectorProcess>();
        QVERIFY2(c->start(db, confirm, bind), qPrintable(c->out + c->err));
        QTest::qWait(500);
        c->read();
        QVERIFY2(!c->out.contains(QStringLiteral("taken up again")), qPrintable(c->out));
        // A run folder's watching.json damaged on disk: named, the run left as it is, the
        // collector listening on.
        c->process.terminate();
        QVERIFY(c->process.waitForFinished(30000));
        QFile damaged(m_dir.filePath(QStringLiteral("runs/%1/watching.json").arg(goneRun->run.runId)));
        QVERIFY(damaged.open(QIODevice::WriteOnly));
        damaged.write("{\"name\": \"gone\", \"world_size\": -3");
        damaged.close();
        c = std::make_unique<CollectorProcess>();
        QVERIFY2(c->start(db, confirm, bind), qPrintable(c->out + c->err));
        static const QRegularExpression named(QStringLiteral("run \\S+ is not taken up again: \\S+/watching.json: not a JSON object"));
        QVERIFY2(c->waitFor(named, 1, 5000), qPrintable(c->out + c->err));
        QVERIFY(c->process.state() == QProcess::Running);
        QCOMPARE(runNamed(db, QStringLiteral("gone"))->run.status, QStringLiteral("stopped"));
    }

    void badClientsAreRefusedWithTheReason()
    {
        const QString db = m_dir.filePath(QStringLiteral("bad.sqlite"));
        CollectorProcess c, other;
        QVERIFY2(c.start(db), qPrintable(c.out + c.err));
        QVERIFY2(other.start(m_dir.filePath(QStringLiteral("other.sqlite")), {QStringLiteral("--keys"), m_dir.filePath(QStringLiteral("other.keys"))}),
                 qPrintable(other.out + other.err));
        // Another collector's key file: the job trains on without telemetry, the refusal is logged.
        auto job = startTorchJob(jobEnvironment(c, other.keys), 1, 3, 29632);
        QVERIFY(job.front()->waitForFinished(120000));
        const QString said = QString::fromUtf8(job.front()->readAll());
        QCOMPARE(job.front()->exitCode(), 0);
        QVERIFY2(said.contains(QStringLiteral("not reporting to a collector: no answer")), qPrintable(said));
        static const QRegularExpression refused(QStringLiteral("refused: .*refused"));
        QVERIFY2(c.waitFor(refused, 1, 15000), qPrintable(c.err));
        // Joins that cannot be taken are answered with why, and logged with the rank and host.
        const auto env = [&c](const char *name) -> const char * {
            static QByteArray a, k;
            a = c.address.toUtf8();
            k = c.keys.toUtf8();
            if (!std::strcmp(name, "TRELLIS_COLLECTOR"))
                return a.constData();
            if (!std::strcmp(name, "TRELLIS_COLLECTOR_KEYS"))
                return k.constData();
            return nullptr;
        };
        auto join = [&](std::uint32_t version, std::uint32_t rank, std::uint32_t world, const std::string &id) {
            trellis::proto::Join j;
            j.set_protocol_version(version);
            j.set_job_name("odd");
            j.set_job_id(id);
            j.set_rank(rank);
            j.set_world_size(world);
            j.set_host("somehost");
            return trellis::proto::joinCollector(j, 5000, env);
        };
        QVERIFY2(QString::fromStdString(join(2, 0, 2, "x").error).contains(QStringLiteral("speaks telemetry protocol 3")),
                 qPrintable(QString::fromStdString(join(2, 0, 2, "x").error)));
        QVERIFY(QString::fromStdString(join(3, 5, 2, "x").error).contains(QStringLiteral("rank 5 is beyond the job's world size 2")));
        QVERIFY(QString::fromStdString(join(3, 0, 2, "").error).contains(QStringLiteral("set TRELLIS_JOB_ID")));
        const auto ok = join(3, 0, 2, "x");
        QVERIFY2(ok.error.empty() && ok.endpoint.rfind("tcp://127.0.0.1:", 0) == 0, ok.error.c_str());
        QVERIFY(QString::fromStdString(join(3, 1, 3, "x").error).contains(QStringLiteral("two jobs claim the same name and id")));
        static const QRegularExpression logged(QStringLiteral("refused: rank 5 on somehost: rank 5 is beyond"));
        QVERIFY2(c.waitFor(logged, 1, 10000), qPrintable(c.err));
    }

    void aPortInUseOrAnOpenKeyFileStopsTheCollector()
    {
        const QString db = m_dir.filePath(QStringLiteral("port.sqlite"));
        CollectorProcess c;
        QVERIFY2(c.start(db), qPrintable(c.out + c.err));
        const QString taken = QStringLiteral("tcp://127.0.0.1:") + c.address.section(QLatin1Char(':'), -1);
        const Result second = trellis::test::cli({QStringLiteral("--db"), db, QStringLiteral("collect"), QStringLiteral("--bind"), taken,
                                                  QStringLiteral("--keys"), m_dir.filePath(QStringLiteral("second.keys"))},
                                                 20000);
        QCOMPARE(second.code, 1);
        QVERIFY2(second.err.contains(QStringLiteral("cannot listen on ") + taken) && second.err.contains(QStringLiteral("in use")),
                 qPrintable(second.err));
        const QString open = m_dir.filePath(QStringLiteral("open.keys"));
        QVERIFY(QFile::copy(QFileInfo(c.keys).absolutePath() + QStringLiteral("/collector.keys"), open));
        ::chmod(open.toLocal8Bit().constData(), 0644);
        const Result third = trellis::test::cli({QStringLiteral("--db"), db, QStringLiteral("collect"), QStringLiteral("--bind"),
                                                 QStringLiteral("tcp://127.0.0.1:*"), QStringLiteral("--keys"), open},
                                                20000);
        QCOMPARE(third.code, 1);
        QVERIFY2(third.err.contains(open) && third.err.contains(QStringLiteral("readable by others")), qPrintable(third.err));
    }
};

QTEST_GUILESS_MAIN(TstCollector)
#include "tst_collector.moc"
