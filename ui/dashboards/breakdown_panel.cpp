// See breakdown_panel.h.
#include "ui/dashboards/breakdown_panel.h"

#include <qcustomplot.h>

#include <QVBoxLayout>

namespace trellis::ui::dashboards {

BreakdownPanel::BreakdownPanel(QWidget *parent) : Panel(parent), m_plot(makePlot(tr("Step time breakdown (median rank)"), tr("ms"), this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_plot);
}

void BreakdownPanel::show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot)
{
    const auto &s = *snapshot;
    m_plot->clearPlottables();
    m_plot->clearItems();
    QVector<double> x, compute, exposed, bubble, idle;
    for (const auto &p : s.breakdown) {
        x << static_cast<double>(p.step);
        compute << p.computeMs;
        exposed << p.exposedCommMs;
        bubble << p.bubbleMs;
        idle << p.idleMs;
    }
    const double width = x.size() > 1 ? (x.last() - x.first()) / (x.size() - 1) * 0.9 : 0.9;
    QCPBars *below = nullptr;
    const std::pair<const QVector<double> *, std::pair<QString, QColor>> parts[] = {
        {&compute, {tr("compute"), QColor(0x1f, 0x77, 0xb4)}},
        {&exposed, {tr("exposed communication"), QColor(0xff, 0x7f, 0x0e)}},
        {&bubble, {tr("pipeline bubble"), QColor(0xd6, 0x27, 0x28)}},
        {&idle, {tr("idle"), QColor(0xaa, 0xaa, 0xaa)}}};
    for (const auto &[values, style] : parts) {
        auto *bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
        bars->setName(style.first);
        bars->setPen(Qt::NoPen);
        bars->setBrush(style.second);
        bars->setWidth(std::max(width, 0.5));
        bars->setData(x, *values, true);
        if (below)
            bars->moveAbove(below);
        below = bars;
    }
    if (s.prediction.known && !x.isEmpty()) {
        QCPGraph *g = m_plot->addGraph();
        g->setName(s.prediction.calibrated ? tr("predicted step (calibrated)") : tr("predicted step (default rates)"));
        g->setPen(QPen(Qt::black, 1.5, Qt::DashLine));
        g->setData({x.first(), x.last()}, {s.prediction.stepMs, s.prediction.stepMs});
    }
    m_plot->rescaleAxes();
    m_plot->yAxis->setRangeLower(0);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void BreakdownPanel::markStep(qint64 step) { markStepOn(m_plot, step); }

} // namespace trellis::ui::dashboards
