// Stalls over the run (docs/failures.md): each stall that ended as a bar at the step it began, as
// tall as it lasted (red: decided a hang; orange: ended with the job; grey: cleared and the run
// went on), and a line saying how many, how long in all, the longest and which ranks held them —
// so a flaky node is visible before it hangs. Its x axis is the step, shared with the other step
// charts (cursor and zoom).
#pragma once

#include "ui/dashboards/panel.h"
#include "ui/widgets/live_text.h"

class QCustomPlot;

namespace trellis::ui::dashboards {

class StallsPanel : public Panel {
    Q_OBJECT
public:
    explicit StallsPanel(QWidget *parent = nullptr);
    QString title() const override { return tr("Stalls"); }
    QString objectId() const override { return QStringLiteral("stalls"); }
    void show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot) override;
    void markStep(qint64 step) override;
    QString emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const override;
    QList<QCustomPlot *> stepPlots() const override { return {m_plot}; }
    QString summary() const { return m_summary->text(); }
    int barsShown() const { return m_bars; }

private:
    LiveText *m_summary;
    QCustomPlot *m_plot;
    int m_bars = 0;
    int m_shownCount = -1; // the stall count drawn last: the plot changes only when it does
};

} // namespace trellis::ui::dashboards
