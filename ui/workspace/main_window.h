// The workbench window, in modes (the bar on the left, Ctrl+1…4): Start (nothing open yet: new,
// examples, recent plans and runs), Plan (the editor, the mesh as the central canvas, the
// estimate beside it), Run (the followed or opened run: its header, the dashboard grid, rank
// output) and History (the runs, their comparison, reports). Each mode's arrangement is saved;
// launching switches to Run; the title and the status line name the plan and the run. It only
// wires these together around one asynchronous HistoryReader and one RunFeed. Runs belong to their
// supervisors (trellis-cli run, started detached): the window follows one through its live feed,
// so closing or killing the window leaves the run going, and opening it again reattaches.
#pragma once

#include "launcher/history/history_reader.h"
#include "launcher/supervisor/supervisor.h"
#include "launcher/feed/run_feed.h"
#include "backend/plan/plan.h"

#include <QMainWindow>
#include <QSet>

#include <deque>
#include <vector>

#include <memory>
#include <optional>

class QAction;
class QComboBox;
class QLabel;
class QMenu;
class QPlainTextEdit;
class QSplitter;
class QStackedWidget;
class QSystemTrayIcon;
class QTabWidget;

namespace trellis::launcher::document {
class PlanDocument;
}

namespace trellis::ui {

class RunHeader;
namespace dashboards {
class Panel;
}
namespace plan_editor {
class PlanEditor;
class MeshCanvas;
}
class EstimatePanel;
class HistoryPanel;
class PlanPanel;
namespace workspace {
class DashboardGrid;
class StartPage;
}

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    // The wait after an edit for the next one before re-estimating (a spin box held down is one estimate).
    static constexpr int kEstimateDebounceMs = 50;
    enum class Mode { Start, Plan, Run, History };
    explicit MainWindow(const QString &databasePath, QWidget *parent = nullptr);
    ~MainWindow() override;

    // Opens a plan file as the document; a file that cannot be read or parsed leaves the open
    // document as it was and says why.
    bool loadPlan(const QString &path);
    // A new untitled document (after asking to save unsaved changes, when shown).
    void newPlan();
    bool savePlan();   // Save (Save As for an untitled plan); false when not saved
    bool savePlanTo(const QString &path);
    launcher::document::PlanDocument *document() const { return m_document; }
    plan_editor::PlanEditor *planEditor() const { return m_editor; }
    // Imports a DeepSpeed config ("deepspeed": JSON) or a Megatron-LM argument line ("megatron")
    // into the document as one undo step; the importer's warnings (and errors, when nothing was
    // imported) are shown to the person and returned through `messages`.
    bool importConfig(const QString &kind, const QByteArray &text, QStringList *messages = nullptr);
    // Asks whether to save unsaved changes; false when the person cancels.
    bool maybeSave();
    void launch();
    // Shows the Estimate tab and starts the planner's search for the loaded plan.
    void searchPlans();

    // For tests and scripted screenshots.
    RunHeader *runHeader() const { return m_runHeader; }
    HistoryPanel *historyPanel() const { return m_history; }
    EstimatePanel *estimatePanel() const { return m_estimate; }
    PlanPanel *planPanel() const { return m_planPanel; }
    plan_editor::MeshCanvas *meshCanvas() const { return m_meshCanvas; }
    const std::optional<plan::Plan> &plan() const { return m_plan; }
    launcher::RunFeed *feed() const { return m_feed; }
    QAction *stopAction() const { return m_stopAction; }
    // Follows a run a supervisor owns now (or shows it from the history when none does).
    void attachRun(const QString &runId);
    // The runs of this history that a supervisor owns now, newest first; attaches to the newest.
    QStringList reattachRunning();
    QAction *launchAction() const { return m_launchAction; }
    const std::vector<dashboards::Panel *> &panels() const { return m_panels; }
    // Shows a panel in its mode: a dashboard (training, throughput, breakdown, heatmap, timeline,
    // communication, memory, experts, health, events; one of a panel's views as training.dp,
    // throughput.flops) in Run; editor, mesh, plan, estimate (or an
    // Estimate tab as estimate.timeline, …) in Plan; or a mode by name (start, plan, run,
    // history). False for an unknown id.
    bool raisePanel(const QString &id);
    void setMode(Mode mode);
    Mode mode() const { return m_mode; }
    workspace::DashboardGrid *grid() const { return m_grid; }
    workspace::StartPage *startPage() const { return m_startPage; }
    class CompareView *compareView() const { return m_compare; }
    class RunSummaryView *runSummaryView() const { return m_runSummary; }
    // Opens the plan a run of the history was launched with as a new plan and launches it.
    void launchAgain(qint64 id);
    // History mode with a run (id, row number or "last") selected once the list has it.
    void selectInHistory(const QString &reference);
    QString statusLine() const; // the plan and the run, as the status bar shows them
    void setExamplesDirectory(const QString &directory);
    void openRun(const QString &reference); // show a recorded run (or follow it, if it is going)
    void compareRuns(const QStringList &references); // open the comparison of recorded runs
    // Writes the report of the run selected in the history (exactly one) to `path`, off this thread;
    // false when no single run is selected.
    bool exportReportTo(const QString &path);
    void setRunOptions(const launcher::RunOptions &options) { m_runOptions = options; }
    // The run history this window reads (a file's absolute path or a connection string).
    QString historyPath() const { return m_databasePath; }
    // Reads another history from now on (File › Run history, a plan's telemetry.history at launch):
    // the runs list, the start page, the calibration and what the next launch records into.
    // Refused, the reason returned, while a run is followed or jobs are listened for (their
    // records go to the history they began in) or for a connection string that does not parse.
    QString switchHistory(const QString &database);
    // The history was named on the command line (--db): a plan's telemetry.history does not move
    // this window's runs elsewhere (as with trellis-cli, --db comes first).
    void setHistoryPinned(bool pinned) { m_historyPinned = pinned; }

    // Listen for jobs (docs/collector.md): a `trellis-cli collect` for this history, detached like a
    // run's supervisor; each job that reports to it becomes a run, followed here when nothing else
    // is. Stopping it, or closing the window while it watches no job, ends it.
    void startListening(const QString &bind);
    void stopListening();
    QString listenerAddress() const { return m_collectorAddress; }
    QString listenerKeys() const { return m_collectorKeys; }
    QAction *listenAction() const { return m_listenAction; }

private:
    // The constructor's steps, in the order it takes them.
    QWidget *createPlanPage(); // editor | mesh | estimate and plan summary
    void connectPlanEditing();
    QWidget *createRunPage();  // run header, dashboard grid, rank output
    QWidget *createLogPane();
    void createDashboardPanels();
    QWidget *createHistoryPage(); // runs | comparison
    void connectStartPage();
    void connectHistoryReader();
    void followHistoryWrites();
    void chooseHistory();
    void connectHistoryPanel();
    void connectRunFeed();
    void restoreWindowLayout();
    void saveWindowLayout() const;
    void startHistoryRefresh();
    void createModeBar();
    void createActions();
    void updateTitle(); // the window title and the status line: plan, run and its state
    void startRun(const plan::Plan &thePlan); // its supervisor, for this plan as it stands
    void updateActions();
    void onRunFinished(launcher::RunState state, int exitCode, const QString &message);
    void notify(const QString &kind, const QString &message); // an alert from the run
    void exportReport();
    void appendLog(const QString &line, int rank = -1); // rank -1: mpirun's or the workbench's own
    void refilterLog();
    void clearLog();
    void closeEvent(QCloseEvent *event) override;
    void usePlan(const plan::Plan &plan);
    void savePlanAs();
    void createFileActions(); // main_window_document.cpp: File and Edit menus
    // createFileActions()'s steps, in the order it takes them.
    void createFileMenu();
    void fillImportMenu(QMenu *menu);
    void fillExportMenu(QMenu *menu);
    void createEditMenu();
    void createLanguageMenu(); // Settings › Language
    void connectDocument(); // the title, the modified mark, recent files and the debounced re-estimate
    void documentChanged();
    void addRecentFile(const QString &path);
    void updateRecentMenu();

    bool following() const; // a run is being followed live
    void chooseRunningRun();

    QString m_databasePath;
    bool m_historyPinned = false;
    std::unique_ptr<launcher::HistoryReader> m_reader;
    launcher::RunFeed *m_feed;
    QString m_launchLog; // the supervisor's output for a run this window launched
    std::optional<plan::Plan> m_plan;
    bool m_runnable = false; // trellis-trainer can run m_plan
    launcher::document::PlanDocument *m_document = nullptr;
    plan_editor::PlanEditor *m_editor = nullptr;
    class QTimer *m_estimateTimer = nullptr; // debounces re-estimation while editing
    class QMenu *m_recentMenu = nullptr;
    launcher::RunOptions m_runOptions;

    PlanPanel *m_planPanel;
    EstimatePanel *m_estimate;
    plan_editor::MeshCanvas *m_meshCanvas = nullptr;
    Mode m_mode = Mode::Start;
    QStackedWidget *m_pages = nullptr;
    workspace::StartPage *m_startPage = nullptr;
    workspace::DashboardGrid *m_grid = nullptr;
    QSplitter *m_planSplit = nullptr, *m_runSplit = nullptr, *m_historySplit = nullptr;
    QTabWidget *m_planTabs = nullptr;
    QAction *m_modeActions[4] = {};
    QLabel *m_statusLine = nullptr;
    QString m_shownRun, m_shownRunState; // the run the Run mode shows, and its state
    RunHeader *m_runHeader;
    HistoryPanel *m_history;
    QPlainTextEdit *m_log;
    QComboBox *m_rankFilter = nullptr;
    std::deque<std::pair<int, QString>> m_logLines; // (rank, line), the last 5000
    QSet<int> m_knownRanks;
    std::vector<dashboards::Panel *> m_panels;
    class CompareView *m_compare = nullptr;
    class RunSummaryView *m_runSummary = nullptr;
    QStackedWidget *m_historyRight = nullptr; // the selected run's summary, or a comparison
    qint64 m_summaryPlanOf = 0;               // the run whose plan m_summaryPlan holds
    QString m_summaryPlan;
    qint64 m_launchAgainWhenRead = 0; // a run asked to launch again before its plan was read
    bool m_toldRunModeShowsSelection = false;
    QString m_selectWhenListed;
    std::shared_ptr<const launcher::telemetry::DashboardSnapshot> m_lastSnapshot;
    QAction *m_openAction = nullptr;
    QAction *m_launchAction = nullptr;
    QAction *m_stopAction = nullptr;
    QAction *m_reportAction = nullptr;
    QAction *m_listenAction = nullptr;
    // The collector this window started (its pid, log, address once it listens), polled by a timer.
    qint64 m_collectorPid = 0;
    QString m_collectorLog, m_collectorAddress, m_collectorKeys;
    class QTimer *m_listenTimer = nullptr;
    // A team's history (PostgreSQL): the runs other supervisors wrote to since the last refresh,
    // and the timer that refreshes at most once a second (followHistoryWrites).
    QSet<QString> m_writtenRuns;
    class QTimer *m_writtenTimer = nullptr;
    QStringList m_collectedRuns; // the runs of its jobs seen so far
    void pollListener();
    void endListenerUnlessWatching();
    QAction *m_saveAction = nullptr;
    QAction *m_attachAction = nullptr;
    QSystemTrayIcon *m_tray = nullptr;
};

} // namespace trellis::ui
