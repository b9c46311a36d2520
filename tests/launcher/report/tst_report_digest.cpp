// Reports, comparisons and JSON exports read a run a window of steps at a time
// (launcher/report/run_digest.h, launcher/history/history_digest.h, JsonArrayStream in
// launcher/report/run_export.h): the HTML report, the figures, the comparison and the JSON
// documents made from windows of 1, 7, 40 and 1000 rows equal those made from the whole run in
// memory, for a run of 4 ranks (a line a rank), of 12 ranks (bands) and a pipeline of 2 stages
// (its section), with fp16's loss scale, collective reports, a resent step and a rank that misses
// steps.
#include "launcher/history/history_database.h"
#include "launcher/history/history_digest.h"
#include "launcher/history/history_writer.h"
#include "launcher/report/html_report.h"
#include "launcher/report/run_comparison.h"
#include "launcher/report/run_export.h"

#include <QTemporaryDir>
#include <QTest>

using namespace trellis::launcher;

namespace {

// A run with varied rows: every figure differs by rank and step, so a window that splits, loses
// or reorders a step changes the report.
void writeRun(HistoryWriter &w, const QString &runId, int ranks, int steps, int pp)
{
    const QString plan = QStringLiteral(R"({"model":{"layers":2,"hidden":64},"parallel":{"dp":%1,"pp":%2,"micro_batches":4}})")
                             .arg(ranks / pp)
                             .arg(pp);
    w.enqueue(NewRunOp{runId, QStringLiteral("digest"), plan, QStringLiteral("local"), ranks, steps, QDateTime::currentDateTimeUtc()});
    for (int r = 0; r < ranks; ++r) {
        RankRow row;
        row.rank = r;
        row.host = QStringLiteral("h");
        row.pp = r % pp;
        row.dp = r / pp;
        w.enqueue(RankOp{runId, row});
    }
    auto rowOf = [](int r, int s) {
        StepRow row;
        row.rank = r;
        row.step = s;
        row.loss = 5.0 - 0.01 * s + 0.001 * ((r * 7 + s * 3) % 11);
        row.gradNorm = 1.0 + 0.1 * (s % 5);
        row.stepMs = 10 + r + (s * 13 % 7);
        row.computeMs = 6 + 0.5 * ((r + s) % 4);
        row.commExposedMs = 1 + 0.25 * ((r * s) % 3);
        row.bubbleMs = 0.5 * (r % 2) + 0.1 * (s % 3);
        row.idleMs = 0.1 * ((r + 2 * s) % 5);
        row.commMs = 2 + 0.1 * r;
        row.tokensPerS = 1000 + 10 * r + (s * 31 % 17);
        row.memParameters = 1000 + r;
        row.memGradients = 2000 + s;
        row.memOptimizer = 3000;
        row.memActivations = 4000 + r * s;
        row.memComm = 500;
        row.peakRss = (100 + r + s) << 20;
        row.lossScale = s < 10 ? 65536 : 32768;
        row.skippedSteps = s < 10 ? 0 : 1;
        return row;
    };
    for (int s = 1; s <= steps; ++s) {
        std::vector<StepRow> rows;
        for (int r = 0; r < ranks; ++r)
            if (!(r == ranks - 1 && s % 9 == 0)) // the last rank misses every 9th step
                rows.push_back(rowOf(r, s));
        w.enqueue(StepOp{runId, rows});
        for (int r = 0; r < ranks; ++r)
            w.enqueue(CollectiveOp{runId, CollectiveRow{r, s, r % 2 ? QStringLiteral("tp") : QStringLiteral("dp"), QStringLiteral("all_reduce"),
                                                        4096 * (r + 1), 0.5 + 0.01 * s, 1.0 + 0.1 * r + 0.01 * s, 1}});
    }
    StepRow resent = rowOf(0, 3); // step 3 of rank 0 again, its newest copy different
    resent.loss = 9.5;
    w.enqueue(StepOp{runId, {resent}});
    w.enqueue(RunStatusOp{runId, QStringLiteral("completed"), {}, QDateTime::currentDateTimeUtc(), 0});
}

} // namespace

class TstReportDigest : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_path;

private slots:
    void initTestCase()
    {
        m_path = m_dir.filePath(QStringLiteral("history.sqlite"));
        HistoryWriter writer(m_path);
        QCOMPARE(writer.start(), QString());
        writeRun(writer, QStringLiteral("narrow"), 4, 60, 1);
        writeRun(writer, QStringLiteral("wide"), 12, 45, 1);
        writeRun(writer, QStringLiteral("pipeline"), 4, 30, 2);
        QVERIFY(writer.flush());
        QCOMPARE(writer.lastError(), QString());
    }

    void windowsEqualTheWholeRun_data()
    {
        QTest::addColumn<QString>("run");
        QTest::addColumn<QString>("mark"); // what only this run's report has
        QTest::newRow("4 ranks: a line a rank") << "narrow" << "rank 3";
        QTest::newRow("12 ranks: bands") << "wide" << "median of 12 ranks";
        QTest::newRow("pp 2: the pipeline section") << "pipeline" << "<h2>Pipeline</h2>";
    }
    void windowsEqualTheWholeRun()
    {
        QFETCH(QString, run);
        QFETCH(QString, mark);
        HistoryDatabase db;
        QCOMPARE(db.open(m_path, false), QString());
        const qint64 id = db.findRun(run)->id;
        const auto whole = db.loadRun(id);
        QVERIFY(whole);
        const QList<CollectiveRow> collectives = db.collectivesOf(id);
        QVERIFY(!collectives.isEmpty());
        const QString expected = renderHtmlReport(*whole, collectives);
        QVERIFY2(expected.contains(mark), qPrintable(mark));
        QVERIFY(expected.contains(QStringLiteral("Loss scale (fp16): 1 update skipped")));
        const RunFigures expectedFigures = figuresOf(*whole, collectives);
        QCOMPARE(expectedFigures.finalLoss, 5.0 - 0.01 * whole->steps.last().step + 0.001 * ((whole->steps.last().step * 3) % 11));
        const auto meta = db.loadRun(id, false);
        QVERIFY(meta && meta->steps.isEmpty());
        for (const qint64 window : {1, 7, 40, 1000}) {
            QString error;
            const auto digest = digestFromHistory(db, id, *meta, &error, window);
            QVERIFY2(digest, qPrintable(error));
            const QString html = renderHtmlReport(*meta, *digest);
            if (html != expected) {
                qsizetype at = 0;
                while (at < html.size() && at < expected.size() && html[at] == expected[at])
                    ++at;
                QFAIL(qPrintable(QStringLiteral("window %1: the reports differ at character %2: '%3' against '%4'")
                                     .arg(window)
                                     .arg(at)
                                     .arg(html.mid(at, 80), expected.mid(at, 80))));
            }
            const RunFigures f = figuresOf(*meta, *digest);
            QCOMPARE(f.tokensPerS, expectedFigures.tokensPerS);
            QCOMPARE(f.stepMs, expectedFigures.stepMs);
            QCOMPARE(f.busGbps, expectedFigures.busGbps);
            QCOMPARE(f.finalLoss, expectedFigures.finalLoss);
        }
    }

    // The JSON export (the whole run's document, and the steps, memory and collectives tables)
    // written in parts, a window at a time, is byte for byte the document written at once.
    void jsonInPartsEqualsTheWholeDocument_data()
    {
        QTest::addColumn<QString>("table");
        QTest::newRow("the whole run") << "";
        QTest::newRow("steps") << "steps";
        QTest::newRow("memory") << "memory";
        QTest::newRow("collectives") << "collectives";
    }
    void jsonInPartsEqualsTheWholeDocument()
    {
        QFETCH(QString, table);
        HistoryDatabase db;
        QCOMPARE(db.open(m_path, false), QString());
        const qint64 id = db.findRun(QStringLiteral("wide"))->id;
        const auto whole = db.loadRun(id);
        const QList<CollectiveRow> collectives = db.collectivesOf(id);
        ExportTable all;
        if (!table.isEmpty())
            QVERIFY(exportTable(table, *whole, collectives, {}, all));
        const QByteArray expected = table.isEmpty() ? exportJson(*whole) : tableJson(all);
        QVERIFY(expected.size() > 10000);
        RunData meta = *db.loadRun(id, false);
        for (const qint64 window : {1, 7, 1000}) {
            JsonArrayStream json;
            QVERIFY(json.begin(table.isEmpty() ? exportJson(meta) : tableJson(ExportTable{}),
                               table.isEmpty() ? QByteArrayLiteral("\"steps\": [") : QByteArrayLiteral("[")));
            QByteArray got = json.head();
            if (table == QLatin1String("collectives")) {
                QVERIFY(db.forEachCollectiveChunk(id, [&](const QList<CollectiveRow> &rows) {
                    ExportTable t;
                    exportTable(table, meta, rows, {}, t);
                    got += json.items(tableRowsJson(t));
                }, window));
            } else {
                QVERIFY(db.forEachStepChunk(id, 0, [&](const QList<StepRow> &rows) {
                    RunData part = meta;
                    part.steps = rows;
                    ExportTable t;
                    if (!table.isEmpty())
                        exportTable(table, part, {}, {}, t);
                    got += json.items(table.isEmpty() ? stepsJson(rows) : tableRowsJson(t));
                }, window));
            }
            got += json.rest();
            QCOMPARE(got, expected);
        }
        JsonArrayStream none; // an empty array's parts: the empty document
        QVERIFY(none.begin(tableJson(ExportTable{}), "["));
        QCOMPARE(none.head() + none.items({}) + none.rest(), tableJson(ExportTable{}));
        QVERIFY(!none.begin("{}", "["));
    }

    // The comparison (figures, curves, its HTML) from windows equals the one from whole runs.
    void comparisonFromWindowsEqualsTheWholeRuns()
    {
        HistoryDatabase db;
        QCOMPARE(db.open(m_path, false), QString());
        QList<RunData> whole, metas;
        QList<QList<CollectiveRow>> collectives;
        QList<RunDigest> digests;
        for (const QString &name : {QStringLiteral("narrow"), QStringLiteral("wide")}) {
            const qint64 id = db.findRun(name)->id;
            whole << *db.loadRun(id);
            collectives << db.collectivesOf(id);
            metas << *db.loadRun(id, false);
            QString error;
            const auto digest = digestFromHistory(db, id, metas.last(), &error, 7);
            QVERIFY2(digest, qPrintable(error));
            digests << *digest;
        }
        const Comparison expected = compareRuns(whole, collectives);
        const Comparison got = compareRuns(metas, digests);
        QCOMPARE(got.loss.size(), 2);
        for (int i = 0; i < 2; ++i) {
            QCOMPARE(got.loss[i].steps, expected.loss[i].steps);
            QCOMPARE(got.loss[i].values, expected.loss[i].values);
            QCOMPARE(got.tokensPerS[i].values, expected.tokensPerS[i].values);
            QCOMPARE(got.figures[i].stepMs, expected.figures[i].stepMs);
        }
        QCOMPARE(got.loss[0].values[2], 9.5); // the resent copy of step 3, not the first
        QList<RunDigest> wholeDigests{digestOf(whole[0], collectives[0]), digestOf(whole[1], collectives[1])};
        QCOMPARE(renderComparisonHtml(metas, digests, got.figures, got.differences),
                 renderComparisonHtml(whole, wholeDigests, expected.figures, expected.differences));
    }
};

QTEST_GUILESS_MAIN(TstReportDigest)
#include "tst_report_digest.moc"
