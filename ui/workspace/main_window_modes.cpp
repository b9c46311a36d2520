// See main_window.h: the window's modes — each mode's page (Plan, Run, History; the start page is
// ui/workspace/start_page.h), the mode bar, the title and status line, the saved layouts and
// raisePanel(). main_window.cpp wires the run and the history; main_window_document.cpp the plan.
#include "ui/workspace/main_window.h"

#include "ui/history/compare_view.h"
#include "ui/run/run_header.h"
#include "ui/estimate/estimate_panel.h"
#include "ui/history/history_panel.h"
#include "ui/history/run_summary_view.h"
#include "ui/plan/plan_panel.h"
#include "ui/plan/mesh_canvas.h"
#include "ui/plan/plan_editor.h"
#include "launcher/document/plan_document.h"
#include "ui/workspace/dashboard_grid.h"
#include "ui/workspace/panel_frame.h"
#include "ui/dashboards/panel.h"
#include "ui/workspace/start_page.h"

#include <QAction>
#include <QActionGroup>
#include <QComboBox>
#include <QLabel>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QScreen>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStyle>
#include <QTabWidget>
#include <QToolBar>
#include <QVBoxLayout>

namespace trellis::ui {

QWidget *MainWindow::createPlanPage()
{
    // The editor's fields on the left, the mesh filling the centre, the estimate (and the plan's
    // summary) on the right.
    m_planSplit = new QSplitter(Qt::Horizontal, this);
    m_planSplit->setObjectName(QStringLiteral("planSplit"));
    m_planSplit->setChildrenCollapsible(false);
    m_editor->setMinimumWidth(340);
    m_planTabs = new QTabWidget(m_planSplit);
    m_planTabs->setObjectName(QStringLiteral("planTabs"));
    m_planTabs->addTab(m_estimate, tr("Estimate"));
    m_planTabs->addTab(m_planPanel, tr("Plan"));
    m_planTabs->setMinimumWidth(340);
    m_planSplit->addWidget(m_editor);
    m_planSplit->addWidget(m_meshCanvas);
    m_planSplit->addWidget(m_planTabs);
    m_planSplit->setStretchFactor(0, 0);
    m_planSplit->setStretchFactor(1, 1);
    m_planSplit->setStretchFactor(2, 0);
    m_planSplit->setSizes({400, 480, 420});
    return m_planSplit;
}

QWidget *MainWindow::createRunPage()
{
    // The run's header (state, progress, figures), then the dashboards over the rank output.
    auto *page = new QWidget(this);
    auto *layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_runHeader);
    m_runSplit = new QSplitter(Qt::Vertical, page);
    m_runSplit->setObjectName(QStringLiteral("runSplit"));
    m_runSplit->addWidget(m_grid);
    m_runSplit->addWidget(createLogPane());
    m_runSplit->setStretchFactor(0, 1);
    m_runSplit->setStretchFactor(1, 0);
    m_runSplit->setSizes({600, 110});
    layout->addWidget(m_runSplit, 1);
    return page;
}

QWidget *MainWindow::createLogPane()
{
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(5000);
    m_log->setFont(QFont(QStringLiteral("monospace"), 8));
    // Rank output with a filter: every rank, one rank, or mpirun and the workbench's own lines.
    auto *logBox = new QWidget(this);
    auto *logLayout = new QVBoxLayout(logBox);
    logLayout->setContentsMargins(4, 2, 4, 2);
    logLayout->setSpacing(2);
    auto *bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Rank output"), logBox));
    m_rankFilter = new QComboBox(logBox);
    m_rankFilter->addItem(tr("all ranks"), -2);
    m_rankFilter->addItem(tr("mpirun and workbench"), -1);
    m_rankFilter->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    bar->addWidget(m_rankFilter);
    bar->addStretch(1);
    logLayout->addLayout(bar);
    logLayout->addWidget(m_log, 1);
    connect(m_rankFilter, &QComboBox::currentIndexChanged, this, [this] { refilterLog(); });
    return logBox;
}

QWidget *MainWindow::createHistoryPage()
{
    m_historySplit = new QSplitter(Qt::Horizontal, this);
    m_historySplit->setObjectName(QStringLiteral("historySplit"));
    m_historySplit->addWidget(m_history);
    m_historyRight = new QStackedWidget(m_historySplit);
    m_historyRight->addWidget(m_runSummary);
    m_historyRight->addWidget(m_compare);
    m_historySplit->addWidget(m_historyRight);
    m_historySplit->setStretchFactor(0, 3); // a wider window widens the runs table most
    m_historySplit->setStretchFactor(1, 2);
    m_historySplit->setSizes({760, 500}); // the runs table wants the room; the summary reads in a column
    return m_historySplit;
}

void MainWindow::connectStartPage()
{
    connect(m_startPage, &workspace::StartPage::newPlanRequested, this, &MainWindow::newPlan);
    connect(m_startPage, &workspace::StartPage::openPlanRequested, this, [this] { m_openAction->trigger(); });
    connect(m_startPage, &workspace::StartPage::planChosen, this, [this](const QString &path) {
        if (maybeSave())
            loadPlan(path);
    });
    connect(m_startPage, &workspace::StartPage::runChosen, this, [this](const QString &runId) { openRun(runId); });
}

void MainWindow::setExamplesDirectory(const QString &directory) { m_startPage->setExamplesDirectory(directory); }

void MainWindow::createModeBar()
{
    // Qt Creator's way: the modes down the left edge, one click (or Ctrl+1…4) each.
    auto *bar = new QToolBar(tr("Modes"), this);
    bar->setObjectName(QStringLiteral("modeBar"));
    bar->setMovable(false);
    bar->setToolButtonStyle(Qt::ToolButtonTextUnderIcon);
    bar->setIconSize(QSize(22, 22));
    addToolBar(Qt::LeftToolBarArea, bar);
    auto *group = new QActionGroup(this);
    const std::pair<QStyle::StandardPixmap, QString> modes[] = {{QStyle::SP_DirHomeIcon, tr("Start")},
                                                                {QStyle::SP_FileDialogDetailedView, tr("Plan")},
                                                                {QStyle::SP_MediaPlay, tr("Run")},
                                                                {QStyle::SP_FileDialogContentsView, tr("History")}};
    auto *view = menuBar()->addMenu(tr("&View"));
    for (int i = 0; i < 4; ++i) {
        QAction *a = bar->addAction(style()->standardIcon(modes[i].first), modes[i].second);
        a->setCheckable(true);
        a->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));
        a->setToolTip(tr("%1 mode (Ctrl+%2)").arg(modes[i].second).arg(i + 1));
        group->addAction(a);
        view->addAction(a);
        connect(a, &QAction::triggered, this, [this, i] { setMode(static_cast<Mode>(i)); });
        m_modeActions[i] = a;
    }
    view->addSeparator();
    view->addAction(tr("Reset the dashboard layout"), this, [this] { m_grid->resetLayout(); });
    view->addAction(tr("Reset zoom of the step charts"), this, [this] { m_grid->resetStepRange(); });
}

void MainWindow::setMode(Mode mode)
{
    m_mode = mode;
    m_pages->setCurrentIndex(static_cast<int>(mode));
    if (QAction *a = m_modeActions[static_cast<int>(mode)])
        a->setChecked(true);
}

void MainWindow::updateTitle()
{
    QString run;
    if (!m_shownRun.isEmpty())
        run = tr(" · run %1 (%2)").arg(m_shownRun, m_shownRunState);
    setWindowTitle(tr("%1[*]%2 — Trellis").arg(m_document->displayName(), run));
    m_statusLine->setText(statusLine());
}

QString MainWindow::statusLine() const
{
    const QString plan = tr("Plan: %1%2").arg(m_document->displayName(), m_document->isModified() ? QStringLiteral("*") : QString());
    return m_shownRun.isEmpty() ? tr("%1 · no run open").arg(plan) : tr("%1 · Run: %2, %3").arg(plan, m_shownRun, m_shownRunState);
}

void MainWindow::restoreWindowLayout()
{
    // What a person left: the window's size and each mode's arrangement. A layout saved by an
    // older version (its docks), or one that does not restore, leaves the default; a window
    // bigger than this screen is fitted into it.
    QSettings settings;
    settings.remove(QStringLiteral("window")); // version 1: docks, which this window no longer has
    if (settings.value(QStringLiteral("workbench/version")).toInt() == 2) {
        restoreGeometry(settings.value(QStringLiteral("workbench/geometry")).toByteArray());
        for (QSplitter *split : {m_planSplit, m_runSplit, m_historySplit}) {
            const QList<int> before = split->sizes();
            if (!split->restoreState(settings.value(QStringLiteral("workbench/") + split->objectName()).toByteArray()))
                split->setSizes(before);
        }
        m_grid->restoreLayout(settings);
    }
    if (const QScreen *screen = this->screen()) {
        const QRect available = screen->availableGeometry();
        if (width() > available.width() || height() > available.height()) {
            showNormal();
            resize(std::min(width(), available.width()), std::min(height(), available.height()));
            move(available.topLeft());
        }
    }
}

void MainWindow::saveWindowLayout() const
{
    QSettings settings;
    settings.setValue(QStringLiteral("workbench/version"), 2);
    settings.setValue(QStringLiteral("workbench/geometry"), saveGeometry());
    for (QSplitter *split : {m_planSplit, m_runSplit, m_historySplit})
        settings.setValue(QStringLiteral("workbench/") + split->objectName(), split->saveState());
    m_grid->saveLayout(settings);
}

bool MainWindow::raisePanel(const QString &id)
{
    const QString head = id.section(QLatin1Char('.'), 0, 0);
    static const QStringList modes = {QStringLiteral("start"), QStringLiteral("plan"), QStringLiteral("run"), QStringLiteral("history")};
    if (workspace::PanelFrame *frame = m_grid->frame(head)) {
        setMode(Mode::Run);
        const QString view = id.section(QLatin1Char('.'), 1);
        return m_grid->reveal(head) && (view.isEmpty() || frame->panel()->chooseView(view));
    }
    if (head == QLatin1String("editor") || head == QLatin1String("mesh")) {
        setMode(Mode::Plan);
        return true;
    }
    if (head == QLatin1String("estimate") || head == QLatin1String("summary")) {
        if (id.startsWith(QLatin1String("estimate.")) && !m_estimate->showTab(id.mid(9)))
            return false;
        setMode(Mode::Plan);
        m_planTabs->setCurrentWidget(head == QLatin1String("summary") ? static_cast<QWidget *>(m_planPanel) : m_estimate);
        return true;
    }
    if (const int mode = modes.indexOf(head); mode >= 0) {
        setMode(static_cast<Mode>(mode));
        return true;
    }
    return false;
}

} // namespace trellis::ui
