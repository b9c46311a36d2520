// The run's ranks by kind (launcher/metrics/dashboard_snapshot.h RankKind): one row for each set of
// ranks whose Hello said the same device, precision, kernels and kernel threads — which GEMM path
// ran (oneDNN's native bf16, or fp32 on converted operands) and on how many threads, and which
// ranks stand apart. One row for 16,384 alike ranks; the table changes only when the kinds do.
#pragma once

#include "ui/dashboards/panel.h"

#include <vector>

class QTableWidget;

namespace trellis::ui::dashboards {

class RanksPanel : public Panel {
    Q_OBJECT
public:
    explicit RanksPanel(QWidget *parent = nullptr);
    QString title() const override { return tr("Ranks and kernels"); }
    QString objectId() const override { return QStringLiteral("ranks"); }
    void show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot) override;
    QString emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const override;
    QTableWidget *table() const { return m_table; }

private:
    QTableWidget *m_table;
    std::vector<launcher::telemetry::RankKind> m_shown;
};

} // namespace trellis::ui::dashboards
