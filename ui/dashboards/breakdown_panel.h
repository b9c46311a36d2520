// Step time split into compute, exposed communication, pipeline bubble and idle (medians over
// ranks per bucket of steps), stacked; with the cost model's predicted step time as a line.
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
    QCustomPlot *plot() const { return m_plot; }

private:
    QCustomPlot *m_plot;
};

} // namespace trellis::ui::dashboards
