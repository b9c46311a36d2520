// What the history gives back about real runs: compared (CLI summary, HTML and PDF report), the
// report as PDF, every table exported as CSV and JSON, and a pipeline run's bubble, per-stage
// memory, Chrome trace, step timeline beside the prediction and its reports with the pipeline
// section. Split from tst_cli (the runs and what the trainer records).
#include "tests/support/cli_test_support.h"
#include "launcher/history/history_database.h"
#include "launcher/report/run_export.h"
#include "launcher/metrics/dashboard_snapshot.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

using namespace trellis::launcher;
using trellis::test::cli;
using trellis::test::kPlan;
using trellis::test::predictedMemory;
using trellis::test::Result;

class TstReports : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_runId; // the shared history's run, named by id (not by row number or "last")
    QString db() const { return m_dir.filePath(QStringLiteral("history.sqlite")); }

private slots:
    // One quick 4-rank run (dp4-short, 12 steps) in the shared history.
    void initTestCase()
    {
        const Result r = cli({QStringLiteral("--db"), db(), QStringLiteral("run"), kPlan, QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        m_runId = r.out.section(QLatin1Char('\n'), 0, 0).section(QLatin1Char(' '), 1);
        QVERIFY2(!m_runId.isEmpty(), qPrintable(r.out));
    }

    // Two real runs of different layouts compared: the summary of each, the plan fields that
    // differ (and only those), and an HTML report with the overlaid curves.
    void compareTwoRuns()
    {
        const QString database = m_dir.filePath(QStringLiteral("compare.sqlite"));
        QStringList ids;
        for (const QString &parallel : {QStringLiteral(R"("dp": 4)"), QStringLiteral(R"("dp": 2, "tp": 2)")}) {
            const QString plan = m_dir.filePath(QStringLiteral("compare-%1.json").arg(ids.size()));
            QFile out(plan);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(QStringLiteral(R"({"schema": "trellis.plan/1", "name": "compare",
              "model": {"layers": 2, "hidden": 32, "heads": 4, "ffn": 64, "seq_len": 32, "vocab": 256},
              "cluster": {"nodes": [{"host": "localhost", "slots": 4}]},
              "parallel": {%1},
              "training": {"steps": 6, "lr": 0.001, "min_lr": 0.0001, "seed": 3,
                           "data": {"source": "text", "path": "%2"}}})")
                          .arg(parallel, QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt"))
                          .toUtf8());
            out.close();
            const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet")});
            QVERIFY2(r.code == 0, qPrintable(r.err));
            ids << r.out.section(QLatin1Char('\n'), 0, 0).section(QLatin1Char(' '), 1);
        }
        const QString report = m_dir.filePath(QStringLiteral("compare.html"));
        const Result c = cli({QStringLiteral("--db"), database, QStringLiteral("compare"), ids[0], ids[1], QStringLiteral("--report"), report});
        QVERIFY2(c.code == 0, qPrintable(c.err));
        QVERIFY2(c.out.contains(QStringLiteral("parallel.tp: 1 | 2")), qPrintable(c.out));
        QVERIFY2(c.out.contains(QStringLiteral("parallel.dp: 4 | 2")), qPrintable(c.out));
        QVERIFY2(!c.out.contains(QStringLiteral("model.layers")), qPrintable(c.out)); // the same in both
        for (const char *row : {"tokens/s", "step ms (slowest rank)", "exposed comm ms", "bubble ms", "bus GB/s", "final loss"})
            QVERIFY2(c.out.contains(QString::fromLatin1(row)), row);
        QVERIFY(c.out.contains(ids[0]) && c.out.contains(ids[1]));
        // The same comparison as PDF, read back as a reader would.
        const QString pdf = m_dir.filePath(QStringLiteral("compare.pdf"));
        const Result cp = cli({QStringLiteral("--db"), database, QStringLiteral("compare"), ids[0], ids[1], QStringLiteral("--report"), pdf});
        QVERIFY2(cp.code == 0, qPrintable(cp.err));
        QProcess pdfText;
        pdfText.start(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")});
        QVERIFY(pdfText.waitForFinished(30000));
        // (the PDF's text has typographic ligatures: "ﬀ" for "ff")
        const QString words = QString::fromUtf8(pdfText.readAllStandardOutput()).replace(QChar(0xFB00), QStringLiteral("ff"));
        for (const char *part : {"2 runs compared", "Summary", "Plan differences", "parallel.tp", "Curves by step"})
            QVERIFY2(words.contains(QString::fromLatin1(part)), part);
        QFile html(report);
        QVERIFY(html.open(QIODevice::ReadOnly));
        const QByteArray text = html.readAll();
        QCOMPARE(text.count("<svg"), 3);
        QVERIFY(text.contains("Plan differences") && text.contains("parallel.tp"));
        QCOMPARE(cli({QStringLiteral("--db"), database, QStringLiteral("compare"), ids[0]}).code, 2); // one run is not a comparison
        const Result missing = cli({QStringLiteral("--db"), database, QStringLiteral("compare"), ids[0], QStringLiteral("no-such-run")});
        QCOMPARE(missing.code, 1);
        QVERIFY2(missing.err.contains(QStringLiteral("no-such-run")), qPrintable(missing.err));
    }

    // The report as PDF: every section, found by pdftotext (poppler-utils) as a reader would.
    void pdfReportHasEverySection()
    {
        const QString pdf = m_dir.filePath(QStringLiteral("report.pdf"));
        const Result r = cli({QStringLiteral("--db"), db(), QStringLiteral("report"), m_runId, QStringLiteral("--out"), pdf});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QFile file(pdf);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(file.read(5) == "%PDF-");
        QProcess text;
        text.start(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")});
        QVERIFY(text.waitForFinished(30000));
        const QString words = QString::fromUtf8(text.readAllStandardOutput());
        for (const char *section : {"Trellis run", "Plan", "Prediction and measurement", "Charts", "Ranks", "Collectives",
                                    "Telemetry", "predicted ms", "measured ms"})
            QVERIFY2(words.contains(QString::fromLatin1(section)), section);
        // The charts (step-time breakdown, loss, grad norm, throughput, step time) are images in it.
        QProcess images;
        images.start(QStringLiteral("pdfimages"), {QStringLiteral("-list"), pdf});
        QVERIFY(images.waitForFinished(30000));
        const QStringList rows = QString::fromUtf8(images.readAllStandardOutput()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QVERIFY2(rows.size() - 2 >= 4, qPrintable(rows.join(QLatin1Char('\n')))); // two header lines
        const Result bad = cli({QStringLiteral("--db"), db(), QStringLiteral("report"), m_runId, QStringLiteral("--out"),
                                m_dir.filePath(QStringLiteral("report.docx"))});
        QCOMPARE(bad.code, 2);
        QVERIFY2(bad.err.contains(QStringLiteral(".html or .pdf")), qPrintable(bad.err));
    }

    void runsExportAndReport()
    {
        const Result runs = cli({QStringLiteral("--db"), db(), QStringLiteral("runs")});
        QCOMPARE(runs.code, 0);
        QVERIFY(runs.out.contains(QStringLiteral("dp4-short")));
        QVERIFY(runs.out.contains(QStringLiteral("completed")));

        const Result csv = cli({QStringLiteral("--db"), db(), QStringLiteral("export"), m_runId,
                                QStringLiteral("--format"), QStringLiteral("csv")});
        QCOMPARE(csv.code, 0);
        const QStringList lines = csv.out.trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 1 + 4 * 12);
        QVERIFY(lines[0].startsWith(QStringLiteral("run_id,rank,step,loss,step_ms,tokens_per_s")));

        const Result json = cli({QStringLiteral("--db"), db(), QStringLiteral("export"), m_runId,
                                 QStringLiteral("--format"), QStringLiteral("json")});
        QCOMPARE(json.code, 0);
        QVERIFY(json.out.contains(QStringLiteral("\"steps\"")));

        // Every table alone, as CSV (a header and its rows) and as a JSON array of objects.
        const QMap<QString, int> rows{{QStringLiteral("steps"), 4 * 12}, {QStringLiteral("memory"), 4 * 12}, {QStringLiteral("ranks"), 4}};
        for (const char *table : kExportTables) {
            const QString name = QString::fromLatin1(table);
            const Result t = cli({QStringLiteral("--db"), db(), QStringLiteral("export"), m_runId, QStringLiteral("--format"),
                                  QStringLiteral("csv"), QStringLiteral("--table"), name});
            QVERIFY2(t.code == 0, qPrintable(t.err));
            const QStringList csvLines = t.out.trimmed().split(QLatin1Char('\n'));
            QVERIFY2(csvLines[0].startsWith(QStringLiteral("run_id,")), table);
            if (rows.contains(name))
                QCOMPARE(csvLines.size(), 1 + rows[name]);
            if (name == QLatin1String("collectives"))
                QVERIFY2(csvLines.size() > 12 && csvLines[1].contains(QStringLiteral(",dp,all_reduce,")), qPrintable(t.out.left(400)));
            const Result j = cli({QStringLiteral("--db"), db(), QStringLiteral("export"), m_runId, QStringLiteral("--format"),
                                  QStringLiteral("json"), QStringLiteral("--table"), name});
            QVERIFY2(j.code == 0, qPrintable(j.err));
            const QJsonDocument doc = QJsonDocument::fromJson(j.out.toUtf8());
            QVERIFY2(doc.isArray(), table);
            QCOMPARE(doc.array().size(), csvLines.size() - 1);
        }
        const Result badTable = cli({QStringLiteral("--db"), db(), QStringLiteral("export"), m_runId, QStringLiteral("--format"),
                                     QStringLiteral("csv"), QStringLiteral("--table"), QStringLiteral("gpus")});
        QCOMPARE(badTable.code, 2);
        QVERIFY2(badTable.err.contains(QStringLiteral("--table 'gpus': one of steps, memory")), qPrintable(badTable.err));
        // Text with commas, quotes and line breaks is quoted (RFC 4180).
        ExportTable quoted{{QStringLiteral("run_id"), QStringLiteral("message")}, {{QStringLiteral("r"), QStringLiteral("a, \"b\"\nc")}}};
        QCOMPARE(tableCsv(quoted), QByteArray("run_id,message\nr,\"a, \"\"b\"\"\nc\"\n"));

        const QString out = m_dir.filePath(QStringLiteral("again.html"));
        const Result report = cli({QStringLiteral("--db"), db(), QStringLiteral("report"), m_runId,
                                   QStringLiteral("--out"), out});
        QCOMPARE(report.code, 0);
        QVERIFY(QFile::exists(out));

        const Result missing = cli({QStringLiteral("--db"), db(), QStringLiteral("export"), QStringLiteral("nope"),
                                    QStringLiteral("--format"), QStringLiteral("csv")});
        QCOMPARE(missing.code, 1);
        QVERIFY2(missing.err.contains(QStringLiteral("no run 'nope'")), qPrintable(missing.err));
    }

    // A pipeline run through the launcher: bubble and per-stage memory reach the history, the
    // sampled timeline comes back as a Chrome trace with one track per rank and every action of
    // the schedule (8 micro-batches × F and BW on each of 2 stages) per traced step.
    void pipelineRunTrace()
    {
        const QString plan = m_dir.filePath(QStringLiteral("pp2.json"));
        QFile out(plan);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QStringLiteral(R"({
          "schema": "trellis.plan/1", "name": "pp2",
          "model": {"layers": 4, "hidden": 32, "heads": 4, "ffn": 64, "seq_len": 32, "vocab": 256},
          "cluster": {"nodes": [{"host": "localhost", "slots": 2}]},
          "parallel": {"dp": 1, "pp": 2, "micro_batch_size": 2, "micro_batches": 8, "schedule": "1f1b"},
          "training": {"steps": 4, "lr": 0.001, "min_lr": 0.0001, "seed": 3,
                       "data": {"source": "text", "path": "%1"}},
          "telemetry": {"trace_every": 2}
        })")
                      .arg(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt"))
                      .toUtf8());
        out.close();
        const QString database = m_dir.filePath(QStringLiteral("pp2.sqlite"));
        const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        HistoryDatabase h;
        QCOMPARE(h.open(database, false), QString());
        const auto run = h.findRun(QStringLiteral("last"));
        QVERIFY(run);
        auto data = h.loadRun(run->id);
        QVERIFY(data);
        qint64 params[2] = {0, 0};
        const auto predicted = predictedMemory(plan);
        QCOMPARE(predicted.size(), size_t(2));
        for (const auto &s : data->steps) {
            // Every stage of a 1f1b pipeline waits for its first activation or gradient each step.
            QVERIFY2(s.bubbleMs > 0, qPrintable(QStringLiteral("rank %1 step %2: bubble %3 ms").arg(s.rank).arg(s.step).arg(s.bubbleMs)));
            QVERIFY(s.stepMs > s.bubbleMs);
            if (s.step != 4)
                continue;
            params[s.rank] = s.memParameters;
            // The cost model's per-stage prediction, byte for byte (activations: one set per
            // micro-batch the schedule keeps in flight on the stage).
            const auto &m = predicted[static_cast<size_t>(s.rank)];
            QCOMPARE(qint64(m.parameters), s.memParameters);
            QCOMPARE(qint64(m.gradients), s.memGradients);
            QCOMPARE(qint64(m.optimizer), s.memOptimizer);
            QCOMPARE(qint64(m.activations), s.memActivations);
        }
        // Stage 0: embeddings (256·32 + 32·32) + 2 layers; stage 1: 2 layers + final norm + the
        // tied embedding (wte and wpe, as Megatron keeps a copy on the last stage).
        const qint64 layer = 4 * 32 * 32 + 2 * 32 * 64 + 9 * 32 + 64;
        QCOMPARE(params[0], (256 * 32 + 32 * 32 + 2 * layer) * 4);
        QCOMPARE(params[1], (2 * layer + 2 * 32 + 256 * 32 + 32 * 32) * 4);

        const QString trace = m_dir.filePath(QStringLiteral("pp2.trace.json"));
        const Result t = cli({QStringLiteral("--db"), database, QStringLiteral("trace"), QStringLiteral("last"), QStringLiteral("--out"), trace});
        QVERIFY2(t.code == 0, qPrintable(t.err));
        QFile f(trace);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
        QMap<QString, int> perKind;
        QSet<int> tracks;
        for (const QJsonValue &v : root.value(QStringLiteral("traceEvents")).toArray()) {
            const QJsonObject e = v.toObject();
            if (e.value(QStringLiteral("ph")).toString() != QLatin1String("X"))
                continue;
            tracks.insert(e.value(QStringLiteral("tid")).toInt());
            QVERIFY(e.value(QStringLiteral("dur")).toDouble() >= 0);
            ++perKind[e.value(QStringLiteral("cat")).toString()];
        }
        QCOMPARE(tracks, (QSet<int>{0, 1}));
        // Steps 2 and 4 traced: 2 steps × 2 stages × 8 micro-batches.
        QCOMPARE(perKind.value(QStringLiteral("F")), 32);
        QCOMPARE(perKind.value(QStringLiteral("BW")), 32);
        QCOMPARE(perKind.value(QStringLiteral("send_act")), 16);
        QCOMPARE(perKind.value(QStringLiteral("recv_grad")), 16);

        // The newest traced step's timeline beside the simulator's for the same plan: a lane per
        // stage, each with the schedule's 8 forwards and 8 backwards.
        const auto spans = h.spansOfLastTracedStep(run->id);
        const auto prediction = telemetry::predictionFor(data->planJson, {});
        const auto timeline = telemetry::timelineOf(data->ranks, spans, prediction.timeline, prediction.bubbleFraction);
        QCOMPARE(timeline.step, qint64(4));
        QCOMPARE(timeline.lanes.size(), std::size_t(4));
        for (int stage = 0; stage < 2; ++stage) {
            const auto &lane = timeline.lanes[static_cast<std::size_t>(stage)];
            QCOMPARE(lane.rank, stage);
            QCOMPARE(std::count_if(lane.bars.begin(), lane.bars.end(), [](const auto &b) { return b.kind == QLatin1String("F"); }), 8);
            QCOMPARE(std::count_if(lane.bars.begin(), lane.bars.end(), [](const auto &b) { return b.kind == QLatin1String("BW"); }), 8);
            QVERIFY(timeline.lanes[static_cast<std::size_t>(stage) + 2].predicted);
        }
        QVERIFY(timeline.measuredBubble > 0 && timeline.measuredBubble < 1);
        {
            auto loaded = trellis::plan::loadPlanFile(plan.toStdString());
            QVERIFY(loaded);
            const auto e = trellis::plan::estimatePlan(loaded.value(), trellis::plan::deviceFor(loaded.value().cluster));
            QCOMPARE(timeline.predictedBubble, e.bubbleFraction);
            QVERIFY(e.bubbleFraction >= 1.0 / 9 - 1e-9); // at least (p−1)/(m+p−1), the equal-stage bubble
        }
        // The reports of the pipeline run, HTML and PDF, have the pipeline section and timeline.
        const QString html = m_dir.filePath(QStringLiteral("pp2.html")), pdf = m_dir.filePath(QStringLiteral("pp2.pdf"));
        for (const QString &path : {html, pdf}) {
            const Result rep = cli({QStringLiteral("--db"), database, QStringLiteral("report"), QStringLiteral("last"), QStringLiteral("--out"), path});
            QVERIFY2(rep.code == 0, qPrintable(rep.err));
        }
        QFile htmlFile(html);
        QVERIFY(htmlFile.open(QIODevice::ReadOnly));
        const QString page = QString::fromUtf8(htmlFile.readAll());
        for (const char *part : {"<h2>Pipeline", "bubble predicted", "Measured, step 4", "Predicted by the schedule simulator",
                                 "stage 1 · rank 1", "model TFLOP/s (job)", "Gradient norm"})
            QVERIFY2(page.contains(QString::fromUtf8(part)), part);
        QProcess text;
        text.start(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")});
        QVERIFY(text.waitForFinished(30000));
        const QString words = QString::fromUtf8(text.readAllStandardOutput());
        for (const char *section : {"Pipeline", "stage", "Step timeline", "Prediction and measurement", "Ranks"})
            QVERIFY2(words.contains(QString::fromLatin1(section)), section);

        // A run without a traced timeline says how to get one.
        const Result none = cli({QStringLiteral("--db"), db(), QStringLiteral("trace"), m_runId, QStringLiteral("--out"), trace});
        QCOMPARE(none.code, 1);
        QVERIFY2(none.err.contains(QStringLiteral("has no timeline spans: set telemetry.trace_every")), qPrintable(none.err));
    }

};

QTEST_GUILESS_MAIN(TstReports)
#include "tst_reports.moc"
