// The runs table's rows: one a run, as the history reader lists them (a filter applied there),
// with a column for each figure a person may choose to see. Display text for the eye, Qt::UserRole
// a raw value that sorts right (numbers as numbers, a run not measured at the end), and the run's
// row id in kIdRole. A run's figures, computed after it was listed, update its row in place.
#pragma once

#include "launcher/run_types.h"

#include <QAbstractTableModel>
#include <QHash>

namespace trellis::ui {

class RunTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { RunId, Name, Status, Started, Duration, Plan, Ranks, Layout, Precision, Steps, Loss, TokensPerS, Mfu, Target, Tags, Note, Command, Kind, ColumnCount };
    static constexpr int kIdRole = Qt::UserRole + 1;
    static bool shownByDefault(Column column);
    static int initialOrder(int section); // Qt::InitialSortOrderRole: a column's first sort

    explicit RunTableModel(QObject *parent = nullptr);
    void setRuns(const QList<launcher::RunSummary> &runs);
    void updateRun(const launcher::RunSummary &run); // its figures, when computed
    const launcher::RunSummary *run(qint64 id) const;
    const QList<launcher::RunSummary> &runs() const { return m_runs; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant display(const launcher::RunSummary &r, int column) const;
    QVariant sortKey(const launcher::RunSummary &r, int column) const;

    QList<launcher::RunSummary> m_runs;
    QHash<qint64, int> m_rowOf;
};

} // namespace trellis::ui
