// See pdf_report.h.
#include "launcher/report/pdf_report.h"

#include "launcher/report/html_report.h"
#include "launcher/report/run_comparison.h"

#include <QFile>
#include <QGuiApplication>
#include <QImage>
#include <QPageSize>
#include <QPainter>
#include <QPainterPath>
#include <QPdfWriter>
#include <QSaveFile>
#include <QTextDocument>
#include <QUrl>

#include <algorithm>
#include <cmath>

namespace trellis::launcher {
namespace {

QColor seriesColour(int i)
{
    static const QColor palette[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
                                     QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                                     QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f)};
    return palette[i % 8];
}

// A line chart as an image: title, axes with ticks, a line per series (at most 8 named in the legend).
QImage drawChart(const QString &title, const QString &xLabel, const QString &yLabel, const QList<ChartSeries> &series)
{
    const int w = 1200, h = 600; // drawn at twice the size it is shown
    QImage image(w, h, QImage::Format_RGB32);
    image.fill(Qt::white);
    QPainter p(&image);
    p.setRenderHint(QPainter::Antialiasing);
    QFont font(QStringLiteral("DejaVu Sans"));
    font.setPixelSize(22);
    p.setFont(font);
    const QRect plot(110, 60, w - 150, h - 150);
    double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
    for (const auto &s : series)
        for (const QPointF &pt : s.points) {
            x0 = std::min(x0, pt.x());
            x1 = std::max(x1, pt.x());
            y0 = std::min(y0, pt.y());
            y1 = std::max(y1, pt.y());
        }
    QFont bold = font;
    bold.setBold(true);
    p.setFont(bold);
    p.drawText(QRect(0, 10, w, 40), Qt::AlignCenter, title);
    p.setFont(font);
    if (x0 > x1) {
        p.drawText(plot, Qt::AlignCenter, QObject::tr("no data"));
        return image;
    }
    if (x1 == x0)
        x1 = x0 + 1;
    if (y1 == y0)
        y1 = y0 + 1;
    const double pad = (y1 - y0) * 0.05;
    y0 -= pad;
    y1 += pad;
    auto X = [&](double x) { return plot.left() + (x - x0) / (x1 - x0) * plot.width(); };
    auto Y = [&](double y) { return plot.bottom() - (y - y0) / (y1 - y0) * plot.height(); };
    p.setPen(QPen(QColor(0xdd, 0xdd, 0xdd), 1));
    const double xs = niceStep(x1 - x0, 6), ys = niceStep(y1 - y0, 5);
    for (double x = std::ceil(x0 / xs) * xs; x <= x1; x += xs) {
        p.setPen(QPen(QColor(0xdd, 0xdd, 0xdd), 1));
        p.drawLine(QPointF(X(x), plot.top()), QPointF(X(x), plot.bottom()));
        p.setPen(Qt::black);
        p.drawText(QRectF(X(x) - 60, plot.bottom() + 6, 120, 30), Qt::AlignHCenter | Qt::AlignTop, QString::number(x, 'g', 6));
    }
    for (double y = std::ceil(y0 / ys) * ys; y <= y1; y += ys) {
        p.setPen(QPen(QColor(0xdd, 0xdd, 0xdd), 1));
        p.drawLine(QPointF(plot.left(), Y(y)), QPointF(plot.right(), Y(y)));
        p.setPen(Qt::black);
        p.drawText(QRectF(0, Y(y) - 15, plot.left() - 8, 30), Qt::AlignRight | Qt::AlignVCenter, QString::number(y, 'g', 5));
    }
    p.setPen(QPen(Qt::black, 2));
    p.drawRect(plot);
    p.drawText(QRect(plot.left(), h - 45, plot.width(), 40), Qt::AlignCenter, xLabel);
    p.save();
    p.translate(20, plot.center().y());
    p.rotate(-90);
    p.drawText(QRect(-200, -10, 400, 40), Qt::AlignCenter, yLabel);
    p.restore();
    int legend = 0;
    for (int i = 0; i < series.size(); ++i) {
        const auto &s = series[i];
        if (s.points.isEmpty())
            continue;
        QPainterPath path(QPointF(X(s.points.first().x()), Y(s.points.first().y())));
        for (const QPointF &pt : s.points)
            path.lineTo(X(pt.x()), Y(pt.y()));
        p.setPen(QPen(seriesColour(i), 3));
        p.drawPath(path);
        if (legend < 8) {
            const int ly = plot.top() + 12 + legend * 30;
            p.drawLine(plot.right() - 330, ly + 10, plot.right() - 300, ly + 10);
            p.setPen(Qt::black);
            p.drawText(QRect(plot.right() - 292, ly - 4, 290, 30), Qt::AlignLeft | Qt::AlignVCenter, s.name);
            ++legend;
        }
    }
    return image;
}

// The step timeline as an image: a section per kind (measured, predicted), a lane per stage.
QImage drawTimeline(const telemetry::TimelineView &v)
{
    const int w = 1800, label = 330, laneH = 40, titleH = 70;
    int h = 20;
    int sections = 0;
    for (std::size_t i = 0; i < v.lanes.size(); ++i)
        if (i == 0 || v.lanes[i].predicted != v.lanes[i - 1].predicted)
            ++sections;
    h += sections * titleH + static_cast<int>(v.lanes.size()) * laneH;
    QImage image(w, std::max(h, 80), QImage::Format_RGB32);
    image.fill(Qt::white);
    QPainter p(&image);
    QFont font(QStringLiteral("DejaVu Sans"));
    font.setPixelSize(24);
    p.setFont(font);
    if (v.lanes.empty()) {
        p.drawText(image.rect(), Qt::AlignCenter, v.note);
        return image;
    }
    const double plotW = w - label - 20;
    int y = 10;
    for (std::size_t i = 0; i < v.lanes.size(); ++i) {
        const auto &lane = v.lanes[i];
        const double span = lane.predicted ? v.predictedMs : v.measuredMs;
        const double scale = span > 0 ? plotW / span : 0;
        if (i == 0 || lane.predicted != v.lanes[i - 1].predicted) {
            QFont bold = font;
            bold.setBold(true);
            p.setFont(bold);
            p.setPen(Qt::black);
            const QString ms = QString::number(span, 'f', span < 10 ? 2 : 1);
            const QString pct = QString::number((lane.predicted ? v.predictedBubble : v.measuredBubble) * 100, 'f', 1);
            p.drawText(QPointF(6, y + 28), lane.predicted ? QObject::tr("Predicted by the schedule simulator: %1 ms, bubble %2%").arg(ms, pct)
                                                          : QObject::tr("Measured, step %1: %2 ms, bubble %3%").arg(QString::number(v.step), ms, pct));
            QFont small = font;
            small.setPixelSize(18);
            p.setFont(small);
            p.setPen(QColor(0x88, 0x88, 0x88));
            if (span > 0) {
                const double tick = niceStep(span, 8);
                for (double t = 0; t <= span + 1e-9; t += tick)
                    p.drawText(QPointF(label + t * scale, y + titleH - 8), QString::number(t, 'g', 4));
            }
            y += titleH;
        }
        p.setFont(font);
        p.setPen(Qt::black);
        p.drawText(QRectF(6, y, label - 12, laneH - 6), Qt::AlignVCenter | Qt::AlignLeft,
                   QStringLiteral("%1 (%2%)").arg(lane.label).arg(lane.bubbleFraction * 100, 0, 'f', 0));
        p.fillRect(QRectF(label, y, plotW, laneH - 6), QColor(0xf4, 0xf4, 0xf4));
        for (const auto &b : lane.bars) {
            const QColor colour(QLatin1String(telemetry::timelineColour(b.kind)));
            const double bh = b.compute ? laneH - 6 : (laneH - 6) / 3.0;
            p.fillRect(QRectF(label + b.startMs * scale, y + (laneH - 6) - bh, std::max(1.5, (b.endMs - b.startMs) * scale), bh), colour);
        }
        y += laneH;
    }
    return image;
}

} // namespace

namespace {

// Lays out the HTML the renderer builds (charts drawn as images it registers) and prints it.
QString printHtml(const QString &title, const QString &path,
                  const std::function<QString(const ChartRenderer &, const TimelineRenderer &)> &render)
{
    if (!qobject_cast<QGuiApplication *>(QCoreApplication::instance()))
        return QStringLiteral("a PDF report needs a QGuiApplication (trellis-cli makes one for report … --out FILE.pdf)");
    QList<QImage> charts;
    const QString html = render(
        [&](const QString &chartTitle, const QString &xLabel, const QString &yLabel, const QList<ChartSeries> &series) {
            charts << drawChart(chartTitle, xLabel, yLabel, series);
            return QStringLiteral("<p><img src='chart:%1' width='560'></p>").arg(charts.size() - 1);
        },
        [&](const telemetry::TimelineView &timeline) {
            charts << drawTimeline(timeline);
            return QStringLiteral("<p><img src='chart:%1' width='600'></p>").arg(charts.size() - 1);
        });
    QTextDocument doc;
    for (int i = 0; i < charts.size(); ++i)
        doc.addResource(QTextDocument::ImageResource, QUrl(QStringLiteral("chart:%1").arg(i)), charts[i]);
    QFont font(QStringLiteral("DejaVu Sans"));
    font.setPointSizeF(8.5);
    doc.setDefaultFont(font);
    doc.setHtml(html);
    const QString temporary = path + QStringLiteral(".part");
    {
        QPdfWriter writer(temporary);
        writer.setPageSize(QPageSize(QPageSize::A4));
        writer.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
        writer.setTitle(title);
        writer.setCreator(QStringLiteral("Trellis"));
        doc.print(&writer);
    }
    QFile::remove(path);
    if (!QFile::rename(temporary, path)) {
        QFile::remove(temporary);
        return QStringLiteral("cannot write %1").arg(path);
    }
    return {};
}

} // namespace

QString writePdfReport(const RunData &run, const RunDigest &digest, const QString &calibrationPath, const QString &path,
                       const QList<SpanRow> &spans)
{
    return printHtml(QStringLiteral("Trellis run %1").arg(run.run.runId), path,
                     [&](const ChartRenderer &chart, const TimelineRenderer &timeline) {
                         return renderHtmlReport(run, digest, calibrationPath, chart, spans, timeline);
                     });
}

QString writeComparisonPdf(const QList<RunData> &runs, const QList<RunDigest> &digests, const QList<RunFigures> &figures,
                           const QList<PlanDifference> &differences, const QString &path)
{
    return printHtml(QStringLiteral("Trellis: %1 runs compared").arg(runs.size()), path,
                     [&](const ChartRenderer &chart, const TimelineRenderer &) {
                         return renderComparisonHtml(runs, digests, figures, differences, chart);
                     });
}

} // namespace trellis::launcher
