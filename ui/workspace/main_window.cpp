// See main_window.h.
#include "launcher/history_location.h"
#include "ui/workspace/main_window.h"

#include "backend/plan/plan_json.h"
#include "backend/plan/plan_validate.h"
#include "launcher/document/calibration_file.h"
#include "ui/history/compare_view.h"
#include "ui/run/run_header.h"
#include "ui/estimate/estimate_panel.h"
#include "ui/history/history_panel.h"
#include "ui/history/run_summary_view.h"
#include "ui/plan/plan_panel.h"
#include "ui/plan/mesh_canvas.h"
#include "ui/plan/plan_editor.h"
#include "launcher/document/plan_document.h"
#include "ui/dashboards/breakdown_panel.h"
#include "ui/dashboards/communication_panel.h"
#include "ui/dashboards/events_panel.h"
#include "ui/dashboards/health_panel.h"
#include "ui/dashboards/stalls_panel.h"
#include "ui/dashboards/ranks_panel.h"
#include "ui/dashboards/experts_panel.h"
#include "ui/dashboards/heatmap_panel.h"
#include "ui/dashboards/memory_panel.h"
#include "ui/dashboards/metric_panel.h"
#include "ui/dashboards/timeline_panel.h"
#include "launcher/registry/run_registry.h"
#include "launcher/supervisor/supervisor_process.h"
#include "ui/run/launch_dialog.h"
#include "ui/workspace/dashboard_grid.h"
#include "ui/workspace/start_page.h"

#include <QAction>
#include <csignal>
#include <QLineEdit>
#include <QApplication>
#include <QActionGroup>
#include <QLabel>
#include <QMenuBar>
#include <QScreen>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QCloseEvent>
#include <QComboBox>
#include <QSettings>
#include <QTextCursor>
#include <QVBoxLayout>
#include <QInputDialog>
#include <QMessageBox>
#include <QSystemTrayIcon>
#include <QPlainTextEdit>
#include <QSaveFile>
#include <QStatusBar>
#include <QStyle>
#include <QTimer>
#include <QToolBar>

namespace trellis::ui {

using launcher::RunState;

MainWindow::MainWindow(const QString &databasePath, QWidget *parent)
    : QMainWindow(parent),
      m_databasePath(launcher::historyIdentity(databasePath)),
      m_reader(std::make_unique<launcher::HistoryReader>(databasePath)),
      m_feed(new launcher::RunFeed(this)),
      m_planPanel(new PlanPanel(this)),
      m_estimate(new EstimatePanel(launcher::defaultCalibrationPath(databasePath), this)),
      m_runHeader(new RunHeader(this)),
      m_history(new HistoryPanel(this)),
      m_log(new QPlainTextEdit(this))
{
    m_document = new launcher::document::PlanDocument(this);
    m_editor = new plan_editor::PlanEditor(m_document, this);
    m_meshCanvas = new plan_editor::MeshCanvas(m_document, this);
    m_compare = new CompareView(this);
    m_runSummary = new RunSummaryView(this);
    m_history->setDatabasePath(m_databasePath);
    m_startPage = new workspace::StartPage(this);
    m_grid = new workspace::DashboardGrid(this);
    setWindowTitle(tr("Trellis"));
    resize(1280, 800);
    m_pages = new QStackedWidget(this);
    m_pages->addWidget(m_startPage);
    m_pages->addWidget(createPlanPage());
    m_pages->addWidget(createRunPage());
    m_pages->addWidget(createHistoryPage());
    setCentralWidget(m_pages);
    m_statusLine = new QLabel(this);
    statusBar()->addPermanentWidget(m_statusLine);

    connectPlanEditing();
    createDashboardPanels();
    connectStartPage();
    connectHistoryReader();
    connectHistoryPanel();
    connectRunFeed();

    createFileActions();
    createModeBar();
    createActions();
    updateActions();
    restoreWindowLayout();
    setMode(Mode::Start);
    startHistoryRefresh();
    // Runs that outlived an earlier window: follow the newest again.
    QTimer::singleShot(0, this, [this] { reattachRunning(); });
}

void MainWindow::connectPlanEditing()
{
    auto refused = [this](const QString &message) {
        statusBar()->showMessage(tr("Not changed: %1").arg(message.section(QLatin1Char('\n'), 0, 0)), 8000);
    };
    connect(m_editor, &plan_editor::PlanEditor::editRefused, this, refused);
    connect(m_meshCanvas, &plan_editor::MeshCanvas::editRefused, this, refused);
    connect(m_estimate, &EstimatePanel::planChosen, this, &MainWindow::usePlan);
    connect(m_estimate, &EstimatePanel::pinnedPlanChosen, this, [this](const plan::Plan &pinned) {
        m_document->replacePlan(pinned, tr("Use pinned plan"));
    });
}

void MainWindow::createDashboardPanels()
{
    // The dashboards, in sections on the Run mode's grid, drawn from the run's snapshots.
    using launcher::telemetry::Metric;
    auto *training = new dashboards::MetricPanel(tr("Loss, grad norm, learning rate"), QStringLiteral("training"),
                                                 {Metric::Loss, Metric::GradNorm, Metric::Lr, Metric::LossScale, Metric::DpBytes}, false,
                                                 this);
    auto *throughput = new dashboards::MetricPanel(tr("Throughput and step time"), QStringLiteral("throughput"),
                                                   {Metric::TokensPerS, Metric::StepMs}, true, this);
    auto *heat = new dashboards::HeatMapPanel(this);
    auto *timeline = new dashboards::TimelinePanel(this);
    const std::vector<std::pair<QString, std::vector<dashboards::Panel *>>> sections = {
        {tr("Training"), {training}},
        {tr("Throughput"), {throughput}},
        {tr("Step time"), {new dashboards::BreakdownPanel(this), heat}},
        {tr("Pipeline"), {timeline}},
        {tr("Communication"), {new dashboards::CommunicationPanel(this)}},
        {tr("Memory"), {new dashboards::MemoryPanel(this)}},
        {tr("Experts"), {new dashboards::ExpertsPanel(this)}},
        {tr("Health"), {new dashboards::StallsPanel(this), new dashboards::HealthPanel(this), new dashboards::RanksPanel(this)}},
        {tr("Events"), {new dashboards::EventsPanel(this)}},
    };
    static const char *const ids[] = {"training", "throughput", "steptime", "pipeline", "communication", "memory", "experts", "health", "events"};
    for (std::size_t i = 0; i < sections.size(); ++i) {
        const QString id = QString::fromLatin1(ids[i]);
        m_grid->addSection(id, sections[i].first);
        for (dashboards::Panel *panel : sections[i].second) {
            m_panels.push_back(panel);
            m_grid->addPanel(id, panel);
            connect(panel, &dashboards::Panel::stepChosen, this, [this](qint64 step) {
                for (dashboards::Panel *p : m_panels)
                    p->markStep(step);
                statusBar()->showMessage(tr("Step %1 marked on the charts").arg(step), 5000);
            });
        }
    }
    connect(heat, &dashboards::HeatMapPanel::metricChosen, this, [this](Metric m) { m_feed->setHeatMetric(m); });
    connect(m_grid, &workspace::DashboardGrid::cursorMoved, this, [this](qint64 step) {
        if (step >= 0)
            statusBar()->showMessage(tr("step %1").arg(step), 2000);
    });
    connect(m_runHeader, &RunHeader::snapshotShown, this, [this](const auto &snapshot) {
        m_lastSnapshot = snapshot;
        m_grid->showSnapshot(snapshot); // only the panels on screen draw
    });
    connect(m_reader.get(), &launcher::HistoryReader::timelineReady, this, [this, timeline](const auto &view) {
        timeline->showTimeline(view);
        m_grid->refreshEmptyStates();
    });
}

void MainWindow::connectRunFeed()
{
    connect(m_feed, &launcher::RunFeed::stateChanged, this, [this](RunState state) {
        const bool watched = m_collectedRuns.contains(m_feed->runId()) || [this] {
            const auto record = launcher::RunRegistry::find(m_feed->runId());
            return record && record->watchedOnly;
        }();
        m_runHeader->setState(watched ? tr("Run %1: %2 (a job Trellis did not launch: watched, not stopped, from here)")
                                            .arg(m_feed->runId(), launcher::toString(state))
                                      : tr("Run %1: %2").arg(m_feed->runId(), launcher::toString(state)));
        statusBar()->showMessage(launcher::toString(state));
        m_shownRun = m_feed->runId();
        m_shownRunState = launcher::toString(state);
        updateTitle();
        updateActions();
        if (state == RunState::Running) // after the supervisor's writer has committed the new state
            QTimer::singleShot(600, m_reader.get(), &launcher::HistoryReader::requestRuns);
    });
    connect(m_feed, &launcher::RunFeed::outputLine, this, [this](int rank, bool isStderr, const QString &line) {
        appendLog((rank < 0 ? QStringLiteral("[mpirun] ") : QStringLiteral("[%1%2] ").arg(rank).arg(isStderr ? QStringLiteral(" err") : QString())) + line,
                  rank);
    });
    connect(m_feed, &launcher::RunFeed::finished, this, &MainWindow::onRunFinished);
    connect(m_feed, &launcher::RunFeed::alert, this, [this](const QString &kind, const QString &message) { notify(kind, message); });
    connect(m_feed, &launcher::RunFeed::restarting, this, [this](int attempt, const QString &message) {
        m_runHeader->setState(tr("Run %1: restarting (attempt %2)").arg(m_feed->runId()).arg(attempt + 1),
                              message.section(QLatin1Char('\n'), 0, 0));
        appendLog(tr("[supervisor] %1").arg(message));
        statusBar()->showMessage(tr("Restarting: %1").arg(message.section(QLatin1Char(':'), 0, 0)), 10000);
    });
}

void MainWindow::startHistoryRefresh()
{
    QMetaObject::invokeMethod(m_reader.get(), &launcher::HistoryReader::requestRuns);
    // While a run is followed, the history list catches up every few seconds (a query on the
    // reader's thread).
    auto *refresh = new QTimer(this);
    refresh->setInterval(3000);
    connect(refresh, &QTimer::timeout, this, [this] {
        if (!following())
            return;
        QMetaObject::invokeMethod(m_reader.get(), &launcher::HistoryReader::requestRuns);
        // The newest traced step of the run followed, while its timeline is on screen.
        if (m_grid->isOnScreen(m_grid->frame(QStringLiteral("timeline"))))
            QMetaObject::invokeMethod(m_reader.get(), [reader = m_reader.get(), id = m_feed->runId()] { reader->requestTimelineOf(id); });
    });
    refresh->start();
    // The grid's arrangement is saved as it changes (a crash keeps it too).
    connect(m_grid, &workspace::DashboardGrid::layoutChanged, this, [this] {
        QSettings settings;
        settings.setValue(QStringLiteral("workbench/version"), 2);
        m_grid->saveLayout(settings);
    });
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    if (!maybeSave()) {
        event->ignore();
        return;
    }
    endListenerUnlessWatching();
    saveWindowLayout();
    QMainWindow::closeEvent(event);
}

// The collector this window started ends with it unless it watches a job (then it goes on, like
// a run's supervisor, and `trellis-cli ps` lists its runs).
void MainWindow::endListenerUnlessWatching()
{
    if (!m_collectorPid)
        return;
    for (const launcher::RunRecord &r : launcher::RunRegistry::running())
        if (r.pid == m_collectorPid)
            return;
    stopListening();
}

MainWindow::~MainWindow()
{
    endListenerUnlessWatching();
    // Detaching only: the runs belong to their supervisors and go on.
    m_feed->detach();
    m_reader.reset();
}

bool MainWindow::following() const
{
    const RunState s = m_feed->state();
    return m_feed->isAttached() && (s == RunState::Launching || s == RunState::Running);
}

void MainWindow::attachRun(const QString &runId)
{
    const auto live = launcher::RunRegistry::find(runId);
    clearLog();
    m_launchLog.clear();
    m_feed->attach(runId, live ? live->feedEndpoint() : QString(), m_databasePath);
    m_runHeader->attach(m_feed);
    m_runHeader->setState(tr("Run %1: %2").arg(runId, !live                ? tr("from the history")
                                                      : live->watchedOnly ? tr("following a job Trellis did not launch")
                                                                          : tr("following")));
    m_shownRun = runId;
    m_shownRunState = live ? tr("following") : tr("from the history");
    updateTitle();
    setMode(Mode::Run);
    appendLog(live ? tr("[workbench] following run %1 (supervisor pid %2)").arg(runId).arg(live->pid)
                   : tr("[workbench] run %1 is not supervised any more; showing the history").arg(runId));
    updateActions();
}

QStringList MainWindow::reattachRunning()
{
    // A job whose supervisor died goes on: give it a new supervisor, then follow it like the rest.
    for (const launcher::RunRecord &r : launcher::RunRegistry::orphaned())
        if (launcher::historyIdentity(r.database) == m_databasePath) {
            const auto adopted = launcher::adoptOrphan(r.runId, m_databasePath);
            appendLog(adopted.error.isEmpty()
                          ? tr("[workbench] run %1 had lost its supervisor; a new one (pid %2) adopts it").arg(r.runId).arg(adopted.pid)
                          : adopted.error);
            if (adopted.error.isEmpty() && !following()) {
                m_feed->attach(r.runId, launcher::RunRegistry::feedEndpoint(r.runId), m_databasePath);
                m_runHeader->attach(m_feed);
                m_runHeader->setState(tr("Run %1: adopting").arg(r.runId));
            }
        }
    QStringList ids;
    for (const launcher::RunRecord &r : launcher::RunRegistry::running())
        if (launcher::historyIdentity(r.database) == m_databasePath)
            ids << r.runId;
    if (!ids.isEmpty() && !following()) {
        attachRun(ids.first());
        statusBar()->showMessage(ids.size() == 1 ? tr("Reattached to run %1, still going").arg(ids.first())
                                                 : tr("Reattached to run %1; %2 runs are going (Run › Attach to a running run)")
                                                       .arg(ids.first())
                                                       .arg(ids.size()),
                                 10000);
    }
    m_attachAction->setEnabled(true);
    return ids;
}

void MainWindow::chooseRunningRun()
{
    QStringList ids;
    for (const launcher::RunRecord &r : launcher::RunRegistry::running())
        if (launcher::historyIdentity(r.database) == m_databasePath)
            ids << r.runId;
    if (ids.isEmpty()) {
        statusBar()->showMessage(tr("No run of this history is going now"), 5000);
        return;
    }
    bool ok = false;
    const QString id = QInputDialog::getItem(this, tr("Attach to a running run"), tr("Runs going now:"), ids, 0, false, &ok);
    if (ok && !id.isEmpty())
        attachRun(id);
}

void MainWindow::createActions()
{
    auto *bar = addToolBar(tr("Run"));
    bar->setObjectName(QStringLiteral("runToolbar"));
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->addAction(m_openAction);
    bar->addAction(m_saveAction);
    m_launchAction = bar->addAction(style()->standardIcon(QStyle::SP_MediaPlay), tr("Launch"), this, &MainWindow::launch);
    m_launchAction->setShortcut(Qt::CTRL | Qt::Key_R);
    m_stopAction = bar->addAction(style()->standardIcon(QStyle::SP_MediaStop), tr("Stop"), this, [this] {
        if (const QString e = launcher::stopSupervisedRun(m_feed->runId()); !e.isEmpty())
            statusBar()->showMessage(e, 8000);
        else
            statusBar()->showMessage(tr("Asked the supervisor to stop run %1").arg(m_feed->runId()), 5000);
    });
    m_attachAction = bar->addAction(style()->standardIcon(QStyle::SP_BrowserReload), tr("Attach…"), this,
                                    &MainWindow::chooseRunningRun);
    m_attachAction->setToolTip(tr("Follow a run that is going now (runs outlive this window)"));
    m_reportAction = bar->addAction(style()->standardIcon(QStyle::SP_DialogSaveButton), tr("Export report…"), this,
                                    &MainWindow::exportReport);
    m_listenAction = bar->addAction(style()->standardIcon(QStyle::SP_DriveNetIcon), tr("Listen for jobs…"), this, [this] {
        if (m_collectorPid) {
            stopListening();
            return;
        }
        bool ok = false;
        const QString bind = QInputDialog::getText(this, tr("Listen for jobs"),
                                                   tr("Jobs Trellis did not launch (sbatch, torchrun, mpirun by hand) report to this "
                                                      "address; each becomes a run here:"),
                                                   QLineEdit::Normal, QStringLiteral("tcp://0.0.0.0:7700"), &ok);
        if (ok && !bind.trimmed().isEmpty())
            startListening(bind.trimmed());
    });
    m_listenAction->setToolTip(tr("Watch jobs Trellis did not launch: they report here with two environment variables"));
    m_listenTimer = new QTimer(this);
    m_listenTimer->setInterval(500);
    connect(m_listenTimer, &QTimer::timeout, this, &MainWindow::pollListener);
}

void MainWindow::startListening(const QString &bind)
{
    if (m_collectorPid)
        return;
    const launcher::SupervisorStart started = launcher::startCollector(m_databasePath, bind);
    if (!started.error.isEmpty()) {
        statusBar()->showMessage(started.error, 10000);
        appendLog(QStringLiteral("[workbench] ") + started.error);
        return;
    }
    m_collectorPid = started.pid;
    m_collectorLog = started.logPath;
    m_collectorAddress.clear();
    m_collectorKeys.clear();
    m_collectedRuns.clear();
    m_listenAction->setText(tr("Stop listening"));
    appendLog(tr("[workbench] starting a collector (pid %1) on %2; its log: %3").arg(m_collectorPid).arg(bind, m_collectorLog));
    m_listenTimer->start();
}

void MainWindow::stopListening()
{
    if (!m_collectorPid)
        return;
    ::kill(static_cast<pid_t>(m_collectorPid), SIGTERM); // its jobs' runs end as stopped; the jobs go on
    appendLog(tr("[workbench] stopped listening for jobs (collector pid %1)").arg(m_collectorPid));
    statusBar()->showMessage(tr("Stopped listening for jobs"), 5000);
    m_collectorPid = 0;
    m_collectorAddress.clear();
    m_listenTimer->stop();
    m_listenAction->setText(tr("Listen for jobs…"));
}

// Twice a second while listening: the collector's address once it listens (or why it stopped),
// then the runs of new jobs, the newest followed when no run is.
void MainWindow::pollListener()
{
    if (m_collectorAddress.isEmpty()) {
        const launcher::CollectorListening l = launcher::collectorListening(m_collectorLog);
        if (!l.error.isEmpty() || ::kill(static_cast<pid_t>(m_collectorPid), 0) != 0) {
            const QString why = l.error.isEmpty() ? tr("the collector ended (see %1)").arg(m_collectorLog) : l.error;
            statusBar()->showMessage(why, 15000);
            appendLog(QStringLiteral("[workbench] ") + why);
            m_collectorPid = 0;
            m_listenTimer->stop();
            m_listenAction->setText(tr("Listen for jobs…"));
            return;
        }
        if (l.address.isEmpty())
            return;
        m_collectorAddress = l.address;
        m_collectorKeys = l.jobKeys;
        appendLog(tr("[workbench] listening for jobs at %1; give each job: TRELLIS_COLLECTOR=%1 TRELLIS_COLLECTOR_KEYS=%2")
                      .arg(m_collectorAddress, m_collectorKeys));
        statusBar()->showMessage(tr("Listening for jobs at %1").arg(m_collectorAddress), 10000);
        m_listenAction->setToolTip(tr("Jobs report with TRELLIS_COLLECTOR=%1 TRELLIS_COLLECTOR_KEYS=%2; click to stop listening")
                                       .arg(m_collectorAddress, m_collectorKeys));
    }
    for (const launcher::RunRecord &r : launcher::RunRegistry::running()) {
        if (r.pid != m_collectorPid || m_collectedRuns.contains(r.runId))
            continue;
        m_collectedRuns << r.runId;
        if (!following()) {
            attachRun(r.runId);
            statusBar()->showMessage(tr("Following run %1, a job Trellis did not launch").arg(r.runId), 10000);
        }
    }
}

void MainWindow::updateActions()
{
    const bool active = following();
    m_launchAction->setEnabled(m_plan.has_value() && m_runnable && !active);
    // A job Trellis did not launch is watched, not stopped, from here.
    const auto record = active ? launcher::RunRegistry::find(m_feed->runId()) : std::nullopt;
    const bool watchedOnly = record && record->watchedOnly;
    m_stopAction->setEnabled(active && !watchedOnly);
    m_stopAction->setToolTip(watchedOnly ? tr("Trellis did not launch this job: stop it with its own launcher (scancel, kill, torchrun)")
                                         : tr("Stop the run"));
    m_openAction->setEnabled(!active);
    m_saveAction->setEnabled(m_plan.has_value());
}

void MainWindow::launch()
{
    if (!m_plan || following())
        return;
    if (!m_runnable) {
        statusBar()->showMessage(tr("This plan can be estimated but not run yet"), 8000);
        return;
    }
    if (m_plan->launch.target != plan::LaunchTarget::Local) {
        // Runs that leave this machine go through the launch dialog: target, preflight table, keys.
        auto *dialog = new ui::LaunchDialog(*m_plan,
                                            m_runOptions.trainerPath.isEmpty() ? launcher::Supervisor::defaultTrainerPath(&*m_plan)
                                                                               : m_runOptions.trainerPath,
                                            this);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        connect(dialog, &QDialog::accepted, this, [this, dialog] { startRun(dialog->plan()); });
        dialog->open();
        return;
    }
    startRun(*m_plan);
}

void MainWindow::startRun(const plan::Plan &thePlan)
{
    if (following())
        return;
    clearLog();
    // A plan that names its history (telemetry.history) records its runs there, and the window
    // reads that history from now on; unless --db named this window's.
    const QString named = launcher::planHistory(QString::fromStdString(thePlan.telemetry.history), m_document->filePath());
    if (!m_historyPinned && !named.isEmpty() && launcher::historyIdentity(named) != m_databasePath) {
        if (const QString why = switchHistory(named); !why.isEmpty()) {
            appendLog(tr("Launch failed: the plan records its runs in %1, and the workbench cannot switch to it: %2").arg(named, why));
            m_runHeader->setState(tr("Launch failed"), why);
            return;
        }
        appendLog(tr("[workbench] the plan records its runs in %1 (telemetry.history)").arg(named));
    }
    // The run belongs to a supervisor of its own (trellis-cli run, in its own session): this window
    // only follows it.
    const launcher::SupervisorStart started =
        launcher::startSupervisor(thePlan, m_document->filePath(), m_databasePath, m_runOptions);
    if (!started.error.isEmpty()) {
        appendLog(tr("Launch failed: %1").arg(started.error));
        m_runHeader->setState(tr("Launch failed"), started.error);
        auto *box = new QMessageBox(QMessageBox::Warning, tr("Launch failed"), started.error, QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        return;
    }
    appendLog(tr("[workbench] run %1: supervisor pid %2, log %3").arg(started.runId).arg(started.pid).arg(started.logPath));
    m_feed->attach(started.runId, launcher::RunRegistry::feedEndpoint(started.runId), m_databasePath);
    m_launchLog = started.logPath;
    m_runHeader->attach(m_feed);
    m_runHeader->setState(tr("Run %1: launching").arg(started.runId));
    m_shownRun = started.runId;
    m_shownRunState = tr("launching");
    updateTitle();
    setMode(Mode::Run); // launching switches to the run's dashboards
    updateActions();
}

void MainWindow::notify(const QString &kind, const QString &message)
{
    // A desktop notification where the desktop has a tray; the status bar and the log always.
    appendLog(tr("[alert: %1] %2").arg(kind, message));
    statusBar()->showMessage(tr("Alert (%1): %2").arg(kind, message.section(QLatin1Char('\n'), 0, 0)), 15000);
    if (QSystemTrayIcon::isSystemTrayAvailable()) {
        if (!m_tray) {
            m_tray = new QSystemTrayIcon(windowIcon().isNull() ? style()->standardIcon(QStyle::SP_MessageBoxWarning) : windowIcon(), this);
            m_tray->show();
        }
        m_tray->showMessage(tr("Trellis: %1").arg(kind), message.section(QLatin1Char('\n'), 0, 0),
                            kind == QLatin1String("straggler") || kind == QLatin1String("restart") ? QSystemTrayIcon::Warning
                                                                                                  : QSystemTrayIcon::Critical,
                            15000);
    }
}

void MainWindow::onRunFinished(RunState state, int exitCode, const QString &theMessage)
{
    QString message = theMessage;
    // A supervisor that refused the run before recording it said why in its log (a few lines).
    if (state == RunState::Failed && !m_launchLog.isEmpty() && m_feed->progress().ranksReporting == 0) {
        QFile log(m_launchLog);
        if (log.open(QIODevice::ReadOnly))
            if (const QString text = QString::fromUtf8(log.read(4096)).trimmed(); !text.isEmpty())
                message = text;
    }
    m_runHeader->detach();
    m_runHeader->setState(tr("Run %1: %2").arg(m_feed->runId(), launcher::toString(state)),
                          state == RunState::Completed ? message : message.section(QLatin1Char('\n'), 0, 0));
    m_shownRunState = launcher::toString(state);
    updateTitle();
    // One place says a run failed and why: the run header (its first line; the whole of it in the
    // log below and in the History summary). The status line and a desktop notification only point
    // there; a message box saying it again was a second copy to click away.
    if (state == RunState::Failed)
        appendLog(tr("Run failed (exit %1): %2").arg(exitCode).arg(message));
    updateActions();
    // The supervisor has committed the final rows before it said the run ended.
    QTimer::singleShot(500, m_reader.get(), &launcher::HistoryReader::requestRuns);
    QTimer::singleShot(500, m_reader.get(), [reader = m_reader.get(), id = m_feed->runId()] { reader->requestTimelineOf(id); });
}

void MainWindow::exportReport()
{
    const qint64 id = m_history->selectedRunId();
    if (id <= 0) {
        statusBar()->showMessage(tr("Select a run in the history first"), 5000);
        return;
    }
    const QString path = QFileDialog::getSaveFileName(this, tr("Export report"), QStringLiteral("trellis-report.html"),
                                                      tr("HTML (*.html)"));
    if (!path.isEmpty())
        exportReportTo(path);
}

bool MainWindow::exportReportTo(const QString &path)
{
    const qint64 id = m_history->selectedRunId();
    if (id <= 0)
        return false;
    QMetaObject::invokeMethod(m_reader.get(), [reader = m_reader.get(), id, path] { reader->requestReport(id, path); });
    return true;
}

void MainWindow::appendLog(const QString &line, int rank)
{
    m_logLines.emplace_back(rank, line);
    if (m_logLines.size() > 5000)
        m_logLines.pop_front();
    if (rank >= 0 && !m_knownRanks.contains(rank)) {
        m_knownRanks.insert(rank);
        // Ranks in order after the two fixed entries.
        int at = 2;
        while (at < m_rankFilter->count() && m_rankFilter->itemData(at).toInt() < rank)
            ++at;
        m_rankFilter->insertItem(at, tr("rank %1").arg(rank), rank);
    }
    const int filter = m_rankFilter->currentData().toInt();
    if (filter == -2 || filter == rank)
        m_log->appendPlainText(line);
}

void MainWindow::refilterLog()
{
    const int filter = m_rankFilter->currentData().toInt();
    QStringList shown;
    for (const auto &[rank, line] : m_logLines)
        if (filter == -2 || filter == rank)
            shown << line;
    m_log->setPlainText(shown.join(QLatin1Char('\n')));
    m_log->moveCursor(QTextCursor::End);
}

void MainWindow::clearLog()
{
    m_log->clear();
    m_logLines.clear();
}

} // namespace trellis::ui
