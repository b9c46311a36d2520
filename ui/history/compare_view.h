// Runs compared (select two or more in the history): loss and the job's tokens/s overlaid by step,
// and a table of each run's figures and of the plan fields that differ. Built from a Comparison
// the history reader prepares off the GUI thread.
#pragma once

#include "launcher/report/run_comparison.h"

#include <QWidget>

class QCustomPlot;
class QLabel;
class QTableWidget;

namespace trellis::ui {

class CompareView : public QWidget {
    Q_OBJECT
public:
    explicit CompareView(QWidget *parent = nullptr);
    void show(const launcher::Comparison &comparison);
    QCustomPlot *lossPlot() const { return m_loss; }
    QTableWidget *table() const { return m_table; }

private:
    QCustomPlot *m_loss;
    QCustomPlot *m_tokens;
    QTableWidget *m_table;
    QLabel *m_hint;
    QWidget *m_split;
};

} // namespace trellis::ui
