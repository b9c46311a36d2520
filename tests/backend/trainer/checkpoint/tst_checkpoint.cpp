// Checkpoints under a real mpirun: a run stopped (crashed) and resumed is bitwise identical to an
// uninterrupted one; a checkpoint written at dp=4 resumes at dp=2 and dp=1 (every ZeRO stage, and
// across stages) with the same loss curve; truncated, corrupt and incomplete checkpoints are skipped with a message
// naming the file; a checkpoint of another model is refused; local updates (DiLoCo, local SGD)
// resume bitwise, each replica its own state, and only at the dp degree and mode that wrote them;
// PowerSGD resumes bitwise with each rank's error feedback and Q, and afresh at another layout.
// In-memory checkpoints' own cases: tst_memory_checkpoints.cpp.
#include "tests/backend/trainer/checkpoint/checkpoint_runs.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <cstring>
#include <vector>

#include <unistd.h>

using namespace trellis::test;

class TstCheckpoint : public QObject {
    Q_OBJECT
private slots:
    void bitwiseResume_data()
    {
        QTest::addColumn<int>("zero");
        QTest::addColumn<QString>("extra");
        QTest::addColumn<int>("ranks");
        QTest::addColumn<bool>("memory"); // in-memory checkpoints every step: the resume reads no disk
        QTest::newRow("zero 0") << 0 << QString() << 2 << false;
        QTest::newRow("zero 1 memory") << 1 << QString() << 2 << true;
        QTest::newRow("zero 2") << 2 << QString() << 2 << false;
        QTest::newRow("zero 3 memory") << 3 << QString() << 2 << true;
        // Tensor-parallel shards and pipeline stages write their own ranges of the whole model.
        QTest::newRow("tp 2 zero 1 memory") << 1 << QStringLiteral(R"(, "tp": 2, "sequence_parallel": true)") << 4 << true;
        QTest::newRow("pp 2 zero 2") << 2 << QStringLiteral(R"(, "pp": 2, "micro_batches": 2)") << 4 << false;
        // Context-parallel ranks are gradient replicas of dp_cp: ZeRO shards over them.
        QTest::newRow("cp 2 zero 1 memory") << 1 << QStringLiteral(R"(, "cp": 2)") << 4 << true;
        // Local updates: the checkpoint at step 3 falls between outer steps, where the replicas'
        // parameters and moments differ; each replica writes and takes back its own, with the
        // outer state (anchor, momentum, counters).
        const QString diloco = QStringLiteral(R"(, "dp_sync": {"mode": "diloco", "inner_steps": 2, "outer_lr": 0.7, "outer_momentum": 0.9})");
        QTest::newRow("diloco inner 2 memory") << 0 << diloco << 2 << true;
        QTest::newRow("diloco inner 2 pp 2") << 0 << diloco + QStringLiteral(R"(, "pp": 2, "micro_batches": 2)") << 4 << false;
        QTest::newRow("local_sgd inner 4 tp 2 memory")
            << 0 << QStringLiteral(R"(, "tp": 2, "dp_sync": {"mode": "local_sgd", "inner_steps": 4})") << 4 << true;
        // PowerSGD: each rank's error feedback and the warm-started Q (or the draw count) with it.
        QTest::newRow("powersgd rank 2 memory") << 0 << QStringLiteral(R"(, "grad_compression": {"kind": "powersgd", "rank": 2})") << 2
                                                << true;
        QTest::newRow("powersgd rank 2 cold")
            << 0 << QStringLiteral(R"(, "grad_compression": {"kind": "powersgd", "rank": 2, "warm_start": false})") << 2 << false;
    }
    void bitwiseResume()
    {
        QFETCH(int, zero);
        QFETCH(QString, extra);
        QFETCH(int, ranks);
        QFETCH(bool, memory);
        QTemporaryDir dir;
        const QString ckpt = dir.filePath(QStringLiteral("ckpt"));
        const QString plan = writePlan(dir.path(), QStringLiteral("p"), 2, 4, zero, 32, ckpt, extra, ranks, memory ? memoryEvery1() : QString());
        const Run full = trainer(ranks, {QStringLiteral("--plan"), plan, QStringLiteral("--dump-params"), dir.filePath(QStringLiteral("full.bin")),
                                     QStringLiteral("--dump-losses"), dir.filePath(QStringLiteral("full.loss"))});
        QVERIFY2(full.code == 0, qPrintable(full.output));
        QVERIFY(QDir(ckpt).removeRecursively());
        const Run crashed = trainer(ranks, {QStringLiteral("--plan"), plan, QStringLiteral("--inject"), QStringLiteral("crash@1:5")});
        QCOMPARE(crashed.code, 70);
        const Run resumed = trainer(ranks, {QStringLiteral("--plan"), plan, QStringLiteral("--resume"), QStringLiteral("--dump-params"),
                                        dir.filePath(QStringLiteral("res.bin")), QStringLiteral("--dump-losses"),
                                        dir.filePath(QStringLiteral("res.loss"))});
        QVERIFY2(resumed.code == 0, qPrintable(resumed.output));
        // From disk, the save of step 3; from memory, the save of step 4 (in place before the
        // injected crash at step 5), no step repeated.
        const int from = memory ? 4 : 3;
        const QString where = memory ? QStringLiteral("resumed from memory: %1/step-00000004 (step 4)").arg(memoryStoreOf(ckpt))
                                     : QStringLiteral("step-00000003 (step 3)");
        QVERIFY2(resumed.output.contains(where), qPrintable(resumed.output));
        if (memory) // the run is over: its holder removes the store
            QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(memoryStoreOf(ckpt)), 5000);
        // The whole model both times (GPT, 2 layers × 32 hidden, ffn 64, 32 positions, vocabulary
        // 256 — every parameter once, whatever the layout), bit for bit.
        const std::size_t C = 32, L = 2, V = 256, T = 32, F = 64;
        const std::size_t parameters =
            V * C + T * C + L * (2 * C + C * 3 * C + 3 * C + C * C + C + 2 * C + C * F + F + F * C + C) + 2 * C;
        const auto before = readDump<float>(dir.filePath(QStringLiteral("full.bin")));
        const auto after = readDump<float>(dir.filePath(QStringLiteral("res.bin")));
        QCOMPARE(before.size(), parameters);
        QCOMPARE(after.size(), parameters);
        QVERIFY(std::memcmp(before.data(), after.data(), parameters * sizeof(float)) == 0);
        const auto a = readDump<double>(dir.filePath(QStringLiteral("full.loss")));
        const auto b = readDump<double>(dir.filePath(QStringLiteral("res.loss")));
        QCOMPARE(a.size(), size_t(8));
        QCOMPARE(b.size(), size_t(8 - from));
        QVERIFY(std::equal(b.begin(), b.end(), a.end() - static_cast<long>(b.size()))); // bit for bit
    }

    // A crash while a save is being written: with async saves (the default) the checkpoint begun at
    // step 4 is put in place only at the next step boundary, so a crash at step 5 finds its
    // folder still partial — ignored — and resumes from step 2; with sync saves, from step 4. Both
    // then follow the uninterrupted run bit for bit. (A save put in place before its shards are
    // all written — renamed when it begins — resumes from step 4 here: the async row fails.)
    void aCrashWhileASaveIsWrittenResumesFromTheOneBefore_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<int>("resumedFrom");
        QTest::newRow("async") << QStringLiteral("async") << 2;
        QTest::newRow("sync") << QStringLiteral("sync") << 4;
    }
    void aCrashWhileASaveIsWrittenResumesFromTheOneBefore()
    {
        QFETCH(QString, mode);
        QFETCH(int, resumedFrom);
        QTemporaryDir dir;
        const QString ckpt = dir.filePath(QStringLiteral("ckpt"));
        const QString plan = dir.filePath(QStringLiteral("p.json"));
        QFile f(plan);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QStringLiteral(R"({"schema": "trellis.plan/1",
          "model": {"layers": 2, "hidden": 32, "heads": 4, "ffn": 64, "seq_len": 32, "vocab": 256},
          "cluster": {"nodes": [{"host": "localhost", "slots": 2}]},
          "parallel": {"dp": 2, "micro_batch_size": 4, "zero": 1},
          "training": {"steps": 8, "lr": 0.003, "min_lr": 0.0003, "warmup_steps": 1, "seed": 11,
                       "data": {"source": "text", "path": "%1"},
                       "checkpoint": {"every": 2, "dir": "%2", "keep": 2, "mode": "%3"}}})")
                    .arg(kCorpus, ckpt, mode)
                    .toUtf8());
        f.close();
        const Run full = trainer(2, {QStringLiteral("--plan"), plan, QStringLiteral("--dump-losses"), dir.filePath(QStringLiteral("full.loss"))});
        QVERIFY2(full.code == 0, qPrintable(full.output));
        QVERIFY(QDir(ckpt).removeRecursively());
        QCOMPARE(trainer(2, {QStringLiteral("--plan"), plan, QStringLiteral("--inject"), QStringLiteral("crash@1:5")}).code, 70);
        QVERIFY(QFileInfo::exists(ckpt + QStringLiteral("/step-00000002/meta.json")));
        QCOMPARE(QFileInfo::exists(ckpt + QStringLiteral("/step-00000004/meta.json")), mode == QLatin1String("sync"));
        const Run resumed = trainer(2, {QStringLiteral("--plan"), plan, QStringLiteral("--resume"), QStringLiteral("--dump-losses"),
                                        dir.filePath(QStringLiteral("res.loss"))});
        QVERIFY2(resumed.code == 0, qPrintable(resumed.output));
        const QString from = QStringLiteral("step-%1 (step %2)").arg(resumedFrom, 8, 10, QLatin1Char('0')).arg(resumedFrom);
        QVERIFY2(resumed.output.contains(from), qPrintable(resumed.output));
        const auto a = readDump<double>(dir.filePath(QStringLiteral("full.loss")));
        const auto b = readDump<double>(dir.filePath(QStringLiteral("res.loss")));
        QCOMPARE(a.size(), size_t(8));
        QCOMPARE(b.size(), size_t(8 - resumedFrom));
        QVERIFY(std::equal(b.begin(), b.end(), a.end() - static_cast<long>(b.size()))); // bit for bit
    }

    // A save that cannot be written at run time (the checkpoint folder's disk has room for one
    // checkpoint and a half): said as an event naming the file, its partial folder removed, the
    // checkpoint before it kept, and training goes on — the same losses as a run whose saves all
    // succeed, exit 0. (It ended the run with exit 10 before.) Root: a small tmpfs.
    void aSaveThatCannotBeWrittenIsSaidAndTrainingGoesOn()
    {
        if (::geteuid() != 0)
            QSKIP("needs root to mount a small tmpfs (CI and this project's machines run as root)");
        QTemporaryDir dir;
        const QString roomy = dir.filePath(QStringLiteral("roomy"));
        const QString plan = writePlan(dir.path(), QStringLiteral("p"), 2, 4, 1, 32, roomy);
        const Run full = trainer(2, {QStringLiteral("--plan"), plan, QStringLiteral("--dump-losses"), dir.filePath(QStringLiteral("full.loss"))});
        QVERIFY2(full.code == 0, qPrintable(full.output));
        qint64 one = 0; // one checkpoint's bytes
        for (const QFileInfo &f : QDir(roomy + QStringLiteral("/step-00000006")).entryInfoList(QDir::Files))
            one += f.size();
        QVERIFY(one > 0);
        const QString small = dir.filePath(QStringLiteral("small"));
        QVERIFY(QDir().mkpath(small));
        QProcess mount;
        mount.start(QStringLiteral("mount"), {QStringLiteral("-t"), QStringLiteral("tmpfs"), QStringLiteral("-o"),
                                              QStringLiteral("size=%1").arg(one * 3 / 2), QStringLiteral("tmpfs"), small});
        QVERIFY(mount.waitForFinished(30000) && mount.exitCode() == 0);
        auto unmount = qScopeGuard([&] { QProcess::execute(QStringLiteral("umount"), {QStringLiteral("-l"), small}); });
        const QString tight = writePlan(dir.path(), QStringLiteral("tight"), 2, 4, 1, 32, small);
        const Run run = trainer(2, {QStringLiteral("--plan"), tight, QStringLiteral("--dump-losses"), dir.filePath(QStringLiteral("tight.loss"))});
        QVERIFY2(run.code == 0, qPrintable(run.output));
        QVERIFY2(run.output.contains(QStringLiteral("checkpoint at step 6 not written")) &&
                     run.output.contains(QStringLiteral("training goes on")),
                 qPrintable(run.output));
        QVERIFY(QFileInfo::exists(small + QStringLiteral("/step-00000003/meta.json"))); // the one before, kept
        QVERIFY(!QFileInfo::exists(small + QStringLiteral("/step-00000006")));
        QVERIFY(!QFileInfo::exists(small + QStringLiteral("/step-00000006.partial"))); // its leftovers removed
        const auto a = readDump<double>(dir.filePath(QStringLiteral("full.loss")));
        const auto b = readDump<double>(dir.filePath(QStringLiteral("tight.loss")));
        QCOMPARE(b.size(), a.size());
        QVERIFY(std::equal(a.begin(), a.end(), b.begin())); // training went on as if nothing happened
    }

    // Host memory too short for a save's staging buffers (injected: nomem, std::bad_alloc where
    // rank 1 sizes them at the save of step 3): the ranks agree, the save is said — naming the
    // rank — and skipped, the next one is made, and training goes on exactly as without it.
    void aSaveWithoutHostMemoryIsSaidAndTrainingGoesOn()
    {
        QTemporaryDir dir;
        const QString ckpt = dir.filePath(QStringLiteral("ckpt"));
        const QString plan = writePlan(dir.path(), QStringLiteral("p"), 2, 4, 1, 32, ckpt);
        const Run full = trainer(2, {QStringLiteral("--plan"), plan, QStringLiteral("--dump-losses"), dir.filePath(QStringLiteral("full.loss"))});
        QVERIFY2(full.code == 0, qPrintable(full.output));
        QVERIFY(QDir(ckpt).removeRecursively());
        const Run run = trainer(2, {QStringLiteral("--plan"), plan, QStringLiteral("--inject"), QStringLiteral("nomem@1:3"),
                                    QStringLiteral("--dump-losses"), dir.filePath(QStringLiteral("short.loss"))});
        QVERIFY2(run.code == 0, qPrintable(run.output));
        QVERIFY2(run.output.contains(QStringLiteral("checkpoint at step 3 not written: rank 1: not enough host memory for its staging "
                                                    "buffers; the earlier checkpoints are kept, training goes on")),
                 qPrintable(run.output));
        QVERIFY(!QFileInfo::exists(ckpt + QStringLiteral("/step-00000003")));
        QVERIFY(!QFileInfo::exists(ckpt + QStringLiteral("/step-00000003.partial"))); // never begun
        QVERIFY(QFileInfo::exists(ckpt + QStringLiteral("/step-00000006/meta.json"))); // the next save made
        const auto a = readDump<double>(dir.filePath(QStringLiteral("full.loss")));
        const auto b = readDump<double>(dir.filePath(QStringLiteral("short.loss")));
        QCOMPARE(b.size(), a.size());
        QVERIFY(std::equal(a.begin(), a.end(), b.begin()));
    }

    // An async save's copy into the staging buffers runs behind training, while the next step's
    // forward and backward only read the state; the update waits for it. Injected: rank 0 (which
    // writes every parameter at ZeRO 1) starts its copy for the save of step 6 1.5 s late, far
    // past step 7's forward and backward. The run's losses are the uninterrupted run's, and a
    // resume from that save is bitwise the uninterrupted run: the copy holds step 6's state, not
    // step 7's update. (The wait moved after the update: the resumed parameters differ.)
    void aCopySlowerThanTheStepIsWaitedForBeforeTheUpdate()
    {
        QTemporaryDir dir;
        const QString ckpt = dir.filePath(QStringLiteral("ckpt"));
        const QString plan = writePlan(dir.path(), QStringLiteral("p"), 2, 4, 1, 32, ckpt);
        const Run full = trainer(2, {QStringLiteral("--plan"), plan, QStringLiteral("--dump-params"), dir.filePath(QStringLiteral("full.bin")),
                                     QStringLiteral("--dump-losses"), dir.filePath(QStringLiteral("full.loss"))});
        QVERIFY2(full.code == 0, qPrintable(full.output));
        QVERIFY(QDir(ckpt).removeRecursively());
        const Run late = trainer(2, {QStringLiteral("--plan"), plan, QStringLiteral("--inject"), QStringLiteral("slowcopy@0:6"),
                                     QStringLiteral("--dump-losses"), dir.filePath(QStringLiteral("late.loss"))});
        QVERIFY2(late.code == 0, qPrintable(late.output));
        const auto a = readDump<double>(dir.filePath(QStringLiteral("full.loss")));
        const auto b = readDump<double>(dir.filePath(QStringLiteral("late.loss")));
        QCOMPARE(b.size(), a.size());
        QVERIFY(std::equal(a.begin(), a.end(), b.begin()));
        QVERIFY(QFileInfo::exists(ckpt + QStringLiteral("/step-00000006/meta.json")));
        QVERIFY(QDir(ckpt + QStringLiteral("/step-00000008")).removeRecursively()); // resume from the late copy
        const Run resumed = trainer(2, {QStringLiteral("--plan"), plan, QStringLiteral("--resume"), QStringLiteral("--dump-params"),
                                        dir.filePath(QStringLiteral("res.bin")), QStringLiteral("--dump-losses"),
                                        dir.filePath(QStringLiteral("res.loss"))});
        QVERIFY2(resumed.code == 0, qPrintable(resumed.output));
        QVERIFY2(resumed.output.contains(QStringLiteral("step-00000006 (step 6)")), qPrintable(resumed.output));
        const auto before = readDump<float>(dir.filePath(QStringLiteral("full.bin")));
        const auto after = readDump<float>(dir.filePath(QStringLiteral("res.bin")));
        QVERIFY(!before.empty());
        QCOMPARE(after.size(), before.size());
        QVERIFY(std::memcmp(before.data(), after.data(), before.size() * sizeof(float)) == 0);
        const auto c = readDump<double>(dir.filePath(QStringLiteral("res.loss")));
        QCOMPARE(c.size(), size_t(2));
        QVERIFY(std::equal(c.begin(), c.end(), a.end() - 2));
    }

    void resharding_data()
    {
        QTest::addColumn<int>("zero");
        QTest::addColumn<int>("zeroAfter");
        QTest::addColumn<int>("dp");
        for (int zero : {0, 1, 2, 3})
            for (int dp : {2, 1})
                QTest::newRow(qPrintable(QStringLiteral("zero %1 dp 4 -> %2").arg(zero).arg(dp))) << zero << zero << dp;
        // Shards hold the same parameter ranges at every stage, so a run can change stage too.
        QTest::newRow("zero 3 dp 4 -> zero 0 dp 2") << 3 << 0 << 2;
        QTest::newRow("zero 0 dp 4 -> zero 3 dp 2") << 0 << 3 << 2;
        QTest::newRow("zero 1 dp 4 -> zero 2 dp 1") << 1 << 2 << 1;
    }
    void resharding()
    {
        QFETCH(int, zero);
        QFETCH(int, zeroAfter);
        QFETCH(int, dp);
        QTemporaryDir dir;
        const QString ckpt = dir.filePath(QStringLiteral("ckpt"));
        const QString plan4 = writePlan(dir.path(), QStringLiteral("dp4"), 4, 2, zero, 32, ckpt);
        const Run full = trainer(4, {QStringLiteral("--plan"), plan4, QStringLiteral("--dump-losses"), dir.filePath(QStringLiteral("full.loss"))});
        QVERIFY2(full.code == 0, qPrintable(full.output));
        QVERIFY(QDir(ckpt).removeRecursively());
        QCOMPARE(trainer(4, {QStringLiteral("--plan"), plan4, QStringLiteral("--inject"), QStringLiteral("crash@0:5")}).code, 70);
        // Same global batch of 8 sequences at the new degree.
        const QString planN = writePlan(dir.path(), QStringLiteral("dpN"), dp, 8 / dp, zeroAfter, 32, ckpt);
        const Run resumed = trainer(dp, {QStringLiteral("--plan"), planN, QStringLiteral("--resume"), QStringLiteral("--dump-losses"),
                                         dir.filePath(QStringLiteral("res.loss"))});
        QVERIFY2(resumed.code == 0, qPrintable(resumed.output));
        const auto a = readDump<double>(dir.filePath(QStringLiteral("full.loss")));
        const auto b = readDump<double>(dir.filePath(QStringLiteral("res.loss")));
        QCOMPARE(b.size(), size_t(5));
        for (size_t i = 0; i < b.size(); ++i) {
            const double want = a[a.size() - b.size() + i];
            QVERIFY2(std::abs(b[i] - want) <= 1e-6 * std::abs(want),
                     qPrintable(QStringLiteral("step %1: %2 vs %3").arg(4 + i).arg(b[i], 0, 'g', 17).arg(want, 0, 'g', 17)));
        }
    }

    // A checkpoint holds whole-model ranges, so a run resumes at another tensor-parallel degree,
    // with or without a pipeline: the same global batch of 8 sequences follows the uninterrupted
    // loss curve (1e-5 relative where tp changes the order of sums, as the tp parity bound).
    void layoutResharding_data()
    {
        QTest::addColumn<QString>("before");
        QTest::addColumn<int>("ranksBefore");
        QTest::addColumn<QString>("after");
        QTest::addColumn<int>("ranksAfter");
        QTest::addColumn<QString>("model");
        const QString gpt = QStringLiteral(R"("layers": 2, "hidden": 32, "heads": 4, "ffn": 64)");
        QTest::newRow("tp 2 -> tp 1") << QStringLiteral(R"("dp": 1, "tp": 2, "micro_batch_size": 8)") << 2
                                      << QStringLiteral(R"("dp": 1, "micro_batch_size": 8)") << 1 << gpt;
        QTest::newRow("dp 2 -> tp 2") << QStringLiteral(R"("dp": 2, "micro_batch_size": 4, "zero": 1)") << 2
                                      << QStringLiteral(R"("dp": 1, "tp": 2, "micro_batch_size": 8)") << 2 << gpt;
        QTest::newRow("dp 2 pp 2 zero 1 -> dp 4 zero 3")
            << QStringLiteral(R"("dp": 2, "pp": 2, "micro_batch_size": 2, "micro_batches": 2, "zero": 1)") << 4
            << QStringLiteral(R"("dp": 4, "micro_batch_size": 2, "zero": 3)") << 4 << gpt;
        QTest::newRow("dp 2 tp 2 zero 2 -> tp 2 pp 2")
            << QStringLiteral(R"("dp": 2, "tp": 2, "micro_batch_size": 4, "zero": 2)") << 4
            << QStringLiteral(R"("tp": 2, "pp": 2, "micro_batch_size": 4, "micro_batches": 2)") << 4 << gpt;
        // Context parallelism in and out: a cp checkpoint resumes without it, and the other way.
        QTest::newRow("cp 2 zero 3 -> dp 1") << QStringLiteral(R"("dp": 1, "cp": 2, "micro_batch_size": 8, "zero": 3)") << 2
                                             << QStringLiteral(R"("dp": 1, "micro_batch_size": 8)") << 1 << gpt;
        QTest::newRow("dp 2 zero 1 -> cp 2 tp 2")
            << QStringLiteral(R"("dp": 2, "micro_batch_size": 4, "zero": 1)") << 2
            << QStringLiteral(R"("cp": 2, "tp": 2, "micro_batch_size": 8, "cp_layout": "contiguous")") << 4 << gpt;
        // Mixtures of experts: each ep rank writes its experts, ep rank 0 the rest; the whole model
        // resumes at another ep, at ep 1 or with tp.
        const QString moe = QStringLiteral(R"("layers": 2, "hidden": 32, "heads": 4, "ffn": 64, "moe": {"experts": 4, "top_k": 2})");
        QTest::newRow("moe ep 2 -> ep 2") << QStringLiteral(R"("dp": 2, "ep": 2, "micro_batch_size": 4)") << 2
                                          << QStringLiteral(R"("dp": 2, "ep": 2, "micro_batch_size": 4)") << 2 << moe;
        QTest::newRow("moe dp 4 ep 2 -> dp 1") << QStringLiteral(R"("dp": 4, "ep": 2, "micro_batch_size": 2)") << 4
                                               << QStringLiteral(R"("dp": 1, "micro_batch_size": 8)") << 1 << moe;
        QTest::newRow("moe dp 2 zero 3 -> ep 2 tp 2")
            << QStringLiteral(R"("dp": 2, "micro_batch_size": 4, "zero": 3)") << 2
            << QStringLiteral(R"("dp": 2, "ep": 2, "tp": 2, "micro_batch_size": 4)") << 4 << moe;
        // llama (grouped-query attention, untied head): its whole-model ranges reshard the same way.
        QTest::newRow("llama dp 2 tp 2 zero 2 -> tp 2 pp 2")
            << QStringLiteral(R"("dp": 2, "tp": 2, "micro_batch_size": 4, "zero": 2)") << 4
            << QStringLiteral(R"("tp": 2, "pp": 2, "micro_batch_size": 4, "micro_batches": 2)") << 4
            << QStringLiteral(R"("arch": "llama", "layers": 2, "hidden": 32, "heads": 4, "kv_heads": 2, "ffn": 64)");
    }

    void layoutResharding()
    {
        QFETCH(QString, before);
        QFETCH(int, ranksBefore);
        QFETCH(QString, after);
        QFETCH(int, ranksAfter);
        QFETCH(QString, model);
        QTemporaryDir dir;
        const QString ckpt = dir.filePath(QStringLiteral("ckpt"));
        auto plan = [&](const QString &name, const QString &parallel, int ranks) {
            const QString path = dir.filePath(name + QStringLiteral(".json"));
            QFile f(path);
            f.open(QIODevice::WriteOnly);
            f.write(QStringLiteral(R"({
              "schema": "trellis.plan/1",
              "model": {%5, "seq_len": 32, "vocab": 256},
              "cluster": {"nodes": [{"host": "localhost", "slots": %1}]},
              "parallel": {%2},
              "training": {"steps": 8, "lr": 0.003, "min_lr": 0.0003, "warmup_steps": 1, "seed": 11,
                           "data": {"source": "text", "path": "%3"},
                           "checkpoint": {"every": 3, "dir": "%4", "keep": 2}}
            })")
                        .arg(ranks)
                        .arg(parallel, kCorpus, ckpt, model)
                        .toUtf8());
            return path;
        };
        const QString first = plan(QStringLiteral("before"), before, ranksBefore);
        const Run full = trainer(ranksBefore, {QStringLiteral("--plan"), first, QStringLiteral("--dump-losses"), dir.filePath(QStringLiteral("full.loss"))});
        QVERIFY2(full.code == 0, qPrintable(full.output));
        QVERIFY(QDir(ckpt).removeRecursively());
        QCOMPARE(trainer(ranksBefore, {QStringLiteral("--plan"), first, QStringLiteral("--inject"), QStringLiteral("crash@0:5")}).code, 70);
        const Run resumed = trainer(ranksAfter, {QStringLiteral("--plan"), plan(QStringLiteral("after"), after, ranksAfter),
                                                 QStringLiteral("--resume"), QStringLiteral("--dump-losses"),
                                                 dir.filePath(QStringLiteral("res.loss"))});
        QVERIFY2(resumed.code == 0, qPrintable(resumed.output));
        QVERIFY2(resumed.output.contains(QStringLiteral("step-00000003 (step 3)")), qPrintable(resumed.output));
        const auto a = readDump<double>(dir.filePath(QStringLiteral("full.loss")));
        const auto b = readDump<double>(dir.filePath(QStringLiteral("res.loss")));
        QCOMPARE(b.size(), size_t(5));
        double worst = 0;
        for (size_t i = 0; i < b.size(); ++i)
            worst = std::max(worst, std::abs(b[i] - a[a.size() - b.size() + i]) / std::abs(a[a.size() - b.size() + i]));
        qInfo("%s: resumed losses within %.3g relative of the uninterrupted run", QTest::currentDataTag(), worst);
        QVERIFY2(worst <= 1e-5, qPrintable(QStringLiteral("losses differ by %1 relative").arg(worst)));
    }

    void damagedCheckpointsAreSkipped_data()
    {
        QTest::addColumn<QString>("damage");
        QTest::addColumn<QString>("message");
        QTest::newRow("truncated shard") << QStringLiteral("truncate") << QStringLiteral("rank-00001.bin: ");
        QTest::newRow("flipped byte") << QStringLiteral("flip") << QStringLiteral("rank-00001.bin: checksum mismatch (the file is corrupt)");
        QTest::newRow("no metadata") << QStringLiteral("meta") << QStringLiteral("meta.json: missing (incomplete checkpoint)");
    }
    void damagedCheckpointsAreSkipped()
    {
        QFETCH(QString, damage);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString ckpt = dir.filePath(QStringLiteral("ckpt"));
        const QString plan = writePlan(dir.path(), QStringLiteral("p"), 2, 4, 1, 32, ckpt);
        QCOMPARE(trainer(2, {QStringLiteral("--plan"), plan, QStringLiteral("--inject"), QStringLiteral("crash@0:8")}).code, 70);
        const QString newest = ckpt + QStringLiteral("/step-00000006");
        QVERIFY(QFile::exists(newest + QStringLiteral("/meta.json")));
        QFile shard(newest + QStringLiteral("/rank-00001.bin"));
        if (damage == QLatin1String("truncate")) {
            QVERIFY(shard.resize(shard.size() / 2));
        } else if (damage == QLatin1String("flip")) {
            QVERIFY(shard.open(QIODevice::ReadWrite));
            shard.seek(100);
            char c = 0;
            shard.getChar(&c);
            shard.seek(100);
            shard.putChar(static_cast<char>(c ^ 0x5a));
            shard.close();
        } else {
            QVERIFY(QFile::remove(newest + QStringLiteral("/meta.json")));
        }
        const Run resumed = trainer(2, {QStringLiteral("--plan"), plan, QStringLiteral("--resume")});
        QVERIFY2(resumed.code == 0, qPrintable(resumed.output));
        QVERIFY2(resumed.output.contains(message), qPrintable(resumed.output));
        QVERIFY2(resumed.output.contains(QStringLiteral("step-00000003 (step 3)")), qPrintable(resumed.output));
    }

    void otherModelIsRefused()
    {
        QTemporaryDir dir;
        const QString ckpt = dir.filePath(QStringLiteral("ckpt"));
        QCOMPARE(trainer(2, {QStringLiteral("--plan"), writePlan(dir.path(), QStringLiteral("a"), 2, 4, 0, 32, ckpt)}).code, 0);
        const Run other = trainer(2, {QStringLiteral("--plan"), writePlan(dir.path(), QStringLiteral("b"), 2, 4, 0, 64, ckpt),
                                      QStringLiteral("--resume")});
        QCOMPARE(other.code, 10);
        QVERIFY2(other.output.contains(QStringLiteral("meta.json: model.hidden is 32 in the checkpoint but 64 in the plan")),
                 qPrintable(other.output));
        // The same shapes in the other architecture: named, not loaded.
        const QString gpt = writePlan(dir.path(), QStringLiteral("c"), 2, 4, 0, 32, ckpt);
        QFile f(gpt);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QByteArray text = f.readAll();
        f.close();
        text.replace(R"("model": {"layers")", R"("model": {"arch": "llama", "layers")");
        const QString llamaPlan = dir.filePath(QStringLiteral("llama.json"));
        QFile out(llamaPlan);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(text);
        out.close();
        const Run llama = trainer(2, {QStringLiteral("--plan"), llamaPlan, QStringLiteral("--resume")});
        QCOMPARE(llama.code, 10);
        QVERIFY2(llama.output.contains(QStringLiteral("meta.json: model.arch is \"gpt\" in the checkpoint but \"llama\" in the plan")),
                 qPrintable(llama.output));
    }

    // A local-update checkpoint holds each replica's own state: it resumes at the dp degree and
    // mode that wrote it, and a plan with another is refused naming the field (not loaded as one
    // replica's copy for all). A local-update run may start from an every-step checkpoint (its
    // replicas begin equal); tst_checkpoint's bitwiseResume shows a local-update resume exact.
    void localUpdateCheckpointsKeepTheirReplicas()
    {
        QTemporaryDir dir;
        const QString ckpt = dir.filePath(QStringLiteral("ckpt"));
        const QString sync = QStringLiteral(R"(, "dp_sync": {"mode": "diloco", "inner_steps": 2})");
        const QString diloco = writePlan(dir.path(), QStringLiteral("diloco"), 2, 4, 0, 32, ckpt, sync);
        QCOMPARE(trainer(2, {QStringLiteral("--plan"), diloco, QStringLiteral("--inject"), QStringLiteral("crash@1:5")}).code, 70);
        const Run everyStep = trainer(2, {QStringLiteral("--plan"), writePlan(dir.path(), QStringLiteral("every"), 2, 4, 0, 32, ckpt),
                                          QStringLiteral("--resume")});
        QCOMPARE(everyStep.code, 10);
        QVERIFY2(everyStep.output.contains(QStringLiteral("meta.json: was written by diloco training with 2 replicas, each holding its "
                                                          "own parameters and optimizer state; parallel.dp_sync.mode is every_step")),
                 qPrintable(everyStep.output));
        const Run local = trainer(2, {QStringLiteral("--plan"),
                                      writePlan(dir.path(), QStringLiteral("local"), 2, 4, 0, 32, ckpt,
                                                QStringLiteral(R"(, "dp_sync": {"mode": "local_sgd", "inner_steps": 2})")),
                                      QStringLiteral("--resume")});
        QCOMPARE(local.code, 10);
        QVERIFY2(local.output.contains(QStringLiteral("; parallel.dp_sync.mode is local_sgd")), qPrintable(local.output));
        const Run one = trainer(1, {QStringLiteral("--plan"), writePlan(dir.path(), QStringLiteral("one"), 1, 8, 0, 32, ckpt, sync),
                                    QStringLiteral("--resume")});
        QCOMPARE(one.code, 10);
        QVERIFY2(one.output.contains(QStringLiteral("; parallel.dp is 1 (a local-update run resumes at the dp degree it was written at)")),
                 qPrintable(one.output));
        // The other way round: an every-step checkpoint starts a DiLoCo run at its step.
        const QString fresh = dir.filePath(QStringLiteral("fresh"));
        QCOMPARE(trainer(2, {QStringLiteral("--plan"), writePlan(dir.path(), QStringLiteral("every2"), 2, 4, 0, 32, fresh),
                             QStringLiteral("--inject"), QStringLiteral("crash@1:5")})
                     .code,
                 70);
        const Run started = trainer(2, {QStringLiteral("--plan"), writePlan(dir.path(), QStringLiteral("diloco2"), 2, 4, 0, 32, fresh, sync),
                                        QStringLiteral("--resume")});
        QVERIFY2(started.code == 0, qPrintable(started.output));
        QVERIFY2(started.output.contains(QStringLiteral("step-00000003 (step 3)")), qPrintable(started.output));
    }

    // PowerSGD's state belongs to a rank of the layout that wrote it: at another dp the run
    // resumes (the model's state reshards as ever) and the compression starts afresh, said once.
    void powerSgdStateAtAnotherLayoutStartsAfresh()
    {
        QTemporaryDir dir;
        const QString ckpt = dir.filePath(QStringLiteral("ckpt"));
        const QString compression = QStringLiteral(R"(, "grad_compression": {"kind": "powersgd", "rank": 2})");
        QCOMPARE(trainer(2, {QStringLiteral("--plan"), writePlan(dir.path(), QStringLiteral("two"), 2, 4, 0, 32, ckpt, compression),
                             QStringLiteral("--inject"), QStringLiteral("crash@1:5")})
                     .code,
                 70);
        const Run one = trainer(1, {QStringLiteral("--plan"), writePlan(dir.path(), QStringLiteral("one"), 1, 8, 0, 32, ckpt, compression),
                                    QStringLiteral("--resume")});
        QVERIFY2(one.code == 0, qPrintable(one.output));
        QVERIFY2(one.output.contains(QStringLiteral("step-00000003 (step 3)")), qPrintable(one.output));
        QVERIFY2(one.output.contains(QStringLiteral("PowerSGD starts afresh (error feedback 0, a new Q): the checkpoint holds no "
                                                    "PowerSGD state for this rank (written without compression, or at another dp)")),
                 qPrintable(one.output));
    }

    // Two hosts that do not share a folder, one holding the checkpoint and one not (what the ssh
    // target's gathering prevents): rank 0 would resume at step 8 and rank 1 start over. The
    // trainer refuses, naming both, instead of training from mixed states.
    void ranksThatFindDifferentCheckpointsStop()
    {
        QTemporaryDir dir;
        QDir(dir.path()).mkpath(QStringLiteral("a"));
        QDir(dir.path()).mkpath(QStringLiteral("b"));
        const QString planA = writePlan(dir.filePath(QStringLiteral("a")), QStringLiteral("plan"), 2, 4, 0, 32, dir.filePath(QStringLiteral("a/ckpt")));
        const QString planB = writePlan(dir.filePath(QStringLiteral("b")), QStringLiteral("plan"), 2, 4, 0, 32, dir.filePath(QStringLiteral("b/ckpt")));
        QCOMPARE(trainer(2, {QStringLiteral("--plan"), planA}).code, 0);
        QProcess p; // one app context per "host", each with its own plan and checkpoint folder
        p.setProcessChannelMode(QProcess::MergedChannels);
        const QStringList common = {QStringLiteral("--oversubscribe"), QStringLiteral("--allow-run-as-root"), QStringLiteral("--mca"),
                                    QStringLiteral("btl_vader_single_copy_mechanism"), QStringLiteral("none")};
        p.start(QStringLiteral("mpirun"), common + QStringList{QStringLiteral("-np"), QStringLiteral("1"), kTrainer, QStringLiteral("--quiet"),
                                                               QStringLiteral("--plan"), planA, QStringLiteral("--resume"), QStringLiteral(":"),
                                                               QStringLiteral("-np"), QStringLiteral("1"), kTrainer, QStringLiteral("--quiet"),
                                                               QStringLiteral("--plan"), planB, QStringLiteral("--resume")});
        QVERIFY(p.waitForFinished(240000));
        const QString output = QString::fromUtf8(p.readAll());
        QVERIFY2(p.exitCode() != 0, qPrintable(output));
        QVERIFY2(output.contains(QStringLiteral("ranks found different checkpoints in ")) &&
                     output.contains(QStringLiteral("rank 0 step 8, rank 1 no checkpoint")),
                 qPrintable(output));
    }
};

QTEST_GUILESS_MAIN(TstCheckpoint)
#include "tst_checkpoint.moc"
