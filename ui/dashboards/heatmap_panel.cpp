// See heatmap_panel.h.
#include "ui/dashboards/heatmap_panel.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace trellis::ui::dashboards {

using namespace launcher::telemetry;

HeatMapPanel::HeatMapPanel(QWidget *parent)
    : Panel(parent), m_choice(new QComboBox(this)), m_plot(makePlot(QString(), tr("rank"), this)), m_outliers(new LiveText(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_choice);
    layout->addWidget(m_plot, 1);
    layout->addWidget(m_outliers);
    for (Metric m : {Metric::StepMs, Metric::ComputeMs, Metric::CommExposedMs, Metric::BubbleMs, Metric::TokensPerS,
                     Metric::PeakRss, Metric::Loss})
        m_choice->addItem(metricLabel(m), static_cast<int>(m));
    connect(m_choice, &QComboBox::currentIndexChanged, this,
            [this] { emit metricChosen(static_cast<Metric>(m_choice->currentData().toInt())); });
    m_plot->legend->setVisible(false);
    m_plot->setInteractions({});
    QSharedPointer<QCPAxisTickerFixed> wholeRanks(new QCPAxisTickerFixed); // rank 1, 2, … never 0.5
    wholeRanks->setTickStep(1);
    wholeRanks->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    m_plot->yAxis->setTicker(wholeRanks);
    m_map = new QCPColorMap(m_plot->xAxis, m_plot->yAxis);
    auto *scale = new QCPColorScale(m_plot);
    m_plot->plotLayout()->addElement(1, 1, scale);
    m_map->setColorScale(scale);
    m_map->setGradient(QCPColorGradient::gpThermal);
    m_map->setInterpolate(false);
}

void HeatMapPanel::show(const std::shared_ptr<const DashboardSnapshot> &snapshot)
{
    m_map->data()->clearAlpha();
    if (snapshot->heat.ranks.empty() || snapshot->heat.steps.empty())
        return;
    // More ranks than rows of pixels: groups of ranks (the snapshot holds at most kHeatMapRows),
    // each cell showing the value of its group furthest from the median, so one odd rank among
    // 1024 still stands out. At least 3 pixels a row, whatever the dock's size.
    const HeatMap h = groupRanks(snapshot->heat, std::max(8, m_plot->axisRect()->height() / 3));
    const int rows = static_cast<int>(h.ranks.size());
    const int cols = static_cast<int>(h.steps.size());
    auto *cells = m_map->data();
    cells->setSize(cols, rows);
    cells->setRange(QCPRange(h.steps.front(), h.steps.back()), QCPRange(h.ranks.front(), h.lastRank));
    float low = std::numeric_limits<float>::infinity(), high = -low;
    for (int b = 0; b < rows; ++b)
        for (int c = 0; c < cols; ++c) {
            const float v = h.values[static_cast<std::size_t>(b) * cols + c];
            if (std::isnan(v)) {
                cells->setAlpha(c, b, 0);
            } else {
                cells->setCell(c, b, v);
                low = std::min(low, v);
                high = std::max(high, v);
            }
        }
    // Every rank alike (a healthy run of identical steps): a range around the value, where an
    // empty one would leave the colour scale where it was and the cells undrawn.
    if (low <= high) {
        const double pad = high > low ? 0.0 : std::max(1e-6, std::abs(static_cast<double>(low)) * 0.01);
        m_map->setDataRange(QCPRange(low - pad, high + pad));
    }
    m_plot->rescaleAxes();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    QStringList names;
    const auto it = snapshot->metrics.find(snapshot->heatMetric);
    if (it != snapshot->metrics.end())
        for (const auto &o : it->second.outliers)
            if (std::abs(o.deviation) >= 0.05)
                names << tr("rank %1 %2%3%").arg(o.rank).arg(o.deviation >= 0 ? QStringLiteral("+") : QString()).arg(o.deviation * 100, 0, 'f', 0);
    m_outliers->setText(names.isEmpty() ? tr("%1 ranks, none stands out").arg(h.rankCount)
                                        : tr("%1 ranks; furthest from the median: %2").arg(h.rankCount).arg(names.join(QStringLiteral(", "))));
}

} // namespace trellis::ui::dashboards

namespace trellis::ui::dashboards {

QString HeatMapPanel::emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const
{
    if (!snapshot)
        return tr("Launch the plan to see every rank's step time (or another metric) step by step, one row a rank: "
                  "a slow or stalled rank stands out as a stripe.");
    if (snapshot->heat.ranks.empty() || snapshot->heat.steps.empty())
        return tr("Waiting for the ranks' first steps.");
    return {};
}

} // namespace trellis::ui::dashboards
