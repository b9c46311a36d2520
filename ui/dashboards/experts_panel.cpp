// See experts_panel.h.
#include "ui/dashboards/experts_panel.h"

#include <qcustomplot.h>

#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>

namespace trellis::ui::dashboards {

ExpertsPanel::ExpertsPanel(QWidget *parent)
    : Panel(parent), m_summary(new QLabel(this)), m_series(makePlot(tr("Expert load per step"), tr("busiest expert / mean"), this)),
      m_map(makePlot(tr("Share of each layer's tokens"), tr("layer"), this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_summary);
    layout->addWidget(m_series, 1);
    layout->addWidget(m_map, 1);
    m_summary->setWordWrap(true);
    // No legend: each axis names its line, in the line's colour.
    m_series->legend->setVisible(false);
    m_series->yAxis->setLabelColor(QColor(0x1f, 0x77, 0xb4));
    m_series->yAxis2->setVisible(true);
    m_series->yAxis2->setLabel(tr("dropped %"));
    m_series->yAxis2->setLabelColor(QColor(0xd6, 0x27, 0x28));
    m_map->xAxis->setLabel(tr("expert"));
    for (QCPAxis *axis : {m_map->xAxis, m_map->yAxis}) { // whole experts and layers
        auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
        ticker->setTickStep(1.0);
        ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
        axis->setTicker(ticker);
    }
    m_map->legend->setVisible(false);
    m_map->setInteractions({});
    m_cells = new QCPColorMap(m_map->xAxis, m_map->yAxis);
    auto *scale = new QCPColorScale(m_map);
    m_map->plotLayout()->addElement(1, 1, scale);
    m_cells->setColorScale(scale);
    m_cells->setGradient(QCPColorGradient::gpThermal);
    m_cells->setInterpolate(false);
}

void ExpertsPanel::show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot)
{
    const launcher::telemetry::ExpertView &x = snapshot->experts;
    m_series->clearGraphs();
    if (x.layers == 0 || x.steps.empty()) {
        m_summary->setText(tr("No routing reported: the run's model has no experts, or no step has finished yet."));
        m_cells->data()->clear();
        m_series->replot(QCustomPlot::rpQueuedReplot);
        m_map->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const QVector<double> steps(x.steps.begin(), x.steps.end());
    QCPGraph *imbalance = m_series->addGraph();
    imbalance->setPen(QPen(QColor(0x1f, 0x77, 0xb4), 1.5));
    imbalance->setData(steps, QVector<double>(x.imbalance.begin(), x.imbalance.end()), true);
    QCPGraph *dropped = m_series->addGraph(m_series->xAxis, m_series->yAxis2);
    dropped->setPen(QPen(QColor(0xd6, 0x27, 0x28), 1.2, Qt::DashLine));
    QVector<double> percent;
    for (double f : x.droppedFraction)
        percent << 100.0 * f;
    dropped->setData(steps, percent, true);
    m_series->rescaleAxes();
    m_series->yAxis->setRangeLower(std::min(1.0, m_series->yAxis->range().lower));
    m_series->yAxis2->setRange(0, std::max(1.0, *std::max_element(percent.begin(), percent.end()) * 1.2));
    m_series->replot(QCustomPlot::rpQueuedReplot);

    auto *cells = m_cells->data();
    cells->setSize(x.experts, x.layers);
    cells->setRange(QCPRange(0, x.experts - 1), QCPRange(0, x.layers - 1));
    for (int l = 0; l < x.layers; ++l)
        for (int e = 0; e < x.experts; ++e)
            cells->setCell(e, l, x.share[static_cast<std::size_t>(l) * x.experts + e]);
    m_cells->setDataRange(QCPRange(0, std::max(2.0 / x.experts, *std::max_element(x.share.begin(), x.share.end()))));
    m_map->rescaleAxes();
    m_map->xAxis->setRange(-0.5, x.experts - 0.5);
    m_map->yAxis->setRange(-0.5, x.layers - 0.5);
    m_map->replot(QCustomPlot::rpQueuedReplot);
    m_summary->setText(tr("%1 layers × %2 experts. Step %3: worst layer's busiest expert %4× the mean, %5% of choices "
                          "dropped, load-balancing loss %6.")
                           .arg(x.layers)
                           .arg(x.experts)
                           .arg(x.step)
                           .arg(x.imbalance.back(), 0, 'f', 2)
                           .arg(100.0 * x.droppedFraction.back(), 0, 'f', 1)
                           .arg(x.auxLoss.back(), 0, 'g', 4));
}

} // namespace trellis::ui::dashboards

namespace trellis::ui::dashboards {

QString ExpertsPanel::emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const
{
    if (!snapshot)
        return tr("Launch a plan with experts (model › moe) to see each expert's share of the tokens and the load "
                  "imbalance step by step.");
    if (snapshot->experts.layers == 0)
        return tr("This run has no experts: its model is dense. A plan with model › moe shows the routing here.");
    return {};
}

} // namespace trellis::ui::dashboards
