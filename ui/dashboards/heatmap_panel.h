// Rank health: a rank × step heat map of any per-rank metric (step time by default), so a slow,
// silent or odd rank stands out at 1024 ranks; the outlier ranks are named under it.
#pragma once

#include "ui/dashboards/panel.h"

class QComboBox;
class QLabel;
class QCPColorMap;

namespace trellis::ui::dashboards {

class HeatMapPanel : public Panel {
    Q_OBJECT
public:
    explicit HeatMapPanel(QWidget *parent = nullptr);
    QString title() const override { return tr("Rank health"); }
    QString objectId() const override { return QStringLiteral("heatmap"); }
    void show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot) override;
    QCustomPlot *plot() const { return m_plot; }

signals:
    void metricChosen(trellis::launcher::telemetry::Metric metric);

private:
    static constexpr int kMaxRows = 128; // rank groups drawn
    QComboBox *m_choice;
    QCustomPlot *m_plot;
    QLabel *m_outliers;
    QCPColorMap *m_map = nullptr;
};

} // namespace trellis::ui::dashboards
