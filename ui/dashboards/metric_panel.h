// A metric over steps, picked from a list (loss / grad norm / learning rate; tokens/s / step
// time): a line per rank up to 8 ranks, beyond that the min–max band, the median and the outlier
// ranks; the throughput panel adds the total over ranks.
#pragma once

#include "ui/dashboards/panel.h"

#include <vector>

class QComboBox;

namespace trellis::ui::dashboards {

class MetricPanel : public Panel {
    Q_OBJECT
public:
    MetricPanel(QString title, QString id, std::vector<launcher::telemetry::Metric> metrics, bool total, QWidget *parent = nullptr);
    QString title() const override { return m_title; }
    QString objectId() const override { return m_id; }
    void show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot) override;
    void markStep(qint64 step) override;
    QString emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const override;
    QList<QCustomPlot *> stepPlots() const override { return {m_plot}; }
    QCustomPlot *plot() const { return m_plot; }
    int pointCount() const; // points drawn, over every line (tests)
    void choose(int index);   // a metric by its index, or past them the model FLOPs view
    // A metric by its name with '_' for spaces and dashes ("grad_norm", "dp_mb_all_reduced"),
    // or the first whose name starts with `key` ("dp"); "flops" the model FLOPs view.
    bool chooseView(const QString &key) override;

private:
    void drawFlops(const launcher::telemetry::DashboardSnapshot &snapshot);
    void drawEveryStepTraffic(const launcher::telemetry::DashboardSnapshot::DpTrafficView &traffic);

    QString m_title, m_id;
    std::vector<launcher::telemetry::Metric> m_metrics;
    bool m_total;
    QComboBox *m_choice;
    QCustomPlot *m_plot;
    std::shared_ptr<const launcher::telemetry::DashboardSnapshot> m_last;
};

} // namespace trellis::ui::dashboards
