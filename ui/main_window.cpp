// See main_window.h.
#include "ui/main_window.h"

#include "plan/plan_json.h"
#include "plan/plan_validate.h"
#include "launcher/calibration_file.h"
#include "ui/dashboard.h"
#include "ui/estimate_panel.h"
#include "ui/history_panel.h"
#include "ui/plan_panel.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
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
      m_writer(std::make_unique<launcher::HistoryWriter>(databasePath)),
      m_reader(std::make_unique<launcher::HistoryReader>(databasePath)),
      m_planPanel(new PlanPanel(this)),
      m_estimate(new EstimatePanel(launcher::defaultCalibrationPath(databasePath), this)),
      m_dashboard(new Dashboard(this)),
      m_history(new HistoryPanel(this)),
      m_log(new QPlainTextEdit(this))
{
    setWindowTitle(tr("Trellis"));
    resize(1280, 800);
    setCentralWidget(m_dashboard);

    auto dock = [this](QWidget *w, const QString &title, Qt::DockWidgetArea area, const char *name) {
        auto *d = new QDockWidget(title, this);
        d->setObjectName(QString::fromLatin1(name));
        d->setWidget(w);
        addDockWidget(area, d);
        return d;
    };
    // Plan and Estimate share the left side as tabs.
    m_planDock = dock(m_planPanel, tr("Plan"), Qt::LeftDockWidgetArea, "planDock");
    m_planDock->setMinimumWidth(360);
    m_estimateDock = dock(m_estimate, tr("Estimate"), Qt::LeftDockWidgetArea, "estimateDock");
    tabifyDockWidget(m_planDock, m_estimateDock);
    m_planDock->raise();
    connect(m_estimate, &EstimatePanel::planChosen, this, &MainWindow::usePlan);
    dock(m_history, tr("Run history"), Qt::RightDockWidgetArea, "historyDock")->setMinimumWidth(300);
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(5000);
    m_log->setFont(QFont(QStringLiteral("monospace"), 8));
    dock(m_log, tr("Rank output"), Qt::BottomDockWidgetArea, "logDock")->setMaximumHeight(180);

    const QString writerError = m_writer->start();
    if (!writerError.isEmpty()) {
        appendLog(tr("Run history unavailable: %1").arg(writerError));
        statusBar()->showMessage(tr("Run history unavailable: %1").arg(writerError));
        m_writer.reset();
    }
    m_controller = std::make_unique<launcher::RunController>(m_writer.get());
    m_reader->startThread();

    connect(m_reader.get(), &launcher::HistoryReader::runsReady, m_history, &HistoryPanel::setRuns);
    connect(m_reader.get(), &launcher::HistoryReader::runReady, this, [this](const launcher::RunData &run) {
        if (m_controller->state() != RunState::Running && m_controller->state() != RunState::Launching)
            m_dashboard->showRun(run);
    });
    connect(m_reader.get(), &launcher::HistoryReader::failed, this,
            [this](const QString &message) { statusBar()->showMessage(message, 10000); });
    connect(m_reader.get(), &launcher::HistoryReader::reportWritten, this, [this](const QString &path, const QString &error) {
        statusBar()->showMessage(error.isEmpty() ? tr("Report written to %1").arg(path) : error, 10000);
    });
    connect(m_history, &HistoryPanel::runSelected, m_reader.get(), &launcher::HistoryReader::requestRun);

    connect(m_controller.get(), &launcher::RunController::stateChanged, this, [this](RunState state) {
        m_dashboard->setState(tr("Run %1: %2").arg(m_controller->runId(), launcher::toString(state)));
        statusBar()->showMessage(launcher::toString(state));
        updateActions();
        if (state == RunState::Running) // after the writer's next batch has committed the new state
            QTimer::singleShot(600, m_reader.get(), &launcher::HistoryReader::requestRuns);
    });
    connect(m_controller.get(), &launcher::RunController::outputLine, this, [this](int rank, bool isStderr, const QString &line) {
        appendLog((rank < 0 ? QStringLiteral("[mpirun] ") : QStringLiteral("[%1%2] ").arg(rank).arg(isStderr ? QStringLiteral(" err") : QString())) + line);
    });
    connect(m_controller.get(), &launcher::RunController::finished, this, &MainWindow::onRunFinished);
    connect(m_controller.get(), &launcher::RunController::alert, this, [this](const QString &kind, const QString &message) {
        notify(kind, message);
    });
    connect(m_controller.get(), &launcher::RunController::restarting, this, [this](int attempt, const QString &message) {
        m_dashboard->setState(tr("Run %1: restarting (attempt %2)").arg(m_controller->runId()).arg(attempt + 1),
                              message.section(QLatin1Char('\n'), 0, 0));
        appendLog(tr("[supervisor] %1").arg(message));
        statusBar()->showMessage(tr("Restarting: %1").arg(message.section(QLatin1Char(':'), 0, 0)), 10000);
    });

    createActions();
    updateActions();
    QMetaObject::invokeMethod(m_reader.get(), &launcher::HistoryReader::requestRuns);
}

MainWindow::~MainWindow()
{
    m_controller.reset();
    m_reader.reset();
    if (m_writer)
        m_writer->stop();
}

void MainWindow::createActions()
{
    auto *bar = addToolBar(tr("Run"));
    bar->setObjectName(QStringLiteral("runToolbar"));
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_openAction = bar->addAction(style()->standardIcon(QStyle::SP_DialogOpenButton), tr("Open plan…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open plan"), QFileInfo(m_planPath).absolutePath(),
                                                          tr("Plans (*.json)"));
        if (!path.isEmpty())
            loadPlan(path);
    });
    m_openAction->setShortcut(QKeySequence::Open);
    m_saveAction = bar->addAction(style()->standardIcon(QStyle::SP_DialogSaveButton), tr("Save plan as…"), this, &MainWindow::savePlanAs);
    m_saveAction->setShortcut(QKeySequence::SaveAs);
    m_launchAction = bar->addAction(style()->standardIcon(QStyle::SP_MediaPlay), tr("Launch"), this, &MainWindow::launch);
    m_launchAction->setShortcut(Qt::CTRL | Qt::Key_R);
    m_stopAction = bar->addAction(style()->standardIcon(QStyle::SP_MediaStop), tr("Stop"), this,
                                  [this] { m_controller->stop(); });
    m_reportAction = bar->addAction(style()->standardIcon(QStyle::SP_DialogSaveButton), tr("Export report…"), this,
                                    &MainWindow::exportReport);
}

void MainWindow::updateActions()
{
    const bool active = m_controller->state() == RunState::Launching || m_controller->state() == RunState::Running;
    m_launchAction->setEnabled(m_plan.has_value() && m_runnable && !active);
    m_stopAction->setEnabled(active);
    m_openAction->setEnabled(!active);
    m_saveAction->setEnabled(m_plan.has_value());
}

bool MainWindow::loadPlan(const QString &path)
{
    plan::Diagnostics warnings;
    auto loaded = plan::loadAndValidatePlanFile(path.toStdString(), &warnings);
    m_planPath = path;
    if (!loaded) {
        QStringList errors;
        for (const auto &e : loaded.errors())
            errors << QString::fromStdString(e.toString());
        m_planPanel->showError(path, errors);
        m_estimate->clear();
        m_plan.reset();
        statusBar()->showMessage(tr("Plan %1 has errors").arg(QFileInfo(path).fileName()));
        updateActions();
        return false;
    }
    QStringList notes;
    for (const auto &w : warnings)
        notes << QString::fromStdString(w.toString());
    m_plan = loaded.value();
    showLoadedPlan(notes);
    setWindowTitle(tr("Trellis — %1").arg(QFileInfo(path).fileName()));
    statusBar()->showMessage(tr("Loaded %1").arg(path), 5000);
    return true;
}

void MainWindow::showLoadedPlan(const QStringList &notes)
{
    QStringList all = notes;
    QStringList unsupported;
    for (const auto &d : plan::checkTrainerSupport(*m_plan))
        unsupported << QString::fromStdString(d.toString());
    m_runnable = unsupported.isEmpty();
    m_launchAction->setToolTip(m_runnable ? tr("Run the plan on this machine (Ctrl+R)")
                                          : tr("This plan can be estimated but not run yet:\n%1").arg(unsupported.join(QLatin1Char('\n'))));
    m_planPanel->showPlan(*m_plan, m_planPath, all, unsupported);
    m_estimate->showPlan(*m_plan);
    updateActions();
}

void MainWindow::searchPlans()
{
    m_estimateDock->raise();
    m_estimate->search();
}

void MainWindow::usePlan(const plan::Plan &chosen)
{
    QStringList notes;
    const plan::Diagnostics diagnostics = plan::validatePlan(chosen);
    for (const auto &d : diagnostics)
        notes << QString::fromStdString(d.toString());
    if (plan::hasErrors(diagnostics)) { // the planner only offers valid plans; guard anyway
        statusBar()->showMessage(tr("The chosen plan is not valid: %1").arg(notes.join(QStringLiteral("; "))), 10000);
        return;
    }
    m_plan = chosen;
    notes.prepend(tr("parallelism from the planner's search, not saved: File › Save plan as…"));
    showLoadedPlan(notes);
    statusBar()->showMessage(tr("Using the searched plan: dp %1 · tp %2 · pp %3 · cp %4")
                                 .arg(chosen.parallel.dp)
                                 .arg(chosen.parallel.tp)
                                 .arg(chosen.parallel.pp)
                                 .arg(chosen.parallel.cp),
                             8000);
}

void MainWindow::savePlanAs()
{
    if (!m_plan)
        return;
    const QString path = QFileDialog::getSaveFileName(this, tr("Save plan"), m_planPath, tr("Plans (*.json)"));
    if (path.isEmpty())
        return;
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(QByteArray::fromStdString(plan::planToJson(*m_plan))) < 0 || !file.commit()) {
        statusBar()->showMessage(tr("Could not save %1: %2").arg(path, file.errorString()), 10000);
        return;
    }
    m_planPath = path;
    setWindowTitle(tr("Trellis — %1").arg(QFileInfo(path).fileName()));
    statusBar()->showMessage(tr("Saved %1").arg(path), 5000);
}

void MainWindow::launch()
{
    if (!m_plan)
        return;
    m_log->clear();
    const QString error = m_controller->start(*m_plan, QFileInfo(m_planPath).absoluteFilePath(), m_runOptions);
    if (!error.isEmpty()) {
        appendLog(tr("Launch failed: %1").arg(error));
        m_dashboard->setState(tr("Launch failed"), error);
        auto *box = new QMessageBox(QMessageBox::Warning, tr("Launch failed"), error, QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        return;
    }
    appendLog(tr("$ %1").arg(m_controller->commandLine()));
    m_dashboard->attach(m_controller.get());
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

void MainWindow::onRunFinished(RunState state, int exitCode, const QString &message)
{
    m_dashboard->detach();
    m_dashboard->setState(tr("Run %1: %2").arg(m_controller->runId(), launcher::toString(state)),
                          state == RunState::Completed ? message : message.section(QLatin1Char('\n'), 0, 0));
    if (state == RunState::Failed) {
        appendLog(tr("Run failed (exit %1): %2").arg(exitCode).arg(message));
        auto *box = new QMessageBox(QMessageBox::Warning, tr("Run failed"), message, QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
    updateActions();
    // Give the writer a moment to commit the final rows before the list refreshes.
    QTimer::singleShot(500, m_reader.get(), &launcher::HistoryReader::requestRuns);
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
    if (path.isEmpty())
        return;
    QMetaObject::invokeMethod(m_reader.get(), [reader = m_reader.get(), id, path] { reader->requestReport(id, path); });
}

void MainWindow::appendLog(const QString &line) { m_log->appendPlainText(line); }

} // namespace trellis::ui
