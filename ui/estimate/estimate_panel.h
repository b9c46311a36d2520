// Predictions for the loaded plan before anything runs (docs/architecture.md §5): memory per pipeline stage
// by category against the device's memory, the step-time breakdown, tokens/s, MFU and cost, the
// collectives per group; the predicted step as a Gantt chart (ui/widgets/timeline_chart.h); the plan
// compared with a pinned one (ui/estimate/plan_comparison.h); and the planner's search for faster
// plans on the same model, cluster and global batch, one of which the user can take. Estimates
// and searches run on a worker thread (QtConcurrent); the panel shows the newest result when it
// arrives.
#pragma once

#include "backend/plan/cost/cost_model.h"
#include "backend/plan/cost/planner.h"

#include <QFutureWatcher>
#include <QWidget>

#include <optional>

#include "launcher/metrics/timeline.h"

class QCustomPlot;
class QLabel;
class QPushButton;
class QTabWidget;
class QTreeWidget;

namespace trellis::launcher {
class MachineCalibration;
}

namespace trellis::ui {

class TimelineChart;
namespace estimate {
class PlanComparison;
}

class EstimatePanel : public QWidget {
    Q_OBJECT
public:
    // calibrationPath: this machine's calibration (CPU clusters), read off the GUI thread.
    explicit EstimatePanel(const QString &calibrationPath, QWidget *parent = nullptr);
    // Another history's calibration (the workbench switched history): read from the next estimate.
    void setCalibrationPath(const QString &path);
    // Estimates `plan` on a worker thread; until the result arrives the previous one is dimmed and
    // marked as being recomputed (never shown as current).
    void showPlan(const plan::Plan &plan);
    // The plan has errors: no estimate is made; the previous one is dimmed and said to be stale.
    void showInvalid(int errorCount);
    // A plan that runs its own trainer and has no model section: nothing to estimate, and why.
    void showOwnTrainer();
    // The plan changed and its estimate is on its way: dim what is shown at once.
    void markStale();
    void clear();
    // Forgets the planner's results (another plan was opened: they belong to the old one).
    void clearSearch();
    void search();
    // Whether what is on screen is the estimate of the newest plan given.
    bool isCurrent() const { return m_current; }
    // The change against the estimate shown before ("tokens/s +12.0%, stage 0 memory −3.10 GB").
    const QString &changeText() const { return m_change; }
    QString headlineText() const; // what the panel says above its tabs (an estimate, or why none)

    // For tests and scripted screenshots.
    const std::optional<plan::Estimate> &estimate() const { return m_estimate; }
    const plan::SearchResult &searchResult() const { return m_search; }
    QTreeWidget *searchTable() const { return m_results; }
    QPushButton *searchButton() const { return m_searchButton; }
    QPushButton *useButton() const { return m_useButton; }
    QTabWidget *tabs() const { return m_tabs; }
    // Brings a tab to the front by its id: memory, timeline, collectives, compare, search.
    bool showTab(const QString &id);
    TimelineChart *timelineChart() const { return m_timeline; }
    estimate::PlanComparison *comparison() const { return m_comparison; }

signals:
    void estimateShown();
    void searchFinished();
    // The user took a searched plan: its model (the vocabulary may be padded) and parallelism.
    void planChosen(const plan::Plan &plan);
    // The user took the pinned plan back (Compare tab).
    void pinnedPlanChosen(const plan::Plan &plan);

private:
    struct Computed {
        plan::Estimate estimate;
        QString device, note;
        double deviceMemoryGB = 0;
        launcher::telemetry::TimelineView timeline; // the predicted step
        quint64 generation = 0; // which request it answers
        int calibrateRanks = 0; // > 0: this machine should be calibrated for that world size first
    };
    // A CPU plan that runs here, on a machine not calibrated yet, calibrates it first
    // (launcher/document/machine_calibration.h); the note says so meanwhile, and what failed after.
    QString calibrationNote(const Computed &c) const;
    void showEstimate(const Computed &c);
    // showEstimate()'s steps. The change from estimate b to e, as a person editing wants to read it.
    QString changeSince(const plan::Estimate &b, const plan::Estimate &e) const;
    void showHeadline(const Computed &c); // tokens/s, the step's breakdown, MFU, cost, warnings
    void showMemoryChart(const Computed &c);
    void showCollectives(const plan::Estimate &e);
    void showSearch();
    void setCurrent(bool current);

    QString m_calibrationPath;
    bool m_current = false;
    quint64 m_generation = 0; // the newest estimate asked for
    QString m_change;
    std::optional<plan::Plan> m_plan;
    std::optional<plan::Estimate> m_estimate;
    plan::SearchResult m_search;
    QFutureWatcher<Computed> m_estimateWatcher;
    QFutureWatcher<plan::SearchResult> m_searchWatcher;
    QLabel *m_headline;
    QCustomPlot *m_memory;
    QWidget *makeCollectivesPage();
    void setUpMemoryChart();
    QWidget *makeTimelinePage();
    QWidget *makeSearchPage();
    void connectSearch();
    QTreeWidget *m_collectives;
    QLabel *m_allReduce; // the gradient all-reduce under each algorithm, below the table
    QPushButton *m_searchButton;
    QPushButton *m_useButton;
    QTreeWidget *m_results;
    QTabWidget *m_tabs;
    TimelineChart *m_timeline;
    estimate::PlanComparison *m_comparison;
    launcher::MachineCalibration *m_calibration;
};

} // namespace trellis::ui
