// See history_panel.h.
#include "ui/history/history_panel.h"

#include <QHeaderView>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace trellis::ui {

HistoryPanel::HistoryPanel(QWidget *parent)
    : QWidget(parent), m_table(new QTableWidget(this)), m_compare(new QPushButton(tr("Compare selected runs"), this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_table);
    layout->addWidget(m_compare, 0, Qt::AlignLeft);
    m_table->setColumnCount(5);
    m_table->setHorizontalHeaderLabels({tr("Run"), tr("Plan"), tr("Status"), tr("Steps"), tr("Loss")});
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->setVisible(false);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    connect(m_table, &QTableWidget::itemSelectionChanged, this, [this] {
        m_compare->setEnabled(selectedRunIds().size() >= 2);
        if (const qint64 id = selectedRunId(); id > 0)
            emit runSelected(id);
    });
    m_compare->setEnabled(false);
    m_compare->setToolTip(tr("Select two or more runs (Ctrl or Shift) to compare them"));
    connect(m_compare, &QPushButton::clicked, this, [this] { emit compareRequested(selectedRunIds()); });
}

void HistoryPanel::setRuns(const QList<launcher::RunSummary> &runs)
{
    const qint64 selected = selectedRunId();
    const QSignalBlocker block(m_table);
    m_table->setRowCount(static_cast<int>(runs.size()));
    for (int i = 0; i < runs.size(); ++i) {
        const auto &r = runs[i];
        auto *id = new QTableWidgetItem(r.runId);
        id->setData(Qt::UserRole, r.id);
        id->setToolTip(r.error.isEmpty() ? r.startedAt.toLocalTime().toString() : r.error);
        m_table->setItem(i, 0, id);
        m_table->setItem(i, 1, new QTableWidgetItem(r.name));
        auto *status = new QTableWidgetItem(r.status);
        if (r.status == QLatin1String("failed"))
            status->setForeground(QColor(0xb0, 0x00, 0x20));
        else if (r.status == QLatin1String("completed"))
            status->setForeground(QColor(0x0a, 0x7d, 0x28));
        m_table->setItem(i, 2, status);
        m_table->setItem(i, 3, new QTableWidgetItem(QStringLiteral("%1/%2").arg(r.stepsDone).arg(r.totalSteps)));
        m_table->setItem(i, 4, new QTableWidgetItem(r.stepsDone ? QString::number(r.lastLoss, 'f', 4) : QString()));
        if (r.id == selected)
            m_table->selectRow(i);
    }
}

qint64 HistoryPanel::selectedRunId() const
{
    const QList<qint64> ids = selectedRunIds();
    return ids.size() == 1 ? ids.first() : 0;
}

QList<qint64> HistoryPanel::selectedRunIds() const
{
    QList<qint64> ids;
    for (const QModelIndex &row : m_table->selectionModel()->selectedRows())
        ids << m_table->item(row.row(), 0)->data(Qt::UserRole).toLongLong();
    return ids;
}

int HistoryPanel::rowCount() const { return m_table->rowCount(); }

void HistoryPanel::selectRow(int row) { m_table->selectRow(row); }

} // namespace trellis::ui
