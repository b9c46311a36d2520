// See memory_panel.h.
#include "ui/dashboards/memory_panel.h"

#include <qcustomplot.h>

#include <QVBoxLayout>

namespace trellis::ui::dashboards {

MemoryPanel::MemoryPanel(QWidget *parent) : Panel(parent), m_plot(makePlot(QString(), tr("MiB a rank"), this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_plot);
    m_plot->xAxis->setLabel(QString());
}

void MemoryPanel::show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot)
{
    m_plot->clearPlottables();
    QVector<double> ticks, median, max;
    QVector<QString> labels;
    for (const auto &c : snapshot->memory) {
        ticks << ticks.size() + 1;
        labels << c.name;
        median << c.median / (1 << 20);
        max << c.max / (1 << 20);
    }
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    ticker->addTicks(ticks, labels);
    m_plot->xAxis->setTicker(ticker);
    auto *maxBars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    maxBars->setName(tr("largest rank"));
    maxBars->setPen(Qt::NoPen);
    maxBars->setBrush(QColor(0xd6, 0x27, 0x28, 90));
    maxBars->setWidth(0.7);
    maxBars->setData(ticks, max, true);
    auto *medianBars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    medianBars->setName(tr("median rank"));
    medianBars->setPen(Qt::NoPen);
    medianBars->setBrush(QColor(0x1f, 0x77, 0xb4));
    medianBars->setWidth(0.45);
    medianBars->setData(ticks, median, true);
    if (snapshot->prediction.known) {
        QVector<double> predicted;
        for (const auto &c : snapshot->memory) {
            const auto it = snapshot->prediction.memoryBytes.find(c.name);
            predicted << (it == snapshot->prediction.memoryBytes.end() ? qQNaN() : it->second / (1 << 20));
        }
        QCPGraph *g = m_plot->addGraph();
        g->setName(tr("predicted (busiest stage)"));
        g->setLineStyle(QCPGraph::lsNone);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, Qt::black, Qt::white, 9));
        g->setData(ticks, predicted, true);
    }
    m_plot->rescaleAxes();
    m_plot->xAxis->setRange(0.4, ticks.size() + 0.6);
    m_plot->yAxis->setRangeLower(0);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace trellis::ui::dashboards

namespace trellis::ui::dashboards {

QString MemoryPanel::emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const
{
    if (!snapshot)
        return tr("Launch the plan to see each rank's memory by category (parameters, gradients, optimizer state, "
                  "activations, buffers) beside the cost model's prediction.");
    if (snapshot->memory.empty())
        return tr("This run reports no memory yet.");
    return {};
}

} // namespace trellis::ui::dashboards
