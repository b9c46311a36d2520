// Telemetry health: what the supervisor received, what was lost (given up by ranks), duplicated,
// out of order (asked for again), rejected (malformed, oversized, foreign), dropped at the
// senders, and the feed messages this window missed.
#pragma once

#include "ui/dashboards/panel.h"
#include "ui/widgets/live_text.h"


namespace trellis::ui::dashboards {

class HealthPanel : public Panel {
    Q_OBJECT
public:
    explicit HealthPanel(QWidget *parent = nullptr);
    QString title() const override { return tr("Telemetry health"); }
    QString objectId() const override { return QStringLiteral("health"); }
    void show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot) override;
    QString emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const override;
    QString text() const;

private:
    LiveText *m_values[8] = {}; // counters change with every snapshot: each repaints itself only
};

} // namespace trellis::ui::dashboards
