// The run history's migrations: histories written by older schemas (version 1, the fixed and delta
// step records of schemas 6, 7 and 9, schema 10's collective rows) brought forward in place, their
// old rows read beside the ones written after. SQLite files only (tests/launcher/history/tst_history.cpp
// holds the rest, most of it run against PostgreSQL too).
#include "launcher/history/collective_blocks.h"
#include "launcher/history/history_database.h"
#include "launcher/history/history_writer.h"
#include "launcher/history/step_blocks.h"
#include "tests/support/history_fill.h"

#include <QDir>
#include <QFile>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <bit>
#include <cmath>
#include <limits>

using namespace trellis::launcher;
using trellis::test::fillRun;

namespace {

// A history file at `path` holding one completed run; the path, or "" when it could not be written.
QString filledHistory(const QString &path, const QString &runId, int ranks, int steps)
{
    HistoryWriter writer(path);
    if (!writer.start().isEmpty())
        return {};
    fillRun(writer, runId, ranks, steps);
    return writer.flush() ? path : QString();
}

} // namespace

class TstHistoryMigrations : public QObject {
    Q_OBJECT
private slots:
    // A version-1 history (before timeline spans) is brought to version 2 in place: the spans
    // table appears, the recorded runs stay.
    void migratesVersionOne()
    {
        QTemporaryDir dir;
        const QString path = filledHistory(dir.filePath(QStringLiteral("v1.sqlite")), QStringLiteral("old-run"), 2, 5);
        QVERIFY(!path.isEmpty());
        {
            HistoryDatabase db;
            QCOMPARE(db.open(path, false), QString());
            QSqlQuery q(db.connection());
            QVERIFY(q.exec(QStringLiteral("DROP TABLE spans")));
            QVERIFY(q.exec(QStringLiteral("DROP TABLE expert_load"))); // schema 6
            // Before schema 5 step reports were rows of step_metrics.
            QVERIFY(q.exec(QStringLiteral("DROP TABLE step_blocks")));
            for (int r = 0; r < 2; ++r)
                for (int st = 1; st <= 5; ++st)
                    QVERIFY(q.exec(QStringLiteral("INSERT INTO step_metrics(run, rank, step, loss, step_ms)"
                                                  " VALUES((SELECT id FROM runs), %1, %2, %3, 10)")
                                       .arg(r)
                                       .arg(st)
                                       .arg(5.0 - 0.1 * st - r)));
            QVERIFY(q.exec(QStringLiteral("ALTER TABLE runs DROP COLUMN launcher_host")));
            QVERIFY(q.exec(QStringLiteral("ALTER TABLE runs DROP COLUMN launcher_pid")));
            QVERIFY(q.exec(QStringLiteral("ALTER TABLE ranks DROP COLUMN received_seq")));
            QVERIFY(q.exec(QStringLiteral("ALTER TABLE ranks DROP COLUMN goodbye_seq")));
            QVERIFY(q.exec(QStringLiteral("ALTER TABLE ranks DROP COLUMN lost")));
            QVERIFY(q.exec(QStringLiteral("ALTER TABLE runs DROP COLUMN launch_command"))); // schema 9
            for (const char *column : {"precision", "kernels", "threads"}) // schema 13
                QVERIFY(q.exec(QStringLiteral("ALTER TABLE ranks DROP COLUMN %1").arg(QLatin1String(column))));
            QVERIFY(q.exec(QStringLiteral("DROP INDEX runs_kind"))); // schema 17
            QVERIFY(q.exec(QStringLiteral("ALTER TABLE runs DROP COLUMN kind")));
            QVERIFY(q.exec(QStringLiteral("DROP INDEX runs_owner"))); // schema 16
            for (const char *column : {"note", "archived", "tokens_per_s", "mfu", "figures_step", "plan_name", "plan_precision", "plan_layout",
                                       "files_at", "owner"}) // schemas 14, 15 and 16
                QVERIFY(q.exec(QStringLiteral("ALTER TABLE runs DROP COLUMN %1").arg(QLatin1String(column))));
            QVERIFY(q.exec(QStringLiteral("DROP TABLE run_tags")));
            QVERIFY(q.exec(QStringLiteral("PRAGMA user_version=1")));
        }
        HistoryDatabase db;
        QCOMPARE(db.open(path, false), QString());
        QSqlQuery q(db.connection());
        QVERIFY(q.exec(QStringLiteral("PRAGMA user_version")) && q.next());
        QCOMPARE(q.value(0).toInt(), kHistorySchemaVersion);
        QVERIFY(q.exec(QStringLiteral("SELECT count(*) FROM spans")) && q.next());
        QVERIFY(q.exec(QStringLiteral("SELECT count(*) FROM expert_load")) && q.next());
        QVERIFY(q.exec(QStringLiteral("SELECT launcher_host, launcher_pid FROM runs")));
        QVERIFY(q.exec(QStringLiteral("SELECT received_seq, goodbye_seq FROM ranks")));
        QVERIFY(q.exec(QStringLiteral("SELECT launch_command FROM runs")));
        QCOMPARE(db.listRuns().size(), 1);
        QVERIFY(db.listRuns().first().launchCommands.isEmpty());
        // Schema 14: the old run has no note, tags or figures yet, and can be tagged.
        QVERIFY(db.listRuns().first().note.isEmpty() && db.listRuns().first().tags.isEmpty());
        QCOMPARE(db.listRuns().first().figuresStep, qint64(-1));
        QVERIFY(db.listRuns().first().owner.isEmpty()); // schema 16: recorded before owners were
        QCOMPARE(db.tagRun(db.listRuns().first().id, QStringLiteral("kept")), QString());
        QCOMPARE(db.listRuns().first().tags, QStringList{QStringLiteral("kept")});
        QCOMPARE(db.listRuns().first().runId, QStringLiteral("old-run"));
        QCOMPARE(db.listRuns().first().stepsDone, qint64(5));
        QCOMPARE(db.listRuns().first().lastLoss, 4.5);
        const auto data = db.loadRun(db.listRuns().first().id);
        QCOMPARE(data->steps.size(), 10);
        QCOMPARE(data->steps[3].rank, 1);
        QCOMPARE(data->steps[3].step, qint64(2));
        QCOMPARE(data->steps[3].loss, 3.8);
    }

    // A history of schema 10 keeps its collective rows and reads them beside the blocks written
    // after its migration; a report stored twice (resent) comes back once, its newest copy; a
    // damaged block is named while the rest still read.
    void collectiveRowsOfSchemaTenAndBlocks()
    {
        QTemporaryDir dir;
        const QString path = filledHistory(dir.filePath(QStringLiteral("v10.sqlite")), QStringLiteral("ten"), 2, 2);
        QVERIFY(!path.isEmpty());
        {
            HistoryDatabase db;
            QCOMPARE(db.open(path, false), QString());
            QSqlQuery q(db.connection());
            QVERIFY(q.exec(QStringLiteral("DROP TABLE collective_blocks")));
            QVERIFY(q.exec(QStringLiteral("ALTER TABLE step_blocks DROP COLUMN last_rank")));
            for (const char *column : {"precision", "kernels", "threads"}) // schema 13
                QVERIFY(q.exec(QStringLiteral("ALTER TABLE ranks DROP COLUMN %1").arg(QLatin1String(column))));
            QVERIFY(q.exec(QStringLiteral("DROP INDEX runs_kind"))); // schema 17
            QVERIFY(q.exec(QStringLiteral("ALTER TABLE runs DROP COLUMN kind")));
            QVERIFY(q.exec(QStringLiteral("DROP INDEX runs_owner"))); // schema 16
            for (const char *column : {"note", "archived", "tokens_per_s", "mfu", "figures_step", "plan_name", "plan_precision", "plan_layout",
                                       "files_at", "owner"}) // schemas 14, 15 and 16
                QVERIFY(q.exec(QStringLiteral("ALTER TABLE runs DROP COLUMN %1").arg(QLatin1String(column))));
            QVERIFY(q.exec(QStringLiteral("DROP TABLE run_tags")));
            QVERIFY(q.exec(QStringLiteral("PRAGMA user_version=10")));
            for (int r = 0; r < 2; ++r)
                QVERIFY(q.exec(QStringLiteral("INSERT INTO collective_stats(run, rank, step, grp, op, bytes, ms, bus_gbps, count)"
                                              " VALUES((SELECT id FROM runs), %1, 1, 'dp', 'all_reduce', 4096, 0.5, 1.5, 1)")
                                   .arg(r)));
        }
        HistoryWriter writer(path);
        QCOMPARE(writer.start(), QString());
        writer.enqueue(CollectiveOp{QStringLiteral("ten"), CollectiveRow{1, 1, QStringLiteral("dp"), QStringLiteral("all_reduce"), 4096, 0.75, 1.0, 1}});
        for (int r = 0; r < 2; ++r)
            writer.enqueue(CollectiveOp{QStringLiteral("ten"), CollectiveRow{r, 2, QStringLiteral("dp"), QStringLiteral("all_reduce"), 4096, 0.25, 3.0, 1}});
        QVERIFY(writer.flush());
        HistoryDatabase db;
        QCOMPARE(db.open(path, false), QString());
        const qint64 id = db.findRun(QStringLiteral("ten"))->id;
        QList<CollectiveRow> rows = db.collectivesOf(id);
        QCOMPARE(db.lastError(), QString());
        QCOMPARE(rows.size(), 4); // (rank, step) 0·1, 1·1 (its block's copy), 0·2, 1·2
        QCOMPARE(rows[0].rank, 0);
        QCOMPARE(rows[0].ms, 0.5);
        QCOMPARE(rows[1].rank, 1);
        QCOMPARE(rows[1].ms, 0.75); // the newer copy
        QCOMPARE(rows[3].step, qint64(2));
        QCOMPARE(rows[3].busGBps, 3.0);
        for (qint64 rowsPerChunk : {1, 2, 100}) {
            QList<CollectiveRow> chunked;
            QVERIFY(db.forEachCollectiveChunk(id, [&](const QList<CollectiveRow> &part) { chunked.append(part); }, rowsPerChunk));
            QCOMPARE(chunked.size(), rows.size());
            for (qsizetype i = 0; i < rows.size(); ++i) {
                QCOMPARE(chunked[i].rank, rows[i].rank);
                QCOMPARE(chunked[i].step, rows[i].step);
                QCOMPARE(chunked[i].ms, rows[i].ms);
            }
        }
        QSqlQuery q(db.connection());
        QVERIFY(q.exec(QStringLiteral("UPDATE collective_blocks SET rows = x'06ff' WHERE rank = 0")));
        rows = db.collectivesOf(id);
        QVERIFY2(db.lastError().contains(QStringLiteral("a collective block of rank 0 is corrupt")), qPrintable(db.lastError()));
        QCOMPARE(rows.size(), 2); // the old rows still read (ranks 0 and 1 shared the one block)
    }

    // A schema-6 history (fixed records) migrates to 7 and reads its old blocks beside new ones.
    void fixedBlocksOfSchemaSix()
    {
        QTemporaryDir dir;
        const QString path = filledHistory(dir.filePath(QStringLiteral("v6.sqlite")), QStringLiteral("six"), 2, 3);
        QVERIFY(!path.isEmpty());
        {
            HistoryDatabase db;
            QCOMPARE(db.open(path, false), QString());
            QSqlQuery q(db.connection());
            QVERIFY(q.exec(QStringLiteral("DELETE FROM step_blocks")));
            QVERIFY(q.exec(QStringLiteral("ALTER TABLE step_blocks DROP COLUMN encoding")));
            QVERIFY(q.exec(QStringLiteral("ALTER TABLE step_blocks DROP COLUMN last_rank"))); // schema 11
            QVERIFY(q.exec(QStringLiteral("ALTER TABLE runs DROP COLUMN launch_command"))); // schema 9
            for (const char *column : {"precision", "kernels", "threads"}) // schema 13
                QVERIFY(q.exec(QStringLiteral("ALTER TABLE ranks DROP COLUMN %1").arg(QLatin1String(column))));
            QVERIFY(q.exec(QStringLiteral("DROP INDEX runs_kind"))); // schema 17
            QVERIFY(q.exec(QStringLiteral("ALTER TABLE runs DROP COLUMN kind")));
            QVERIFY(q.exec(QStringLiteral("DROP INDEX runs_owner"))); // schema 16
            for (const char *column : {"note", "archived", "tokens_per_s", "mfu", "figures_step", "plan_name", "plan_precision", "plan_layout",
                                       "files_at", "owner"}) // schemas 14, 15 and 16
                QVERIFY(q.exec(QStringLiteral("ALTER TABLE runs DROP COLUMN %1").arg(QLatin1String(column))));
            QVERIFY(q.exec(QStringLiteral("DROP TABLE run_tags")));
            QVERIFY(q.exec(QStringLiteral("PRAGMA user_version=6")));
            // As schema 6 wrote them: fixed records, no encoding column.
            for (int r = 0; r < 2; ++r) {
                QByteArray blob;
                for (int st = 1; st <= 3; ++st) {
                    StepRow s;
                    s.rank = r;
                    s.step = st;
                    s.loss = 4.0 - st - 0.5 * r;
                    s.peakRss = 1000 + st;
                    packStepRecord(s, blob);
                }
                q.prepare(QStringLiteral("INSERT INTO step_blocks(run, rank, first_step, last_step, last_loss, n, rows)"
                                         " VALUES((SELECT id FROM runs), ?, 1, 3, ?, 3, ?)"));
                q.addBindValue(r);
                q.addBindValue(1.0 - 0.5 * r);
                q.addBindValue(blob);
                QVERIFY(q.exec());
            }
        }
        HistoryWriter writer(path); // migrates, then appends delta blocks
        QCOMPARE(writer.start(), QString());
        StepRow next;
        next.rank = 1;
        next.step = 4;
        next.loss = 0.25;
        writer.enqueue(StepOp{QStringLiteral("six"), {next}});
        QVERIFY(writer.flush());
        HistoryDatabase db;
        QCOMPARE(db.open(path, false), QString());
        QSqlQuery q(db.connection());
        QVERIFY(q.exec(QStringLiteral("SELECT encoding, count(*) FROM step_blocks GROUP BY encoding ORDER BY encoding")));
        QVERIFY(q.next());
        QCOMPARE(q.value(0).toInt(), 0);
        QCOMPARE(q.value(1).toInt(), 2);
        QVERIFY(q.next());
        QCOMPARE(q.value(0).toInt(), 5); // the writer's blocks: the newest encoding
        const auto data = db.loadRun(db.findRun(QStringLiteral("six"))->id);
        QCOMPARE(db.lastError(), QString());
        QCOMPARE(data->steps.size(), 7);
        QCOMPARE(data->steps[5].rank, 1);
        QCOMPARE(data->steps[5].loss, 0.5);
        QCOMPARE(data->steps[5].peakRss, qint64(1003));
        QCOMPARE(data->steps[6].loss, 0.25);
    }

    // Older histories of delta records migrate and read their blocks beside the new ones of 25
    // fields: schema 7 (18 fields, encoding 1) and schema 9 (22 fields — the loss scale, the master
    // weights' bytes, skipped updates — encoding 2).
    void deltaBlocksOfOlderSchemas_data()
    {
        QTest::addColumn<int>("schema");
        QTest::addColumn<int>("encoding");
        QTest::newRow("schema 7") << 7 << 1;
        QTest::newRow("schema 9") << 9 << 2;
    }
    void deltaBlocksOfOlderSchemas()
    {
        QFETCH(int, schema);
        QFETCH(int, encoding);
        QTemporaryDir dir;
        const QString path = filledHistory(dir.filePath(QStringLiteral("old.sqlite")), QStringLiteral("old"), 1, 2);
        QVERIFY(!path.isEmpty());
        {
            HistoryDatabase db;
            QCOMPARE(db.open(path, false), QString());
            QSqlQuery q(db.connection());
            QVERIFY(q.exec(QStringLiteral("DELETE FROM step_blocks")));
            QVERIFY(q.exec(QStringLiteral("ALTER TABLE step_blocks DROP COLUMN last_rank"))); // schema 11
            if (schema < 9)
                QVERIFY(q.exec(QStringLiteral("ALTER TABLE runs DROP COLUMN launch_command")));
            for (const char *column : {"precision", "kernels", "threads"}) // schema 13
                QVERIFY(q.exec(QStringLiteral("ALTER TABLE ranks DROP COLUMN %1").arg(QLatin1String(column))));
            QVERIFY(q.exec(QStringLiteral("DROP INDEX runs_kind"))); // schema 17
            QVERIFY(q.exec(QStringLiteral("ALTER TABLE runs DROP COLUMN kind")));
            QVERIFY(q.exec(QStringLiteral("DROP INDEX runs_owner"))); // schema 16
            for (const char *column : {"note", "archived", "tokens_per_s", "mfu", "figures_step", "plan_name", "plan_precision", "plan_layout",
                                       "files_at", "owner"}) // schemas 14, 15 and 16
                QVERIFY(q.exec(QStringLiteral("ALTER TABLE runs DROP COLUMN %1").arg(QLatin1String(column))));
            QVERIFY(q.exec(QStringLiteral("DROP TABLE run_tags")));
            QVERIFY(q.exec(QStringLiteral("PRAGMA user_version=%1").arg(schema)));
            StepBlockEncoder e(static_cast<StepEncoding>(encoding)); // as that schema wrote them
            for (int st = 1; st <= 2; ++st) {
                StepRow s;
                s.step = st;
                s.loss = 3.0 - st;
                s.memParameters = 4096;
                if (encoding == 2)
                    s.lossScale = 1024;
                e.add(s);
            }
            q.prepare(QStringLiteral("INSERT INTO step_blocks(run, rank, first_step, last_step, last_loss, n, rows, encoding)"
                                     " VALUES((SELECT id FROM runs), 0, 1, 2, 1.0, 2, ?, %1)")
                          .arg(encoding));
            q.addBindValue(e.bytes());
            QVERIFY(q.exec());
        }
        HistoryWriter writer(path);
        QCOMPARE(writer.start(), QString());
        StepRow next;
        next.step = 3;
        next.loss = 0.5;
        next.lossScale = 32768;
        next.skippedSteps = 2;
        next.updateSkipped = true;
        next.memMaster = 8192;
        next.outerSteps = 1;
        next.dpBytes = 1 << 20;
        next.dpDenseBytes = 3 << 20;
        writer.enqueue(StepOp{QStringLiteral("old"), {next}});
        QVERIFY(writer.flush());
        HistoryDatabase db;
        QCOMPARE(db.open(path, false), QString());
        const auto data = db.loadRun(db.findRun(QStringLiteral("old"))->id);
        QCOMPARE(db.lastError(), QString());
        QCOMPARE(data->steps.size(), 3);
        QCOMPARE(data->steps[1].loss, 1.0);
        QCOMPARE(data->steps[1].memParameters, qint64(4096));
        QCOMPARE(data->steps[1].lossScale, encoding == 2 ? 1024.0 : 0.0);
        QCOMPARE(data->steps[1].dpBytes, qint64(0));
        QCOMPARE(data->steps[2].lossScale, 32768.0);
        QCOMPARE(data->steps[2].skippedSteps, qint64(2));
        QVERIFY(data->steps[2].updateSkipped);
        QCOMPARE(data->steps[2].memMaster, qint64(8192));
        QCOMPARE(data->steps[2].outerSteps, qint64(1));
        QCOMPARE(data->steps[2].dpBytes, qint64(1 << 20));
        QCOMPARE(data->steps[2].dpDenseBytes, qint64(3 << 20));
    }

};

QTEST_GUILESS_MAIN(TstHistoryMigrations)
#include "tst_history_migrations.moc"
