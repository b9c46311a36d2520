// See timeline_panel.h.
#include "ui/dashboards/timeline_panel.h"

#include "ui/widgets/timeline_chart.h"

#include <QLabel>
#include <QVBoxLayout>


namespace trellis::ui::dashboards {

using launcher::telemetry::TimelineView;

TimelinePanel::TimelinePanel(QWidget *parent) : Panel(parent), m_header(new QLabel(this)), m_canvas(new TimelineChart(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    m_header->setWordWrap(true);
    layout->addWidget(m_header);
    layout->addWidget(m_canvas, 1);
    auto *legend = new QLabel(tr("<span style='color:#1f77b4'>■</span> forward &nbsp; <span style='color:#2ca02c'>■</span> "
                                 "backward &nbsp; <span style='color:#9467bd'>■</span> weight gradients &nbsp; "
                                 "<span style='color:#b0b0b0'>▬</span> send / receive (waiting for a peer) &nbsp; "
                                 "<span style='color:#d04040'>▨</span> idle (bubble) &nbsp; numbers: micro-batches; each "
                                 "section is scaled to its own length; the wheel zooms, dragging pans"),
                              this);
    legend->setWordWrap(true);
    layout->addWidget(legend);
    showTimeline({});
}

void TimelinePanel::showTimeline(const TimelineView &timeline)
{
    m_canvas->setTimeline(timeline);
    m_header->setText(summary());
}

const TimelineView &TimelinePanel::timeline() const { return m_canvas->timeline(); }

QString TimelinePanel::summary() const
{
    const TimelineView &v = m_canvas->timeline();
    QStringList parts;
    if (v.measuredBubble >= 0)
        parts << tr("measured bubble %1% (step %2, %3 ms)").arg(v.measuredBubble * 100, 0, 'f', 1).arg(v.step).arg(v.measuredMs, 0, 'f', 1);
    if (v.predictedBubble >= 0)
        parts << tr("predicted bubble %1% (%2 ms)").arg(v.predictedBubble * 100, 0, 'f', 1).arg(v.predictedMs, 0, 'f', 1);
    if (!v.note.isEmpty())
        parts << v.note;
    return parts.join(QStringLiteral(" · "));
}

} // namespace trellis::ui::dashboards

namespace trellis::ui::dashboards {

QString TimelinePanel::emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const
{
    if (!timeline().lanes.empty())
        return {};
    if (!snapshot)
        return tr("Launch the plan to see one traced step on every pipeline stage: forward, backward and communication "
                  "as they ran, beside the schedule the planner predicted, and the bubble.");
    if (!timeline().note.isEmpty())
        return timeline().note;
    return snapshot->stages.size() <= 1 ? tr("This run has no pipeline (pp 1): its traced steps appear here once the "
                                             "trainer writes one (telemetry › trace_every).")
                                        : tr("No traced step yet: the trainer traces one every few steps (telemetry › trace_every).");
}

} // namespace trellis::ui::dashboards
