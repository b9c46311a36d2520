// trellis-cli's commands over the run history: runs (list, or one run's record), experts (a step's
// routing), compare and report; and what the other commands share to find a run and write its
// report. See cli_support.h.
#include "launcher/history/history_copy.h"
#include "launcher/history_location.h"
#include "launcher/cli/cli_support.h"
#include "launcher/document/calibration_file.h"
#include "launcher/history/history_database.h"
#include "launcher/history/history_digest.h"
#include "launcher/history/run_files.h"
#include "launcher/report/html_report.h"
#include "launcher/report/pdf_report.h"
#include "launcher/report/run_comparison.h"
#include "launcher/report/run_export.h"
#include "backend/plan/plan_json.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSaveFile>
#include <QTextStream>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
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
                                                      defaultCalibrationPath(historyIdentity(db.path())), {},
                                                      db.spansOfLastTracedStep(run.id))
                                         .toUtf8());
}

int cli::openExisting(HistoryDatabase &db, const QString &dbPath)
{
    if (!isServerHistory(dbPath) && !QFileInfo::exists(dbPath))
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
          << r->target << " (" << toString(r->kind) << "), " << r->worldSize << " ranks\n";
    out() << "status " << r->status << ", step " << r->stepsDone << " of " << r->totalSteps;
    if (r->stepsDone > 0)
        out() << ", last loss " << QString::number(r->lastLoss, 'f', 4);
    out() << "\n";
    if (r->startedAt.isValid())
        out() << "started " << r->startedAt.toString(Qt::ISODate)
              << (r->endedAt.isValid() ? QStringLiteral(", ended %1").arg(r->endedAt.toString(Qt::ISODate)) : QString()) << "\n";
    if (const RunSummary f = db.withFigures(*r); f.tokensPerS > 0)
        out() << "tokens/s " << QString::number(f.tokensPerS, 'f', 0) << " (median over its steps)"
              << (f.mfu >= 0 ? QStringLiteral(", MFU %1%").arg(f.mfu * 100, 0, 'f', 1) : QString()) << "\n";
    if (!r->tags.isEmpty())
        out() << "tags: " << r->tags.join(QLatin1Char(' ')) << "\n";
    if (r->archived)
        out() << "archived\n";
    if (!r->note.isEmpty())
        out() << "note: " << r->note << "\n";
    if (!r->owner.isEmpty())
        out() << "owner: " << r->owner << "\n";
    if (!r->filesAt.isEmpty())
        out() << "files: " << r->filesAt << "\n";
    if (!r->error.isEmpty())
        out() << "error: " << r->error << "\n";
    for (qsizetype i = 0; i < r->launchCommands.size(); ++i)
        out() << "launch command (attempt " << i + 1 << "): " << r->launchCommands[i] << "\n";
    if (r->launchCommands.isEmpty())
        out() << "launch command: not recorded (a run recorded before Trellis kept it)\n";
    out().flush();
    return 0;
}

} // namespace

namespace {

QString figure(double v, int decimals) { return v >= 0 ? QString::number(v, 'f', decimals) : QStringLiteral("-"); }

QString duration(qint64 ms)
{
    if (ms < 0)
        return QStringLiteral("-");
    const qint64 s = ms / 1000;
    return s >= 3600 ? QStringLiteral("%1h%2m").arg(s / 3600).arg((s % 3600) / 60, 2, 10, QLatin1Char('0'))
                     : QStringLiteral("%1m%2s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

// One line of the runs list: each cell padded to its width (negative: left-aligned; 0: as it is),
// two spaces between. Cells are placed side by side, never substituted into each other, so a run's
// name holding "%4" is shown as it is.
QString listLine(std::initializer_list<std::pair<QString, int>> cells)
{
    QStringList parts;
    for (const auto &[text, width] : cells)
        parts << (width < 0 ? text.leftJustified(-width) : text.rightJustified(width));
    return parts.join(QStringLiteral("  ")) + QLatin1Char('\n');
}

int listRuns(HistoryDatabase &db, const Args &a, const QString &dbPath)
{
    const RunFilterParse parsed = parseRunFilter(a.options.value(QStringLiteral("--filter")));
    if (!parsed.error.isEmpty()) {
        err() << "trellis-cli: --filter: " << parsed.error << "\n";
        err().flush();
        return 2;
    }
    bool ok = true;
    const int limit = a.options.value(QStringLiteral("--limit"), QStringLiteral("50")).toInt(&ok);
    if (!ok || limit < 1)
        return usageError(QStringLiteral("--limit must be 1 or more, got '%1'").arg(a.options.value(QStringLiteral("--limit"))));
    QList<RunSummary> runs = db.listRuns(parsed.filter, limit);
    if (!db.lastError().isEmpty() && runs.isEmpty())
        return fail(db.lastError());
    for (RunSummary &r : runs)
        r = db.withFigures(r); // ended runs' figures, computed once and kept
    out() << listLine({{QStringLiteral("#"), 4}, {QStringLiteral("run id"), -20}, {QStringLiteral("name"), -16}, {QStringLiteral("status"), -10},
                       {QStringLiteral("kind"), -9}, {QStringLiteral("ranks"), 5}, {QStringLiteral("steps"), 11}, {QStringLiteral("last loss"), 9},
                       {QStringLiteral("tokens/s"), 10}, {QStringLiteral("duration  tags"), 0}});
    for (const auto &r : runs)
        out() << listLine({{QString::number(r.id), 4},
                           {r.runId, -20},
                           {r.name.left(16), -16},
                           {r.status + (r.archived ? QStringLiteral("*") : QString()), -10},
                           {toString(r.kind), -9},
                           {QString::number(r.worldSize), 5},
                           {QStringLiteral("%1/%2").arg(r.stepsDone).arg(r.totalSteps), 11},
                           {r.stepsDone ? QString::number(r.lastLoss, 'f', 4) : QStringLiteral("-"), 9},
                           {figure(r.tokensPerS, 0), 10},
                           {(duration(r.durationMs()).leftJustified(8) + QStringLiteral("  ") + r.tags.join(QLatin1Char(' '))).trimmed(), 0}});
    if (runs.isEmpty())
        out() << (parsed.filter.isEmpty() ? QStringLiteral("(no runs recorded in %1)\n").arg(dbPath)
                                          : QStringLiteral("(no run in %1 matches the filter)\n").arg(dbPath));
    else if (std::any_of(runs.cbegin(), runs.cend(), [](const RunSummary &r) { return r.archived; }))
        out() << "* archived\n";
    out().flush();
    return 0;
}

// runs tag|untag|note|rename|archive|unarchive|delete RUN ...
int editRun(HistoryDatabase &db, const Args &a)
{
    const QString verb = a.positional[0];
    if (a.positional.size() < 2)
        return usageError(QStringLiteral("runs %1 needs a RUN").arg(verb));
    const auto run = db.findRun(a.positional[1]);
    if (!run)
        return fail(db.lastError());
    const QStringList rest = a.positional.mid(2);
    QString error;
    if (verb == QLatin1String("tag") || verb == QLatin1String("untag")) {
        if (rest.isEmpty())
            return usageError(QStringLiteral("runs %1 RUN TAG...: no tag given").arg(verb));
        for (const QString &tag : rest) {
            error = verb == QLatin1String("tag") ? db.tagRun(run->id, tag) : db.untagRun(run->id, tag);
            if (!error.isEmpty())
                return fail(QStringLiteral("%1: %2").arg(tag, error));
        }
    } else if (verb == QLatin1String("note") || verb == QLatin1String("rename")) {
        if (rest.size() != 1)
            return usageError(QStringLiteral("runs %1 RUN %2: one argument (quote it)").arg(verb, verb == QLatin1String("note") ? QStringLiteral("TEXT") : QStringLiteral("NAME")));
        error = verb == QLatin1String("note") ? db.setRunNote(run->id, rest[0]) : db.renameRun(run->id, rest[0]);
    } else if (verb == QLatin1String("archive") || verb == QLatin1String("unarchive")) {
        if (!rest.isEmpty())
            return usageError(QStringLiteral("runs %1 takes one RUN").arg(verb));
        error = db.setRunArchived(run->id, verb == QLatin1String("archive"));
    } else { // delete
        if (!rest.isEmpty())
            return usageError(QStringLiteral("runs delete takes one RUN"));
        const QStringList files = runFilesFor(db.path(), run->runId);
        const QString what = QStringLiteral("run %1 (%2, %3): its rows in %4%5")
                                 .arg(run->runId, run->name, run->status, db.path(),
                                      files.isEmpty() ? QStringLiteral(" (it has no files)") : QStringLiteral(" and %1").arg(files.join(QStringLiteral(", "))));
        if (!a.flags.contains(QStringLiteral("--yes"))) {
            out() << "would delete " << what << "\nadd --yes to delete it\n" << Qt::flush;
            return 1;
        }
        error = db.deleteRun(run->id);
        if (error.isEmpty())
            out() << "deleted " << what << "\n" << Qt::flush;
    }
    if (!error.isEmpty())
        return fail(error);
    return 0;
}

} // namespace

int cli::cmdRuns(const Args &a, const QString &dbPath)
{
    HistoryDatabase db;
    if (int rc = openExisting(db, dbPath))
        return rc;
    static const QStringList verbs = {QStringLiteral("tag"),     QStringLiteral("untag"),     QStringLiteral("note"),  QStringLiteral("rename"),
                                      QStringLiteral("archive"), QStringLiteral("unarchive"), QStringLiteral("delete")};
    if (!a.positional.isEmpty() && verbs.contains(a.positional[0]))
        return editRun(db, a);
    if (a.positional.size() > 1)
        return usageError(QStringLiteral("runs takes at most one run (or tag, untag, note, rename, archive, unarchive, delete)"));
    if (a.positional.size() == 1)
        return showRun(db, a.positional.front());
    return listRuns(db, a, dbPath);
}

namespace {

// One step's expert routing summed over the ranks that reported it.
struct ExpertStep {
    int layers = 0, experts = 0, reports = 0;
    std::vector<qint64> tokens; // layer-major
    qint64 dropped = 0, choices = 0;
    double aux = 0;             // summed over reports
    qint64 at(int layer, int expert) const { return tokens[static_cast<std::size_t>(layer) * experts + expert]; }
    // Busiest expert over the mean, in one layer.
    double imbalance(int layer) const
    {
        qint64 total = 0, most = 0;
        for (int e = 0; e < experts; ++e) {
            total += at(layer, e);
            most = std::max(most, at(layer, e));
        }
        return total > 0 ? static_cast<double>(most) * experts / static_cast<double>(total) : 0.0;
    }
};

ExpertStep sumExpertStep(const QList<ExpertLoadRow> &rows, qint64 step)
{
    ExpertStep s;
    s.layers = rows.isEmpty() ? 0 : rows.front().layers;
    s.experts = rows.isEmpty() ? 0 : rows.front().experts;
    s.tokens.assign(static_cast<std::size_t>(s.layers) * s.experts, 0);
    for (const ExpertLoadRow &r : rows) {
        if (r.step != step || r.layers != s.layers || r.experts != s.experts)
            continue;
        for (std::size_t i = 0; i < s.tokens.size(); ++i)
            s.tokens[i] += r.tokens[i];
        s.dropped += r.dropped;
        s.aux += r.auxLoss;
        ++s.reports;
    }
    for (qint64 n : s.tokens)
        s.choices += n;
    return s;
}

void printExpertsJson(const QString &runId, qint64 step, const ExpertStep &s)
{
    QJsonArray perLayer;
    for (int l = 0; l < s.layers; ++l) {
        QJsonArray counts;
        for (int e = 0; e < s.experts; ++e)
            counts.append(s.at(l, e));
        perLayer.append(QJsonObject{{QStringLiteral("layer"), l}, {QStringLiteral("tokens"), counts},
                                    {QStringLiteral("imbalance"), s.imbalance(l)}});
    }
    const QJsonObject doc{{QStringLiteral("run_id"), runId},         {QStringLiteral("step"), step},
                          {QStringLiteral("ranks_reporting"), s.reports}, {QStringLiteral("layers"), perLayer},
                          {QStringLiteral("dropped"), s.dropped},    {QStringLiteral("choices"), s.choices},
                          {QStringLiteral("aux_loss"), s.aux / s.reports}};
    out() << QJsonDocument(doc).toJson(QJsonDocument::Indented);
}

void printExpertsTable(const QString &runId, qint64 step, const ExpertStep &s)
{
    out() << QStringLiteral("run %1, step %2: %3 layers × %4 experts, %5 rank%6 reporting\n")
                 .arg(runId, QString::number(step), QString::number(s.layers), QString::number(s.experts),
                      QString::number(s.reports), s.reports == 1 ? QString() : QStringLiteral("s"));
    QString header = QStringLiteral("layer");
    for (int e = 0; e < s.experts && e < 16; ++e)
        header += QStringLiteral("%1").arg(QStringLiteral("e%1").arg(e), 8);
    out() << header << (s.experts > 16 ? QStringLiteral("  …") : QString()) << QStringLiteral("  busiest/mean\n");
    for (int l = 0; l < s.layers; ++l) {
        QString line = QStringLiteral("%1").arg(l, 5);
        for (int e = 0; e < s.experts && e < 16; ++e)
            line += QStringLiteral("%1").arg(s.at(l, e), 8);
        out() << line << (s.experts > 16 ? QStringLiteral("  …") : QString()) << QStringLiteral("  %1\n").arg(s.imbalance(l), 12, 'f', 2);
    }
    out() << QStringLiteral("dropped for capacity: %1 of %2 choices (%3%); load-balancing loss %4\n")
                 .arg(s.dropped)
                 .arg(s.choices)
                 .arg(s.choices > 0 ? 100.0 * static_cast<double>(s.dropped) / static_cast<double>(s.choices) : 0.0, 0, 'f', 2)
                 .arg(s.aux / s.reports, 0, 'g', 5)
          << Qt::flush;
}

} // namespace

int cli::cmdExperts(const Args &a, const QString &dbPath)
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
    const ExpertStep summed = sumExpertStep(db.expertLoadBetween(run->id, step, step), step);
    if (summed.reports == 0)
        return fail(QStringLiteral("run %1 has no expert routing at step %2 (steps %3 to %4 recorded)")
                        .arg(run->runId, QString::number(step), QString::number(firstStep), QString::number(lastStep)));
    if (a.flags.contains(QStringLiteral("--json")))
        printExpertsJson(run->runId, step, summed);
    else
        printExpertsTable(run->runId, step, summed);
    return 0;
}

// export-model: a run's newest checkpoint (or a checkpoint folder) in transformers' layout, by
// trellis-trainer --export-model (the trainer reads its own checkpoints).
int cli::cmdCompare(const Args &a, const QString &dbPath)
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

int cli::cmdReport(const Args &a, const QString &dbPath)
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
                                             defaultCalibrationPath(historyIdentity(dbPath)), path,
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

} // namespace trellis::launcher

namespace trellis::launcher {

int cli::cmdHistory(const Args &a, const QString &dbPath)
{
    if (a.positional.isEmpty() || a.positional.first() != QLatin1String("copy"))
        return usageError(QStringLiteral("history: the subcommand is copy (history copy --from HISTORY --to HISTORY [RUN...])"));
    const QString from = a.options.value(QStringLiteral("--from"), dbPath);
    const QString to = a.options.value(QStringLiteral("--to"), dbPath);
    if (historyIdentity(from) == historyIdentity(to))
        return usageError(QStringLiteral("history copy: --from and --to name the same history (%1)").arg(from));
    HistoryDatabase source;
    if (const int code = openExisting(source, from))
        return code;
    HistoryDatabase target;
    if (const QString e = target.open(to); !e.isEmpty())
        return fail(e);
    const HistoryCopyOutcome o = copyRuns(source, target, a.positional.mid(1));
    for (const QString &runId : o.copied)
        out() << "copied " << runId << "\n";
    for (const QString &runId : o.present)
        out() << "already there " << runId << "\n";
    for (const QString &why : o.refused)
        err() << "not copied " << why << "\n";
    out() << o.copied.size() << " copied, " << o.present.size() << " already there, " << o.refused.size() << " not copied\n"
          << Qt::flush;
    return o.refused.isEmpty() ? 0 : 1;
}

} // namespace trellis::launcher
