// The run's events (checkpoints, failures, restarts, NaN, hangs, stragglers, …) in order; choosing
// one marks its step on every chart.
#pragma once

#include "ui/dashboards/panel.h"

class QTreeWidget;

namespace trellis::ui::dashboards {

class EventsPanel : public Panel {
    Q_OBJECT
public:
    explicit EventsPanel(QWidget *parent = nullptr);
    QString title() const override { return tr("Events"); }
    QString objectId() const override { return QStringLiteral("events"); }
    void show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot) override;
    QString emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const override;
    QTreeWidget *list() const { return m_list; }

private:
    QTreeWidget *m_list;
    std::size_t m_shown = 0;
};

} // namespace trellis::ui::dashboards
