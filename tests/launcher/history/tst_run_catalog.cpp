// The history's catalogue of runs (schema 14, launcher/history/run_catalog.cpp and run_filter.h):
// notes, tags, renames, archiving and deleting (with the run's files), the figures kept for an
// ended run, and the filter the workbench's runs table and `trellis-cli runs --filter` share.
#include "launcher/history/history_database.h"
#include "launcher/history/history_writer.h"
#include "launcher/history/run_files.h"
#include "launcher/history/run_filter.h"
#include "launcher/metrics/dashboard_snapshot.h"
#include "launcher/history_location.h"
#include "tests/support/history_engines.h"
#include "tests/support/history_fill.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

using namespace trellis::launcher;
using trellis::test::fillRun;

class TstRunCatalog : public QObject {
    Q_OBJECT
    trellis::test::HistoryEngines m_engines;
private slots:
    void initTestCase() { QCOMPARE(m_engines.start(), QString()); }
    void cleanupTestCase() { m_engines.stop(); }

    // Schema 14: what people add to runs, the filter over them, the figures kept per run, and
    // deleting a run with its files (a run still going refused).
    void runsAreAnnotatedFilteredAndDeleted()
    {
        QTemporaryDir dir;
        // A server's runs keep their files in the user's data folder: here, one in `dir`.
        qputenv("XDG_DATA_HOME", QFile::encodeName(dir.filePath(QStringLiteral("data"))));
        const QString path = m_engines.fresh(dir, QStringLiteral("history.sqlite"));
        const QDir files(historyLocalFolder(path));
        QVERIFY(files.mkpath(QStringLiteral(".")));
        QFile gpuPlan(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans/gpu/quickstart-cuda.json"));
        QVERIFY2(gpuPlan.open(QIODevice::ReadOnly), qPrintable(gpuPlan.fileName()));
        const QString gpuJson = QString::fromUtf8(gpuPlan.readAll());
        {
            HistoryWriter w(path);
            QCOMPARE(w.start(), QString());
            const auto plan = [](int tp, const char *preset, const char *precision) {
                return QStringLiteral("{\"name\":\"p-tp%1\",\"model\":{\"preset\":\"%2\"},\"parallel\":{\"dp\":2,\"tp\":%1,\"pp\":1,\"precision\":\"%3\"},"
                                      "\"training\":{\"steps\":%4}}")
                    .arg(tp)
                    .arg(QLatin1String(preset), QLatin1String(precision))
                    .arg(tp * 100);
            };
            const QDateTime t0 = QDateTime(QDate(2026, 11, 10), QTime(12, 0)).toUTC();
            w.enqueue(NewRunOp{QStringLiteral("r-tp1"), QStringLiteral("sweep a"), plan(1, "tiny", "fp32"), QStringLiteral("local"), 2, 3, t0});
            w.enqueue(NewRunOp{QStringLiteral("r-tp2"), QStringLiteral("sweep b"), plan(2, "llama2-70b", "bf16"), QStringLiteral("ssh"), 4, 3, t0.addDays(10)});
            w.enqueue(NewRunOp{QStringLiteral("r-live"), QStringLiteral("going"), plan(2, "tiny", "bf16"), QStringLiteral("local"), 2, 3, t0.addDays(11)});
            w.enqueue(RunStatusOp{QStringLiteral("r-live"), QStringLiteral("running"), {}, {}, 0});
            for (const char *id : {"r-tp1", "r-tp2"})
                w.enqueue(RunStatusOp{QLatin1String(id), QStringLiteral("failed"), QStringLiteral("boom"), t0.addDays(12), 1});
            fillRun(w, QStringLiteral("r-fig"), 4, 5);
            w.enqueue(NewRunOp{QStringLiteral("r-gpu"), QStringLiteral("gpu"), gpuJson, QStringLiteral("local"), 8, 5, t0.addDays(13)});
            for (int s = 1; s <= 5; ++s)
                for (int r = 0; r < 8; ++r) {
                    StepRow row;
                    row.rank = r;
                    row.step = s;
                    row.loss = 3;
                    row.tokensPerS = s == 1 ? 10 : 50000; // the first step (warm-up) left out of the median
                    w.enqueue(StepOp{QStringLiteral("r-gpu"), {row}});
                }
            w.enqueue(RunStatusOp{QStringLiteral("r-gpu"), QStringLiteral("completed"), {}, t0.addDays(13).addSecs(60), 0});
            QVERIFY(w.flush());
        }
        HistoryDatabase db;
        QCOMPARE(db.open(path, false), QString());
        const auto idOf = [&](const char *runId) { return db.findRun(QLatin1String(runId))->id; };
        const auto ids = [&](const QString &filter) {
            const RunFilterParse parsed = parseRunFilter(filter);
            if (!parsed.error.isEmpty())
                return QStringList{QStringLiteral("error: ") + parsed.error};
            QStringList out;
            for (const RunSummary &r : db.listRuns(parsed.filter, 100))
                out << r.runId;
            return out;
        };
        // The plan's fields read from the recorded plan.
        const RunSummary tp2 = *db.findRun(QStringLiteral("r-tp2"));
        QCOMPARE(tp2.planName, QStringLiteral("p-tp2"));
        QCOMPARE(tp2.layout, QStringLiteral("dp2 tp2 pp1"));
        QCOMPARE(tp2.precision, QStringLiteral("bf16"));
        {   // A run another writer recorded without them reads the same from its plan.
            QSqlQuery clear(db.connection());
            QVERIFY(clear.exec(QStringLiteral("UPDATE runs SET plan_name = NULL, plan_precision = NULL, plan_layout = NULL WHERE run_id = 'r-tp2'")));
            const RunSummary read = *db.findRun(QStringLiteral("r-tp2"));
            QCOMPARE(read.planName, tp2.planName);
            QCOMPARE(read.layout, tp2.layout);
            QCOMPARE(read.precision, tp2.precision);
        }

        // Tags, notes, names; bad text refused with the limit, nothing changed.
        QCOMPARE(db.tagRun(idOf("r-tp1"), QStringLiteral("baseline")), QString());
        QCOMPARE(db.tagRun(idOf("r-tp1"), QStringLiteral("lr-sweep")), QString());
        QCOMPARE(db.tagRun(idOf("r-tp1"), QStringLiteral("baseline")), QString()); // twice is once
        QCOMPARE(db.tagRun(idOf("r-tp2"), QStringLiteral("lr-sweep")), QString());
        QVERIFY(db.tagRun(idOf("r-tp2"), QStringLiteral("two words")).contains(QStringLiteral("letters, digits")));
        QVERIFY(db.tagRun(idOf("r-tp2"), QString(65, QLatin1Char('x'))).contains(QStringLiteral("at most 64")));
        QCOMPARE(db.setRunNote(idOf("r-tp2"), QStringLiteral("tp=2 on llama\nsecond line")), QString());
        QVERIFY(db.setRunNote(idOf("r-tp2"), QStringLiteral("bell\a")).contains(QStringLiteral("control characters")));
        QVERIFY(db.setRunNote(idOf("r-tp2"), QString(4001, QLatin1Char('n'))).contains(QStringLiteral("at most 4000")));
        QCOMPARE(db.renameRun(idOf("r-tp2"), QStringLiteral("sweep b, tp 2")), QString());
        QVERIFY(!db.renameRun(idOf("r-tp2"), QStringLiteral(" ")).isEmpty());
        QVERIFY(!db.renameRun(idOf("r-tp2"), QStringLiteral("a\tb")).isEmpty());
        QVERIFY(!db.tagRun(99999, QStringLiteral("x")).isEmpty()); // no such run
        const RunSummary noted = *db.findRun(QStringLiteral("r-tp2"));
        QCOMPARE(noted.note, QStringLiteral("tp=2 on llama\nsecond line"));
        QCOMPARE(noted.name, QStringLiteral("sweep b, tp 2"));
        QCOMPARE(db.findRun(QStringLiteral("r-tp1"))->tags, (QStringList{QStringLiteral("baseline"), QStringLiteral("lr-sweep")}));
        QCOMPARE(db.untagRun(idOf("r-tp1"), QStringLiteral("lr-sweep")), QString());
        QVERIFY(!db.untagRun(idOf("r-tp1"), QStringLiteral("lr-sweep")).isEmpty());

        // The filter: words, status, tags, dates, plan fields, archived.
        QCOMPARE(ids(QString()), (QStringList{QStringLiteral("r-gpu"), QStringLiteral("r-fig"), QStringLiteral("r-live"), QStringLiteral("r-tp2"), QStringLiteral("r-tp1")}));
        QCOMPARE(ids(QStringLiteral("parallel.tp=2")), (QStringList{QStringLiteral("r-live"), QStringLiteral("r-tp2")}));
        QCOMPARE(ids(QStringLiteral("parallel.tp=2 model.preset=llama2-70b")), QStringList{QStringLiteral("r-tp2")});
        QCOMPARE(ids(QStringLiteral("parallel.tp!=2 parallel.dp=2")), QStringList{QStringLiteral("r-tp1")});
        QCOMPARE(ids(QStringLiteral("training.steps>=200")), (QStringList{QStringLiteral("r-gpu"), QStringLiteral("r-live"), QStringLiteral("r-tp2")}));
        QCOMPARE(ids(QStringLiteral("status:failed")), (QStringList{QStringLiteral("r-tp2"), QStringLiteral("r-tp1")}));
        QCOMPARE(ids(QStringLiteral("status:running,completed tag:nothing")), QStringList());
        QCOMPARE(ids(QStringLiteral("tag:baseline")), QStringList{QStringLiteral("r-tp1")});
        QCOMPARE(ids(QStringLiteral("SWEEP")), (QStringList{QStringLiteral("r-tp2"), QStringLiteral("r-tp1")})); // names, any case
        QCOMPARE(ids(QStringLiteral("llama")), QStringList{QStringLiteral("r-tp2")});                          // its note
        QCOMPARE(ids(QStringLiteral("lr-sweep")), QStringList{QStringLiteral("r-tp2")});                       // its tag
        QCOMPARE(ids(QStringLiteral("\"sweep b\"")), QStringList{QStringLiteral("r-tp2")});
        QCOMPARE(ids(QStringLiteral("100%")), QStringList()); // LIKE's wildcards are plain characters
        QCOMPARE(ids(QStringLiteral("after:2026-11-20 before:2026-11-22")), (QStringList{QStringLiteral("r-live"), QStringLiteral("r-tp2")}));
        // What does not parse says why, naming the term.
        QVERIFY(ids(QStringLiteral("parallel.tq=2")).first().contains(QStringLiteral("no plan field 'parallel.tq'")));
        QVERIFY(ids(QStringLiteral("status:done")).first().contains(QStringLiteral("no such status")));
        QVERIFY(ids(QStringLiteral("after:2026-13-01")).first().contains(QStringLiteral("not a date")));
        QVERIFY(ids(QStringLiteral("parallel.tp=")).first().contains(QStringLiteral("a value is needed")));
        QVERIFY(ids(QStringLiteral("\"open")).first().contains(QStringLiteral("not closed")));
        QCOMPARE(parseRunFilter(QStringLiteral("sweep parallel.tq=2")).errorAt, 6);

        // Archived runs leave the list unless asked for.
        QCOMPARE(db.setRunArchived(idOf("r-tp1"), true), QString());
        QVERIFY(!ids(QString()).contains(QStringLiteral("r-tp1")));
        QCOMPARE(ids(QStringLiteral("archived:yes")), QStringList{QStringLiteral("r-tp1")});
        QCOMPARE(ids(QStringLiteral("archived:any status:failed")).size(), 2);
        QVERIFY(db.findRun(QStringLiteral("r-tp1"))->archived);

        // Figures: computed once the run ended, from its steps, and kept.
        RunSummary fig = *db.findRun(QStringLiteral("r-fig"));
        QVERIFY(HistoryDatabase::needsFigures(fig));
        fig = db.withFigures(fig);
        QCOMPARE(fig.tokensPerS, 4.0 * 1000 + 0 + 1 + 2 + 3); // the job's: summed over its ranks
        QCOMPARE(fig.mfu, -1.0);                               // no datasheet peak for this plan
        QCOMPARE(fig.figuresStep, qint64(5));
        QCOMPARE(db.findRun(QStringLiteral("r-fig"))->tokensPerS, 4006.0);
        QVERIFY(!HistoryDatabase::needsFigures(*db.findRun(QStringLiteral("r-fig"))));
        QVERIFY(!HistoryDatabase::needsFigures(*db.findRun(QStringLiteral("r-live")))); // still going
        const RunSummary gpu = db.withFigures(*db.findRun(QStringLiteral("r-gpu")));
        QCOMPARE(gpu.tokensPerS, 8 * 50000.0);
        const telemetry::Prediction p = telemetry::predictionFor(gpuJson, QString());
        QVERIFY(p.known && p.peakFlopsPerDevice > 0);
        QVERIFY(gpu.mfu > 0);
        QVERIFY(qAbs(gpu.mfu - 8 * 50000.0 * p.modelFlopsPerStep / p.tokensPerStep / (p.peakFlopsPerDevice * p.devices)) < 1e-12);

        // Deleting: a run still going is refused; otherwise its rows and files go, nothing else.
        QVERIFY(db.deleteRun(idOf("r-live")).contains(QStringLiteral("still running")));
        const QString folder = files.filePath(QStringLiteral("runs/r-tp2"));
        QVERIFY(QDir().mkpath(folder + QStringLiteral("/attempt-1")));
        QVERIFY(QDir().mkpath(files.filePath(QStringLiteral("runs/supervisors"))));
        QFile(folder + QStringLiteral("/attempt-1/job.out")).open(QIODevice::WriteOnly);
        QFile kept(files.filePath(QStringLiteral("runs/supervisors/r-tp2.plan.json")));
        QVERIFY(kept.open(QIODevice::WriteOnly));
        kept.close();
        QFile other(files.filePath(QStringLiteral("runs/supervisors/r-tp22.plan.json")));
        QVERIFY(other.open(QIODevice::WriteOnly));
        other.close();
        QCOMPARE(runFilesFor(path, QStringLiteral("r-tp2")).size(), 2);
        QVERIFY(runFilesFor(path, QStringLiteral("../runs")).isEmpty());
        QStringList removed;
        const qint64 gone = idOf("r-tp2");
        QCOMPARE(db.deleteRun(gone, &removed), QString());
        QCOMPARE(removed.size(), 2);
        QVERIFY(!QFileInfo::exists(folder));
        QVERIFY(!kept.exists());
        QVERIFY(other.exists());
        QVERIFY(!db.findRun(QStringLiteral("r-tp2")));
        QSqlQuery q(db.connection());
        for (const char *table : {"run_tags", "ranks", "step_blocks", "events"}) {
            QVERIFY(q.exec(QStringLiteral("SELECT count(*) FROM %1 WHERE run = %2").arg(QLatin1String(table)).arg(gone)) && q.next());
            QCOMPARE(q.value(0).toInt(), 0);
        }
        QCOMPARE(ids(QStringLiteral("archived:any")).size(), 4);
    }
};

QTEST_GUILESS_MAIN(TstRunCatalog)
#include "tst_run_catalog.moc"
