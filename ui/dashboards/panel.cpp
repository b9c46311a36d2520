// See panel.h.
#include "ui/dashboards/panel.h"

#include <qcustomplot.h>

#include <algorithm>

namespace trellis::ui::dashboards {

QString metricLabel(launcher::telemetry::Metric metric)
{
    using launcher::telemetry::Metric;
    switch (metric) {
    case Metric::Loss: return Panel::tr("loss");
    case Metric::GradNorm: return Panel::tr("grad norm");
    case Metric::Lr: return Panel::tr("learning rate");
    case Metric::TokensPerS: return Panel::tr("tokens/s");
    case Metric::StepMs: return Panel::tr("step ms");
    case Metric::ComputeMs: return Panel::tr("compute ms");
    case Metric::CommMs: return Panel::tr("communication ms");
    case Metric::CommExposedMs: return Panel::tr("exposed communication ms");
    case Metric::BubbleMs: return Panel::tr("bubble ms");
    case Metric::IdleMs: return Panel::tr("idle ms");
    case Metric::MemParameters: return Panel::tr("parameter bytes");
    case Metric::MemGradients: return Panel::tr("gradient bytes");
    case Metric::MemOptimizer: return Panel::tr("optimizer bytes");
    case Metric::MemActivations: return Panel::tr("activation bytes");
    case Metric::MemComm: return Panel::tr("communication buffer bytes");
    case Metric::PeakRss: return Panel::tr("peak RSS bytes");
    case Metric::MemMaster: return Panel::tr("master weight bytes");
    case Metric::LossScale: return Panel::tr("loss scale (fp16)");
    case Metric::DpBytes: return Panel::tr("dp MB all-reduced");
    case Metric::CheckpointMs: return Panel::tr("checkpoint ms (between steps)");
    case Metric::Count: break;
    }
    return QString::fromLatin1(launcher::telemetry::metricName(metric));
}

QString dpTrafficSummary(const launcher::telemetry::DashboardSnapshot::DpTrafficView &t)
{
    if (t.denseBytes <= 0)
        return {};
    const double mb = static_cast<double>(t.bytes) / 1e6, denseMb = static_cast<double>(t.denseBytes) / 1e6;
    const QString outer = t.outerSteps > 0 ? Panel::tr("%n outer step(s); ", nullptr, static_cast<int>(t.outerSteps)) : QString();
    const QString saving = mb > 0 ? Panel::tr("%1× fewer").arg(denseMb / mb, 0, 'f', 1) : Panel::tr("none sent yet");
    return Panel::tr("%1%2 MB all-reduced a rank instead of %3 MB every step would (%4)")
        .arg(outer)
        .arg(mb, 0, 'f', 1)
        .arg(denseMb, 0, 'f', 1)
        .arg(saving);
}

using launcher::telemetry::MetricView;

QColor rankColour(int rank)
{
    static const QColor palette[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
                                     QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                                     QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f)};
    return palette[((rank % 8) + 8) % 8];
}

namespace {

// As many legend entries side by side as the plot's width holds (the widest sets the column
// width), the rest wrapped onto further rows. Called before every replot: a dozen entries at most.
void fitLegend(QCustomPlot *plot)
{
    QCPLegend *legend = plot->legend;
    const int count = legend->itemCount();
    if (count == 0)
        return;
    int widest = 1;
    for (int i = 0; i < count; ++i)
        if (QCPAbstractLegendItem *item = legend->item(i))
            widest = std::max(widest, item->minimumOuterSizeHint().width());
    const int available = plot->width() - legend->margins().left() - legend->margins().right();
    const int columns = std::clamp((available + legend->columnSpacing()) / (widest + legend->columnSpacing()), 1, count);
    if (legend->wrap() != columns) {
        legend->setWrap(columns);
        legend->setFillOrder(legend->fillOrder(), true); // rearranges the entries to the new wrap
    }
}

} // namespace

QCustomPlot *makePlot(const QString &title, const QString &yLabel, QWidget *parent)
{
    auto *plot = new QCustomPlot(parent);
    plot->plotLayout()->insertRow(0);
    if (!title.isEmpty()) // else the frame's title bar names the chart, and the row stays empty
        plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, title, QFont(QStringLiteral("sans"), 10, QFont::Bold)));
    // The axes take every pixel the heading and the legend leave: a new row's stretch is 1, which
    // gave an empty heading half of the height and squeezed the axes into the rest.
    plot->plotLayout()->setRowStretchFactor(0, 0.001);
    plot->xAxis->setLabel(QObject::tr("step"));
    plot->yAxis->setLabel(yLabel);
    // The legend in a row of its own under the axes, its entries side by side: inside the axes it
    // hid the lines it named.
    plot->legend->setVisible(true);
    plot->legend->setFont(QFont(QStringLiteral("sans"), 8));
    plot->legend->setBorderPen(Qt::NoPen);
    plot->legend->setBrush(Qt::NoBrush);
    plot->legend->setIconSize(18, 8);
    plot->legend->setRowSpacing(0);
    plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    plot->plotLayout()->addElement(2, 0, plot->legend);
    plot->plotLayout()->setRowStretchFactor(2, 0.001);
    QObject::connect(plot, &QCustomPlot::beforeReplot, plot, [plot] { fitLegend(plot); });
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->setMouseTracking(true); // hovering moves the shared step cursor
    plot->setMinimumHeight(160);
    plot->setNoAntialiasingOnDrag(true);
    plot->setPlottingHint(QCP::phFastPolylines, true); // lines of 1.5 px drawn as polylines, not segment by segment
    if (QCPLayer *overlay = plot->layer(QStringLiteral("overlay")))
        overlay->setMode(QCPLayer::lmLogical);
    applyPalette(plot);
    return plot;
}

void applyPalette(QCustomPlot *plot)
{
    const QPalette palette = plot->palette();
    const QColor text = palette.color(QPalette::WindowText), base = palette.color(QPalette::Base);
    const bool dark = base.lightness() < 128;
    plot->setBackground(base);
    for (QCPAxis *axis : {plot->xAxis, plot->yAxis, plot->xAxis2, plot->yAxis2}) {
        axis->setBasePen(QPen(text, 1));
        axis->setTickPen(QPen(text, 1));
        axis->setSubTickPen(QPen(text, 1));
        axis->setTickLabelColor(text);
        axis->setLabelColor(text);
        axis->grid()->setPen(QPen(dark ? QColor(0x50, 0x50, 0x50) : QColor(0xdc, 0xdc, 0xdc), 1, Qt::DotLine));
        axis->grid()->setZeroLinePen(Qt::NoPen);
    }
    plot->legend->setTextColor(text);
    for (int i = 0; i < plot->plotLayout()->elementCount(); ++i)
        if (auto *title = qobject_cast<QCPTextElement *>(plot->plotLayout()->elementAt(i)))
            title->setTextColor(text);
}

void showCursorOn(QCustomPlot *plot, double step)
{
    QCPItemStraightLine *line = nullptr;
    for (int i = 0; i < plot->itemCount() && !line; ++i)
        if (plot->item(i)->objectName() == QLatin1String("stepCursor"))
            line = qobject_cast<QCPItemStraightLine *>(plot->item(i));
    if (!line) {
        if (step < 0)
            return;
        line = new QCPItemStraightLine(plot);
        line->setObjectName(QStringLiteral("stepCursor"));
        line->setLayer(QStringLiteral("overlay")); // drawn with the chart: no paint buffer of its own to composite every frame
        line->setPen(QPen(plot->palette().color(QPalette::WindowText), 1, Qt::DotLine));
        line->setSelectable(false);
    }
    line->setVisible(step >= 0);
    line->point1->setCoords(step, 0);
    line->point2->setCoords(step, 1);
    plot->replot(QCustomPlot::rpQueuedReplot); // hovering: at most one replot per chart per event-loop pass
}

void drawMetric(QCustomPlot *plot, const MetricView &view, const QString &name)
{
    plot->clearGraphs();
    if (view.perRank) {
        for (const auto &line : view.lines) {
            QCPGraph *g = plot->addGraph();
            g->setName(QObject::tr("rank %1").arg(line.rank));
            g->setPen(QPen(rankColour(line.rank), 1.5));
            g->setData(QVector<double>(line.steps.begin(), line.steps.end()),
                       QVector<double>(line.values.begin(), line.values.end()), true);
        }
    } else {
        QVector<double> x, lo, mid, hi;
        for (const auto &p : view.band) {
            x << static_cast<double>(p.step);
            lo << p.min;
            mid << p.median;
            hi << p.max;
        }
        QCPGraph *maxG = plot->addGraph();
        maxG->setName(QObject::tr("min – max"));
        maxG->setPen(QPen(QColor(0xd6, 0x27, 0x28, 160), 1));
        maxG->setData(x, hi, true);
        QCPGraph *minG = plot->addGraph();
        minG->setName(QObject::tr("min"));
        minG->setPen(QPen(QColor(0x1f, 0x77, 0xb4, 160), 1));
        minG->setData(x, lo, true);
        minG->removeFromLegend(); // the band has one entry
        maxG->setBrush(QBrush(QColor(0x1f, 0x77, 0xb4, 40)));
        maxG->setChannelFillGraph(minG);
        QCPGraph *medianG = plot->addGraph();
        int ranks = 0;
        for (const auto &p : view.band)
            ranks = std::max(ranks, p.ranks);
        medianG->setName(QObject::tr("median of %1 ranks").arg(ranks));
        medianG->setPen(QPen(plot->palette().color(QPalette::WindowText), 1.5));
        medianG->setData(x, mid, true);
        for (const auto &o : view.outliers) {
            if (std::abs(o.deviation) < 0.05)
                continue;
            QCPGraph *g = plot->addGraph(); // a legend entry naming the outlier
            g->setName(QObject::tr("rank %1: %2%3%").arg(o.rank).arg(o.deviation >= 0 ? QStringLiteral("+") : QString())
                           .arg(o.deviation * 100, 0, 'f', 0));
            g->setPen(QPen(Qt::NoPen));
        }
    }
    plot->yAxis->setLabel(name);
    plot->rescaleAxes();
    // 5% of room above and below: a line along the range's edge (the band's max, a flat
    // median) would hide in the axis.
    const QCPRange range = plot->yAxis->range();
    const double pad = 0.05 * (range.size() > 0 ? range.size() : std::max(1e-9, std::abs(range.center())));
    plot->yAxis->setRange(range.lower - pad, range.upper + pad);
    plot->replot(QCustomPlot::rpQueuedReplot);
}

void markStepOn(QCustomPlot *plot, qint64 step)
{
    for (int i = plot->itemCount() - 1; i >= 0; --i)
        if (plot->item(i)->objectName() == QLatin1String("stepMarker"))
            plot->removeItem(i);
    auto *line = new QCPItemStraightLine(plot);
    line->setObjectName(QStringLiteral("stepMarker"));
    line->setPen(QPen(QColor(0x99, 0x00, 0x00), 1, Qt::DashLine));
    line->point1->setCoords(static_cast<double>(step), 0);
    line->point2->setCoords(static_cast<double>(step), 1);
    plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace trellis::ui::dashboards
