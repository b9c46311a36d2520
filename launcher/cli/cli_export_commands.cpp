// trellis-cli's exports of a recorded run: export (CSV or JSON, written a window of steps at a time),
// export-model (the newest checkpoint in transformers' layout) and trace (Chrome trace of the
// traced pipeline steps). See cli_support.h.
#include "launcher/cli/cli_support.h"
#include "launcher/document/calibration_file.h"
#include "launcher/history/history_database.h"
#include "launcher/history/history_digest.h"
#include "launcher/report/html_report.h"
#include "launcher/report/pdf_report.h"
#include "launcher/report/run_comparison.h"
#include "launcher/report/run_export.h"
#include "backend/plan/plan_json.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSaveFile>
#include <QTextStream>

#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <vector>

namespace trellis::launcher {

using namespace cli;

namespace {

// CSV of a run's steps (`table` "": every column; "steps", "memory": that table) or of its
// collective reports ("collectives"), written a window of steps at a time: a long run at scale
// has tens of millions of rows, never all in memory. `run` is the run without its steps.
QString streamCsv(HistoryDatabase &db, const RunData &run, const QString &table, const std::function<bool(const QByteArray &)> &write)
{
    bool header = true, ok = true;
    const auto put = [&](QByteArray bytes) { // each part's CSV after the first without its header line
        if (!header)
            bytes.remove(0, bytes.indexOf('\n') + 1);
        header = false;
        ok = ok && write(bytes);
    };
    RunData part = run;
    const auto csvOf = [&](const QList<CollectiveRow> &collectives) {
        if (table.isEmpty())
            return exportCsv(part);
        ExportTable t;
        exportTable(table, part, collectives, {}, t);
        return tableCsv(t);
    };
    part.steps.clear();
    put(csvOf({})); // the header, rows or not
    bool read = true;
    if (table == QLatin1String("collectives"))
        read = db.forEachCollectiveChunk(run.run.id, [&](const QList<CollectiveRow> &rows) { put(csvOf(rows)); });
    else
        read = db.forEachStepChunk(run.run.id, 0, [&](const QList<StepRow> &rows) {
            part.steps = rows;
            put(csvOf({}));
        });
    if (!read)
        return db.lastError();
    return ok ? QString() : QStringLiteral("the export could not be written");
}

// The JSON export the same way: the whole run's document (`table` "") or a table's array, its
// rows a window of steps at a time, byte for byte what exportJson / tableJson write.
QString streamJson(HistoryDatabase &db, const RunData &run, const QString &table, const std::function<bool(const QByteArray &)> &write)
{
    RunData part = run;
    part.steps.clear();
    JsonArrayStream json;
    const bool whole = table.isEmpty();
    if (!json.begin(whole ? exportJson(part) : tableJson(ExportTable{}),
                    whole ? QByteArrayLiteral("\"steps\": [") : QByteArrayLiteral("[")))
        return QStringLiteral("the export could not be laid out"); // never: both documents hold the array
    bool ok = write(json.head());
    const auto put = [&](const QJsonArray &items) { ok = ok && write(json.items(items)); };
    // A JSON object a row costs a few hundred bytes more than the row: a window's rows become
    // JSON a slice at a time.
    constexpr qsizetype kSlice = 4096;
    bool read = true;
    if (table == QLatin1String("collectives"))
        read = db.forEachCollectiveChunk(run.run.id, [&](const QList<CollectiveRow> &rows) {
            for (qsizetype at = 0; at < rows.size(); at += kSlice) {
                ExportTable t;
                exportTable(table, part, rows.mid(at, kSlice), {}, t);
                put(tableRowsJson(t));
            }
        });
    else
        read = db.forEachStepChunk(run.run.id, 0, [&](const QList<StepRow> &rows) {
            for (qsizetype at = 0; at < rows.size(); at += kSlice) {
                part.steps = rows.mid(at, kSlice);
                ExportTable t;
                if (!whole)
                    exportTable(table, part, {}, {}, t);
                put(whole ? stepsJson(part.steps) : tableRowsJson(t));
            }
        });
    if (!read)
        return db.lastError();
    ok = ok && write(json.rest());
    return ok ? QString() : QStringLiteral("the export could not be written");
}

// export of a whole run or of a table of rows by step, CSV or JSON: streamed.
int exportStreamed(HistoryDatabase &db, const RunData &run, const QString &format, const QString &table, const QString &outPath)
{
    const auto stream = format == QLatin1String("json") ? streamJson : streamCsv;
    if (outPath.isEmpty()) {
        const QString e = stream(db, run, table, [](const QByteArray &bytes) {
            return std::fwrite(bytes.constData(), 1, static_cast<size_t>(bytes.size()), stdout) == static_cast<size_t>(bytes.size());
        });
        std::fflush(stdout);
        return e.isEmpty() ? 0 : fail(e);
    }
    QSaveFile file(outPath); // all or nothing at the path
    if (!file.open(QIODevice::WriteOnly))
        return fail(QStringLiteral("%1: cannot be written (%2)").arg(outPath, file.errorString()));
    if (const QString e = stream(db, run, table, [&](const QByteArray &bytes) { return file.write(bytes) == bytes.size(); });
        !e.isEmpty())
        return fail(QStringLiteral("%1: %2").arg(outPath, e));
    if (!file.commit())
        return fail(QStringLiteral("%1: write failed (%2)").arg(outPath, file.errorString()));
    return 0;
}

} // namespace

int cli::cmdExport(const Args &a, const QString &dbPath)
{
    if (a.positional.size() != 1)
        return usageError(QStringLiteral("export takes one RUN"));
    const QString format = a.options.value(QStringLiteral("--format"));
    if (format != QLatin1String("csv") && format != QLatin1String("json"))
        return usageError(QStringLiteral("--format must be csv or json"));
    HistoryDatabase db;
    const auto run = findExistingRun(db, dbPath, a.positional.first());
    if (!run)
        return 1;
    const QString tableName = a.options.value(QStringLiteral("--table"));
    const bool byStep = !a.options.contains(QStringLiteral("--table")) || tableName == QLatin1String("steps") ||
                        tableName == QLatin1String("memory") || tableName == QLatin1String("collectives");
    // A long run at scale has tens of millions of rows: those by step are written a window at a
    // time; the events, spans and ranks tables need none of the steps.
    const auto data = db.loadRun(run->id, false);
    if (!data)
        return fail(db.lastError());
    if (byStep)
        return exportStreamed(db, *data, format, tableName, a.options.value(QStringLiteral("--out")));
    ExportTable table;
    if (!exportTable(tableName, *data, {}, tableName == QLatin1String("spans") ? db.spansOf(run->id) : QList<SpanRow>{}, table)) {
        QStringList names;
        for (const char *t : kExportTables)
            names << QString::fromLatin1(t);
        return usageError(QStringLiteral("--table '%1': one of %2").arg(tableName, names.join(QStringLiteral(", "))));
    }
    const QByteArray bytes = format == QLatin1String("csv") ? tableCsv(table) : tableJson(table);
    if (a.options.contains(QStringLiteral("--out"))) {
        if (const QString e = writeFileAtomically(a.options[QStringLiteral("--out")], bytes); !e.isEmpty())
            return fail(e);
    } else {
        std::fwrite(bytes.constData(), 1, static_cast<size_t>(bytes.size()), stdout);
        std::fflush(stdout);
    }
    return 0;
}

// experts: where a mixture-of-experts run's routers sent the tokens (expert_load rows).
int cli::cmdExportModel(const Args &a, const QString &dbPath)
{
    if (a.positional.size() != 1 || !a.options.contains(QStringLiteral("--out")))
        return usageError(QStringLiteral("export-model takes one RUN or CHECKPOINT_DIR and --out DIR"));
    QString checkpoints = a.positional.first();
    if (!QFileInfo(checkpoints).isDir()) {
        HistoryDatabase db;
        const auto run = findExistingRun(db, dbPath, checkpoints);
        if (!run)
            return 1;
        const auto data = db.loadRun(run->id, false);
        if (!data)
            return fail(db.lastError());
        const auto plan = plan::parsePlan(data->planJson.toStdString());
        if (!plan || plan.value().training.checkpoint.dir.empty())
            return fail(QStringLiteral("run %1 wrote no checkpoints (training.checkpoint.dir is not set in its plan)").arg(run->runId));
        checkpoints = QString::fromStdString(plan.value().training.checkpoint.dir);
    }
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    QStringList args{QStringLiteral("--export-model"), checkpoints, QStringLiteral("--out"), a.options[QStringLiteral("--out")]};
    if (a.options.contains(QStringLiteral("--dtype"))) {
        const QString dtype = a.options[QStringLiteral("--dtype")];
        if (dtype != QLatin1String("fp32") && dtype != QLatin1String("bf16") && dtype != QLatin1String("fp16"))
            return usageError(QStringLiteral("--dtype takes fp32, bf16 or fp16, not '%1'").arg(dtype));
        args << QStringLiteral("--dtype") << dtype;
    }
    p.start(QCoreApplication::applicationDirPath() + QStringLiteral("/trellis-trainer"), args);
    if (!p.waitForStarted(10000))
        return fail(QStringLiteral("cannot start trellis-trainer beside trellis-cli: %1").arg(p.errorString()));
    p.waitForFinished(-1);
    const QString text = QString::fromUtf8(p.readAll()).trimmed();
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return fail(text.startsWith(QStringLiteral("trellis-trainer: ")) ? text.mid(17) : text);
    out() << text << Qt::endl;
    return 0;
}

// compare: two or more runs side by side (summary, plan differences; curves in the report).
int cli::cmdTrace(const Args &a, const QString &dbPath)
{
    if (a.positional.size() != 1 || !a.options.contains(QStringLiteral("--out")))
        return usageError(QStringLiteral("trace takes one RUN and --out FILE"));
    HistoryDatabase db;
    const auto run = findExistingRun(db, dbPath, a.positional.first());
    if (!run)
        return 1;
    auto data = db.loadRun(run->id, false); // the trace draws spans, not steps
    if (!data)
        return fail(db.lastError());
    const QList<SpanRow> spans = db.spansOf(run->id);
    if (spans.isEmpty())
        return fail(QStringLiteral("run %1 has no timeline spans: set telemetry.trace_every in its plan "
                                   "(spans are recorded for pipeline-parallel runs)")
                        .arg(run->runId));
    const QString path = a.options[QStringLiteral("--out")];
    if (const QString e = writeFileAtomically(path, exportTrace(*data, spans)); !e.isEmpty())
        return fail(e);
    out() << "trace " << QFileInfo(path).absoluteFilePath() << " (" << spans.size() << " spans)" << Qt::endl;
    return 0;
}

} // namespace trellis::launcher
