// See stalls_panel.h.
#include "ui/dashboards/stalls_panel.h"

#include <qcustomplot.h>

#include <QVBoxLayout>

namespace trellis::ui::dashboards {

StallsPanel::StallsPanel(QWidget *parent)
    : Panel(parent), m_summary(new LiveText(this, QString())), m_plot(makePlot(QString(), tr("stall s"), this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_summary);
    layout->addWidget(m_plot, 1);
    m_plot->xAxis->setLabel(tr("step"));
}

void StallsPanel::show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot)
{
    const auto &sum = snapshot->stallSummary;
    if (sum.count == m_shownCount)
        return;
    m_shownCount = sum.count;
    QStringList often;
    for (const auto &[rank, count] : sum.byHolder)
        often << tr("rank %1: %2").arg(rank).arg(count);
    m_summary->setText(sum.count == 0 ? tr("No stalls: no rank has held the others up.")
                                      : tr("%n stall(s), %1 s in all, the longest %2 s; held by %3", nullptr, sum.count)
                                            .arg(sum.totalMs / 1000.0, 0, 'f', 1)
                                            .arg(sum.longestMs / 1000.0, 0, 'f', 1)
                                            .arg(often.join(QStringLiteral(", "))));
    m_summary->setAlarm(sum.count > 0);
    m_plot->clearPlottables();
    // One bar series per outcome: its colour says how the stall ended.
    const struct {
        const char *outcome;
        QColor colour;
    } kinds[] = {{"cleared", QColor(0x88, 0x88, 0x88)}, {"grew", QColor(0xb0, 0xa0, 0x60)}, {"ended", QColor(0xe0, 0x80, 0x00)},
                 {"hang", QColor(0xc0, 0x00, 0x00)}};
    double maxS = 1, maxStep = 1;
    m_bars = 0;
    for (const auto &kind : kinds) {
        QVector<double> steps, seconds;
        for (const launcher::StallRow &s : snapshot->stalls)
            if (s.outcome == QLatin1String(kind.outcome)) {
                steps << static_cast<double>(s.step);
                seconds << s.durationMs / 1000.0;
                maxS = std::max(maxS, s.durationMs / 1000.0);
            }
        for (const launcher::StallRow &s : snapshot->stalls)
            maxStep = std::max(maxStep, static_cast<double>(s.step));
        if (steps.isEmpty())
            continue;
        auto *bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
        bars->setName(QString::fromLatin1(kind.outcome));
        bars->setPen(QPen(kind.colour));
        bars->setBrush(kind.colour);
        bars->setWidthType(QCPBars::wtAbsolute);
        bars->setWidth(4);
        bars->setData(steps, seconds, true);
        m_bars += static_cast<int>(steps.size());
    }
    m_plot->yAxis->setRange(0, maxS * 1.15);
    m_plot->xAxis->setRange(0, std::max<double>(maxStep, static_cast<double>(snapshot->step)) + 1);
    m_plot->legend->setVisible(m_bars > 0);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void StallsPanel::markStep(qint64 step) { markStepOn(m_plot, step); }

QString StallsPanel::emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const
{
    if (!snapshot)
        return tr("Launch the plan to see its stalls here: each time a rank held the others up (stopped, silent or "
                  "slow in a collective), when, for how long and how it ended.");
    return {};
}

} // namespace trellis::ui::dashboards
