// See cli_commands.h.
#include "launcher/cli/cli_commands.h"

#include "launcher/document/calibration_file.h"
#include "launcher/cli/cli_support.h"
#include "launcher/history/history_database.h"
#include "launcher/report/html_report.h"
#include "launcher/history/history_digest.h"
#include "launcher/report/pdf_report.h"
#include "launcher/report/run_comparison.h"
#include "launcher/report/run_export.h"
#include "launcher/simulator/simulator.h"
#include "launcher/job/job_keeper.h"
#include "launcher/targets/slurm_target.h"
#include "backend/plan/plan_json.h"
#include "backend/plan/plan_validate.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QProcess>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QTextStream>

#include <functional>
#include <map>


#include <cstdio>
#include <optional>
#include <vector>

namespace trellis::launcher {

using namespace cli;

namespace {

// A run's summary, plan, ranks and events, and the digest of its steps and collective reports
// (read a window at a time: a report of a long run must not hold its every row); nullopt with
// `error` naming the run when a read fails.
std::optional<std::pair<RunData, RunDigest>> digestedRun(HistoryDatabase &db, const RunSummary &run, QString &error)
{
    auto data = db.loadRun(run.id, false);
    std::optional<RunDigest> digest;
    if (data)
        digest = digestFromHistory(db, run.id, *data, &error);
    else
        error = db.lastError();
    if (!digest) {
        error = QStringLiteral("cannot load run %1: %2").arg(run.runId, error);
        return std::nullopt;
    }
    return std::make_pair(std::move(*data), std::move(*digest));
}

} // namespace

QString cli::writeReport(HistoryDatabase &db, const RunSummary &run, const QString &path)
{
    QString error;
    const auto digested = digestedRun(db, run, error);
    if (!digested)
        return error;
    return writeFileAtomically(path, renderHtmlReport(digested->first, digested->second,
                                                      defaultCalibrationPath(QFileInfo(db.path()).absoluteFilePath()), {},
                                                      db.spansOfLastTracedStep(run.id))
                                         .toUtf8());
}

int cli::openExisting(HistoryDatabase &db, const QString &dbPath)
{
    if (!QFileInfo::exists(dbPath))
        return fail(QStringLiteral("history database %1: no such file (no runs recorded yet, or use --db)").arg(dbPath));
    if (const QString e = db.open(dbPath, false); !e.isEmpty())
        return fail(e);
    return 0;
}

std::optional<RunSummary> cli::findExistingRun(HistoryDatabase &db, const QString &dbPath, const QString &reference)
{
    if (!db.isOpen() && openExisting(db, dbPath) != 0) // compare looks up several runs in one database
        return std::nullopt;
    auto run = db.findRun(reference);
    if (!run)
        fail(db.lastError());
    return run;
}

namespace {

// One run's record: what it was, how it ended and each attempt's exact launch command.
int showRun(HistoryDatabase &db, const QString &reference)
{
    const auto r = db.findRun(reference);
    if (!r) {
        err() << db.lastError() << "\n";
        return 1;
    }
    out() << "run " << r->runId << " (#" << r->id << "): " << (r->name.isEmpty() ? QStringLiteral("(unnamed)") : r->name) << ", "
          << r->target << ", " << r->worldSize << " ranks\n";
    out() << "status " << r->status << ", step " << r->stepsDone << " of " << r->totalSteps;
    if (r->stepsDone > 0)
        out() << ", last loss " << QString::number(r->lastLoss, 'f', 4);
    out() << "\n";
    if (r->startedAt.isValid())
        out() << "started " << r->startedAt.toString(Qt::ISODate)
              << (r->endedAt.isValid() ? QStringLiteral(", ended %1").arg(r->endedAt.toString(Qt::ISODate)) : QString()) << "\n";
    if (!r->error.isEmpty())
        out() << "error: " << r->error << "\n";
    for (qsizetype i = 0; i < r->launchCommands.size(); ++i)
        out() << "launch command (attempt " << i + 1 << "): " << r->launchCommands[i] << "\n";
    if (r->launchCommands.isEmpty())
        out() << "launch command: not recorded (a run recorded before Trellis kept it)\n";
    out().flush();
    return 0;
}

int cmdRuns(const Args &a, const QString &dbPath)
{
    HistoryDatabase db;
    if (int rc = openExisting(db, dbPath))
        return rc;
    if (a.positional.size() > 1)
        return usageError(QStringLiteral("runs takes at most one run"));
    if (a.positional.size() == 1)
        return showRun(db, a.positional.front());
    const int limit = a.options.value(QStringLiteral("--limit"), QStringLiteral("50")).toInt();
    const auto runs = db.listRuns(limit > 0 ? limit : 50);
    out() << QStringLiteral("%1  %2  %3  %4  %5  %6  %7\n")
                 .arg(QStringLiteral("#"), 4)
                 .arg(QStringLiteral("run id"), -20)
                 .arg(QStringLiteral("name"), -16)
                 .arg(QStringLiteral("status"), -10)
                 .arg(QStringLiteral("ranks"), 5)
                 .arg(QStringLiteral("steps"), 11)
                 .arg(QStringLiteral("last loss"), 9);
    for (const auto &r : runs)
        out() << QStringLiteral("%1  %2  %3  %4  %5  %6  %7\n")
                     .arg(r.id, 4)
                     .arg(r.runId, -20)
                     .arg(r.name.left(16), -16)
                     .arg(r.status, -10)
                     .arg(r.worldSize, 5)
                     .arg(QStringLiteral("%1/%2").arg(r.stepsDone).arg(r.totalSteps), 11)
                     .arg(r.stepsDone ? QString::number(r.lastLoss, 'f', 4) : QStringLiteral("-"), 9);
    if (runs.isEmpty())
        out() << "(no runs recorded in " << dbPath << ")\n";
    out().flush();
    return 0;
}

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

int cmdExport(const Args &a, const QString &dbPath)
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
int cmdExperts(const Args &a, const QString &dbPath)
{
    if (a.positional.size() != 1)
        return usageError(QStringLiteral("experts takes one RUN"));
    HistoryDatabase db;
    const auto run = findExistingRun(db, dbPath, a.positional.first());
    if (!run)
        return 1;
    qint64 firstStep = 0, lastStep = 0;
    if (!db.expertLoadSteps(run->id, firstStep, lastStep))
        return fail(QStringLiteral("run %1 recorded no expert routing (a dense model, or no step finished)").arg(run->runId));
    qint64 step = lastStep;
    if (a.options.contains(QStringLiteral("--step"))) {
        bool ok = false;
        step = a.options[QStringLiteral("--step")].toLongLong(&ok);
        if (!ok || step < 1)
            return usageError(QStringLiteral("--step must be a step number (1 or more), got '%1'").arg(a.options[QStringLiteral("--step")]));
    }
    // That step's reports only: a long run at scale holds millions.
    const QList<ExpertLoadRow> rows = db.expertLoadBetween(run->id, step, step);
    const int layers = rows.isEmpty() ? 0 : rows.front().layers, experts = rows.isEmpty() ? 0 : rows.front().experts;
    std::vector<qint64> tokens(static_cast<std::size_t>(layers) * experts, 0);
    qint64 dropped = 0, choices = 0;
    double aux = 0;
    int reports = 0;
    for (const ExpertLoadRow &r : rows) {
        if (r.step != step || r.layers != layers || r.experts != experts)
            continue;
        for (std::size_t i = 0; i < tokens.size(); ++i)
            tokens[i] += r.tokens[i];
        dropped += r.dropped;
        aux += r.auxLoss;
        ++reports;
    }
    if (reports == 0)
        return fail(QStringLiteral("run %1 has no expert routing at step %2 (steps %3 to %4 recorded)")
                        .arg(run->runId)
                        .arg(step)
                        .arg(firstStep)
                        .arg(lastStep));
    for (qint64 n : tokens)
        choices += n;
    auto imbalanceOf = [&](int l) {
        qint64 total = 0, most = 0;
        for (int e = 0; e < experts; ++e) {
            total += tokens[static_cast<std::size_t>(l) * experts + e];
            most = std::max(most, tokens[static_cast<std::size_t>(l) * experts + e]);
        }
        return total > 0 ? static_cast<double>(most) * experts / static_cast<double>(total) : 0.0;
    };
    if (a.flags.contains(QStringLiteral("--json"))) {
        QJsonArray perLayer;
        for (int l = 0; l < layers; ++l) {
            QJsonArray counts;
            for (int e = 0; e < experts; ++e)
                counts.append(tokens[static_cast<std::size_t>(l) * experts + e]);
            perLayer.append(QJsonObject{{QStringLiteral("layer"), l}, {QStringLiteral("tokens"), counts},
                                        {QStringLiteral("imbalance"), imbalanceOf(l)}});
        }
        const QJsonObject doc{{QStringLiteral("run_id"), run->runId}, {QStringLiteral("step"), step},
                              {QStringLiteral("ranks_reporting"), reports}, {QStringLiteral("layers"), perLayer},
                              {QStringLiteral("dropped"), dropped}, {QStringLiteral("choices"), choices},
                              {QStringLiteral("aux_loss"), aux / reports}};
        out() << QJsonDocument(doc).toJson(QJsonDocument::Indented);
        return 0;
    }
    out() << QStringLiteral("run %1, step %2: %3 layers × %4 experts, %5 rank%6 reporting\n")
                 .arg(run->runId)
                 .arg(step)
                 .arg(layers)
                 .arg(experts)
                 .arg(reports)
                 .arg(reports == 1 ? QString() : QStringLiteral("s"));
    QString header = QStringLiteral("layer");
    for (int e = 0; e < experts && e < 16; ++e)
        header += QStringLiteral("%1").arg(QStringLiteral("e%1").arg(e), 8);
    out() << header << (experts > 16 ? QStringLiteral("  …") : QString()) << QStringLiteral("  busiest/mean\n");
    for (int l = 0; l < layers; ++l) {
        QString line = QStringLiteral("%1").arg(l, 5);
        for (int e = 0; e < experts && e < 16; ++e)
            line += QStringLiteral("%1").arg(tokens[static_cast<std::size_t>(l) * experts + e], 8);
        out() << line << (experts > 16 ? QStringLiteral("  …") : QString()) << QStringLiteral("  %1\n").arg(imbalanceOf(l), 12, 'f', 2);
    }
    out() << QStringLiteral("dropped for capacity: %1 of %2 choices (%3%); load-balancing loss %4\n")
                 .arg(dropped)
                 .arg(choices)
                 .arg(choices > 0 ? 100.0 * static_cast<double>(dropped) / static_cast<double>(choices) : 0.0, 0, 'f', 2)
                 .arg(aux / reports, 0, 'g', 5)
          << Qt::flush;
    return 0;
}

// export-model: a run's newest checkpoint (or a checkpoint folder) in transformers' layout, by
// trellis-trainer --export-model (the trainer reads its own checkpoints).
int cmdExportModel(const Args &a, const QString &dbPath)
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
int cmdCompare(const Args &a, const QString &dbPath)
{
    if (a.positional.size() < 2)
        return usageError(QStringLiteral("compare takes two or more runs"));
    HistoryDatabase db;
    QList<RunData> runs;
    QList<RunDigest> digests;
    QList<RunFigures> figures;
    for (const QString &reference : a.positional) {
        const auto summary = findExistingRun(db, dbPath, reference);
        if (!summary)
            return 1;
        QString error;
        auto digested = digestedRun(db, *summary, error);
        if (!digested)
            return fail(error);
        figures << figuresOf(digested->first, digested->second);
        runs << std::move(digested->first);
        digests << std::move(digested->second);
    }
    const auto differences = planDifferences(runs);
    out() << compareText(figures, differences);
    if (a.options.contains(QStringLiteral("--report"))) {
        const QString path = a.options[QStringLiteral("--report")];
        const QString suffix = QFileInfo(path).suffix().toLower();
        QString e;
        if (suffix == QLatin1String("pdf"))
            e = writeComparisonPdf(runs, digests, figures, differences, path);
        else if (suffix == QLatin1String("html") || suffix == QLatin1String("htm"))
            e = writeFileAtomically(path, renderComparisonHtml(runs, digests, figures, differences).toUtf8());
        else
            return usageError(QStringLiteral("--report %1: the report's format comes from the extension, .html or .pdf").arg(path));
        if (!e.isEmpty())
            return fail(e);
        out() << "report " << QFileInfo(path).absoluteFilePath() << Qt::endl;
    }
    return 0;
}

int cmdReport(const Args &a, const QString &dbPath)
{
    if (a.positional.size() != 1 || !a.options.contains(QStringLiteral("--out")))
        return usageError(QStringLiteral("report takes one RUN and --out FILE"));
    HistoryDatabase db;
    const auto run = findExistingRun(db, dbPath, a.positional.first());
    if (!run)
        return 1;
    const QString path = a.options[QStringLiteral("--out")];
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("pdf")) {
        QString error;
        const auto digested = digestedRun(db, *run, error);
        if (!digested)
            return fail(error);
        if (const QString e = writePdfReport(digested->first, digested->second,
                                             defaultCalibrationPath(QFileInfo(dbPath).absoluteFilePath()), path,
                                             db.spansOfLastTracedStep(run->id));
            !e.isEmpty())
            return fail(e);
    } else if (suffix == QLatin1String("html") || suffix == QLatin1String("htm")) {
        if (const QString e = writeReport(db, *run, path); !e.isEmpty())
            return fail(e);
    } else {
        return usageError(QStringLiteral("--out %1: the report's format comes from the extension, .html or .pdf").arg(path));
    }
    out() << "report " << QFileInfo(path).absoluteFilePath() << Qt::endl;
    return 0;
}

int cmdTrace(const Args &a, const QString &dbPath)
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

// A subcommand that takes parsed arguments: the options that take a value, the flags, and what
// runs it (with the history database's path).
struct Subcommand {
    QString name;
    QSet<QString> valued;
    QSet<QString> flags;
    int (*handler)(const Args &a, const QString &dbPath);
};

const std::vector<Subcommand> &subcommands()
{
    static const std::vector<Subcommand> table = {
        {QStringLiteral("validate"), {}, {}, [](const Args &a, const QString &) { return cmdValidate(a); }},
        {QStringLiteral("estimate"), {QStringLiteral("--calibration")}, {QStringLiteral("--json")}, cmdEstimate},
        {QStringLiteral("convert"), {QStringLiteral("--to"), QStringLiteral("--from"), QStringLiteral("--base"), QStringLiteral("--out")}, {},
         [](const Args &a, const QString &) { return cmdConvert(a); }},
        {QStringLiteral("calibrate"), {QStringLiteral("--ranks"), QStringLiteral("--out")}, {}, cmdCalibrate},
        {QStringLiteral("search"),
         {QStringLiteral("--model"), QStringLiteral("--cluster"), QStringLiteral("--nodes"), QStringLiteral("--global-batch"),
          QStringLiteral("--top")},
         {QStringLiteral("--exhaustive")},
         [](const Args &a, const QString &) { return cmdSearch(a); }},
        {QStringLiteral("run"),
         {QStringLiteral("--report"), QStringLiteral("--inject"), QStringLiteral("--hang-timeout"), QStringLiteral("--metrics-port"),
          QStringLiteral("--run-id"), QStringLiteral("--hostfile"), QStringLiteral("--ranks"), QStringLiteral("--name"),
          QStringLiteral("--max-restarts")},
         {QStringLiteral("--quiet"), QStringLiteral("--detach"), QStringLiteral("--command")},
         cmdRun},
        {QStringLiteral("preflight"), {QStringLiteral("--accept-host-key"), QStringLiteral("--hostfile")}, {QStringLiteral("--json")},
         [](const Args &a, const QString &) { return cmdPreflight(a); }},
        {QStringLiteral("attach"), {}, {}, cmdAttach},
        {QStringLiteral("simulate"),
         {QStringLiteral("--ranks"), QStringLiteral("--hz"), QStringLiteral("--seconds"), QStringLiteral("--pp"), QStringLiteral("--slow"),
          QStringLiteral("--silent"), QStringLiteral("--crash"), QStringLiteral("--relays"), QStringLiteral("--nice"), QStringLiteral("--run-id"), QStringLiteral("--metrics-port"),
          QStringLiteral("--hang-timeout")},
         {QStringLiteral("--quiet"), QStringLiteral("--detach")},
         cmdSimulate},
        {QStringLiteral("adopt"), {QStringLiteral("--metrics-port"), QStringLiteral("--hang-timeout")}, {QStringLiteral("--quiet")}, cmdAdopt},
        {QStringLiteral("compare"), {QStringLiteral("--report")}, {}, cmdCompare},
        {QStringLiteral("ps"), {}, {},
         [](const Args &a, const QString &) { return a.positional.isEmpty() ? cmdPs() : usageError(QStringLiteral("ps takes no arguments")); }},
        {QStringLiteral("stop"), {}, {}, [](const Args &a, const QString &) { return cmdStop(a); }},
        {QStringLiteral("runs"), {QStringLiteral("--limit")}, {}, cmdRuns},
        {QStringLiteral("export"), {QStringLiteral("--format"), QStringLiteral("--table"), QStringLiteral("--out")}, {}, cmdExport},
        {QStringLiteral("export-model"), {QStringLiteral("--out"), QStringLiteral("--dtype")}, {}, cmdExportModel},
        {QStringLiteral("experts"), {QStringLiteral("--step")}, {QStringLiteral("--json")}, cmdExperts},
        {QStringLiteral("report"), {QStringLiteral("--out")}, {}, cmdReport},
        {QStringLiteral("trace"), {QStringLiteral("--out")}, {}, cmdTrace},
    };
    return table;
}

// The options before the command (--db, --help, --version), taken off the front of `rest`.
// Returns the exit code when the process is done already; nothing when a command should follow.
std::optional<int> takeGlobalOptions(QStringList &rest, QString &dbPath)
{
    while (!rest.isEmpty() && rest.first().startsWith(QLatin1String("--"))) {
        const QString option = rest.takeFirst();
        if (option == QLatin1String("--db")) {
            if (rest.isEmpty())
                return usageError(QStringLiteral("--db needs a path"));
            dbPath = rest.takeFirst();
        } else if (option == QLatin1String("--help") || option == QLatin1String("-h")) {
            out() << usageText() << Qt::flush;
            return 0;
        } else if (option == QLatin1String("--version")) {
            out() << "trellis-cli " << QCoreApplication::applicationVersion() << Qt::endl;
            return 0;
        } else {
            return usageError(QStringLiteral("unknown option %1").arg(option));
        }
    }
    return std::nullopt;
}

bool isHelpAlone(const QStringList &rest)
{
    return rest.size() == 1 && (rest[0] == QLatin1String("--help") || rest[0] == QLatin1String("-h"));
}

// `trellis-cli COMMAND --help`: the command's own lines of the usage.
int printCommandHelp(const QString &command)
{
    const QStringList lines = usageText().split(QLatin1Char('\n'));
    bool inCommand = false;
    QStringList mine;
    for (const QString &line : lines) {
        if (line.startsWith(QStringLiteral("  ") + command + QLatin1Char(' ')) || line == QStringLiteral("  ") + command)
            inCommand = true;
        else if (line.startsWith(QStringLiteral("  ")) && !line.startsWith(QStringLiteral("    ")))
            inCommand = false;
        else if (!line.startsWith(QStringLiteral("    ")))
            inCommand = false;
        if (inCommand)
            mine << line;
    }
    if (mine.isEmpty())
        return usageError(QStringLiteral("unknown command '%1'").arg(command));
    out() << "usage: trellis-cli [--db PATH]\n" << mine.join(QLatin1Char('\n')) << "\n" << Qt::flush;
    return 0;
}

} // namespace

int runCli(const QStringList &arguments)
{
    QStringList rest = arguments;
    QString dbPath = HistoryDatabase::defaultPath();
    if (const std::optional<int> code = takeGlobalOptions(rest, dbPath))
        return *code;
    if (rest.isEmpty())
        return usageError(QStringLiteral("no command given"));
    const QString command = rest.takeFirst();
    // The keeper's arguments after "--" are the job's own: never read as ours.
    if (command == QLatin1String("job-keeper") && !isHelpAlone(rest))
        return runJobKeeper(rest);
    if (command == QLatin1String("slurm-job"))
        return runSlurmJob(rest); // its own --help
    if (command == QLatin1String("simulate-ranks") && !isHelpAlone(rest))
        return telemetry::simulateRanks(rest);
    // What follows a lone "--" is a command's own (run --command -- python3 train.py --help).
    const QStringList own = rest.indexOf(QStringLiteral("--")) >= 0 ? rest.mid(0, rest.indexOf(QStringLiteral("--"))) : rest;
    if (own.contains(QStringLiteral("--help")) || own.contains(QStringLiteral("-h")))
        return printCommandHelp(command);
    if (command == QLatin1String("plan"))
        return cmdPlan(rest);
    for (const Subcommand &sub : subcommands())
        if (command == sub.name) {
            const Args a = parseArgs(rest, sub.valued, sub.flags);
            return a.error.isEmpty() ? sub.handler(a, dbPath) : usageError(a.error);
        }
    return usageError(QStringLiteral("unknown command '%1'").arg(command));
}

} // namespace trellis::launcher
