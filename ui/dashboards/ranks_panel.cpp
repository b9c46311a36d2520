// See ranks_panel.h.
#include "ui/dashboards/ranks_panel.h"

#include <QHeaderView>
#include <QTableWidget>
#include <QVBoxLayout>

namespace trellis::ui::dashboards {

namespace {

bool sameKinds(const std::vector<launcher::telemetry::RankKind> &a, const std::vector<launcher::telemetry::RankKind> &b)
{
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto &x, const auto &y) {
        return x.device == y.device && x.precision == y.precision && x.kernels == y.kernels && x.threads == y.threads &&
               x.count == y.count && x.hosts == y.hosts && x.ranks == y.ranks;
    });
}

} // namespace

RanksPanel::RanksPanel(QWidget *parent) : Panel(parent), m_table(new QTableWidget(0, 6, this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_table);
    m_table->setHorizontalHeaderLabels({tr("Ranks"), tr("Hosts"), tr("Device"), tr("Precision"), tr("Kernels"), tr("Threads")});
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionMode(QAbstractItemView::NoSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(false);
    m_table->horizontalHeader()->setSectionResizeMode(4, QHeaderView::Stretch);
    m_table->setWordWrap(false);
}

void RanksPanel::show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot)
{
    if (sameKinds(snapshot->rankKinds, m_shown))
        return;
    m_shown = snapshot->rankKinds;
    m_table->setRowCount(static_cast<int>(m_shown.size()));
    for (int row = 0; row < static_cast<int>(m_shown.size()); ++row) {
        const launcher::telemetry::RankKind &k = m_shown[static_cast<std::size_t>(row)];
        const QString ranks = k.count == 1 ? k.ranks : tr("%1 (%n ranks)", nullptr, k.count).arg(k.ranks);
        const QStringList cells{ranks,
                                QString::number(k.hosts),
                                k.device,
                                k.precision.isEmpty() ? QStringLiteral("fp32") : k.precision,
                                k.kernels.isEmpty() ? tr("fp32 kernels") : k.kernels,
                                k.threads > 0 ? QString::number(k.threads) : QStringLiteral("–")};
        for (int col = 0; col < cells.size(); ++col) {
            auto *item = new QTableWidgetItem(cells[col]);
            item->setToolTip(cells[col]);
            m_table->setItem(row, col, item);
        }
    }
    m_table->resizeColumnsToContents();
}

QString RanksPanel::emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const
{
    if (!snapshot)
        return tr("Launch the plan to see its ranks here: which device, precision and kernels each runs (oneDNN's "
                  "native bf16 GEMMs or fp32 ones on converted operands) and on how many threads.");
    if (snapshot->rankKinds.empty())
        return tr("No rank has said hello yet.");
    return {};
}

} // namespace trellis::ui::dashboards
