// What the trainer records, through trellis-cli end to end (the real trainer under mpirun, real
// ZeroMQ telemetry, a real SQLite file): memory by category for each ZeRO stage against the
// estimate, data-parallel traffic by sync mode, every collective with its group, bytes and bus
// bandwidth, and sequence parallelism's activations. (Runs, history and bad input: tst_cli.)
#include "launcher/history/history_database.h"
#include "backend/plan/cost/cost_model.h"
#include "backend/plan/plan_json.h"
#include "backend/protocol/memory_store_path.h"
#include "tests/support/cli_test_support.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QMap>
#include <QTemporaryDir>
#include <QTest>

using namespace trellis::launcher;

namespace {

using trellis::test::cli;
using trellis::test::kPlan;
using trellis::test::predictedMemory;
using trellis::test::Result;

} // namespace

class TstCliTrainerRecords : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString db() const { return m_dir.filePath(QStringLiteral("history.sqlite")); }
    // The dp4_short plan with `parallel` added to its parallel section and `steps` steps (and
    // `training` and `cluster` added to those sections), as NAME.json in the test's folder; ""
    // when it cannot be written.
    QString shortPlan(const QString &name, const QString &parallel, int steps, const QString &training = {},
                      const QString &cluster = {}) const
    {
        QFile in(kPlan);
        if (!in.open(QIODevice::ReadOnly))
            return {};
        QString text = QString::fromUtf8(in.readAll());
        text.replace(QStringLiteral("\"micro_batches\": 1}"), QStringLiteral("\"micro_batches\": 1%1}").arg(parallel));
        text.replace(QStringLiteral("../../../resources"), QStringLiteral(TRELLIS_SOURCE_DIR "/resources"));
        text.replace(QStringLiteral("\"steps\": 12"), QStringLiteral("\"steps\": %1%2").arg(steps).arg(training.isEmpty() ? QString() : QStringLiteral(", ") + training));
        if (!cluster.isEmpty())
            text.replace(QStringLiteral("\"device\": \"cpu\"}]"), QStringLiteral("\"device\": \"cpu\"}], %1").arg(cluster));
        const QString path = m_dir.filePath(name + QStringLiteral(".json"));
        QFile out(path);
        if (!out.open(QIODevice::WriteOnly) || out.write(text.toUtf8()) < 0)
            return {};
        return path;
    }
    // Runs `plan` through trellis-cli into NAME.sqlite; the run as the history holds it (nullopt,
    // `why` set, when the run or the read failed).
    std::optional<RunData> recordRun(const QString &name, const QString &plan, QString &why) const
    {
        const QString database = m_dir.filePath(name + QStringLiteral(".sqlite"));
        const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet")});
        HistoryDatabase h;
        if (r.code != 0 || !h.open(database, false).isEmpty()) {
            why = r.out + r.err;
            return std::nullopt;
        }
        return h.loadRun(h.findRun(QStringLiteral("last"))->id);
    }

private slots:
    void memoryByCategory_data()
    {
        QTest::addColumn<int>("zero");
        QTest::newRow("zero 0") << 0;
        QTest::newRow("zero 1") << 1;
        QTest::newRow("zero 2") << 2;
        QTest::newRow("zero 3") << 3;
    }
    void memoryByCategory()
    {
        // The dp4_short model: V 256, C 64, F 256, S 64, 2 layers -> 120576 parameters. Its ZeRO
        // units (embeddings 20480, layers 49984 each, final norm 128) all split evenly over 4
        // ranks, so the sharded stages hold exactly a quarter.
        QFETCH(int, zero);
        const qint64 params = 120576;
        const QString plan = shortPlan(QStringLiteral("zero%1").arg(zero), QStringLiteral(R"(, "zero": %1, "bucket_mb": 0.05)").arg(zero), 3);
        QVERIFY(!plan.isEmpty());
        const QString database = m_dir.filePath(QStringLiteral("zero%1.sqlite").arg(zero));
        const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        HistoryDatabase h;
        QCOMPARE(h.open(database, false), QString());
        auto data = h.loadRun(h.findRun(QStringLiteral("last"))->id);
        qint64 optimizerSum = 0;
        // The cost model predicts what rank 0 holds, byte for byte.
        const auto predicted = predictedMemory(plan);
        QCOMPARE(predicted.size(), size_t(1));
        for (const auto &s : data->steps) {
            if (s.step != 3)
                continue;
            if (s.rank == 0) {
                QCOMPARE(qint64(predicted[0].parameters), s.memParameters);
                QCOMPARE(qint64(predicted[0].gradients), s.memGradients);
                QCOMPARE(qint64(predicted[0].optimizer), s.memOptimizer);
                QCOMPARE(qint64(predicted[0].activations), s.memActivations);
            }
            QCOMPARE(s.memParameters, zero == 3 ? params : params * 4);
            QCOMPARE(s.memGradients, zero >= 2 ? params : params * 4);
            QVERIFY(s.memActivations > 0);
            QVERIFY(s.peakRss > 0);
            optimizerSum += s.memOptimizer;
            if (zero == 0) {
                QCOMPARE(s.memOptimizer, params * 8); // Adam moments m and v, fp32
                QCOMPARE(s.memComm, qint64(0));
            } else if (zero >= 2) {
                QCOMPARE(s.memOptimizer, params * 2); // a quarter of m and v
                // Transient: unit gradient buffers in flight (and gathered units at stage 3).
                QVERIFY(s.memComm >= 49984 * 4);
            } else {
                // Each rank keeps the moments of its chunk of every bucket: about a quarter.
                QVERIFY2(std::abs(double(s.memOptimizer) - params * 8 / 4.0) <= 8.0 * 4 * 64,
                         qPrintable(QStringLiteral("rank %1 holds %2 bytes").arg(s.rank).arg(s.memOptimizer)));
                QVERIFY(s.memComm > 0);
            }
        }
        QCOMPARE(optimizerSum, zero == 0 ? params * 8 * 4 : params * 8); // sharded: the ranks together hold one copy
        // The DP collectives of a step, bytes and calls, as the cost model predicts them.
        auto loaded = trellis::plan::loadPlanFile(plan.toStdString());
        QVERIFY(loaded);
        const auto estimate = trellis::plan::estimatePlan(loaded.value(), trellis::plan::deviceFor(loaded.value().cluster));
        int compared = 0;
        for (const auto &c : h.collectivesOf(data->run.id)) {
            if (c.rank != 0 || c.step != 3)
                continue;
            const auto it = std::find_if(estimate.collectives.begin(), estimate.collectives.end(), [&](const auto &e) {
                return QString::fromStdString(e.group) == c.group && QString::fromStdString(e.op) == c.op;
            });
            QVERIFY2(it != estimate.collectives.end(), qPrintable(c.group + QLatin1Char(' ') + c.op));
            QCOMPARE(qint64(it->bytes), c.bytes);
            QCOMPARE(it->callsPerStep, c.count);
            ++compared;
        }
        QCOMPARE(compared, zero == 0 ? 1 : 3);
    }

    // Local updates and gradient compression report their dp traffic with every step, into the
    // history: DiLoCo at inner_steps 4 counts an outer step every 4 steps, each all-reducing the
    // rank's fp32 parameters (its gradient bytes: the same elements), against every step's whole
    // gradients; PowerSGD the same payload every step, far below the whole gradients; every-step
    // training reports nothing (the dashboards then say so). Their state is what the estimate
    // predicts, to the byte.
    void dpTrafficIsReported_data()
    {
        QTest::addColumn<QString>("sync");
        QTest::newRow("diloco inner 4") << QStringLiteral(R"(, "dp_sync": {"mode": "diloco", "inner_steps": 4})");
        QTest::newRow("powersgd rank 2") << QStringLiteral(R"(, "grad_compression": {"kind": "powersgd", "rank": 2})");
        QTest::newRow("every step") << QString();
    }
    void dpTrafficIsReported()
    {
        QFETCH(QString, sync);
        const QString plan = shortPlan(QStringLiteral("traffic-%1").arg(qHash(sync)), sync, 8);
        QVERIFY(!plan.isEmpty());
        const QString database = m_dir.filePath(QStringLiteral("traffic-%1.sqlite").arg(qHash(sync)));
        const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        HistoryDatabase h;
        QCOMPARE(h.open(database, false), QString());
        const auto data = h.loadRun(h.findRun(QStringLiteral("last"))->id);
        QCOMPARE(data->steps.size(), 4 * 8);
        // Their state as the estimate counts it, to the byte: the outer anchor and momentum with
        // the optimizer's, PowerSGD's factors, error feedback and buffers with the communication's.
        const auto predicted = predictedMemory(plan);
        QCOMPARE(predicted.size(), size_t(1));
        const auto &last = data->steps.last();
        QCOMPARE(qint64(predicted[0].optimizer), last.memOptimizer);
        QCOMPARE(qint64(predicted[0].commBuffers), last.memComm);
        if (sync.contains(QLatin1String("diloco")))
            QCOMPARE(last.memOptimizer, last.memGradients * 4); // m, v, anchor, momentum
        QMap<int, qint64> firstStepBytes;
        for (const auto &s : data->steps) {
            const QString where = QStringLiteral("rank %1 step %2: outer %3, %4 of %5 bytes")
                                      .arg(s.rank)
                                      .arg(s.step)
                                      .arg(s.outerSteps)
                                      .arg(s.dpBytes)
                                      .arg(s.dpDenseBytes);
            if (sync.contains(QLatin1String("diloco"))) {
                QVERIFY2(s.outerSteps == s.step / 4, qPrintable(where));
                QVERIFY2(s.dpBytes == s.outerSteps * s.memGradients, qPrintable(where));
                QVERIFY2(s.dpDenseBytes == s.step * s.memGradients, qPrintable(where));
            } else if (sync.contains(QLatin1String("powersgd"))) {
                if (s.step == 1)
                    firstStepBytes[s.rank] = s.dpBytes;
                QVERIFY2(s.outerSteps == 0 && s.dpBytes > 0 && s.dpBytes == s.step * firstStepBytes.value(s.rank), qPrintable(where));
                QVERIFY2(s.dpDenseBytes >= 5 * s.dpBytes && s.dpDenseBytes <= s.step * s.memGradients, qPrintable(where));
            } else {
                QVERIFY2(s.outerSteps == 0 && s.dpBytes == 0 && s.dpDenseBytes == 0, qPrintable(where));
            }
        }
    }

    // What each save cost, in every rank's step reports and the history: the boundary that saves
    // spends time on it (outside step_ms); async, the steps after it run beside the shard's write
    // and the boundary that puts the save in place reports the write's time; sync, the write is in
    // the saving boundary's own time. Without checkpoints every figure is 0.
    void checkpointCostsAreReported_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("whenBusy");
        QTest::newRow("async") << QStringLiteral("async") << QStringLiteral("wait");
        QTest::newRow("async, skip when busy") << QStringLiteral("async") << QStringLiteral("skip");
        QTest::newRow("sync") << QStringLiteral("sync") << QStringLiteral("wait");
        QTest::newRow("none") << QString() << QString();
    }
    void checkpointCostsAreReported()
    {
        QFETCH(QString, mode);
        QFETCH(QString, whenBusy);
        const QString name = QStringLiteral("ckpt-%1-%2").arg(mode.isEmpty() ? QStringLiteral("none") : mode, whenBusy);
        const QString plan =
            shortPlan(name, QString(), 8,
                      mode.isEmpty() ? QString()
                                     : QStringLiteral("\"checkpoint\": {\"every\": 3, \"dir\": \"%1\", \"mode\": \"%2\", \"when_busy\": \"%3\"}")
                                           .arg(m_dir.filePath(name + QStringLiteral("-checkpoints")), mode, whenBusy));
        QVERIFY(!plan.isEmpty());
        QString why;
        const auto data = recordRun(name, plan, why);
        QVERIFY2(data, qPrintable(why));
        QCOMPARE(data->steps.size(), 4 * 8);
        const bool async = mode == QLatin1String("async"), sync = mode == QLatin1String("sync");
        const bool waits = whenBusy == QLatin1String("wait");
        // Each rank's reports against the rule, step by step: a save begins where one is due and
        // none is in flight; the steps after it run beside its write until the boundary that puts
        // it in place (the first after the write ended; at the latest the one where the next save
        // is due — when_busy wait — or the last), which reports the write's time; with skip a save
        // due while one is in flight is skipped. Sync: the write in the saving boundary's time,
        // nothing beside.
        int landed = 0, skipped = 0;
        for (int rank = 0; rank < 4; ++rank) {
            bool inFlight = false;
            int landedHere = 0, skippedHere = 0;
            for (const auto &s : data->steps) {
                if (s.rank != rank)
                    continue;
                const QString where = QStringLiteral("%1: rank %2 step %3: checkpoint %4 ms, behind %5, written in %6 ms")
                                          .arg(name)
                                          .arg(s.rank)
                                          .arg(s.step)
                                          .arg(s.checkpointMs)
                                          .arg(s.checkpointBehind)
                                          .arg(s.checkpointWriteMs);
                const bool due = (async || sync) && (s.step % 3 == 0 || s.step == 8); // 3, 6 and the last, 8
                QVERIFY2(s.checkpointBehind == inFlight, qPrintable(where));
                const bool lands = s.checkpointWriteMs > 0;
                if (async) {
                    QVERIFY2(!lands || inFlight, qPrintable(where));
                    QVERIFY2(!(inFlight && (s.step == 8 || (due && waits))) || lands, qPrintable(where)); // these boundaries wait
                    landedHere += lands ? 1 : 0;
                    inFlight = inFlight && !lands;
                    if (due && inFlight)
                        ++skippedHere;
                    const bool begins = due && !inFlight;
                    QVERIFY2((s.checkpointMs > 0) == (begins || lands), qPrintable(where));
                    inFlight = inFlight || begins;
                } else {
                    QVERIFY2((s.checkpointMs > 0) == due, qPrintable(where));
                    QVERIFY2(lands == (sync && due), qPrintable(where));
                    if (lands)
                        QVERIFY2(s.checkpointMs >= s.checkpointWriteMs, qPrintable(where)); // the write is training's wait
                }
            }
            if (rank == 0) {
                landed = landedHere;
                skipped = skippedHere;
            } else {
                QCOMPARE(landedHere, landed); // the ranks agree where each save lands
                QCOMPARE(skippedHere, skipped);
            }
        }
        if (async)
            QVERIFY2(landed >= 1 && landed + skipped == 2 && (!waits || skipped == 0),
                     qPrintable(QStringLiteral("%1 landed, %2 skipped").arg(landed).arg(skipped)));
        int events = 0, skipEvents = 0;
        for (const auto &e : data->events) {
            if (e.rank == 0 && e.message.startsWith(QStringLiteral("checkpoint at step ")) &&
                e.message.contains(QStringLiteral("(%1: training waited").arg(mode)))
                ++events;
            if (e.message.contains(QStringLiteral(" skipped: the save of step ")))
                ++skipEvents;
        }
        QCOMPARE(events + skipEvents, mode.isEmpty() ? 0 : 3); // the last save lands after the last step: its event only
        QCOMPARE(skipEvents, skipped);
        // The run report says what the saves cost (rank 0's reports: those put in place in a step)
        // under its prediction table, and draws the checkpoint time in its breakdown chart.
        const QString html = m_dir.filePath(name + QStringLiteral(".html"));
        const Result report = cli({QStringLiteral("--db"), m_dir.filePath(name + QStringLiteral(".sqlite")), QStringLiteral("report"),
                                   QStringLiteral("last"), QStringLiteral("--out"), html});
        QVERIFY2(report.code == 0, qPrintable(report.out + report.err));
        QFile page(html);
        QVERIFY(page.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(page.readAll());
        const int reported = sync ? 3 : landed; // sync: every save is put in place in its own step
        QCOMPARE(text.contains(QStringLiteral("<p>Checkpoints: %1 save").arg(reported)), !mode.isEmpty());
        QCOMPARE(text.contains(QStringLiteral("checkpoint (between steps)")), !mode.isEmpty());
    }

    // training.checkpoint without a mode: async, unless the staging buffers (what the ranks of a
    // node write, summed) would take more than half a node's host memory — then sync, said by
    // `validate` (the estimate's figure) and by the trainer at the start (its own figure) as an
    // event. Here a node of 1 MB against the model's ~1.4 MB of state; and of 1 TB.
    void checkpointModeFollowsHostMemory_data()
    {
        QTest::addColumn<QString>("memory");
        QTest::addColumn<QString>("mode");
        QTest::newRow("1 MB a node: sync") << QStringLiteral("0.001") << QStringLiteral("sync");
        QTest::newRow("1 TB a node: async") << QStringLiteral("1000") << QStringLiteral("async");
    }
    void checkpointModeFollowsHostMemory()
    {
        QFETCH(QString, memory);
        QFETCH(QString, mode);
        const QString name = QStringLiteral("ckpt-memory-%1").arg(mode);
        const QString plan = shortPlan(name, QString(), 4, QStringLiteral("\"checkpoint\": {\"every\": 2, \"dir\": \"%1\"}").arg(m_dir.filePath(name)),
                                       QStringLiteral("\"host_memory_gb\": %1").arg(memory));
        QVERIFY(!plan.isEmpty());
        const bool sync = mode == QLatin1String("sync");
        const Result validated = cli({QStringLiteral("validate"), plan});
        QVERIFY2(validated.code == 0, qPrintable(validated.out + validated.err));
        QCOMPARE(validated.out.contains(QStringLiteral("warning: training.checkpoint.mode: checkpoints are written sync: async saves' "
                                                       "staging buffers would take")),
                 sync);
        QString why;
        const auto data = recordRun(name, plan, why);
        QVERIFY2(data, qPrintable(why));
        int saves = 0, said = 0;
        for (const auto &e : data->events) {
            saves += e.rank == 0 && e.message.contains(QStringLiteral("(%1: training waited").arg(mode)) ? 1 : 0;
            said += e.message.startsWith(QStringLiteral("checkpoints are written sync: async saves' staging buffers would take ")) &&
                            e.message.contains(QStringLiteral(" MB of a node's 1.0 MB host memory, more than half"))
                        ? 1
                        : 0;
        }
        QCOMPARE(saves, 2);
        QCOMPARE(said, sync ? 1 : 0);
    }

    // In-memory checkpoints under the supervisor: a crash at step 5 (every attempt) with one
    // restart — the restart note counts from the in-memory save of step 4 (nothing repeated), the
    // trainer resumes from memory; the budget spent, the run fails for good and its memory store
    // is gone from /dev/shm (the supervisor removes it).
    void aRunThatEndsForGoodLeavesNoMemoryStore()
    {
        const QString name = QStringLiteral("ckpt-in-memory");
        const QString ckpt = m_dir.filePath(name);
        const QString plan =
            shortPlan(name, QString(), 8, QStringLiteral("\"checkpoint\": {\"every\": 3, \"dir\": \"%1\", \"memory\": {\"every\": 1}}").arg(ckpt));
        QVERIFY(!plan.isEmpty());
        QVERIFY(trellis::test::setPlanFields(plan, QStringLiteral("launch"),
                              QJsonObject{{QStringLiteral("restart"), QJsonObject{{QStringLiteral("max_restarts"), 1}, {QStringLiteral("backoff_s"), 0.1}}}}));
        const QString database = m_dir.filePath(name + QStringLiteral(".sqlite"));
        const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet"), QStringLiteral("--inject"),
                              QStringLiteral("crash@1:5/*")});
        QCOMPARE(r.code, 1);
        HistoryDatabase h;
        QVERIFY(h.open(database, false).isEmpty());
        const std::optional<RunData> data = h.loadRun(h.findRun(QStringLiteral("last"))->id);
        QVERIFY(data);
        bool noted = false, fromMemory = false;
        for (const auto &e : data->events) {
            noted = noted || e.message.contains(QStringLiteral("resuming from the in-memory checkpoint of step 4, 0 steps repeated"));
            fromMemory = fromMemory || (e.rank == 0 && e.message.startsWith(QStringLiteral("resumed from memory: ")) &&
                                        e.message.endsWith(QStringLiteral("/step-00000004")));
        }
        QVERIFY2(noted && fromMemory, qPrintable(r.out + r.err));
        const QString store = QStringLiteral("%1/%2").arg(QString::fromLatin1(trellis::proto::kMemoryStoreRoot),
                                                          QString::fromStdString(trellis::proto::memoryStoreName(ckpt.toStdString())));
        QVERIFY(store.contains(QStringLiteral("/trellis-")));
        QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(store), 5000);
    }

    // Every collective a rank issues in a step — group, operation, bytes and calls — and every
    // memory category are what the cost model predicts for its pipeline stage, for tensor,
    // sequence and pipeline parallelism, their combinations, recompute, the split backward of
    // zb-h1, ZeRO over a pipeline and sharded stages with several micro-batches and odd dp
    // (padding). ZeRO-2/3 transient buffers depend on when MPI completes a reduction: the
    // prediction is their worst case, so the measured peak must stay at or under it.
    void collectivesAndMemoryAsTheTrainerRecords_data()
    {
        QTest::addColumn<QString>("parallel");
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("layers");
        QTest::addColumn<QString>("model"); // fields before the shared ones: the architecture
        QTest::newRow("tp2") << R"("tp": 2, "micro_batch_size": 2, "micro_batches": 2)" << 2 << 4 << QString();
        QTest::newRow("tp2 sp recompute") << R"("tp": 2, "sequence_parallel": true, "recompute": "full", "micro_batch_size": 2, "micro_batches": 2)" << 2 << 4 << QString();
        QTest::newRow("tp2 sp selective") << R"("tp": 2, "sequence_parallel": true, "recompute": "selective", "micro_batch_size": 2, "micro_batches": 2)" << 2 << 4 << QString();
        QTest::newRow("dp2 tp2") << R"("dp": 2, "tp": 2, "micro_batch_size": 2, "micro_batches": 2)" << 4 << 4 << QString();
        QTest::newRow("pp4 interleaved") << R"("pp": 4, "schedule": "interleaved-1f1b", "virtual_stages": 2, "micro_batches": 4)" << 4 << 8 << QString();
        QTest::newRow("zb-h1 tp2 sp") << R"("tp": 2, "pp": 2, "sequence_parallel": true, "schedule": "zb-h1", "micro_batch_size": 2, "micro_batches": 4)" << 4 << 4 << QString();
        QTest::newRow("gpipe tp2 recompute") << R"("tp": 2, "pp": 2, "schedule": "gpipe", "recompute": "full", "micro_batches": 3)" << 4 << 4 << QString();
        QTest::newRow("zb-h1 pp2 selective") << R"("pp": 2, "schedule": "zb-h1", "recompute": "selective", "micro_batches": 3)" << 2 << 4 << QString();
        QTest::newRow("dp3 pp2 zero1") << R"("dp": 3, "pp": 2, "zero": 1, "micro_batches": 2)" << 6 << 4 << QString();
        QTest::newRow("dp2 tp2 pp2 sp") << R"("dp": 2, "tp": 2, "pp": 2, "sequence_parallel": true, "micro_batch_size": 2, "micro_batches": 4)" << 8 << 4 << QString();
        QTest::newRow("dp3 zero1") << R"("dp": 3, "zero": 1, "bucket_mb": 0.05, "micro_batches": 2)" << 3 << 4 << QString();
        QTest::newRow("dp2 zero2 m2") << R"("dp": 2, "zero": 2, "micro_batch_size": 2, "micro_batches": 2)" << 2 << 4 << QString();
        QTest::newRow("dp3 zero3 m3") << R"("dp": 3, "zero": 3, "micro_batches": 3)" << 3 << 4 << QString();
        // Combinations the strategies compose since the trainer's restructuring.
        QTest::newRow("dp2 tp2 zero1") << R"("dp": 2, "tp": 2, "zero": 1, "micro_batches": 2)" << 4 << 4 << QString();
        QTest::newRow("dp2 tp2 zero3") << R"("dp": 2, "tp": 2, "zero": 3, "sequence_parallel": true)" << 4 << 4 << QString();
        QTest::newRow("dp2 pp2 zero2") << R"("dp": 2, "pp": 2, "zero": 2, "micro_batches": 3)" << 4 << 4 << QString();
        QTest::newRow("dp2 pp2 zero3 zb-h1") << R"("dp": 2, "pp": 2, "zero": 3, "schedule": "zb-h1", "micro_batches": 2)" << 4 << 4 << QString();
        // llama (RMSNorm: one gain a norm; grouped-query q, k, v; SwiGLU; an untied head kept with
        // the final norm, so no embedding copy on the last stage).
        const QString llama = QStringLiteral(R"("arch": "llama", "kv_heads": 2, )");
        QTest::newRow("llama tp2 sp") << R"("tp": 2, "sequence_parallel": true, "micro_batch_size": 2, "micro_batches": 2)" << 2 << 4 << llama;
        QTest::newRow("llama zb-h1 tp2 pp2 sp selective") << R"("tp": 2, "pp": 2, "sequence_parallel": true, "schedule": "zb-h1", "recompute": "selective", "micro_batches": 3)" << 4 << 4 << llama;
        QTest::newRow("llama pp4 interleaved recompute") << R"("pp": 4, "schedule": "interleaved-1f1b", "virtual_stages": 2, "recompute": "full", "micro_batches": 4)" << 4 << 8 << llama;
        QTest::newRow("llama dp3 pp2 zero1") << R"("dp": 3, "pp": 2, "zero": 1, "micro_batches": 2)" << 6 << 4 << llama;
        QTest::newRow("llama dp2 pp2 zero3") << R"("dp": 2, "pp": 2, "zero": 3, "micro_batches": 2)" << 4 << 4 << llama;
        // Context parallelism: the ring's sends and receives (k/v blocks and their gradients),
        // the gradients reduced over dp × cp, the log-sum-exp kept instead of the probabilities.
        QTest::newRow("cp2") << R"("cp": 2, "micro_batch_size": 2, "micro_batches": 2)" << 2 << 4 << QString();
        QTest::newRow("cp2 tp2 sp recompute") << R"("cp": 2, "tp": 2, "sequence_parallel": true, "recompute": "full", "micro_batches": 2)" << 4 << 4 << QString();
        QTest::newRow("cp2 dp2 zero1") << R"("cp": 2, "dp": 2, "zero": 1, "micro_batches": 2)" << 4 << 4 << QString();
        QTest::newRow("cp2 dp2 zero3") << R"("cp": 2, "dp": 2, "zero": 3, "micro_batches": 2)" << 4 << 4 << QString();
        QTest::newRow("llama cp2 pp2 zb-h1 selective") << R"("cp": 2, "pp": 2, "schedule": "zb-h1", "recompute": "selective", "micro_batches": 3)" << 4 << 4 << llama;
        QTest::newRow("llama cp4 contiguous") << R"("cp": 4, "cp_layout": "contiguous", "micro_batch_size": 2)" << 4 << 4 << llama;
        // Mixtures of experts: the all-to-alls of expert parallelism have fixed sizes with a
        // capacity (dropless sizes follow the router: exact here only at ep 1).
        const QString capacity = QStringLiteral(R"("moe": {"experts": 4, "top_k": 2, "capacity_factor": 1.5}, )");
        const QString dropless = QStringLiteral(R"("moe": {"experts": 4, "top_k": 1}, )");
        QTest::newRow("moe dp2 ep2 capacity") << R"("dp": 2, "ep": 2, "micro_batch_size": 2, "micro_batches": 2)" << 2 << 4 << capacity;
        QTest::newRow("moe dp4 ep2 capacity") << R"("dp": 4, "ep": 2, "bucket_mb": 0.02, "micro_batches": 2)" << 4 << 4 << capacity;
        QTest::newRow("moe dp2 ep2 tp2 sp recompute capacity")
            << R"("dp": 2, "ep": 2, "tp": 2, "sequence_parallel": true, "recompute": "full", "micro_batches": 2)" << 4 << 4 << capacity;
        QTest::newRow("moe dp2 ep2 pp2 1f1b capacity") << R"("dp": 2, "ep": 2, "pp": 2, "schedule": "1f1b", "micro_batches": 3)" << 4 << 4 << capacity;
        QTest::newRow("moe dp2 zero3 dropless") << R"("dp": 2, "zero": 3, "micro_batches": 2)" << 2 << 4 << dropless;
        QTest::newRow("llama moe tp2 dropless") << R"("tp": 2, "micro_batch_size": 2)" << 2 << 4 << (llama + dropless);
        // Mixed precision: 16-bit parameters and activations (tp, SP, pipeline and ring messages,
        // ZeRO's parameter gathers in bf16), fp32 gradients and their reductions (or bf16 with
        // grad_reduce), the fp32 masters beside the parameters.
        QTest::newRow("bf16 dp2 zero1") << R"("dp": 2, "zero": 1, "precision": "bf16", "micro_batches": 2)" << 2 << 4 << QString();
        QTest::newRow("bf16 dp2 grad_reduce bf16") << R"("dp": 2, "precision": "bf16", "grad_reduce": "bf16", "micro_batches": 2)" << 2 << 4 << QString();
        QTest::newRow("bf16 tp2 sp selective") << R"("tp": 2, "sequence_parallel": true, "recompute": "selective", "precision": "bf16", "micro_batch_size": 2)" << 2 << 4 << QString();
        QTest::newRow("bf16 dp2 pp2 1f1b") << R"("dp": 2, "pp": 2, "schedule": "1f1b", "precision": "bf16", "micro_batches": 3)" << 4 << 4 << QString();
        QTest::newRow("bf16 dp2 zero3 m2") << R"("dp": 2, "zero": 3, "precision": "bf16", "micro_batches": 2)" << 2 << 4 << QString();
        QTest::newRow("fp16 dp2") << R"("dp": 2, "precision": "fp16", "micro_batches": 2)" << 2 << 4 << QString();
        QTest::newRow("fp16 dp2 pp2 zero2") << R"("dp": 2, "pp": 2, "zero": 2, "precision": "fp16", "micro_batches": 2)" << 4 << 4 << QString();
        QTest::newRow("bf16 llama cp2 zero1") << R"("cp": 2, "dp": 2, "zero": 1, "precision": "bf16", "micro_batches": 2)" << 4 << 4 << llama;
        QTest::newRow("bf16 moe dp2 ep2 capacity") << R"("dp": 2, "ep": 2, "precision": "bf16", "micro_batches": 2)" << 2 << 4 << capacity;
    }

    void collectivesAndMemoryAsTheTrainerRecords()
    {
        QFETCH(QString, parallel);
        QFETCH(int, ranks);
        QFETCH(int, layers);
        QFETCH(QString, model);
        const QString tag = QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('_'));
        const QString plan = m_dir.filePath(tag + QStringLiteral(".json"));
        QFile out(plan);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QStringLiteral(R"({
          "schema": "trellis.plan/1", "name": "%1",
          "model": {%6"layers": %2, "hidden": 32, "heads": 4, "ffn": 64, "seq_len": 32, "vocab": 256},
          "cluster": {"nodes": [{"host": "localhost", "slots": %3}]},
          "parallel": {%4},
          "training": {"steps": 3, "lr": 0.001, "min_lr": 0.0001, "seed": 3,
                       "data": {"source": "text", "path": "%5"}}
        })")
                      .arg(tag)
                      .arg(layers)
                      .arg(ranks)
                      .arg(parallel, QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt"), model)
                      .toUtf8());
        out.close();
        const QString database = m_dir.filePath(tag + QStringLiteral(".sqlite"));
        const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        auto loaded = trellis::plan::loadPlanFile(plan.toStdString());
        QVERIFY(loaded);
        const auto &p = loaded.value();
        const auto estimate = trellis::plan::estimatePlan(p, trellis::plan::deviceFor(p.cluster));
        HistoryDatabase h;
        QCOMPARE(h.open(database, false), QString());
        const auto data = h.loadRun(h.findRun(QStringLiteral("last"))->id);
        QVERIFY(data);
        // What every rank's Hello said of its kernels, as the history keeps it (the Ranks panel
        // and the report's Kernels table read it): the plan's precision, the 16-bit GEMM path
        // for bf16 (one path on every rank of this machine), the kernel threads (1 a rank here).
        QCOMPARE(data->ranks.size(), ranks);
        for (const RankRow &k : data->ranks) {
            QCOMPARE(k.precision, QString::fromLatin1(trellis::plan::toString(p.parallel.precision)));
            QCOMPARE(k.threads, 1);
            if (p.parallel.precision == trellis::plan::Precision::Bf16)
                QVERIFY2(k.kernels.startsWith(QStringLiteral("bf16 GEMMs: onednn (native bf16)")) ||
                             k.kernels.startsWith(QStringLiteral("bf16 GEMMs: fp32 (converted operands)")),
                         qPrintable(k.kernels));
            QCOMPARE(k.kernels, data->ranks.first().kernels);
        }
        const int perStage = ranks / p.parallel.pp;
        auto stageOf = [&](int rank) { return p.parallel.pp > 1 ? rank / perStage : -1; };
        // (stage, group, op) -> (bytes, calls), measured on every rank of the stage alike.
        QMap<QString, QPair<qint64, int>> measured, predicted;
        auto key = [](int stage, const QString &group, const QString &op) {
            return QStringLiteral("stage %1 %2 %3").arg(stage).arg(group, op);
        };
        for (const auto &c : h.collectivesOf(data->run.id)) {
            if (c.step != 3)
                continue;
            const QString k = key(stageOf(c.rank), c.group, c.op);
            if (measured.contains(k))
                QCOMPARE(measured[k], qMakePair(c.bytes, c.count)); // the same on every rank of the stage
            measured[k] = qMakePair(c.bytes, c.count);
        }
        for (const auto &c : estimate.collectives)
            predicted[key(c.stage, QString::fromStdString(c.group), QString::fromStdString(c.op))] =
                qMakePair(qint64(c.bytes), c.callsPerStep);
        QVERIFY(!measured.isEmpty());
        QCOMPARE(predicted.keys(), measured.keys());
        for (auto it = measured.cbegin(); it != measured.cend(); ++it)
            QVERIFY2(predicted[it.key()] == it.value(),
                     qPrintable(QStringLiteral("%1: predicted %2 bytes in %3 calls, measured %4 in %5")
                                    .arg(it.key())
                                    .arg(predicted[it.key()].first)
                                    .arg(predicted[it.key()].second)
                                    .arg(it.value().first)
                                    .arg(it.value().second)));
        // Memory by category, rank 0 of every stage.
        QCOMPARE(int(estimate.memory.size()), p.parallel.pp);
        for (const auto &s : data->steps) {
            if (s.step != 3 || s.rank % perStage != 0)
                continue;
            const auto &m = estimate.memory[size_t(p.parallel.pp > 1 ? s.rank / perStage : 0)];
            QCOMPARE(s.memParameters, qint64(m.parameters));
            QCOMPARE(s.memMaster, qint64(m.masterWeights));
            QCOMPARE(s.memGradients, qint64(m.gradients));
            QCOMPARE(s.memOptimizer, qint64(m.optimizer));
            QCOMPARE(s.memActivations, qint64(m.activations));
            if (p.parallel.zero >= 2) {
                QVERIFY2(s.memComm > 0 && s.memComm <= qint64(m.commBuffers),
                         qPrintable(QStringLiteral("%1 > %2").arg(s.memComm).arg(m.commBuffers)));
            } else {
                QCOMPARE(s.memComm, qint64(m.commBuffers));
            }
        }
        // The routing the ranks reported (trellis-cli experts): every layer saw each token top_k
        // times, summed over the reporting ranks (one tp rank of each group, every stage its layers).
        const Result experts = cli({QStringLiteral("--db"), database, QStringLiteral("experts"), QStringLiteral("last"), QStringLiteral("--json")});
        if (p.model.moe.experts == 0) {
            QCOMPARE(experts.code, 1);
            QVERIFY2(experts.err.contains(QStringLiteral("recorded no expert routing (a dense model")), qPrintable(experts.err));
            return;
        }
        QVERIFY2(experts.code == 0, qPrintable(experts.err));
        const QJsonObject doc = QJsonDocument::fromJson(experts.out.toUtf8()).object();
        QCOMPARE(doc[QStringLiteral("step")].toInt(), 3);
        const QJsonArray perLayer = doc[QStringLiteral("layers")].toArray();
        QCOMPARE(perLayer.size(), layers);
        const qint64 choices = qint64(p.parallel.dp) * p.parallel.microBatches * p.parallel.microBatchSize * p.model.seqLen * p.model.moe.topK;
        for (const QJsonValue &l : perLayer) {
            qint64 sum = 0;
            for (const QJsonValue &n : l.toObject()[QStringLiteral("tokens")].toArray())
                sum += n.toInteger();
            QCOMPARE(sum, choices);
            QVERIFY(l.toObject()[QStringLiteral("imbalance")].toDouble() >= 1.0);
        }
        QCOMPARE(doc[QStringLiteral("choices")].toInteger(), choices * layers);
        QVERIFY(doc[QStringLiteral("dropped")].toInteger() >= 0 && doc[QStringLiteral("dropped")].toInteger() < choices * layers);
        if (!p.model.moe.capacityFactor)
            QCOMPARE(doc[QStringLiteral("dropped")].toInteger(), 0);
        QVERIFY(doc[QStringLiteral("aux_loss")].toDouble() > 0);
        const Result missing = cli({QStringLiteral("--db"), database, QStringLiteral("experts"), QStringLiteral("last"), QStringLiteral("--step"), QStringLiteral("9")});
        QCOMPARE(missing.code, 1);
        QVERIFY2(missing.err.contains(QStringLiteral("no expert routing at step 9 (steps 1 to 3 recorded)")), qPrintable(missing.err));
    }

    // Sequence parallelism keeps only 1/tp of the rows of every norm and residual activation:
    // per rank at tp = 2 the embedding output, each layer's ln1, attention output, residual,
    // ln2, MLP output and layer output (6C + 4 floats a row with the norms' mean and rstd) and the
    // final norm's statistics drop from 64 rows to 32.
    void sequenceParallelActivations()
    {
        qint64 bytes[2] = {0, 0};
        for (int sp : {0, 1}) {
            const QString plan = m_dir.filePath(QStringLiteral("sp%1.json").arg(sp));
            QFile out(plan);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(QStringLiteral(R"({
              "schema": "trellis.plan/1", "name": "sp",
              "model": {"layers": 2, "hidden": 32, "heads": 4, "ffn": 64, "seq_len": 32, "vocab": 256},
              "cluster": {"nodes": [{"host": "localhost", "slots": 2}]},
              "parallel": {"dp": 1, "tp": 2, "micro_batch_size": 2, "sequence_parallel": %1},
              "training": {"steps": 2, "lr": 0.001, "min_lr": 0.0001, "seed": 3,
                           "data": {"source": "text", "path": "%2"}}
            })")
                          .arg(sp ? QStringLiteral("true") : QStringLiteral("false"),
                               QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt"))
                          .toUtf8());
            out.close();
            const QString database = m_dir.filePath(QStringLiteral("sp%1.sqlite").arg(sp));
            const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet")});
            QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
            HistoryDatabase h;
            QCOMPARE(h.open(database, false), QString());
            auto data = h.loadRun(h.findRun(QStringLiteral("last"))->id);
            const auto predicted = predictedMemory(plan);
            for (const auto &s : data->steps) {
                if (s.step != 2 || s.rank != 0)
                    continue;
                bytes[sp] = s.memActivations;
                // Tensor-parallel shards and sequence-parallel rows, as the cost model has them.
                QCOMPARE(qint64(predicted[0].parameters), s.memParameters);
                QCOMPARE(qint64(predicted[0].optimizer), s.memOptimizer);
                QCOMPARE(qint64(predicted[0].activations), s.memActivations);
            }
        }
        const qint64 C = 32, L = 2, dropRows = 64 - 32;
        QCOMPARE(bytes[0] - bytes[1], dropRows * (C + L * (6 * C + 4) + 2) * 4);
    }

};

QTEST_GUILESS_MAIN(TstCliTrainerRecords)
#include "tst_cli_trainer_records.moc"
