// The workbench window. It only wires docks and actions together: the plan panel and the
// estimate panel (left), the live dashboard (centre), the run history (right) and rank output (bottom), around one
// RunController, one HistoryWriter and one asynchronous HistoryReader.
#pragma once

#include "launcher/history_reader.h"
#include "launcher/history_writer.h"
#include "launcher/run_controller.h"
#include "plan/plan.h"

#include <QMainWindow>

#include <memory>
#include <optional>

class QAction;
class QPlainTextEdit;
class QSystemTrayIcon;

namespace trellis::ui {

class Dashboard;
class EstimatePanel;
class HistoryPanel;
class PlanPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(const QString &databasePath, QWidget *parent = nullptr);
    ~MainWindow() override;

    bool loadPlan(const QString &path);
    void launch();
    // Shows the Estimate tab and starts the planner's search for the loaded plan.
    void searchPlans();

    // For tests and scripted screenshots.
    Dashboard *dashboard() const { return m_dashboard; }
    HistoryPanel *historyPanel() const { return m_history; }
    EstimatePanel *estimatePanel() const { return m_estimate; }
    PlanPanel *planPanel() const { return m_planPanel; }
    const std::optional<plan::Plan> &plan() const { return m_plan; }
    launcher::RunController *controller() const { return m_controller.get(); }
    QAction *launchAction() const { return m_launchAction; }
    void setRunOptions(const launcher::RunOptions &options) { m_runOptions = options; }

private:
    void createActions();
    void updateActions();
    void onRunFinished(launcher::RunState state, int exitCode, const QString &message);
    void notify(const QString &kind, const QString &message); // an alert from the run
    void exportReport();
    void appendLog(const QString &line);
    void showLoadedPlan(const QStringList &notes);
    void usePlan(const plan::Plan &plan);
    void savePlanAs();

    std::unique_ptr<launcher::HistoryWriter> m_writer;
    std::unique_ptr<launcher::HistoryReader> m_reader;
    std::unique_ptr<launcher::RunController> m_controller;
    std::optional<plan::Plan> m_plan;
    bool m_runnable = false; // trellis-trainer can run m_plan
    QString m_planPath;
    launcher::RunOptions m_runOptions;

    PlanPanel *m_planPanel;
    EstimatePanel *m_estimate;
    class QDockWidget *m_planDock = nullptr;
    class QDockWidget *m_estimateDock = nullptr;
    Dashboard *m_dashboard;
    HistoryPanel *m_history;
    QPlainTextEdit *m_log;
    QAction *m_openAction = nullptr;
    QAction *m_launchAction = nullptr;
    QAction *m_stopAction = nullptr;
    QAction *m_reportAction = nullptr;
    QAction *m_saveAction = nullptr;
    QSystemTrayIcon *m_tray = nullptr;
};

} // namespace trellis::ui
