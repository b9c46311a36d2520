// Step time split into compute, exposed communication, pipeline bubble and idle (medians over
// ranks per bucket of steps), stacked; with the cost model's prediction as a line when known.
#pragma once

#include "ui/dashboards/panel.h"

namespace trellis::ui::dashboards {

class BreakdownPanel : public Panel {
    Q_OBJECT
public:
    explicit BreakdownPanel(QWidget *parent = nullptr);
    QString title() const override { return tr("Step time breakdown"); }
    QString objectId() const override { return QStringLiteral("breakdown"); }
    void show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot) override;
    void markStep(qint64 step) override;
    void setPredictedStepMs(double ms) { m_predictedMs = ms; }

private:
    QCustomPlot *m_plot;
    double m_predictedMs = 0;
};

} // namespace trellis::ui::dashboards
