// MainWindow's history side (see main_window.h): the history reader's answers wired to the
// dashboards, the runs table and the run summary; selecting, opening, comparing and launching again
// a run of the history. Split from main_window.cpp.
#include "ui/workspace/main_window.h"

#include "backend/plan/plan_json.h"
#include "launcher/document/calibration_file.h"
#include "launcher/document/plan_document.h"
#include "launcher/history/history_engine.h"
#include "launcher/history_location.h"
#include "launcher/registry/run_registry.h"
#include "ui/estimate/estimate_panel.h"
#include "ui/history/compare_view.h"
#include "ui/history/history_panel.h"
#include "ui/history/run_summary_view.h"
#include "ui/run/run_header.h"
#include "ui/workspace/dashboard_grid.h"
#include "ui/workspace/start_page.h"

#include <QStackedWidget>
#include <QStatusBar>
#include <QTimer>

#include <utility>

namespace trellis::ui {

void MainWindow::connectHistoryReader()
{
    m_reader->startThread();
    connect(m_reader.get(), &launcher::HistoryReader::runsReady, m_history, &HistoryPanel::setRuns);
    connect(m_reader.get(), &launcher::HistoryReader::recentRunsReady, m_startPage, &workspace::StartPage::setRecentRuns);
    connect(m_reader.get(), &launcher::HistoryReader::runReady, this, [this](const launcher::RunData &run) {
        if (run.run.id == m_runSummary->runId()) {
            m_runSummary->showRun(run);
            m_summaryPlanOf = run.run.id;
            m_summaryPlan = run.planJson;
            if (std::exchange(m_launchAgainWhenRead, 0) == run.run.id) {
                launchAgain(run.run.id);
                return;
            }
        }
        // A run still going is followed live (backfill from the history, then its feed).
        if (run.run.status == QLatin1String("running") || run.run.status == QLatin1String("launching")) {
            if (!(following() && m_feed->runId() == run.run.runId) && launcher::RunRegistry::find(run.run.runId)) {
                attachRun(run.run.runId);
                return;
            }
        }
        if (!following()) {
            m_runHeader->showRun(run);
            m_shownRun = run.run.runId;
            m_shownRunState = run.run.status;
            updateTitle();
            // Said once a session: the run selected in History is the one Run mode's dashboards show.
            if (m_mode != Mode::Run && !std::exchange(m_toldRunModeShowsSelection, true))
                statusBar()->showMessage(tr("Run %1 opened: its dashboards are in Run mode (Ctrl+3)").arg(run.run.runId), 6000);
        }
    });
    connect(m_reader.get(), &launcher::HistoryReader::failed, this,
            [this](const QString &message) { statusBar()->showMessage(message, 10000); });
    connect(m_reader.get(), &launcher::HistoryReader::runMissing, this, [this](const QString &message) {
        // A run deleted while shown (or never there): the dashboards say so rather than keep it.
        if (following())
            return;
        m_runHeader->setState(tr("No run open"), message);
        m_grid->showSnapshot(nullptr);
        m_shownRun.clear();
        updateTitle();
        QMetaObject::invokeMethod(m_reader.get(), &launcher::HistoryReader::requestRuns); // the list without it
    });
    connect(m_reader.get(), &launcher::HistoryReader::reportWritten, this, [this](const QString &path, const QString &error) {
        statusBar()->showMessage(error.isEmpty() ? tr("Report written to %1").arg(path) : error, 10000);
    });
    connect(m_reader.get(), &launcher::HistoryReader::comparisonReady, this, [this](const launcher::Comparison &comparison) {
        m_compare->show(comparison);
        m_historyRight->setCurrentWidget(m_compare);
        setMode(Mode::History);
    });
    connect(m_reader.get(), &launcher::HistoryReader::runSnapshotReady, this, [this](const auto &snapshot) {
        m_runSummary->showSnapshot(snapshot);
        if (!following())
            m_runHeader->showSnapshot(snapshot);
    });
}

// History mode: the runs table asks the reader for what it shows and changes; the right-hand pane
// shows the one run selected.
void MainWindow::connectHistoryPanel()
{
    connect(m_reader.get(), &launcher::HistoryReader::runFiguresReady, this, [this](const launcher::RunSummary &run) {
        m_history->updateRun(run);
        if (run.id == m_runSummary->runId())
            m_runSummary->showSummary(run);
    });
    connect(m_reader.get(), &launcher::HistoryReader::runsReady, this, [this](const QList<launcher::RunSummary> &runs) {
        // The run shown, as the list now holds it: a tag, note or name just changed shows at once.
        for (const launcher::RunSummary &r : runs)
            if (r.id == m_runSummary->runId()) {
                m_runSummary->showSummary(r);
                break;
            }
        if (m_selectWhenListed.isEmpty() || runs.isEmpty())
            return;
        for (const launcher::RunSummary &r : runs)
            if (m_selectWhenListed == QLatin1String("last") || r.runId == m_selectWhenListed || QString::number(r.id) == m_selectWhenListed) {
                m_history->selectRunIds({r.id});
                break;
            }
        m_selectWhenListed.clear();
    });
    connect(m_reader.get(), &launcher::HistoryReader::filterFailed, m_history, &HistoryPanel::showFilterError);
    connect(m_reader.get(), &launcher::HistoryReader::runsEdited, this, [this](const QString &message, const QString &error) {
        m_history->showEditResult(message, error);
        statusBar()->showMessage(error.isEmpty() ? message : error.section(QLatin1Char('\n'), 0, 0), 8000);
    });
    connect(m_history, &HistoryPanel::runSelected, this, [this](qint64 id) {
        if (id != m_launchAgainWhenRead)
            m_launchAgainWhenRead = 0; // another run chosen: the one asked for is not launched later
        if (const launcher::RunSummary *r = m_history->runById(id))
            m_runSummary->showSummary(*r);
        m_historyRight->setCurrentWidget(m_runSummary);
        QMetaObject::invokeMethod(m_reader.get(), [reader = m_reader.get(), id] { reader->requestRun(id); });
    });
    connect(m_history, &HistoryPanel::selectionCleared, this, [this] {
        m_launchAgainWhenRead = 0;
        m_runSummary->clear(tr("Select a run to see its summary here; select two or more and press Compare to set them side by side."));
    });
    connect(m_history, &HistoryPanel::compareRequested, m_reader.get(), &launcher::HistoryReader::requestComparison);
    connect(m_history, &HistoryPanel::openRequested, this, [this](qint64 id) { openRun(QString::number(id)); });
    connect(m_history, &HistoryPanel::reportRequested, this, &MainWindow::exportReport);
    connect(m_history, &HistoryPanel::launchAgainRequested, this, &MainWindow::launchAgain);
    connect(m_history, &HistoryPanel::filterChanged, m_reader.get(), &launcher::HistoryReader::setRunFilter);
    connect(m_history, &HistoryPanel::editRequested, m_reader.get(), &launcher::HistoryReader::editRuns);
    followHistoryWrites();
}

// A team's history: runs other users' supervisors write (on any machine, so without a live feed
// here) reach this window through the reader's notifications; the runs list and the run shown
// are read again, at most once a second, while it writes.
void MainWindow::followHistoryWrites()
{
    m_writtenTimer = new QTimer(this);
    m_writtenTimer->setSingleShot(true);
    m_writtenTimer->setInterval(1000);
    connect(m_reader.get(), &launcher::HistoryReader::runWritten, this, [this](const QString &runId) {
        m_writtenRuns.insert(runId);
        if (!m_writtenTimer->isActive())
            m_writtenTimer->start();
    });
    connect(m_writtenTimer, &QTimer::timeout, this, [this] {
        const QSet<QString> written = std::exchange(m_writtenRuns, {});
        QMetaObject::invokeMethod(m_reader.get(), &launcher::HistoryReader::requestRuns);
        if (!following() && !m_shownRun.isEmpty() && written.contains(m_shownRun))
            QMetaObject::invokeMethod(m_reader.get(), [reader = m_reader.get(), runId = m_shownRun] { reader->requestRunOf(runId); });
    });
}

QString MainWindow::switchHistory(const QString &database)
{
    const QString identity = launcher::historyIdentity(database);
    if (identity == m_databasePath)
        return {};
    if (following())
        return tr("run %1 is being followed (its records go to %2): switch once it has ended").arg(m_feed->runId(), m_databasePath);
    if (m_collectorPid)
        return tr("the workbench listens for jobs into %1: stop listening first").arg(m_databasePath);
    if (launcher::isServerHistory(database))
        if (const QString why = launcher::parseServerConnection(database, nullptr); !why.isEmpty())
            return why;
    m_databasePath = identity;
    m_history->setDatabasePath(identity);
    m_estimate->setCalibrationPath(launcher::defaultCalibrationPath(database));
    m_shownRun.clear();
    m_shownRunState.clear();
    m_selectWhenListed.clear();
    // The reader closes the old history and lists the new one on its thread (a server's connection
    // is never waited for here).
    QMetaObject::invokeMethod(m_reader.get(), [reader = m_reader.get(), database] { reader->switchTo(database); });
    updateTitle();
    appendLog(tr("[workbench] run history: %1").arg(identity));
    statusBar()->showMessage(tr("Run history: %1").arg(identity), 10000);
    return {};
}

void MainWindow::selectInHistory(const QString &reference)
{
    m_selectWhenListed = reference;
    setMode(Mode::History);
    QMetaObject::invokeMethod(m_reader.get(), &launcher::HistoryReader::requestRuns);
}

void MainWindow::launchAgain(qint64 id)
{
    if (following()) {
        statusBar()->showMessage(tr("A run is being followed: launch again when it has ended"), 8000);
        return;
    }
    if (id != m_summaryPlanOf || m_summaryPlan.isEmpty()) {
        // Asked for before the history's read of that run has come back: launched when it has.
        m_launchAgainWhenRead = id;
        statusBar()->showMessage(tr("Reading the run's plan from the history: it launches when read"), 5000);
        return;
    }
    auto parsed = plan::parsePlan(m_summaryPlan.toStdString());
    if (!parsed) {
        statusBar()->showMessage(tr("The run's recorded plan cannot be read: %1").arg(QString::fromStdString(parsed.errorText())), 10000);
        return;
    }
    if (!maybeSave())
        return;
    m_document->newDocument(parsed.value());
    m_estimate->clearSearch();
    updateTitle();
    setMode(Mode::Plan);
    launch();
}

void MainWindow::openRun(const QString &reference)
{
    setMode(Mode::Run);
    QMetaObject::invokeMethod(m_reader.get(), [reader = m_reader.get(), reference] { reader->requestRunOf(reference); });
}

void MainWindow::compareRuns(const QStringList &references)
{
    setMode(Mode::History);
    QMetaObject::invokeMethod(m_reader.get(), [reader = m_reader.get(), references] { reader->requestComparisonOf(references); });
}

} // namespace trellis::ui
