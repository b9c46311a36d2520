// The workbench window. It only wires docks and actions together: the plan panel (left), the
// live dashboard (centre), the run history (right) and rank output (bottom), around one
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

namespace trellis::ui {

class Dashboard;
class HistoryPanel;
class PlanPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(const QString &databasePath, QWidget *parent = nullptr);
    ~MainWindow() override;

    bool loadPlan(const QString &path);
    void launch();

    // For tests and scripted screenshots.
    Dashboard *dashboard() const { return m_dashboard; }
    HistoryPanel *historyPanel() const { return m_history; }
    launcher::RunController *controller() const { return m_controller.get(); }
    QAction *launchAction() const { return m_launchAction; }
    void setRunOptions(const launcher::RunOptions &options) { m_runOptions = options; }

private:
    void createActions();
    void updateActions();
    void onRunFinished(launcher::RunState state, int exitCode, const QString &message);
    void exportReport();
    void appendLog(const QString &line);

    std::unique_ptr<launcher::HistoryWriter> m_writer;
    std::unique_ptr<launcher::HistoryReader> m_reader;
    std::unique_ptr<launcher::RunController> m_controller;
    std::optional<plan::Plan> m_plan;
    QString m_planPath;
    launcher::RunOptions m_runOptions;

    PlanPanel *m_planPanel;
    Dashboard *m_dashboard;
    HistoryPanel *m_history;
    QPlainTextEdit *m_log;
    QAction *m_openAction = nullptr;
    QAction *m_launchAction = nullptr;
    QAction *m_stopAction = nullptr;
    QAction *m_reportAction = nullptr;
};

} // namespace trellis::ui
