// Rank health: a rank × step heat map of any per-rank metric (step time by default), so a slow,
// silent or odd rank stands out at 1024 ranks; the outlier ranks are named under it.
#pragma once

#include "ui/dashboards/panel.h"
#include "ui/widgets/live_text.h"

class QComboBox;
class QCPColorMap;

namespace trellis::ui::dashboards {

class HeatMapPanel : public Panel {
    Q_OBJECT
public:
    explicit HeatMapPanel(QWidget *parent = nullptr);
    QString title() const override { return tr("Rank health"); }
    QString objectId() const override { return QStringLiteral("heatmap"); }
    void show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot) override;
    QString emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const override;
    QList<QCustomPlot *> stepPlots() const override { return {m_plot}; }
    QCustomPlot *plot() const { return m_plot; }

signals:
    void metricChosen(trellis::launcher::telemetry::Metric metric);

private:
    QComboBox *m_choice;
    QCustomPlot *m_plot;
    LiveText *m_outliers; // changes with every snapshot: repaints itself only
    QCPColorMap *m_map = nullptr;
};

} // namespace trellis::ui::dashboards
