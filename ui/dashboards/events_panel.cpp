// See events_panel.h.
#include "ui/dashboards/events_panel.h"

#include <QHeaderView>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace trellis::ui::dashboards {

EventsPanel::EventsPanel(QWidget *parent) : Panel(parent), m_list(new QTreeWidget(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_list);
    m_list->setHeaderLabels({tr("step"), tr("kind"), tr("rank"), tr("message")});
    m_list->setRootIsDecorated(false);
    m_list->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    connect(m_list, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem *item) { emit stepChosen(item->text(0).toLongLong()); });
    connect(m_list, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem *item) { emit stepChosen(item->text(0).toLongLong()); });
}

void EventsPanel::show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot)
{
    const auto &events = snapshot->events;
    if (events.size() < m_shown || events.size() > m_shown + 500 || m_list->topLevelItemCount() != static_cast<int>(m_shown))
        m_shown = 0, m_list->clear(); // a new run, or the window of the last 500 moved
    for (std::size_t i = m_shown; i < events.size(); ++i) {
        const auto &e = events[i];
        auto *item = new QTreeWidgetItem(m_list, {QString::number(e.step), e.kind, e.rank >= 0 ? QString::number(e.rank) : QString(),
                                                   e.message.section(QLatin1Char('\n'), 0, 0)});
        item->setToolTip(3, e.message);
        if (e.kind == QLatin1String("failure") || e.kind == QLatin1String("hang") || e.kind == QLatin1String("nan"))
            item->setForeground(1, QColor(0xb0, 0x00, 0x00));
        else if (e.kind == QLatin1String("straggler") || e.kind == QLatin1String("restart") || e.kind == QLatin1String("divergence"))
            item->setForeground(1, QColor(0xb0, 0x60, 0x00));
    }
    m_shown = events.size();
}

} // namespace trellis::ui::dashboards

namespace trellis::ui::dashboards {

QString EventsPanel::emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const
{
    if (!snapshot)
        return tr("Launch the plan to see the run's events here: stragglers, hangs, restarts, checkpoints and alerts, "
                  "each with its step (click one to mark it on the charts).");
    if (snapshot->events.empty())
        return tr("No events in this run: no straggler, hang, restart or alert so far.");
    return {};
}

} // namespace trellis::ui::dashboards
