// Mixture-of-experts routing: per step the worst layer's load imbalance (its busiest expert's
// tokens over the mean; 1 is balanced) and the share of choices dropped for capacity, and for the
// newest complete step a layers × experts map of each expert's share of its layer's tokens.
#pragma once

#include "ui/dashboards/panel.h"

class QCPColorMap;
class QLabel;

namespace trellis::ui::dashboards {

class ExpertsPanel : public Panel {
    Q_OBJECT
public:
    explicit ExpertsPanel(QWidget *parent = nullptr);
    QString title() const override { return tr("Experts"); }
    QString objectId() const override { return QStringLiteral("experts"); }
    void show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot) override;
    QString emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const override;
    QList<QCustomPlot *> stepPlots() const override { return {m_series}; }
    void markStep(qint64 step) override { markStepOn(m_series, step); }

private:
    QLabel *m_summary;
    QCustomPlot *m_series;
    QCustomPlot *m_map;
    QCPColorMap *m_cells;
};

} // namespace trellis::ui::dashboards
