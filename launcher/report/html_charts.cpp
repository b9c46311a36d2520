// See html_charts.h.
#include "launcher/report/html_charts.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace trellis::launcher {
namespace {

const char *const kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

QString esc(const QString &s) { return s.toHtmlEscaped(); }

QString fmt(double v)
{
    if (std::abs(v) >= 10000)
        return QString::number(v, 'g', 4);
    return QString::number(v, 'g', 5);
}

// Where a line chart draws: the plot area inside its margins, and the data's range made round.
struct ChartFrame {
    double left = 64, right = 110, top = 30, bottom = 44;
    double width = 0, height = 0, plotW = 0, plotH = 0;
    double xMin = std::numeric_limits<double>::max(), xMax = std::numeric_limits<double>::lowest();
    double yMin = std::numeric_limits<double>::max(), yMax = std::numeric_limits<double>::lowest();
    double xStep = 1, yStep = 1;
    double x(double v) const { return left + (v - xMin) / (xMax - xMin) * plotW; }
    double y(double v) const { return top + (1.0 - (v - yMin) / (yMax - yMin)) * plotH; }
    bool empty() const { return xMin > xMax; }
};

// The frame around every finite point of the series, its y range widened to whole ticks.
ChartFrame frameOf(const QList<ChartSeries> &series, int width, int height)
{
    ChartFrame f;
    f.width = width;
    f.height = height;
    f.plotW = width - f.left - f.right;
    f.plotH = height - f.top - f.bottom;
    for (const auto &s : series)
        for (const auto &p : s.points) {
            if (!std::isfinite(p.y()))
                continue;
            f.xMin = std::min(f.xMin, p.x());
            f.xMax = std::max(f.xMax, p.x());
            f.yMin = std::min(f.yMin, p.y());
            f.yMax = std::max(f.yMax, p.y());
        }
    if (f.empty())
        return f;
    if (f.xMax == f.xMin)
        f.xMax = f.xMin + 1;
    if (f.yMax == f.yMin) {
        f.yMax += std::max(1e-9, std::abs(f.yMax) * 0.05);
        f.yMin -= std::max(1e-9, std::abs(f.yMin) * 0.05);
    }
    f.yStep = niceStep(f.yMax - f.yMin, 5);
    f.yMin = std::floor(f.yMin / f.yStep) * f.yStep;
    f.yMax = std::ceil(f.yMax / f.yStep) * f.yStep;
    f.xStep = niceStep(f.xMax - f.xMin, 6);
    return f;
}

// Grid lines and tick labels on both axes, the plot's border and the axis labels.
QString axes(const ChartFrame &f, const QString &xLabel, const QString &yLabel)
{
    QString svg;
    for (double y = f.yMin; y <= f.yMax + f.yStep * 0.5; y += f.yStep) {
        svg += QStringLiteral("<line x1='%1' x2='%2' y1='%3' y2='%3' stroke='#e5e5e5'/>")
                   .arg(f.left)
                   .arg(f.left + f.plotW)
                   .arg(f.y(y), 0, 'f', 1);
        svg += QStringLiteral("<text x='%1' y='%2' text-anchor='end'>%3</text>")
                   .arg(f.left - 6)
                   .arg(f.y(y) + 4, 0, 'f', 1)
                   .arg(fmt(y));
    }
    for (double x = std::ceil(f.xMin / f.xStep) * f.xStep; x <= f.xMax + 1e-9; x += f.xStep) {
        svg += QStringLiteral("<line x1='%1' x2='%1' y1='%2' y2='%3' stroke='#f0f0f0'/>")
                   .arg(f.x(x), 0, 'f', 1)
                   .arg(f.top)
                   .arg(f.top + f.plotH);
        svg += QStringLiteral("<text x='%1' y='%2' text-anchor='middle'>%3</text>")
                   .arg(f.x(x), 0, 'f', 1)
                   .arg(f.top + f.plotH + 16)
                   .arg(fmt(x));
    }
    svg += QStringLiteral("<rect x='%1' y='%2' width='%3' height='%4' fill='none' stroke='#888'/>")
               .arg(f.left)
               .arg(f.top)
               .arg(f.plotW)
               .arg(f.plotH);
    svg += QStringLiteral("<text x='%1' y='%2' text-anchor='middle'>%3</text>")
               .arg(f.left + f.plotW / 2)
               .arg(f.height - 8)
               .arg(esc(xLabel));
    svg += QStringLiteral("<text transform='translate(14 %1) rotate(-90)' text-anchor='middle'>%2</text>")
               .arg(f.top + f.plotH / 2)
               .arg(esc(yLabel));
    return svg;
}

// Series i as a polyline (thinned to about 600 points) and its entry in the legend on the right.
QString seriesLine(const ChartFrame &f, const ChartSeries &s, int i)
{
    const QString colour = QString::fromLatin1(kPalette[i % 10]);
    const int stride = std::max<int>(1, static_cast<int>(s.points.size() / 600));
    QString points;
    for (int k = 0; k < s.points.size(); k += stride) {
        const QPointF &p = s.points[k];
        if (std::isfinite(p.y()))
            points += QStringLiteral("%1,%2 ").arg(f.x(p.x()), 0, 'f', 1).arg(f.y(p.y()), 0, 'f', 1);
    }
    QString svg = QStringLiteral("<polyline fill='none' stroke='%1' stroke-width='1.5' points='%2'/>").arg(colour, points);
    const double ly = f.top + 12 + i * 16;
    svg += QStringLiteral("<line x1='%1' x2='%2' y1='%3' y2='%3' stroke='%4' stroke-width='2'/>")
               .arg(f.left + f.plotW + 10)
               .arg(f.left + f.plotW + 28)
               .arg(ly)
               .arg(colour);
    svg += QStringLiteral("<text x='%1' y='%2'>%3</text>").arg(f.left + f.plotW + 32).arg(ly + 4).arg(esc(s.name));
    return svg;
}

} // namespace

double niceStep(double range, int targetTicks)
{
    if (!(range > 0))
        return 1;
    const double raw = range / targetTicks;
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double fraction = raw / magnitude;
    const double nice = fraction < 1.5 ? 1 : fraction < 3 ? 2 : fraction < 7 ? 5 : 10;
    return nice * magnitude;
}

QString svgLineChart(const QString &title, const QString &xLabel, const QString &yLabel,
                     const QList<ChartSeries> &series, int width, int height)
{
    const ChartFrame f = frameOf(series, width, height);
    QString svg = QStringLiteral("<svg xmlns='http://www.w3.org/2000/svg' width='%1' height='%2' viewBox='0 0 %1 %2' "
                                 "font-family='sans-serif' font-size='11'>")
                      .arg(width)
                      .arg(height);
    svg += QStringLiteral("<rect width='100%' height='100%' fill='white'/>");
    svg += QStringLiteral("<text x='%1' y='18' font-size='13' font-weight='bold'>%2</text>").arg(f.left).arg(esc(title));
    if (f.empty())
        return svg + QStringLiteral("<text x='%1' y='%2' fill='#888'>no data</text></svg>").arg(width / 2 - 20).arg(height / 2);
    svg += axes(f, xLabel, yLabel);
    for (int i = 0; i < series.size(); ++i)
        svg += seriesLine(f, series[i], i);
    return svg + QStringLiteral("</svg>");
}

QString svgTimeline(const telemetry::TimelineView &v, int width)
{
    const int label = 170, laneH = 20, titleH = 34;
    int height = 10;
    bool predictedSeen = false, measuredSeen = false;
    for (const auto &lane : v.lanes) {
        bool &seen = lane.predicted ? predictedSeen : measuredSeen;
        if (!seen)
            height += titleH;
        seen = true;
        height += laneH;
    }
    if (v.lanes.empty())
        return QStringLiteral("<p>%1</p>").arg(esc(v.note));
    QString svg = QStringLiteral("<svg xmlns='http://www.w3.org/2000/svg' width='%1' height='%2' font-family='sans-serif' "
                                 "font-size='11'><rect width='100%' height='100%' fill='white'/>")
                      .arg(width)
                      .arg(height + 6);
    const double plotW = width - label - 12;
    int y = 10;
    predictedSeen = measuredSeen = false;
    for (const auto &lane : v.lanes) {
        bool &seen = lane.predicted ? predictedSeen : measuredSeen;
        const double span = lane.predicted ? v.predictedMs : v.measuredMs;
        const double scale = span > 0 ? plotW / span : 0;
        if (!seen) {
            const double bubble = lane.predicted ? v.predictedBubble : v.measuredBubble;
            const QString title = lane.predicted ? QStringLiteral("Predicted by the schedule simulator: %1 ms, bubble %2%")
                                                       .arg(fmt(span), QString::number(bubble * 100, 'f', 1))
                                                 : QStringLiteral("Measured, step %1: %2 ms, bubble %3%")
                                                       .arg(QString::number(v.step), fmt(span), QString::number(bubble * 100, 'f', 1));
            svg += QStringLiteral("<text x='4' y='%1' font-weight='bold' font-size='12'>%2</text>").arg(y + 14).arg(esc(title));
            if (span > 0) {
                const double tick = niceStep(span, 8);
                for (double t = 0; t <= span + 1e-9; t += tick)
                    svg += QStringLiteral("<text x='%1' y='%2' fill='#888' font-size='9'>%3</text>")
                               .arg(label + t * scale, 0, 'f', 1)
                               .arg(y + titleH - 4)
                               .arg(QString::number(t, 'g', 4));
            }
            y += titleH;
        }
        seen = true;
        svg += QStringLiteral("<text x='4' y='%1'>%2 (%3%)</text>")
                   .arg(y + 13)
                   .arg(esc(lane.label))
                   .arg(lane.bubbleFraction * 100, 0, 'f', 0);
        svg += QStringLiteral("<rect x='%1' y='%2' width='%3' height='%4' fill='#f4f4f4'/>").arg(label).arg(y).arg(plotW, 0, 'f', 1).arg(laneH - 4);
        for (const auto &b : lane.bars) {
            const char *colour = telemetry::timelineColour(b.kind);
            const double h = b.compute ? laneH - 4 : (laneH - 4) / 3.0;
            svg += QStringLiteral("<rect x='%1' y='%2' width='%3' height='%4' fill='%5'><title>%6 micro-batch %7, %8–%9 ms</title></rect>")
                       .arg(label + b.startMs * scale, 0, 'f', 2)
                       .arg(y + (laneH - 4) - h, 0, 'f', 1)
                       .arg(std::max(0.8, (b.endMs - b.startMs) * scale), 0, 'f', 2)
                       .arg(h, 0, 'f', 1)
                       .arg(QString::fromLatin1(colour), esc(b.kind))
                       .arg(b.microBatch)
                       .arg(b.startMs, 0, 'f', 3)
                       .arg(b.endMs, 0, 'f', 3);
        }
        y += laneH;
    }
    svg += QStringLiteral("</svg>");
    return svg;
}

} // namespace trellis::launcher
