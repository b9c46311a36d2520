// Communication per group and operation: bytes, time and bus bandwidth (the mean rank's latest
// report, and the slowest rank's), against the link's peak when known.
#pragma once

#include "ui/dashboards/panel.h"

class QLabel;
class QTableWidget;

namespace trellis::ui::dashboards {

class CommunicationPanel : public Panel {
    Q_OBJECT
public:
    explicit CommunicationPanel(QWidget *parent = nullptr);
    QString title() const override { return tr("Communication"); }
    QString objectId() const override { return QStringLiteral("communication"); }
    void show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot) override;
    QString emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const override;
    void setPeakGbps(double gbps) { m_peakGbps = gbps; }
    QTableWidget *table() const { return m_table; }
    QLabel *trafficLabel() const { return m_traffic; }

private:
    QLabel *m_traffic; // local updates, gradient compression: the dp bytes against every step's
    QTableWidget *m_table;
    double m_peakGbps = 0;
};

} // namespace trellis::ui::dashboards
