// HTML report rendering; see html_report.h. The report's sections, each from the run's record
// and its digest; the charts are drawn by html_charts.h (or by the PDF report's renderer).
#include "launcher/report/html_report.h"

#include "launcher/report/html_charts.h"
#include "launcher/report/run_comparison.h"
#include "launcher/report/run_digest.h"
#include "launcher/metrics/dashboard_snapshot.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <map>
#include <optional>
#include <QLocale>
#include <QMap>

#include <algorithm>
#include <cmath>
#include <limits>

namespace trellis::launcher {
namespace {

QString esc(const QString &s) { return s.toHtmlEscaped(); }

QString bytes(qint64 b)
{
    return QLocale::c().formattedDataSize(b, 1, QLocale::DataSizeIecFormat);
}

} // namespace

namespace {

// The plan's sections, parsed once from the run's plan JSON.
struct PlanSections {
    QJsonObject model, parallel, training;
};

QString renderChart(const ChartRenderer &chartRenderer, const QString &title, const QString &xLabel, const QString &yLabel,
                    const QList<ChartSeries> &series)
{
    return chartRenderer ? chartRenderer(title, xLabel, yLabel, series)
                         : trellis::launcher::svgLineChart(title, xLabel, yLabel, series);
}

PlanSections parsePlanSections(const QString &planJson)
{
    const QJsonObject plan = QJsonDocument::fromJson(planJson.toUtf8()).object();
    return {plan.value(QStringLiteral("model")).toObject(), plan.value(QStringLiteral("parallel")).toObject(),
            plan.value(QStringLiteral("training")).toObject()};
}

void writeHeaderSection(QString &h, const RunSummary &r)
{
    h += QStringLiteral("<!DOCTYPE html><html><head><meta charset='utf-8'><title>Trellis run %1</title><style>"
                        "body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}"
                        "table{border-collapse:collapse;margin:8px 0 20px}"
                        "td,th{border:1px solid #ccc;padding:4px 10px;text-align:right}"
                        "th{background:#f3f3f3}td.l,th.l{text-align:left}"
                        ".failed{color:#b00020}.completed{color:#0a7d28}pre{background:#f7f7f7;padding:8px;"
                        "white-space:pre-wrap}.charts svg{margin:6px 12px 6px 0;border:1px solid #ddd}"
                        "</style></head><body>")
             .arg(esc(r.runId));
    h += QStringLiteral("<h1>Trellis run %1</h1>").arg(esc(r.runId));
    // One arg() for every field: a name holding "%3" stays as it is.
    h += QStringLiteral("<p>Plan <b>%1</b> · target %2 · %3 ranks · status <b class='%4'>%4</b> · %5 run")
             .arg(esc(r.name.isEmpty() ? QStringLiteral("(unnamed)") : r.name), esc(r.target), QString::number(r.worldSize),
                  esc(r.status), toString(r.kind));
    if (r.startedAt.isValid())
        h += QStringLiteral(" · started %1").arg(r.startedAt.toString(Qt::ISODate));
    if (r.endedAt.isValid() && r.startedAt.isValid())
        h += QStringLiteral(" · %1 s").arg(r.startedAt.msecsTo(r.endedAt) / 1000.0, 0, 'f', 1);
    h += QStringLiteral("</p>");
    if (!r.tags.isEmpty() || r.archived)
        h += QStringLiteral("<p class='tags'>%1%2</p>")
                 .arg(r.tags.isEmpty() ? QString() : QStringLiteral("Tags: <b>%1</b>").arg(esc(r.tags.join(QStringLiteral(", ")))),
                      r.archived ? QStringLiteral(" (archived)") : QString());
    if (!r.note.isEmpty())
        h += QStringLiteral("<h2>Note</h2><pre class='note'>%1</pre>").arg(esc(r.note));
    if (!r.error.isEmpty())
        h += QStringLiteral("<h2>Failure</h2><pre class='failed'>%1</pre>").arg(esc(r.error));
    if (!r.launchCommands.isEmpty()) {
        h += QStringLiteral("<h2>Launch command</h2>");
        for (qsizetype i = 0; i < r.launchCommands.size(); ++i)
            h += QStringLiteral("<p>attempt %1</p><pre>%2</pre>").arg(i + 1).arg(esc(r.launchCommands[i]));
    }
}

void writePlanSection(QString &h, const PlanSections &plan)
{
    const QJsonObject &model = plan.model;
    const QJsonObject &parallel = plan.parallel;
    const QJsonObject &training = plan.training;
    h += QStringLiteral("<h2>Plan</h2><table>");
    auto row = [&](const QString &k, const QString &v) {
        h += QStringLiteral("<tr><th class='l'>%1</th><td class='l'>%2</td></tr>").arg(esc(k), esc(v));
    };
    row(QStringLiteral("model"), QStringLiteral("%1 layers, hidden %2, %3 heads, ffn %4, seq %5, vocab %6")
                                     .arg(model.value(QStringLiteral("layers")).toInt())
                                     .arg(model.value(QStringLiteral("hidden")).toInt())
                                     .arg(model.value(QStringLiteral("heads")).toInt())
                                     .arg(model.value(QStringLiteral("ffn")).toInt())
                                     .arg(model.value(QStringLiteral("seq_len")).toInt())
                                     .arg(model.value(QStringLiteral("vocab")).toInt()));
    row(QStringLiteral("parallel"), QStringLiteral("dp %1 · tp %2 · pp %3 · cp %4 · ZeRO %5 · %6")
                                        .arg(parallel.value(QStringLiteral("dp")).toInt())
                                        .arg(parallel.value(QStringLiteral("tp")).toInt())
                                        .arg(parallel.value(QStringLiteral("pp")).toInt())
                                        .arg(parallel.value(QStringLiteral("cp")).toInt())
                                        .arg(parallel.value(QStringLiteral("zero")).toInt())
                                        .arg(parallel.value(QStringLiteral("precision")).toString()));
    row(QStringLiteral("batch"), QStringLiteral("micro-batch %1 × %2 micro-batches × dp %3")
                                     .arg(parallel.value(QStringLiteral("micro_batch_size")).toInt())
                                     .arg(parallel.value(QStringLiteral("micro_batches")).toInt())
                                     .arg(parallel.value(QStringLiteral("dp")).toInt()));
    row(QStringLiteral("training"), QStringLiteral("%1 steps, lr %2 (warm-up %3, min %4), seed %5")
                                        .arg(training.value(QStringLiteral("steps")).toInt())
                                        .arg(training.value(QStringLiteral("lr")).toDouble())
                                        .arg(training.value(QStringLiteral("warmup_steps")).toInt())
                                        .arg(training.value(QStringLiteral("min_lr")).toDouble())
                                        .arg(training.value(QStringLiteral("seed")).toVariant().toString()));
    h += QStringLiteral("</table>");
}

// Loss summary: the first and the last step row (every DP rank reports the global mean).
void writeLossSummary(QString &h, const RunDigest &digest)
{
    if (digest.empty())
        return;
    const StepRow &first = digest.firstRow();
    const StepRow &last = digest.lastRow();
    h += QStringLiteral("<p>Loss %1 at step %2 → <b>%3</b> at step %4.</p>")
             .arg(first.loss, 0, 'f', 4)
             .arg(first.step)
             .arg(last.loss, 0, 'f', 4)
             .arg(last.step);
}

// The step-time parts per step, each the median over that step's ranks.
QList<ChartSeries> stepBreakdownSeries(const RunDigest &digest)
{
    ChartSeries computeLine{QStringLiteral("compute"), {}}, exposedLine{QStringLiteral("exposed communication"), {}},
        bubbleLine{QStringLiteral("pipeline bubble"), {}}, idleLine{QStringLiteral("idle"), {}},
        checkpointLine{QStringLiteral("checkpoint (between steps)"), {}};
    for (const DigestStep &d : digest.steps()) {
        computeLine.points.append(QPointF(d.step, d.computeMs));
        exposedLine.points.append(QPointF(d.step, d.exposedMs));
        bubbleLine.points.append(QPointF(d.step, d.bubbleMs));
        idleLine.points.append(QPointF(d.step, d.idleMs));
        checkpointLine.points.append(QPointF(d.step, d.checkpointMs));
    }
    if (digest.checkpoints().any())
        return {computeLine, exposedLine, bubbleLine, idleLine, checkpointLine};
    return {computeLine, exposedLine, bubbleLine, idleLine};
}

void writeStepTimeTable(QString &h, const telemetry::Prediction &predicted, const RunFigures &measured)
{
    h += QStringLiteral("<h2>Prediction and measurement</h2><table><tr><th class='l'>per step</th><th>predicted ms</th>"
                        "<th>measured ms (median)</th></tr>");
    auto line = [&](const QString &what, double p, double m) {
        h += QStringLiteral("<tr><th class='l'>%1</th><td>%2</td><td>%3</td></tr>")
                 .arg(esc(what), predicted.known ? QString::number(p, 'f', 1) : QStringLiteral("–"), QString::number(m, 'f', 1));
    };
    line(QStringLiteral("compute"), predicted.computeMs, measured.computeMs);
    line(QStringLiteral("exposed communication"), predicted.exposedCommMs, measured.exposedCommMs);
    line(QStringLiteral("pipeline bubble"), predicted.bubbleMs, measured.bubbleMs);
    line(QStringLiteral("step (slowest rank)"), predicted.stepMs, measured.stepMs);
    if (predicted.known && predicted.tokensPerStep > 0 && predicted.stepMs > 0) {
        // Model FLOPs per second of the job: the plan's FLOPs per token × tokens/s.
        const double perToken = predicted.modelFlopsPerStep / predicted.tokensPerStep;
        const double predictedTflops = predicted.modelFlopsPerStep / (predicted.stepMs / 1000.0) / 1e12;
        const double measuredTflops = measured.tokensPerS * perToken / 1e12;
        h += QStringLiteral("<tr><th class='l'>model TFLOP/s (job)</th><td>%1</td><td>%2</td></tr>")
                 .arg(predictedTflops, 0, 'g', 4)
                 .arg(measuredTflops, 0, 'g', 4);
        const double peak = predicted.peakFlopsPerDevice * predicted.devices;
        if (peak > 0)
            h += QStringLiteral("<tr><th class='l'>MFU</th><td>%1%</td><td>%2%</td></tr>")
                     .arg(predictedTflops * 1e12 / peak * 100, 0, 'f', 1)
                     .arg(measuredTflops * 1e12 / peak * 100, 0, 'f', 1);
    }
    h += QStringLiteral("</table>");
}

// Memory by category: the largest rank's measurement against the busiest stage's prediction.
void writeMemoryTable(QString &h, const RunDigest &digest, const telemetry::Prediction &predicted)
{
    const auto &[mp, mm, mg, mo, ma, mc] = digest.memory();
    h += QStringLiteral("<table><tr><th class='l'>memory</th><th>predicted (busiest stage)</th><th>measured (largest rank)"
                        "</th></tr>");
    const std::tuple<QString, QString, qint64> rows[] = {
        {QStringLiteral("parameters"), QStringLiteral("parameters"), mp},
        {QStringLiteral("master weights (fp32)"), QStringLiteral("master weights"), mm},
        {QStringLiteral("gradients"), QStringLiteral("gradients"), mg},
        {QStringLiteral("optimizer"), QStringLiteral("optimizer"), mo},
        {QStringLiteral("activations"), QStringLiteral("activations"), ma},
        {QStringLiteral("communication buffers"), QStringLiteral("communication"), mc}};
    for (const auto &[name, category, value] : rows) {
        const auto it = predicted.memoryBytes.find(category);
        const qint64 expected = it == predicted.memoryBytes.end() ? 0 : static_cast<qint64>(it->second);
        if (category == QLatin1String("master weights") && expected == 0 && value == 0)
            continue; // fp32: the parameters are the masters
        h += QStringLiteral("<tr><th class='l'>%1</th><td>%2</td><td>%3</td></tr>").arg(esc(name), bytes(expected), bytes(value));
    }
    h += QStringLiteral("</table>");
}

// Prediction (the cost model, for the plan as run) beside the measurement: the step-time parts
// (medians over steps of the median rank; the busiest rank for the prediction) and memory by
// category (the largest rank against the busiest stage).
void writePredictionSection(QString &h, const RunData &run, const RunDigest &digest, const QString &calibrationPath,
                            const ChartRenderer &chartRenderer)
{
    const QList<ChartSeries> breakdown = stepBreakdownSeries(digest);
    const RunFigures measured = figuresOf(run, digest);
    const telemetry::Prediction predicted = telemetry::predictionFor(run.planJson, calibrationPath);
    writeStepTimeTable(h, predicted, measured);
    h += predicted.calibrated ? QStringLiteral("<p>Predicted with this machine's calibration (%1).</p>").arg(esc(calibrationPath))
                              : QStringLiteral("<p>Predicted with the cost model's default rates for the plan's device: run "
                                               "<code>trellis-cli calibrate</code> for this machine's.</p>");
    if (digest.checkpoints().any())
        h += QStringLiteral("<p>Checkpoints: %1.</p>").arg(esc(digest.checkpoints().summary()));
    if (predicted.known)
        writeMemoryTable(h, digest, predicted);
    h += QStringLiteral("<div class='charts'>");
    h += renderChart(chartRenderer, QStringLiteral("Step time breakdown (median rank)"), QStringLiteral("step"),
                     QStringLiteral("ms"), breakdown);
    h += QStringLiteral("</div>");
}

// The pipeline: each stage's bubble measured (medians over its ranks and steps) against the
// schedule simulator's, and the newest traced step's timeline beside the predicted one.
void writePipelineSection(QString &h, const RunData &run, const RunDigest &digest, const QString &calibrationPath,
                          const QList<SpanRow> &spans, const TimelineRenderer &timelineRenderer)
{
    const telemetry::Prediction predicted = telemetry::predictionFor(run.planJson, calibrationPath);
    const auto &fractions = digest.bubbleFractions(); // stage -> rank -> bubble / step
    const auto &stepMs = digest.stageStepMs();
    h += QStringLiteral("<h2>Pipeline</h2><table><tr><th>stage</th><th>ranks</th><th>step ms (median)</th>"
                        "<th>bubble measured</th><th>bubble predicted</th></tr>");
    for (const auto &[stage, byRank] : fractions) {
        std::vector<double> f, ms;
        for (const auto &[rank, values] : byRank) {
            f.push_back(median(values));
            ms.push_back(median(stepMs.at(stage).at(rank)));
        }
        const bool known = stage >= 0 && static_cast<std::size_t>(stage) < predicted.stageBubbleFraction.size();
        h += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4%</td><td>%5</td></tr>")
                 .arg(stage)
                 .arg(byRank.size())
                 .arg(median(ms), 0, 'f', 1)
                 .arg(median(f) * 100, 0, 'f', 1)
                 .arg(known ? QString::number(predicted.stageBubbleFraction[static_cast<std::size_t>(stage)] * 100, 'f', 1) +
                                  QLatin1Char('%')
                            : QStringLiteral("–"));
    }
    h += QStringLiteral("</table>");
    const telemetry::TimelineView timeline = telemetry::timelineOf(run.ranks, spans, predicted.timeline, predicted.bubbleFraction);
    h += QStringLiteral("<p>Step timeline: one lane per stage (its lowest rank), forward blue, backward green, weight "
                        "gradients purple, sends and receives grey; each part scaled to its own length.</p>");
    h += timelineRenderer ? timelineRenderer(timeline) : svgTimeline(timeline);
}

// A chart's lines: one a rank up to kReportRankLines ranks; beyond, the minimum, median and
// maximum over the ranks at each step (`which`: the digest's spread of that value).
QList<ChartSeries> linesOrBands(const RunDigest &digest, const QMap<int, ChartSeries> &perRank, double (DigestStep::*which)[3])
{
    if (digest.rankCount() <= kReportRankLines)
        return perRank.values();
    ChartSeries low{QStringLiteral("min"), {}}, mid{QStringLiteral("median of %1 ranks").arg(digest.rankCount()), {}},
        high{QStringLiteral("max"), {}};
    for (const DigestStep &d : digest.steps()) {
        const double(&v)[3] = d.*which;
        low.points.append(QPointF(d.step, v[0]));
        mid.points.append(QPointF(d.step, v[1]));
        high.points.append(QPointF(d.step, v[2]));
    }
    return {low, mid, high};
}

void writeChartsSection(QString &h, const RunDigest &digest, const ChartRenderer &chartRenderer)
{
    const qint64 skippedUpdates = digest.skippedUpdates();
    const QString perRank = digest.rankCount() <= kReportRankLines ? QStringLiteral("per rank") : QStringLiteral("over the ranks");
    ChartSeries gradNorm{QStringLiteral("grad norm"), {}}, lossScale{QStringLiteral("loss scale"), {}};
    for (const DigestStep &d : digest.steps())
        if (d.haveRank0) { // every rank reports the same global norm (and fp16's loss scale)
            gradNorm.points.append(QPointF(d.step, d.gradNorm0));
            if (d.lossScale0 > 0)
                lossScale.points.append(QPointF(d.step, d.lossScale0));
        }
    QList<ChartSeries> gradNormLines;
    if (!gradNorm.points.isEmpty())
        gradNormLines << gradNorm;
    h += QStringLiteral("<h2>Charts</h2><div class='charts'>");
    h += renderChart(chartRenderer, QStringLiteral("Loss"), QStringLiteral("step"), QStringLiteral("loss"),
                     linesOrBands(digest, digest.lossLines(), &DigestStep::loss));
    h += renderChart(chartRenderer, QStringLiteral("Gradient norm (before clipping)"), QStringLiteral("step"),
                     QStringLiteral("norm"), gradNormLines);
    h += renderChart(chartRenderer, QStringLiteral("Throughput %1").arg(perRank), QStringLiteral("step"), QStringLiteral("tokens/s"),
                     linesOrBands(digest, digest.throughputLines(), &DigestStep::throughput));
    h += renderChart(chartRenderer, QStringLiteral("Step time %1").arg(perRank), QStringLiteral("step"), QStringLiteral("ms"),
                     linesOrBands(digest, digest.stepTimeLines(), &DigestStep::stepMs));
    if (digest.hasLossScale())
        h += renderChart(chartRenderer,
                         QStringLiteral("Loss scale (fp16): %1 update%2 skipped for overflow").arg(skippedUpdates).arg(skippedUpdates == 1 ? "" : "s"),
                         QStringLiteral("step"), QStringLiteral("scale"), {lossScale});
    h += QStringLiteral("</div>");
}

// Which kernels the ranks ran (their Hello: device, precision, GEMM path, kernel threads), one
// row per kind of rank.
void writeKernelsTable(QString &h, const RunData &run)
{
    std::vector<const RankRow *> rows;
    for (const RankRow &k : run.ranks)
        rows.push_back(&k);
    const std::vector<telemetry::RankKind> kinds = telemetry::rankKinds(rows);
    if (kinds.empty())
        return;
    h += QStringLiteral("<h3>Kernels</h3><table><tr><th class='l'>ranks</th><th>hosts</th><th class='l'>device</th>"
                        "<th class='l'>precision</th><th class='l'>kernels</th><th>threads</th></tr>");
    for (const telemetry::RankKind &k : kinds)
        h += QStringLiteral("<tr><td class='l'>%1</td><td>%2</td><td class='l'>%3</td><td class='l'>%4</td><td class='l'>%5</td><td>%6</td></tr>")
                 .arg(esc(k.ranks) + (k.count > 1 ? QStringLiteral(" (%1)").arg(k.count) : QString()))
                 .arg(k.hosts)
                 .arg(esc(k.device), esc(k.precision.isEmpty() ? QStringLiteral("fp32") : k.precision),
                      esc(k.kernels.isEmpty() ? QStringLiteral("fp32 kernels") : k.kernels),
                      k.threads > 0 ? QString::number(k.threads) : QStringLiteral("–"));
    h += QStringLiteral("</table>");
}

void writeRanksSection(QString &h, const RunData &run, const QMap<int, RankAgg> &agg)
{
    const RunSummary &r = run.run;
    writeKernelsTable(h, run);
    h += QStringLiteral("<h2>Ranks</h2><table><tr><th>rank</th><th class='l'>host</th><th>pid</th><th class='l'>device</th>"
                        "<th>dp</th><th>steps</th><th>final loss</th><th>mean step ms</th><th>mean tokens/s</th>"
                        "<th>mean comm ms</th><th>peak RSS</th><th>exit</th><th>dropped</th></tr>");
    QMap<int, RankRow> ranks;
    for (const RankRow &k : run.ranks)
        ranks[k.rank] = k;
    for (int rank = 0; rank < std::max(r.worldSize, static_cast<int>(ranks.size())); ++rank) {
        const RankRow k = ranks.value(rank);
        const RankAgg a = agg.value(rank);
        const double n = std::max<qint64>(1, a.steps);
        h += QStringLiteral("<tr><td>%1</td><td class='l'>%2</td><td>%3</td><td class='l'>%4</td><td>%5</td><td>%6</td>"
                            "<td>%7</td><td>%8</td><td>%9</td><td>%10</td><td>%11</td><td>%12</td><td>%13</td></tr>")
                 .arg(rank)
                 .arg(esc(k.host), k.pid ? QString::number(k.pid) : QString(), esc(k.device))
                 .arg(k.dp)
                 .arg(a.steps)
                 .arg(a.steps ? QString::number(a.lastLoss, 'f', 4) : QString())
                 .arg(a.stepMs / n, 0, 'f', 1)
                 .arg(a.tokensPerS / n, 0, 'f', 0)
                 .arg(a.commMs / n, 0, 'f', 2)
                 .arg(a.peakRss ? bytes(a.peakRss) : QString())
                 .arg(k.exitCode < 0 ? QStringLiteral("–") : QString::number(k.exitCode))
                 .arg(k.dropped);
    }
    h += QStringLiteral("</table>");
}

void writeCollectivesSection(QString &h, const RunDigest &digest)
{
    const auto &byOp = digest.collectivesByOp();
    if (byOp.isEmpty())
        return;
    h += QStringLiteral("<h2>Collectives</h2><table><tr><th class='l'>group/op</th><th>records</th><th>total bytes</th>"
                        "<th>total ms</th><th>mean bus GB/s</th></tr>");
    for (auto it = byOp.begin(); it != byOp.end(); ++it)
        h += QStringLiteral("<tr><td class='l'>%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</td></tr>")
                 .arg(esc(it.key()))
                 .arg(it->n)
                 .arg(bytes(it->bytes))
                 .arg(it->ms, 0, 'f', 1)
                 .arg(it->n ? it->bus / it->n : 0.0, 0, 'f', 2);
    h += QStringLiteral("</table>");
}

// Telemetry health: how much of each rank's telemetry reached the history.
void writeTelemetrySection(QString &h, const RunData &run)
{
    h += QStringLiteral("<h2>Telemetry</h2><table><tr><th>rank</th><th>messages stored in sequence</th><th>Goodbye seq</th>"
                        "<th>dropped at the rank</th><th>given up (lost)</th><th class='l'>complete</th></tr>");
    for (const RankRow &k : run.ranks)
        h += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</td><td class='l'>%6</td></tr>")
                 .arg(k.rank)
                 .arg(k.receivedSeq)
                 .arg(k.goodbyeSeq < 0 ? QStringLiteral("–") : QString::number(k.goodbyeSeq))
                 .arg(k.dropped)
                 .arg(k.lost)
                 .arg(k.goodbyeSeq >= 0 && k.receivedSeq == k.goodbyeSeq + 1 && k.dropped == 0 && k.lost == 0 ? QStringLiteral("yes")
                                                                                                            : QStringLiteral("no"));
    h += QStringLiteral("</table>");
}

// Stalls (docs/failures.md): how often a rank held the others up, for how long and which ranks —
// a flaky node shows here before it hangs. Only a stall that ended as a hang stopped the run.
void writeStallsSection(QString &h, const RunData &run)
{
    if (run.stalls.isEmpty()) {
        h += QStringLiteral("<h2>Stalls</h2><p>None: no rank held the others up.</p>");
        return;
    }
    qint64 total = 0, longest = 0;
    QMap<int, int> byHolder;
    for (const StallRow &s : run.stalls) {
        total += s.durationMs;
        longest = std::max(longest, s.durationMs);
        for (int r : s.holders)
            ++byHolder[r];
    }
    QStringList often;
    for (auto it = byHolder.begin(); it != byHolder.end(); ++it)
        often << QStringLiteral("rank %1: %2").arg(it.key()).arg(it.value());
    h += QStringLiteral("<h2>Stalls</h2><p>%1 stall(s), %2 s in all, the longest %3 s; held by %4.</p>")
             .arg(run.stalls.size())
             .arg(total / 1000.0, 0, 'f', 1)
             .arg(longest / 1000.0, 0, 'f', 1)
             .arg(esc(often.join(QStringLiteral(", "))));
    h += QStringLiteral("<table><tr><th>#</th><th>attempt</th><th>step</th><th class='l'>held by</th><th class='l'>waiting</th>"
                        "<th>s</th><th class='l'>ended</th><th class='l'>named as</th></tr>");
    auto list = [](const QList<int> &ranks) {
        QStringList parts;
        for (int r : ranks)
            parts << QString::number(r);
        return parts.join(QLatin1Char(','));
    };
    for (const StallRow &s : run.stalls)
        h += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td class='l'>%4</td><td class='l'>%5</td><td>%6</td>"
                            "<td class='l'>%7</td><td class='l'>%8</td></tr>")
                 .arg(s.number)
                 .arg(s.attempt)
                 .arg(s.step)
                 .arg(list(s.holders), list(s.waiting))
                 .arg(s.durationMs / 1000.0, 0, 'f', 1)
                 .arg(esc(s.outcome), esc(s.what));
    h += QStringLiteral("</table>");
}

void writeEventsSection(QString &h, const RunData &run)
{
    if (run.events.isEmpty())
        return;
    h += QStringLiteral("<h2>Events</h2><table><tr><th>rank</th><th>step</th><th class='l'>kind</th>"
                        "<th class='l'>message</th></tr>");
    for (const EventRow &e : run.events)
        h += QStringLiteral("<tr><td>%1</td><td>%2</td><td class='l'>%3</td><td class='l'>%4</td></tr>")
                 .arg(e.rank < 0 ? QStringLiteral("–") : QString::number(e.rank))
                 .arg(e.step)
                 .arg(esc(e.kind), esc(e.message).replace(QLatin1Char('\n'), QStringLiteral("<br>")));
    h += QStringLiteral("</table>");
}

} // namespace

QString renderHtmlReport(const RunData &run, const RunDigest &digest, const QString &calibrationPath, const ChartRenderer &chartRenderer,
                         const QList<SpanRow> &spans, const TimelineRenderer &timelineRenderer)
{
    const PlanSections plan = parsePlanSections(run.planJson);

    QString h;
    writeHeaderSection(h, run.run);
    writePlanSection(h, plan);
    writeLossSummary(h, digest);
    writePredictionSection(h, run, digest, calibrationPath, chartRenderer);
    if (plan.parallel.value(QStringLiteral("pp")).toInt() > 1)
        writePipelineSection(h, run, digest, calibrationPath, spans, timelineRenderer);
    writeChartsSection(h, digest, chartRenderer);
    writeRanksSection(h, run, digest.ranks());
    writeCollectivesSection(h, digest);
    writeTelemetrySection(h, run);
    writeStallsSection(h, run);
    writeEventsSection(h, run);
    h += QStringLiteral("<p style='color:#888'>Generated by Trellis.</p></body></html>\n");
    return h;
}

QString renderHtmlReport(const RunData &run, const QList<CollectiveRow> &collectives, const QString &calibrationPath,
                         const ChartRenderer &chartRenderer, const QList<SpanRow> &spans, const TimelineRenderer &timelineRenderer)
{
    return renderHtmlReport(run, digestOf(run, collectives), calibrationPath, chartRenderer, spans, timelineRenderer);
}

} // namespace trellis::launcher
