// Memory per rank by category (parameters, gradients, optimizer, activations, communication
// buffers, peak RSS): the median rank and the largest, named; with the device limit when known.
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
    void setPredictedBytes(std::vector<double> perCategory) { m_predicted = std::move(perCategory); }

private:
    QCustomPlot *m_plot;
    std::vector<double> m_predicted;
};

} // namespace trellis::ui::dashboards
