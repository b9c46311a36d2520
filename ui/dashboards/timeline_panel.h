// The step timeline (Gantt, ui/widgets/timeline_chart.h): per pipeline stage, the actions of the newest
// traced step as the trainer measured them, above the schedule simulator's prediction for the same
// plan, each scaled to its own length, with the measured and predicted bubble fractions. The data
// (a TimelineView, bounded by stages × actions) is prepared on the history reader's thread;
// painting is the only work here.
#pragma once

#include "launcher/metrics/timeline.h"
#include "ui/dashboards/panel.h"

class QLabel;

namespace trellis::ui {
class TimelineChart;
}

namespace trellis::ui::dashboards {


class TimelinePanel : public Panel {
    Q_OBJECT
public:
    explicit TimelinePanel(QWidget *parent = nullptr);
    QString title() const override { return tr("Step timeline"); }
    QString objectId() const override { return QStringLiteral("timeline"); }
    // Snapshots carry no spans: the timeline comes from showTimeline().
    void show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot) override { Q_UNUSED(snapshot); }
    void showTimeline(const launcher::telemetry::TimelineView &timeline);
    QString emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const override;
    const launcher::telemetry::TimelineView &timeline() const;
    QString summary() const; // the header line

private:
    QLabel *m_header;
    TimelineChart *m_canvas;
};

} // namespace trellis::ui::dashboards
