// Memory per rank by category (parameters, gradients, optimizer, activations, communication
// buffers, peak RSS): the median rank and the largest, beside the cost model's prediction for the
// busiest stage.
#pragma once

#include "ui/dashboards/panel.h"

namespace trellis::ui::dashboards {

class MemoryPanel : public Panel {
    Q_OBJECT
public:
    explicit MemoryPanel(QWidget *parent = nullptr);
    QString title() const override { return tr("Memory by category"); }
    QString objectId() const override { return QStringLiteral("memory"); }
    void show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot) override;
    QString emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const override;

private:
    QCustomPlot *m_plot;
};

} // namespace trellis::ui::dashboards
