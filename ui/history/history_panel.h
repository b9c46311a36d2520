// The run history list: every recorded run with its status, steps and last loss. Selecting one
// asks the main window to show its curves; rows come from HistoryReader signals.
#pragma once

#include "launcher/run_types.h"

#include <QWidget>

class QPushButton;
class QTableWidget;

namespace trellis::ui {

class HistoryPanel : public QWidget {
    Q_OBJECT
public:
    explicit HistoryPanel(QWidget *parent = nullptr);
    void setRuns(const QList<launcher::RunSummary> &runs);
    qint64 selectedRunId() const;          // the one selected run, 0 unless exactly one is
    QList<qint64> selectedRunIds() const;
    int rowCount() const;
    void selectRow(int row);
    QTableWidget *table() const { return m_table; }
    QPushButton *compareButton() const { return m_compare; }

signals:
    void runSelected(qint64 id);
    void compareRequested(const QList<qint64> &ids); // two or more runs

private:
    QTableWidget *m_table;
    QPushButton *m_compare;
};

} // namespace trellis::ui
