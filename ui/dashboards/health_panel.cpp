// See health_panel.h.
#include "ui/dashboards/health_panel.h"

#include <QFormLayout>
#include <QLabel>

namespace trellis::ui::dashboards {

namespace {
const char *const kNames[] = {QT_TRANSLATE_NOOP("trellis::ui::dashboards::HealthPanel", "ranks reporting"),
                              QT_TRANSLATE_NOOP("trellis::ui::dashboards::HealthPanel", "messages received"),
                              QT_TRANSLATE_NOOP("trellis::ui::dashboards::HealthPanel", "lost (given up by ranks)"),
                              QT_TRANSLATE_NOOP("trellis::ui::dashboards::HealthPanel", "duplicates"),
                              QT_TRANSLATE_NOOP("trellis::ui::dashboards::HealthPanel", "out of order (asked again)"),
                              QT_TRANSLATE_NOOP("trellis::ui::dashboards::HealthPanel", "rejected frames"),
                              QT_TRANSLATE_NOOP("trellis::ui::dashboards::HealthPanel", "dropped at the senders"),
                              QT_TRANSLATE_NOOP("trellis::ui::dashboards::HealthPanel", "feed gaps (this window)")};
}

HealthPanel::HealthPanel(QWidget *parent) : Panel(parent)
{
    auto *form = new QFormLayout(this);
    for (int i = 0; i < 8; ++i) {
        m_values[i] = new LiveText(this, QStringLiteral("–"));
        form->addRow(tr(kNames[i]), m_values[i]);
    }
}

void HealthPanel::show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot)
{
    const auto &h = snapshot->health;
    const quint64 values[] = {static_cast<quint64>(snapshot->ranksReporting), h.received, h.lost, h.duplicates, h.outOfOrder,
                              h.rejected, h.dropped, h.feedGaps};
    for (int i = 0; i < 8; ++i) {
        m_values[i]->setText(i == 0 ? QStringLiteral("%1 / %2").arg(values[0]).arg(snapshot->worldSize) : QString::number(values[i]));
        m_values[i]->setAlarm((i == 2 || i == 5 || i == 6) && values[i] > 0);
    }
}

QString HealthPanel::text() const
{
    QStringList lines;
    for (int i = 0; i < 8; ++i)
        lines << QStringLiteral("%1: %2").arg(QString::fromLatin1(kNames[i]), m_values[i]->text());
    return lines.join(QLatin1Char('\n'));
}

} // namespace trellis::ui::dashboards

namespace trellis::ui::dashboards {

QString HealthPanel::emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const
{
    if (!snapshot)
        return tr("Launch the plan to see the telemetry's health: messages received, lost, duplicated, out of order, "
                  "rejected and dropped at the ranks.");
    return {};
}

} // namespace trellis::ui::dashboards
