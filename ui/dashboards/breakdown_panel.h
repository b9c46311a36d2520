// Step time split into compute, exposed communication, pipeline bubble and idle (medians over
// ranks per bucket of steps), stacked; with the cost model's predicted step time as a line. Or per
// pipeline stage (medians over each stage's ranks of their latest steps), with each stage's bubble
// fraction measured against the schedule simulator's prediction on the right axis. Over steps the
// time checkpoints took at the step boundaries is stacked on top, and a line beside the mode says
// what the saves cost: training's wait a save, the write behind it, and how much slower the steps
// beside a background write ran (whole in its tooltip).
#pragma once

#include "ui/dashboards/panel.h"

class QComboBox;
class QLabel;

namespace trellis::ui::dashboards {

// The run's checkpoint costs as the panel says them beside its mode (short) and in that line's
// tooltip (whole), translated.
QString checkpointCostsLine(const launcher::telemetry::CheckpointCosts &costs);
QString checkpointCostsText(const launcher::telemetry::CheckpointCosts &costs);

class BreakdownPanel : public Panel {
    Q_OBJECT
public:
    explicit BreakdownPanel(QWidget *parent = nullptr);
    QString title() const override { return tr("Step time breakdown"); }
    QString objectId() const override { return QStringLiteral("breakdown"); }
    void show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot) override;
    void markStep(qint64 step) override;
    QString emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const override;
    QList<QCustomPlot *> stepPlots() const override;
    QCustomPlot *plot() const { return m_plot; }
    void setPerStage(bool perStage);

private:
    void drawOverSteps(const launcher::telemetry::DashboardSnapshot &s);
    void drawPerStage(const launcher::telemetry::DashboardSnapshot &s);

    QComboBox *m_mode;
    QCustomPlot *m_plot;
    QLabel *m_checkpoints; // what the saves cost (hidden without checkpoints)
    std::shared_ptr<const launcher::telemetry::DashboardSnapshot> m_last;
};

} // namespace trellis::ui::dashboards
