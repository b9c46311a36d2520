// See communication_panel.h.
#include "ui/dashboards/communication_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

namespace trellis::ui::dashboards {

CommunicationPanel::CommunicationPanel(QWidget *parent)
    : Panel(parent), m_traffic(new QLabel(this)), m_table(new QTableWidget(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    m_traffic->setWordWrap(true);
    m_traffic->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_traffic->hide();
    layout->addWidget(m_traffic);
    layout->addWidget(m_table);
    m_table->setColumnCount(7);
    m_table->setHorizontalHeaderLabels({tr("group"), tr("operation"), tr("ranks"), tr("MB"), tr("ms"), tr("bus GB/s"),
                                        tr("slowest rank (GB/s)")});
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->verticalHeader()->setVisible(false);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
}

void CommunicationPanel::show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot)
{
    const QString traffic = dpTrafficSummary(snapshot->dpTraffic);
    m_traffic->setText(tr("dp traffic: %1").arg(traffic));
    m_traffic->setVisible(!traffic.isEmpty());
    const auto &rows = snapshot->collectives;
    m_table->setRowCount(static_cast<int>(rows.size()));
    for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
        const auto &c = rows[static_cast<std::size_t>(i)];
        const QString bw = m_peakGbps > 0 ? tr("%1 (%2% of peak)").arg(c.busGbps, 0, 'f', 2).arg(100 * c.busGbps / m_peakGbps, 0, 'f', 0)
                                          : QString::number(c.busGbps, 'f', 2);
        const QString cells[] = {c.group, c.op, QString::number(c.ranks), QString::number(c.bytes / 1e6, 'f', 2),
                                 QString::number(c.ms, 'f', 2), bw,
                                 QStringLiteral("%1 (%2)").arg(c.slowestRank).arg(c.minBusGbps, 0, 'f', 2)};
        for (int j = 0; j < 7; ++j) {
            auto *item = m_table->item(i, j);
            if (!item)
                m_table->setItem(i, j, item = new QTableWidgetItem);
            item->setText(cells[j]);
        }
    }
}

} // namespace trellis::ui::dashboards

namespace trellis::ui::dashboards {

QString CommunicationPanel::emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const
{
    if (!snapshot)
        return tr("Launch the plan to see each collective (group, operation, bytes, time, bus bandwidth) and its slowest rank.");
    if (snapshot->collectives.empty())
        return snapshot->worldSize == 1 ? tr("This run has one rank: nothing to communicate.")
                                        : tr("No collective reported yet.");
    return {};
}

} // namespace trellis::ui::dashboards
