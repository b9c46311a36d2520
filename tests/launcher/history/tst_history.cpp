// The run history: batched writes from the writer thread, queries, exports, and clear refusals for
// files that are not (or not yet) ours — without changing them (older schemas' migrations:
// tst_history_migrations.cpp). The cases that are
// not about SQLite files also run against PostgreSQL (ctest tst_history_postgresql,
// tests/support/history_engines.h).
#include "launcher/history/history_database.h"
#include "launcher/history/history_writer.h"
#include "tests/support/history_engines.h"
#include "tests/support/history_fill.h"
#include "launcher/history/run_files.h"
#include "launcher/history/run_filter.h"
#include "launcher/registry/run_registry.h"
#include "launcher/report/html_report.h"
#include "launcher/report/run_export.h"
#include "launcher/history/collective_blocks.h"
#include "launcher/history/step_blocks.h"
#include "launcher/metrics/dashboard_snapshot.h"

#include <QCryptographicHash>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMap>
#include <QProcess>
#include <QSysInfo>
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

QByteArray digest(const QString &path)
{
    QFile f(path);
    f.open(QIODevice::ReadOnly);
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

} // namespace

class TstHistory : public QObject {
    Q_OBJECT
    trellis::test::HistoryEngines m_engines;
private slots:
    void initTestCase() { QCOMPARE(m_engines.start(), QString()); }
    void cleanupTestCase() { m_engines.stop(); }

    // A stall that held up nobody (every rank silent at once, as while a supervisor is adopted):
    // its empty waiting list is written as empty text on both engines. PostgreSQL's driver bound
    // the empty list as NULL, the NOT NULL column refused it, and the run's last rows waited
    // behind it until the writer gave up (tst_team_history's adoption under load).
    void aStallThatHeldUpNobodyIsWritten()
    {
        QTemporaryDir dir;
        const QString path = m_engines.fresh(dir, QStringLiteral("stall.sqlite"));
        HistoryWriter writer(path);
        QCOMPARE(writer.start(), QString());
        fillRun(writer, QStringLiteral("run-s"), 2, 3);
        StallRow row;
        row.number = 1;
        row.holders = {0, 1};
        row.silent = true;
        row.step = 3;
        row.startedAt = QDateTime::currentDateTimeUtc().addMSecs(-1900);
        row.endedAt = QDateTime::currentDateTimeUtc();
        row.durationMs = 1900;
        row.outcome = QStringLiteral("cleared");
        writer.enqueue(StallOp{QStringLiteral("run-s"), row});
        writer.flush();
        QCOMPARE(writer.lastError(), QString());
        HistoryDatabase db;
        QCOMPARE(db.open(path, false), QString());
        const QList<StallRow> stalls = db.stallsOf(db.findRun(QStringLiteral("run-s"))->id);
        QCOMPARE(stalls.size(), 1);
        QCOMPARE(stalls[0].holders, (QList<int>{0, 1}));
        QVERIFY(stalls[0].waiting.isEmpty());
        QVERIFY(stalls[0].what.isEmpty());
    }

    void writeAndQuery()
    {
        QTemporaryDir dir;
        const QString path = m_engines.fresh(dir, QStringLiteral("sub/folder/history.sqlite"));
        HistoryWriter writer(path);
        QCOMPARE(writer.start(), QString());
        fillRun(writer, QStringLiteral("run-a"), 4, 25);
        fillRun(writer, QStringLiteral("run-b"), 2, 3);
        writer.flush();
        QCOMPARE(writer.lastError(), QString());
        QCOMPARE(writer.rowsWritten(), qint64(1 + 8 + 100 + 1 + 1 + 4 + 6 + 1));
        // Each attempt's exact launch command, in order; a newline cannot split one into two.
        writer.enqueue(LaunchCommandOp{QStringLiteral("run-a"), QStringLiteral("mpirun -np 4 trellis-trainer --plan 'a b.json'")});
        writer.enqueue(LaunchCommandOp{QStringLiteral("run-a"), QStringLiteral("mpirun -np 4 trellis-trainer --resume\n--x")});
        writer.flush();
        QCOMPARE(writer.lastError(), QString());

        HistoryDatabase db;
        QCOMPARE(db.open(path, false), QString());
        QSqlQuery q(db.connection());
        if (m_engines.postgres()) {
            QCOMPARE(db.engine(), HistoryEngine::Postgres);
            QVERIFY(q.exec(QStringLiteral("SELECT version FROM trellis_schema")) && q.next());
            QCOMPARE(q.value(0).toInt(), kHistorySchemaVersion);
        } else {
            QVERIFY(q.exec(QStringLiteral("PRAGMA user_version")) && q.next());
            QCOMPARE(q.value(0).toInt(), kHistorySchemaVersion);
            QVERIFY(q.exec(QStringLiteral("PRAGMA journal_mode")) && q.next());
            QCOMPARE(q.value(0).toString(), QStringLiteral("wal"));
        }

        const auto runs = db.listRuns();
        QCOMPARE(runs.size(), 2);
        QCOMPARE(runs[0].runId, QStringLiteral("run-b")); // newest first
        QVERIFY(!runs[0].owner.isEmpty()); // who recorded it: the OS user, or the server's role
        QCOMPARE(runs[1].stepsDone, qint64(25));
        QCOMPARE(runs[1].status, QStringLiteral("completed"));
        QCOMPARE(db.findRun(QStringLiteral("last"))->runId, QStringLiteral("run-b"));
        QCOMPARE(db.findRun(QStringLiteral("run-a"))->worldSize, 4);
        QCOMPARE(db.findRun(QStringLiteral("run-a"))->launchCommands,
                 (QStringList{QStringLiteral("mpirun -np 4 trellis-trainer --plan 'a b.json'"),
                              QStringLiteral("mpirun -np 4 trellis-trainer --resume --x")}));
        QVERIFY(db.findRun(QStringLiteral("run-b"))->launchCommands.isEmpty());
        QCOMPARE(db.findRun(QString::number(runs[1].id))->runId, QStringLiteral("run-a"));
        QVERIFY(!db.findRun(QStringLiteral("nope")).has_value());
        QCOMPARE(db.lastError(), QStringLiteral("no run 'nope' in %1").arg(path));

        auto data = db.loadRun(runs[1].id);
        QVERIFY(data.has_value());
        QCOMPARE(data->ranks.size(), 4);
        QCOMPARE(data->ranks[2].dp, 2);
        QCOMPARE(data->ranks[2].host, QStringLiteral("h"));
        QCOMPARE(data->ranks[2].pid, qint64(102));
        // What Hello said of the kernels (schema 13), kept through Goodbye's update.
        QCOMPARE(data->ranks[2].precision, QStringLiteral("bf16"));
        QCOMPARE(data->ranks[2].kernels, QStringLiteral("bf16 GEMMs: onednn (native bf16)"));
        QCOMPARE(data->ranks[2].threads, 2);
        QCOMPARE(data->ranks[0].kernels, QStringLiteral("bf16 GEMMs: fp32 (converted operands)"));
        QCOMPARE(data->ranks[2].exitCode, 0);
        QCOMPARE(data->ranks[3].dropped, qint64(3));
        QCOMPARE(data->steps.size(), 100);
        QCOMPARE(data->steps.first().step, qint64(1));

        const QByteArray csv = exportCsv(*data);
        const QList<QByteArray> lines = csv.trimmed().split('\n');
        QCOMPARE(lines.size(), 101);
        QVERIFY(lines[0].startsWith("run_id,rank,step,loss,step_ms,tokens_per_s,"));
        QVERIFY(lines[1].startsWith("run-a,0,1,4.9"));
        QVERIFY(exportJson(*data).contains("\"run_id\": \"run-a\""));
        const QString html = renderHtmlReport(*data, QList<CollectiveRow>{});
        QCOMPARE(html.count(QStringLiteral("<svg")), 5); // step breakdown, loss, grad norm, throughput, step time
        QVERIFY(html.contains(QStringLiteral("rank 3")));
        QVERIFY(html.contains(QStringLiteral("Step time per rank")));

        // Beyond 8 ranks a chart draws the minimum, median and maximum over the ranks, not a
        // line a rank (a report of 1024 ranks was 23 MB of lines).
        RunData wide = *data;
        wide.steps.clear();
        for (int step = 1; step <= 5; ++step)
            for (int rank = 0; rank < 12; ++rank) {
                StepRow row;
                row.rank = rank;
                row.step = step;
                row.loss = 5.0 - 0.1 * step;
                row.stepMs = 10 + rank;
                row.tokensPerS = 1000;
                wide.steps.append(row);
            }
        const QString banded = renderHtmlReport(wide, QList<CollectiveRow>{});
        QVERIFY(banded.contains(QStringLiteral("median of 12 ranks")));
        QVERIFY(banded.contains(QStringLiteral("Step time over the ranks")));
        QVERIFY(!banded.contains(QStringLiteral("rank 11")));
        QVERIFY(banded.size() < html.size() * 2);
    }

    // Routing reports round-trip through the writer thread; the dashboard sums them over ranks.
    void expertLoad()
    {
        QTemporaryDir dir;
        const QString path = m_engines.fresh(dir, QStringLiteral("history.sqlite"));
        HistoryWriter writer(path);
        QCOMPARE(writer.start(), QString());
        fillRun(writer, QStringLiteral("moe"), 2, 3);
        for (int s = 1; s <= 3; ++s)
            for (int r = 0; r < 2; ++r) {
                ExpertLoadRow row;
                row.rank = r;
                row.step = s;
                row.layers = 2;
                row.experts = 3;
                // Layer 0: everything on expert r (so summed over ranks: 2 of 3 experts busy);
                // layer 1 balanced. Large counts survive the packing.
                row.tokens = {r == 0 ? 90 : 0, r == 1 ? 90 : 0, 0, 30, 30, 30};
                if (s == 3 && r == 0)
                    row.tokens[0] += qint64(1) << 40;
                row.dropped = 6;
                row.auxLoss = 0.01 * (r + 1);
                writer.enqueue(ExpertLoadOp{QStringLiteral("moe"), row});
            }
        writer.flush();
        QCOMPARE(writer.lastError(), QString());
        HistoryDatabase db;
        QCOMPARE(db.open(path, false), QString());
        const qint64 id = db.findRun(QStringLiteral("moe"))->id;
        const QList<ExpertLoadRow> rows = db.expertLoadOf(id);
        QCOMPARE(rows.size(), 6);
        QCOMPARE(rows[4].step, qint64(3));
        QCOMPARE(rows[4].rank, 0);
        QCOMPARE(rows[4].tokens[0], (qint64(1) << 40) + 90);
        QCOMPARE(rows[5].tokens, (std::vector<qint64>{0, 90, 0, 30, 30, 30}));
        QCOMPARE(rows[1].auxLoss, 0.02);
        qint64 first = 0, last = 0;
        QVERIFY(db.expertLoadSteps(id, first, last));
        QCOMPARE(first, qint64(1));
        QCOMPARE(last, qint64(3));
        QCOMPARE(db.expertLoadBetween(id, 2, 2).size(), 2);
        // The workbench reads them a window at a time (here a step each: 2 rows over 2 ranks).
        int windows = 0;
        const auto experts = [&](const std::function<void(const ExpertLoadRow &)> &add) {
            QVERIFY(db.forEachExpertChunk(id, [&](const QList<ExpertLoadRow> &chunk) {
                ++windows;
                for (const ExpertLoadRow &row : chunk)
                    add(row);
            }, 2));
        };
        const auto snapshot = trellis::launcher::telemetry::snapshotOf(*db.loadRun(id), {}, trellis::launcher::telemetry::Metric::StepMs,
                                                                        {}, experts);
        QCOMPARE(windows, 3);
        const auto &x = snapshot->experts;
        QCOMPARE(x.layers, 2);
        QCOMPARE(x.experts, 3);
        QCOMPARE(x.steps, (std::vector<double>{1, 2, 3}));
        QCOMPARE(x.imbalance[0], 1.5); // layer 0: 90 of 180 on each of two experts out of three
        QCOMPARE(x.droppedFraction[0], 12.0 / 360.0);
        QVERIFY(std::abs(x.auxLoss[0] - 0.015) < 1e-15);
        QCOMPARE(x.step, qint64(3));
        QCOMPARE(x.share[3], 1.0 / 3.0);
        QCOMPARE(db.expertLoadOf(id + 1000).size(), 0);
        QVERIFY(!db.expertLoadSteps(id + 1000, first, last));
        QVERIFY(db.forEachExpertChunk(id + 1000, [&](const QList<ExpertLoadRow> &) { QFAIL("a run without routing has no window"); }));
    }

    void refusesForeignFiles_data()
    {
        QTest::addColumn<QByteArray>("contents");
        QTest::addColumn<QString>("expected");
        QTest::newRow("garbage") << QByteArray("this is not a database at all, just text\n").repeated(100)
                                 << QStringLiteral("not a SQLite database");
    }
    void refusesForeignFiles()
    {
        QFETCH(QByteArray, contents);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("x.sqlite"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(contents);
        f.close();
        const QByteArray before = digest(path);
        HistoryDatabase db;
        const QString error = db.open(path);
        QVERIFY2(error.contains(expected), qPrintable(error));
        QVERIFY(error.contains(path));
        QCOMPARE(digest(path), before);
    }

    // A run's kind is written by whoever creates it and read back; a launched run taken over by
    // another supervisor becomes adopted, a collected one stays collected; kind: filters on it;
    // runs recorded before schema 17 are told apart as the readers did then (a collected run by its
    // target, a simulated one by its launch command).
    void runKinds()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("kinds.sqlite"));
        const QDateTime t0 = QDateTime::currentDateTimeUtc();
        {
            HistoryWriter w(path);
            QCOMPARE(w.start(), QString());
            w.enqueue(NewRunOp{QStringLiteral("r-launched"), QStringLiteral("a"), QStringLiteral("{}"), QStringLiteral("local"), 2, 5, t0});
            w.enqueue(NewRunOp{QStringLiteral("r-adopted"), QStringLiteral("b"), QStringLiteral("{}"), QStringLiteral("ssh"), 2, 5, t0});
            w.enqueue(NewRunOp{QStringLiteral("r-simulated"), QStringLiteral("c"), QStringLiteral("{}"), QStringLiteral("local"), 8, 5, t0, {},
                               RunKind::Simulated});
            w.enqueue(LaunchCommandOp{QStringLiteral("r-simulated"), QStringLiteral("trellis-cli simulate-ranks --ranks 8 --endpoint tcp://x")});
            w.enqueue(NewRunOp{QStringLiteral("r-collected"), QStringLiteral("d"), QStringLiteral("{}"), QStringLiteral("collected"), 4, 0, t0, {},
                               RunKind::Collected});
            for (const char *id : {"r-adopted", "r-collected"}) // taken over: trellis-cli adopt; a collector started again
                w.enqueue(RunStatusOp{QLatin1String(id), QStringLiteral("running"), QString(), QDateTime(), 0, -1, true});
            QVERIFY(w.flush());
        }
        // Each run's kind as "id kind", oldest first.
        const auto kinds = [](HistoryDatabase &db) {
            QStringList k;
            for (const RunSummary &r : db.listRuns())
                k.prepend(r.runId + QLatin1Char(' ') + toString(r.kind));
            return k;
        };
        const QStringList written{QStringLiteral("r-launched launched"), QStringLiteral("r-adopted adopted"), QStringLiteral("r-simulated simulated"),
                                  QStringLiteral("r-collected collected")};
        {
            HistoryDatabase db;
            QCOMPARE(db.open(path, false), QString());
            QCOMPARE(kinds(db), written);
            const RunFilterParse parsed = parseRunFilter(QStringLiteral("kind:collected,Adopted"));
            QCOMPARE(parsed.error, QString());
            const auto ids = db.runIds(parsed.filter);
            QVERIFY(ids);
            QCOMPARE(ids->size(), 2);
            QCOMPARE(ids->at(0).second, QStringLiteral("r-adopted")); // oldest first
            QCOMPARE(ids->at(1).second, QStringLiteral("r-collected"));
            QCOMPARE(db.listRuns(parseRunFilter(QStringLiteral("kind:simulated")).filter, 10).size(), 1);
            QVERIFY(parseRunFilter(QStringLiteral("kind:watched")).error.contains(QStringLiteral("kind:watched: no such kind (launched, simulated, collected, adopted)")));
            QVERIFY(!parseRunFilter(QStringLiteral("kind:")).error.isEmpty());
            QVERIFY(canLaunchAgain(RunKind::Launched) && canLaunchAgain(RunKind::Adopted));
            QVERIFY(!canLaunchAgain(RunKind::Simulated) && !canLaunchAgain(RunKind::Collected));
            // As schema 16 held them: no kind column.
            QSqlQuery q(db.connection());
            QVERIFY(q.exec(QStringLiteral("DROP INDEX runs_kind")));
            QVERIFY(q.exec(QStringLiteral("ALTER TABLE runs DROP COLUMN kind")));
            QVERIFY(q.exec(QStringLiteral("PRAGMA user_version=16")));
        }
        HistoryDatabase db;
        QCOMPARE(db.open(path, false), QString());
        QStringList migrated = written;
        migrated[1] = QStringLiteral("r-adopted launched"); // a takeover was not recorded before
        QCOMPARE(kinds(db), migrated);
    }

    // Step reports are stored packed (launcher/history/step_blocks.h): read back in (step, rank) order, the
    // newest copy of a report repeated after a restart wins, a rank's range reads alone, and a
    // damaged block is reported without hiding the others.
    void packedStepReports()
    {
        QTemporaryDir dir;
        const QString path = m_engines.fresh(dir, QStringLiteral("packed.sqlite"));
        HistoryWriter writer(path);
        QCOMPARE(writer.start(), QString());
        fillRun(writer, QStringLiteral("p"), 3, 6);
        writer.flush();
        StepRow again;
        again.rank = 1;
        again.step = 4;
        again.loss = 42;
        StepRow later = again;
        later.step = 7;
        later.loss = 7;
        writer.enqueue(StepOp{QStringLiteral("p"), {again, later}});
        writer.flush();
        QCOMPARE(writer.lastError(), QString());

        HistoryDatabase db;
        QCOMPARE(db.open(path, false), QString());
        const auto summary = db.findRun(QStringLiteral("p"));
        QCOMPARE(summary->stepsDone, qint64(7));
        QCOMPARE(summary->lastLoss, 7.0);
        auto data = db.loadRun(summary->id);
        QCOMPARE(data->steps.size(), 3 * 6 + 1);
        for (qsizetype i = 1; i < data->steps.size(); ++i) {
            const StepRow &a = data->steps[i - 1], &b = data->steps[i];
            QVERIFY(a.step < b.step || (a.step == b.step && a.rank < b.rank));
        }
        const auto repeated = std::find_if(data->steps.begin(), data->steps.end(),
                                           [](const StepRow &s) { return s.rank == 1 && s.step == 4; });
        QCOMPARE(repeated->loss, 42.0);
        const auto range = db.stepsBetween(summary->id, 1, 2, 4);
        QCOMPARE(range.size(), 3);
        QCOMPARE(range.first().step, qint64(2));
        QCOMPARE(range.last().loss, 42.0);
        QCOMPARE(range.first().stepMs, 11.0);

        // Read a window of steps at a time (a long run is never all in memory): the same rows in
        // the same order, the repeated step's newest copy among them, whatever the window.
        for (qint64 rowsPerChunk : {1, 4, 7, 1000}) {
            QList<StepRow> chunked;
            qint64 lastStepSeen = -1;
            QVERIFY(db.forEachStepChunk(summary->id, 0, [&](const QList<StepRow> &rows) {
                QVERIFY(rows.first().step > lastStepSeen); // windows do not overlap, in step order
                lastStepSeen = rows.last().step;
                chunked.append(rows);
            }, rowsPerChunk));
            QCOMPARE(chunked.size(), data->steps.size());
            for (qsizetype i = 0; i < chunked.size(); ++i) {
                QCOMPARE(chunked[i].rank, data->steps[i].rank);
                QCOMPARE(chunked[i].step, data->steps[i].step);
                QCOMPARE(chunked[i].loss, data->steps[i].loss);
            }
        }
        int fromFive = 0;
        QVERIFY(db.forEachStepChunk(summary->id, 5, [&](const QList<StepRow> &rows) {
            for (const StepRow &r : rows)
                fromFive += r.step >= 5 ? 1 : -1000;
        }, 2));
        QCOMPARE(fromFive, 3 * 2 + 1); // steps 5 and 6 of 3 ranks, and rank 1's step 7

        QSqlQuery q(db.connection());
        q.prepare(QStringLiteral("UPDATE step_blocks SET rows = ? WHERE rowid = (SELECT min(rowid) FROM step_blocks)"));
        q.addBindValue(QByteArray("\x01\x02", 2));
        QVERIFY(q.exec());
        data = db.loadRun(summary->id);
        QVERIFY2(db.lastError().contains(QStringLiteral("corrupt")), qPrintable(db.lastError()));
        QVERIFY(data->steps.size() > 0 && data->steps.size() < 3 * 6 + 1);
    }

    // A run whose launcher died stays "running" in nobody's hands: the next open closes it as
    // failed with the reason, and leaves alone runs whose launcher lives or is on another host.
    void abandonedRunsAreClosed()
    {
        QTemporaryDir dir;
        const QString path = m_engines.fresh(dir, QStringLiteral("h.sqlite"));
        HistoryDatabase::setRunLiveness(RunRegistry::liveness()); // as app/'s programs do
        QProcess gone;
        gone.start(QStringLiteral("true"), {});
        QVERIFY(gone.waitForFinished());
        const qint64 deadPid = gone.processId() > 0 ? gone.processId() : 999999;
        {
            HistoryDatabase db;
            QCOMPARE(db.open(path), QString());
            QSqlQuery q(db.connection());
            const QString host = QSysInfo::machineHostName();
            const struct {
                const char *runId;
                QString host;
                qint64 pid;
            } rows[] = {{"dead", host, 0}, {"alive", host, QCoreApplication::applicationPid()}, {"elsewhere", QStringLiteral("other-host"), 1}};
            for (const auto &r : rows) {
                q.prepare(QStringLiteral("INSERT INTO runs(run_id, plan_json, status, launcher_host, launcher_pid) VALUES(?, '{}', 'running', ?, ?)"));
                q.addBindValue(QString::fromLatin1(r.runId));
                q.addBindValue(r.host);
                q.addBindValue(r.pid ? r.pid : deadPid);
                QVERIFY(q.exec());
            }
        }
        HistoryDatabase db;
        QCOMPARE(db.open(path), QString());
        QMap<QString, RunSummary> runs;
        for (const auto &r : db.listRuns())
            runs[r.runId] = r;
        QCOMPARE(runs[QStringLiteral("dead")].status, QStringLiteral("failed"));
        QVERIFY2(runs[QStringLiteral("dead")].error.contains(QStringLiteral("ended while the run was going")),
                 qPrintable(runs[QStringLiteral("dead")].error));
        QCOMPARE(runs[QStringLiteral("alive")].status, QStringLiteral("running"));
        QCOMPARE(runs[QStringLiteral("elsewhere")].status, QStringLiteral("running"));
        QCOMPARE(db.closeAbandonedRuns(RunRegistry::liveness()), 0); // nothing left to close
        HistoryDatabase::setRunLiveness({});
    }

    void refusesNewerSchemaAndOtherDatabases()
    {
        QTemporaryDir dir;
        const bool pg = m_engines.postgres();
        const QString newer = m_engines.fresh(dir, QStringLiteral("newer.sqlite"));
        {
            HistoryDatabase db;
            QCOMPARE(db.open(newer), QString());
            QVERIFY(QSqlQuery(db.connection()).exec(pg ? QStringLiteral("UPDATE trellis_schema SET version = 99")
                                                       : QStringLiteral("PRAGMA user_version=99")));
        }
        HistoryDatabase db;
        QCOMPARE(db.open(newer), QStringLiteral("history database %1: schema version 99 is newer than this Trellis "
                                                "understands (%2); refusing to touch it")
                                     .arg(newer)
                                     .arg(kHistorySchemaVersion));
        const QString other = m_engines.fresh(dir, QStringLiteral("other.sqlite"));
        {
            HistoryDatabase o;
            QCOMPARE(o.open(other), QString());
            QSqlQuery q(o.connection());
            const QStringList statements =
                pg ? QStringList{QStringLiteral("DROP SCHEMA public CASCADE"), QStringLiteral("CREATE SCHEMA public"),
                                 QStringLiteral("CREATE TABLE contacts(name TEXT)")}
                   : QStringList{QStringLiteral("PRAGMA user_version=0"), QStringLiteral("CREATE TABLE contacts(name TEXT)"),
                                 QStringLiteral("DROP TABLE runs")};
            for (const QString &sql : statements)
                QVERIFY2(q.exec(sql), qPrintable(q.lastError().text()));
        }
        HistoryDatabase o2;
        const QString refused = o2.open(other);
        QVERIFY2(refused.contains(QStringLiteral("not a Trellis history database")), qPrintable(refused));
    }

    void unusablePaths()
    {
        QTemporaryDir dir;
        HistoryDatabase db;
        QCOMPARE(db.open(dir.path()), QStringLiteral("history database %1: is a directory").arg(dir.path()));
        HistoryDatabase missing;
        const QString path = dir.filePath(QStringLiteral("absent.sqlite"));
        QCOMPARE(missing.open(path, false), QStringLiteral("history database %1: no such file").arg(path));
        QFile blocker(dir.filePath(QStringLiteral("file")));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        HistoryWriter writer(dir.filePath(QStringLiteral("file/history.sqlite")));
        QVERIFY(writer.start().startsWith(QStringLiteral("history database ")));
    }
};

QTEST_GUILESS_MAIN(TstHistory)
#include "tst_history.moc"
