// See metric_panel.h.
#include "ui/dashboards/metric_panel.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QVBoxLayout>

namespace trellis::ui::dashboards {

using namespace launcher::telemetry;

MetricPanel::MetricPanel(QString title, QString id, std::vector<Metric> metrics, bool total, QWidget *parent)
    : Panel(parent), m_title(std::move(title)), m_id(std::move(id)), m_metrics(std::move(metrics)), m_total(total),
      m_choice(new QComboBox(this)), m_plot(makePlot(QString(), QString(), this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    for (Metric m : m_metrics)
        m_choice->addItem(tr(metricName(m)));
    m_choice->setVisible(m_metrics.size() > 1);
    layout->addWidget(m_choice);
    layout->addWidget(m_plot, 1);
    connect(m_choice, &QComboBox::currentIndexChanged, this, [this] {
        if (m_last)
            show(m_last);
    });
}

void MetricPanel::show(const std::shared_ptr<const DashboardSnapshot> &shared)
{
    m_last = shared;
    const DashboardSnapshot &snapshot = *shared;
    const Metric metric = m_metrics[static_cast<std::size_t>(std::max(0, m_choice->currentIndex()))];
    const auto it = snapshot.metrics.find(metric);
    if (it == snapshot.metrics.end())
        return;
    drawMetric(m_plot, it->second, tr(metricName(metric)));
    if (m_total && !snapshot.totalTokensPerS.empty() && metric == Metric::TokensPerS && !it->second.band.empty()) {
        // The whole job's tokens/s, on the right axis.
        QCPGraph *g = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
        g->setName(tr("total (right axis)"));
        g->setPen(QPen(Qt::darkGreen, 1.5, Qt::DashLine));
        QVector<double> x;
        for (const auto &p : it->second.band)
            x << static_cast<double>(p.step);
        g->setData(x, QVector<double>(snapshot.totalTokensPerS.begin(), snapshot.totalTokensPerS.begin() + x.size()), true);
        m_plot->yAxis2->setVisible(true);
        g->rescaleValueAxis();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

void MetricPanel::markStep(qint64 step) { markStepOn(m_plot, step); }

int MetricPanel::pointCount() const
{
    int n = 0;
    for (int i = 0; i < m_plot->graphCount(); ++i)
        n += m_plot->graph(i)->dataCount();
    return n;
}

} // namespace trellis::ui::dashboards
