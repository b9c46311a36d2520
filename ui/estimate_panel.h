// Predictions for the loaded plan before anything runs (DESIGN.md §4): memory per pipeline stage
// by category against the device's memory, the step-time breakdown, tokens/s, MFU and cost, the
// collectives per group; and the planner's search for faster plans on the same model, cluster and
// global batch, one of which the user can take. Estimates and searches run on a worker thread
// (QtConcurrent); the panel shows the newest result when it arrives.
#pragma once

#include "plan/cost_model.h"
#include "plan/planner.h"

#include <QFutureWatcher>
#include <QWidget>

#include <optional>

class QCustomPlot;
class QLabel;
class QPushButton;
class QTreeWidget;

namespace trellis::ui {

class EstimatePanel : public QWidget {
    Q_OBJECT
public:
    // calibrationPath: this machine's calibration (CPU clusters), read off the GUI thread.
    explicit EstimatePanel(const QString &calibrationPath, QWidget *parent = nullptr);
    void showPlan(const plan::Plan &plan);
    void clear();
    void search();

    // For tests and scripted screenshots.
    const std::optional<plan::Estimate> &estimate() const { return m_estimate; }
    const plan::SearchResult &searchResult() const { return m_search; }
    QTreeWidget *searchTable() const { return m_results; }
    QPushButton *searchButton() const { return m_searchButton; }
    QPushButton *useButton() const { return m_useButton; }

signals:
    void estimateShown();
    void searchFinished();
    // The user took a searched plan: its model (the vocabulary may be padded) and parallelism.
    void planChosen(const plan::Plan &plan);

private:
    struct Computed {
        plan::Estimate estimate;
        QString device, note;
        double deviceMemoryGB = 0;
    };
    void showEstimate(const Computed &c);
    void showSearch();

    QString m_calibrationPath;
    std::optional<plan::Plan> m_plan;
    std::optional<plan::Estimate> m_estimate;
    plan::SearchResult m_search;
    QFutureWatcher<Computed> m_estimateWatcher;
    QFutureWatcher<plan::SearchResult> m_searchWatcher;
    QLabel *m_headline;
    QCustomPlot *m_memory;
    QTreeWidget *m_collectives;
    QPushButton *m_searchButton;
    QPushButton *m_useButton;
    QTreeWidget *m_results;
};

} // namespace trellis::ui
