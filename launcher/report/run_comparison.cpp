// See run_comparison.h.
#include "launcher/report/run_comparison.h"

#include "launcher/report/html_report.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>

#include <algorithm>
#include <map>

namespace trellis::launcher {
namespace {

void flatten(const QJsonValue &v, const QString &prefix, QMap<QString, QString> &out)
{
    if (v.isObject()) {
        const QJsonObject o = v.toObject();
        for (auto it = o.begin(); it != o.end(); ++it)
            flatten(it.value(), prefix.isEmpty() ? it.key() : prefix + QLatin1Char('.') + it.key(), out);
    } else if (v.isArray()) {
        out[prefix] = QString::fromUtf8(QJsonDocument(v.toArray()).toJson(QJsonDocument::Compact));
    } else if (v.isString()) {
        out[prefix] = v.toString();
    } else if (v.isBool()) {
        out[prefix] = v.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    } else if (v.isDouble()) {
        out[prefix] = QString::number(v.toDouble(), 'g', 10);
    } else if (v.isNull()) {
        out[prefix] = QStringLiteral("null");
    }
}

QString num(double v, int decimals = 1) { return QString::number(v, 'f', decimals); }

} // namespace

RunFigures figuresOf(const RunData &run, const RunDigest &digest)
{
    RunFigures f;
    f.runId = run.run.runId;
    f.name = run.run.name;
    f.status = run.run.status;
    f.worldSize = run.run.worldSize;
    f.steps = run.run.stepsDone;
    std::vector<double> tokens, slowest, compute, exposed, bubble, idle;
    for (const DigestStep &d : digest.steps()) {
        tokens.push_back(d.tokensPerS);
        slowest.push_back(d.slowestMs);
        compute.push_back(d.computeMs);
        exposed.push_back(d.exposedMs);
        bubble.push_back(d.bubbleMs);
        idle.push_back(d.idleMs);
        if (d.haveRank0)
            f.finalLoss = d.loss0;
    }
    f.tokensPerS = median(tokens);
    f.stepMs = median(slowest);
    f.computeMs = median(compute);
    f.exposedCommMs = median(exposed);
    f.bubbleMs = median(bubble);
    f.idleMs = median(idle);
    f.peakRss = digest.peakRss();
    f.busGbps = digest.busGbps();
    return f;
}

RunFigures figuresOf(const RunData &run, const QList<CollectiveRow> &collectives) { return figuresOf(run, digestOf(run, collectives)); }

QList<PlanDifference> planDifferences(const QList<RunData> &runs)
{
    QList<QMap<QString, QString>> flat;
    QStringList fields;
    for (const RunData &r : runs) {
        QMap<QString, QString> m;
        flatten(QJsonDocument::fromJson(r.planJson.toUtf8()).object(), {}, m);
        for (auto it = m.begin(); it != m.end(); ++it)
            if (!fields.contains(it.key()))
                fields << it.key();
        flat << m;
    }
    std::sort(fields.begin(), fields.end());
    QList<PlanDifference> out;
    for (const QString &field : fields) {
        QStringList values;
        for (const auto &m : flat)
            values << m.value(field, QStringLiteral("—"));
        QStringList distinct = values;
        distinct.removeDuplicates();
        if (distinct.size() > 1)
            out.append({field, values});
    }
    return out;
}

QString compareText(const QList<RunFigures> &figures, const QList<PlanDifference> &differences)
{
    QString t;
    const QStringList labels{QStringLiteral("run"), QStringLiteral("plan"), QStringLiteral("status"), QStringLiteral("ranks"),
                             QStringLiteral("steps"), QStringLiteral("final loss"), QStringLiteral("tokens/s"),
                             QStringLiteral("step ms (slowest rank)"), QStringLiteral("compute ms"),
                             QStringLiteral("exposed comm ms"), QStringLiteral("bubble ms"), QStringLiteral("idle ms"),
                             QStringLiteral("bus GB/s"), QStringLiteral("peak RSS MiB")};
    QList<QStringList> columns;
    for (const RunFigures &f : figures)
        columns << QStringList{f.runId, f.name, f.status, QString::number(f.worldSize), QString::number(f.steps),
                               num(f.finalLoss, 4), num(f.tokensPerS, 0), num(f.stepMs), num(f.computeMs), num(f.exposedCommMs),
                               num(f.bubbleMs), num(f.idleMs), num(f.busGbps, 2), QString::number(f.peakRss >> 20)};
    int labelWidth = 0;
    for (const QString &l : labels)
        labelWidth = std::max(labelWidth, static_cast<int>(l.size()));
    QList<int> widths;
    for (const QStringList &c : columns) {
        int w = 0;
        for (const QString &v : c)
            w = std::max(w, static_cast<int>(v.size()));
        widths << w;
    }
    for (int row = 0; row < labels.size(); ++row) {
        t += labels[row].leftJustified(labelWidth + 2);
        for (int c = 0; c < columns.size(); ++c)
            t += columns[c][row].rightJustified(widths[c] + 2);
        t += QLatin1Char('\n');
    }
    if (differences.isEmpty()) {
        t += QStringLiteral("\nthe plans are the same\n");
    } else {
        t += QStringLiteral("\nplan differences:\n");
        for (const PlanDifference &d : differences)
            t += QStringLiteral("  %1: %2\n").arg(d.field, d.values.join(QStringLiteral(" | ")));
    }
    return t;
}

Comparison compareRuns(const QList<RunData> &runs, const QList<RunDigest> &digests)
{
    Comparison c;
    for (qsizetype i = 0; i < runs.size() && i < digests.size(); ++i) {
        const RunData &r = runs[i];
        c.figures << figuresOf(r, digests[i]);
        OverlaySeries loss{r.run.runId, {}, {}}, tokens{r.run.runId, {}, {}};
        for (const DigestStep &d : digests[i].steps()) {
            if (d.haveRank0) {
                loss.steps << static_cast<double>(d.step);
                loss.values << d.loss0;
            }
            tokens.steps << static_cast<double>(d.step);
            tokens.values << d.tokensPerS;
        }
        c.loss << loss;
        c.tokensPerS << tokens;
    }
    c.differences = planDifferences(runs);
    return c;
}

Comparison compareRuns(const QList<RunData> &runs, const QList<QList<CollectiveRow>> &collectives)
{
    QList<RunDigest> digests;
    for (qsizetype i = 0; i < runs.size(); ++i)
        digests << digestOf(runs[i], i < collectives.size() ? collectives[i] : QList<CollectiveRow>{});
    return compareRuns(runs, digests);
}

QString renderComparisonHtml(const QList<RunData> &runs, const QList<RunDigest> &digests, const QList<RunFigures> &figures,
                             const QList<PlanDifference> &differences, const ChartRenderer &chart)
{
    auto svgLineChart = [&](const QString &title, const QString &xLabel, const QString &yLabel, const QList<ChartSeries> &series) {
        return chart ? chart(title, xLabel, yLabel, series) : trellis::launcher::svgLineChart(title, xLabel, yLabel, series);
    };
    auto esc = [](const QString &s) { return s.toHtmlEscaped(); };
    QString h = QStringLiteral("<!DOCTYPE html><html><head><meta charset='utf-8'><title>Trellis comparison</title><style>"
                               "body{font-family:sans-serif;margin:24px;color:#222;max-width:1200px}"
                               "table{border-collapse:collapse;margin:8px 0 20px}td,th{border:1px solid #ccc;padding:4px 10px;"
                               "text-align:right}th{background:#f3f3f3}td.l,th.l{text-align:left}"
                               ".charts svg{margin:6px 12px 6px 0;border:1px solid #ddd}</style></head><body>");
    h += QStringLiteral("<h1>Trellis: %1 runs compared</h1>").arg(runs.size());
    h += QStringLiteral("<h2>Summary</h2><table><tr><th class='l'></th>");
    for (const RunFigures &f : figures)
        h += QStringLiteral("<th>%1</th>").arg(esc(f.runId));
    h += QStringLiteral("</tr>");
    auto row = [&](const QString &label, auto value) {
        h += QStringLiteral("<tr><th class='l'>%1</th>").arg(esc(label));
        for (const RunFigures &f : figures)
            h += QStringLiteral("<td>%1</td>").arg(esc(value(f)));
        h += QStringLiteral("</tr>");
    };
    row(QStringLiteral("plan"), [](const RunFigures &f) { return f.name; });
    row(QStringLiteral("status"), [](const RunFigures &f) { return f.status; });
    row(QStringLiteral("ranks"), [](const RunFigures &f) { return QString::number(f.worldSize); });
    row(QStringLiteral("steps"), [](const RunFigures &f) { return QString::number(f.steps); });
    row(QStringLiteral("final loss"), [](const RunFigures &f) { return num(f.finalLoss, 4); });
    row(QStringLiteral("tokens/s (job, median step)"), [](const RunFigures &f) { return num(f.tokensPerS, 0); });
    row(QStringLiteral("step ms (slowest rank)"), [](const RunFigures &f) { return num(f.stepMs); });
    row(QStringLiteral("compute ms"), [](const RunFigures &f) { return num(f.computeMs); });
    row(QStringLiteral("exposed communication ms"), [](const RunFigures &f) { return num(f.exposedCommMs); });
    row(QStringLiteral("pipeline bubble ms"), [](const RunFigures &f) { return num(f.bubbleMs); });
    row(QStringLiteral("idle ms"), [](const RunFigures &f) { return num(f.idleMs); });
    row(QStringLiteral("bus bandwidth GB/s"), [](const RunFigures &f) { return num(f.busGbps, 2); });
    row(QStringLiteral("peak RSS MiB (largest rank)"), [](const RunFigures &f) { return QString::number(f.peakRss >> 20); });
    h += QStringLiteral("</table><h2>Plan differences</h2>");
    if (differences.isEmpty()) {
        h += QStringLiteral("<p>The plans are the same.</p>");
    } else {
        h += QStringLiteral("<table><tr><th class='l'>field</th>");
        for (const RunFigures &f : figures)
            h += QStringLiteral("<th>%1</th>").arg(esc(f.runId));
        h += QStringLiteral("</tr>");
        for (const PlanDifference &d : differences) {
            h += QStringLiteral("<tr><th class='l'>%1</th>").arg(esc(d.field));
            for (const QString &v : d.values)
                h += QStringLiteral("<td class='l'>%1</td>").arg(esc(v));
            h += QStringLiteral("</tr>");
        }
        h += QStringLiteral("</table>");
    }
    QList<ChartSeries> loss, tokens, stepMs;
    for (qsizetype i = 0; i < runs.size() && i < digests.size(); ++i) {
        const QString &id = runs[i].run.runId;
        ChartSeries l{id, {}}, t{id, {}}, m{id, {}};
        for (const DigestStep &d : digests[i].steps()) {
            if (d.haveRank0)
                l.points.append(QPointF(d.step, d.loss0));
            t.points.append(QPointF(d.step, d.tokensPerS));
            m.points.append(QPointF(d.step, d.slowestMs));
        }
        loss << l;
        tokens << t;
        stepMs << m;
    }
    h += QStringLiteral("<h2>Curves by step</h2><div class='charts'>");
    h += svgLineChart(QStringLiteral("Loss (rank 0)"), QStringLiteral("step"), QStringLiteral("loss"), loss);
    h += svgLineChart(QStringLiteral("Throughput (job)"), QStringLiteral("step"), QStringLiteral("tokens/s"), tokens);
    h += svgLineChart(QStringLiteral("Step time (slowest rank)"), QStringLiteral("step"), QStringLiteral("ms"), stepMs);
    h += QStringLiteral("</div></body></html>");
    return h;
}

} // namespace trellis::launcher
