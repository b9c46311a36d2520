// MainWindow's plan document: File (New, Open, recent files, Save, Save As) and Edit (Undo, Redo)
// menus, the modified mark in the title, the prompt before unsaved changes are lost, and what
// follows every change of the document (plan panel, mesh, launch state, a debounced re-estimate).
#include "ui/workspace/main_window.h"

#include "launcher/document/plan_document.h"
#include "launcher/history/history_engine.h"
#include "launcher/history_location.h"
#include "backend/plan/plan_validate.h"
#include "backend/plan/presets.h"
#include "ui/estimate/estimate_panel.h"
#include "ui/workspace/language.h"
#include "ui/plan/plan_panel.h"
#include "ui/workspace/start_page.h"
#include "ui/workspace/theme.h"

#include <QLabel>

#include <QAction>
#include <QActionGroup>
#include <QFileDialog>
#include <QFile>
#include <QFileInfo>
#include <QInputDialog>
#include <QLineEdit>
#include <QSaveFile>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTimer>
#include <QUndoStack>

#include <thread>

namespace trellis::ui {
namespace {
constexpr int kRecentFiles = 8;
const QString kRecentKey = QStringLiteral("files/recent");

// A new plan: the tiny model on this machine, one data-parallel rank per core.
plan::Plan localStarter()
{
    const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    plan::Plan start = *plan::starterPlan("tiny", "cpu-local", 1);
    start.cluster.nodes[0].slotCount = cores;
    start.parallel.dp = cores;
    return start;
}
} // namespace

void MainWindow::createFileActions()
{
    createFileMenu();
    createEditMenu();
    createLanguageMenu();
    connectDocument();
    updateRecentMenu();
    m_document->newDocument(localStarter());
    updateTitle();
}

void MainWindow::createFileMenu()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    file->addAction(style()->standardIcon(QStyle::SP_FileIcon), tr("&New plan"), QKeySequence::New, this, &MainWindow::newPlan);
    m_openAction = file->addAction(style()->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open plan…"), QKeySequence::Open, this, [this] {
        if (!maybeSave())
            return;
        const QString start = m_document->filePath().isEmpty() ? QString() : QFileInfo(m_document->filePath()).absolutePath();
        const QString path = QFileDialog::getOpenFileName(this, tr("Open plan"), start, tr("Plans (*.json)"));
        if (!path.isEmpty())
            loadPlan(path);
    });
    m_recentMenu = file->addMenu(tr("Open &recent"));
    m_saveAction = file->addAction(style()->standardIcon(QStyle::SP_DialogSaveButton), tr("&Save plan"), QKeySequence::Save, this,
                                   [this] { savePlan(); });
    file->addAction(tr("Save plan &as…"), QKeySequence::SaveAs, this, &MainWindow::savePlanAs);
    file->addSeparator();
    fillImportMenu(file->addMenu(tr("&Import")));
    fillExportMenu(file->addMenu(tr("E&xport plan as")));
    file->addSeparator();
    file->addAction(tr("Run &history…"), this, &MainWindow::chooseHistory);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
}

// The history the workbench reads, now and when started without --db (and without
// TRELLIS_HISTORY): a file, or a team's PostgreSQL connection string (docs/history.md). Only
// checked here, never connected to (the GUI thread waits on no server: the reader's thread opens it).
void MainWindow::chooseHistory()
{
    bool ok = false;
    const QString current = QSettings().value(QStringLiteral("history/database")).toString();
    const QString text = QInputDialog::getText(
                             this, tr("Run history"),
                             tr("The run history this workbench reads, now and from its next start: a file, or a team's "
                                "PostgreSQL database as postgresql://USER@HOST/DBNAME (the password from ~/.pgpass, "
                                "PGPASSWORD or a service file). Empty: %1.\nNow: %2")
                                 .arg(launcher::defaultHistoryFile(), m_databasePath),
                             QLineEdit::Normal, current, &ok)
                             .trimmed();
    if (!ok)
        return;
    if (launcher::isServerHistory(text))
        if (const QString why = launcher::parseServerConnection(text, nullptr); !why.isEmpty()) {
            QMessageBox::warning(this, tr("Run history"), why);
            return;
        }
    QSettings().setValue(QStringLiteral("history/database"), text);
    const QString chosen = text.isEmpty() ? launcher::defaultHistoryFile() : text;
    if (const QString why = switchHistory(chosen); !why.isEmpty())
        statusBar()->showMessage(tr("Not switched now: %1. From its next start the workbench opens %2").arg(why, chosen), 15000);
    else
        statusBar()->showMessage(tr("Run history: %1 (from the next start too, unless --db or TRELLIS_HISTORY name another)").arg(chosen),
                                 10000);
}

void MainWindow::fillImportMenu(QMenu *menu)
{
    // A configuration file read (up to `limit` bytes) and imported.
    auto importFile = [this](const QString &kind, const QString &title, const QString &filter, qint64 limit) {
        const QString path = QFileDialog::getOpenFileName(this, title, {}, filter);
        if (path.isEmpty())
            return;
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly) || f.size() > limit) {
            statusBar()->showMessage(tr("Cannot read %1 (or it is over %2 MiB)").arg(path).arg(limit >> 20), 8000);
            return;
        }
        importConfig(kind, f.readAll());
    };
    menu->addAction(tr("DeepSpeed config file…"), this, [importFile, this] {
        importFile(QStringLiteral("deepspeed"), tr("Import a DeepSpeed config"), tr("JSON (*.json);;All files (*)"), 16 << 20);
    });
    menu->addAction(tr("Megatron-LM arguments (paste)…"), this, [this] {
        bool ok = false;
        const QString line = QInputDialog::getMultiLineText(this, tr("Import Megatron-LM arguments"),
                                                            tr("The launch line or its arguments (continuations, comments and "
                                                               "torchrun's own options are understood):"),
                                                            {}, &ok);
        if (ok && !line.trimmed().isEmpty())
            importConfig(QStringLiteral("megatron"), line.toUtf8());
    });
    menu->addAction(tr("Megatron-LM arguments file…"), this, [importFile, this] {
        importFile(QStringLiteral("megatron"), tr("Import Megatron-LM arguments"), tr("All files (*)"), 1 << 20);
    });
}

void MainWindow::fillExportMenu(QMenu *menu)
{
    auto exportText = [this](const QString &title, const QString &filter, const QString &text) {
        const QString path = QFileDialog::getSaveFileName(this, title, {}, filter);
        if (path.isEmpty())
            return;
        QSaveFile f(path);
        if (f.open(QIODevice::WriteOnly) && f.write(text.toUtf8() + '\n') >= 0 && f.commit())
            statusBar()->showMessage(tr("Wrote %1").arg(path), 5000);
        else
            statusBar()->showMessage(tr("Could not write %1: %2").arg(path, f.errorString()), 8000);
    };
    menu->addAction(tr("DeepSpeed config…"), this, [this, exportText] {
        exportText(tr("Export as a DeepSpeed config"), tr("JSON (*.json)"), m_document->exportDeepSpeed());
    });
    menu->addAction(tr("Megatron-LM arguments…"), this, [this, exportText] {
        exportText(tr("Export as Megatron-LM arguments"), tr("Text (*.txt *.sh);;All files (*)"), m_document->exportMegatron());
    });
}

void MainWindow::createEditMenu()
{
    QMenu *edit = menuBar()->addMenu(tr("&Edit"));
    QAction *undo = m_document->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction *redo = m_document->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcuts({QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence::Redo});
    edit->addAction(undo);
    edit->addAction(redo);
}

void MainWindow::createLanguageMenu()
{
    // Settings › Language: the system's, or one the workbench ships; it applies at the next start.
    QMenu *settingsMenu = menuBar()->addMenu(tr("&Settings"));
    QMenu *language = settingsMenu->addMenu(tr("&Language"));
    auto *languages = new QActionGroup(this);
    const QString chosen = languageSetting();
    QStringList codes{QString()};
    codes << availableLanguages();
    for (const QString &code : codes) {
        QAction *action = language->addAction(code.isEmpty() ? tr("System default") : languageName(code));
        action->setCheckable(true);
        action->setChecked(code == chosen);
        action->setData(code);
        languages->addAction(action);
        connect(action, &QAction::triggered, this, [this, code] {
            setLanguageSetting(code);
            statusBar()->showMessage(tr("The language changes the next time Trellis starts."), 8000);
        });
    }
    // Settings › Theme: light, dark or the system's; it applies at the next start (or --theme).
    QMenu *theme = settingsMenu->addMenu(tr("&Theme"));
    auto *themes = new QActionGroup(this);
    const std::pair<QString, QString> names[] = {{QStringLiteral("system"), tr("System default")},
                                                 {QStringLiteral("light"), tr("Light")},
                                                 {QStringLiteral("dark"), tr("Dark")}};
    for (const auto &[code, name] : names) {
        QAction *action = theme->addAction(name);
        action->setCheckable(true);
        action->setChecked(code == workspace::themeSetting());
        themes->addAction(action);
        connect(action, &QAction::triggered, this, [this, code = code] {
            workspace::setThemeSetting(code);
            statusBar()->showMessage(tr("The theme changes the next time Trellis starts."), 8000);
        });
    }
}

void MainWindow::connectDocument()
{
    connect(m_document, &launcher::document::PlanDocument::changed, this, &MainWindow::documentChanged);
    connect(m_document, &launcher::document::PlanDocument::modifiedChanged, this, [this](bool modified) {
        setWindowModified(modified);
        m_statusLine->setText(statusLine());
    });
    connect(m_document, &launcher::document::PlanDocument::filePathChanged, this, [this](const QString &path) {
        updateTitle();
        if (!path.isEmpty())
            addRecentFile(path);
    });
    m_estimateTimer = new QTimer(this);
    m_estimateTimer->setSingleShot(true);
    m_estimateTimer->setInterval(kEstimateDebounceMs); // edits arriving faster than this are estimated once
    connect(m_estimateTimer, &QTimer::timeout, this, [this] {
        if (m_document->hasErrors()) {
            int errors = 0;
            for (const auto &d : m_document->diagnostics())
                errors += d.severity == plan::Severity::Error;
            m_estimate->showInvalid(errors);
        } else if (m_document->plan().ownTrainer.external() && !m_document->plan().ownTrainer.hasModel) {
            m_estimate->showOwnTrainer();
        } else {
            m_estimate->showPlan(m_document->plan());
        }
    });
}

void MainWindow::documentChanged()
{
    m_plan = m_document->plan();
    QStringList problems, unsupported;
    for (const auto &d : m_document->diagnostics())
        problems << QString::fromStdString(d.toString());
    for (const auto &d : plan::checkTrainerSupport(*m_plan))
        unsupported << QString::fromStdString(d.toString());
    m_runnable = unsupported.isEmpty() && !m_document->hasErrors();
    if (m_launchAction)
        m_launchAction->setToolTip(m_document->hasErrors() ? tr("The plan has errors: fix them to launch (see Problems)")
                                   : m_runnable ? tr("Run the plan on this machine (Ctrl+R)")
                                                : tr("This plan can be estimated but not run yet:\n%1").arg(unsupported.join(QLatin1Char('\n'))));
    m_planPanel->showPlan(*m_plan, m_document->filePath(), problems, unsupported);
    m_estimate->markStale();
    m_estimateTimer->start();
    if (m_launchAction)
        updateActions();
}

bool MainWindow::loadPlan(const QString &path)
{
    const QString error = m_document->open(path);
    if (!error.isEmpty()) {
        statusBar()->showMessage(tr("Not opened: %1: %2").arg(QFileInfo(path).fileName(), error.section(QLatin1Char('\n'), 0, 0)), 15000);
        if (isVisible()) {
            auto *box = new QMessageBox(QMessageBox::Warning, tr("Cannot open the plan"),
                                        tr("%1 was not opened; the open plan is unchanged.\n\n%2").arg(path, error), QMessageBox::Ok, this);
            box->setAttribute(Qt::WA_DeleteOnClose);
            box->open();
        }
        return false;
    }
    m_estimate->clearSearch(); // results of the previous plan's search do not belong to this one
    if (m_mode == Mode::Start)
        setMode(Mode::Plan);
    statusBar()->showMessage(m_document->hasErrors() ? tr("Opened %1 — it has problems to fix before it can run").arg(path)
                                                     : tr("Opened %1").arg(path),
                             5000);
    return true;
}

void MainWindow::newPlan()
{
    if (!maybeSave())
        return;
    m_document->newDocument(localStarter());
    m_estimate->clearSearch();
    updateTitle();
    setMode(Mode::Plan);
}

bool MainWindow::savePlan()
{
    if (m_document->filePath().isEmpty()) {
        savePlanAs();
        return !m_document->isModified() && !m_document->filePath().isEmpty();
    }
    const QString error = m_document->save();
    statusBar()->showMessage(error.isEmpty() ? tr("Saved %1").arg(m_document->filePath()) : tr("Not saved: %1").arg(error), 8000);
    return error.isEmpty();
}

bool MainWindow::savePlanTo(const QString &path)
{
    const QString error = m_document->saveAs(path);
    statusBar()->showMessage(error.isEmpty() ? tr("Saved %1").arg(path) : tr("Not saved: %1").arg(error), 8000);
    return error.isEmpty();
}

void MainWindow::savePlanAs()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Save plan"), m_document->filePath(), tr("Plans (*.json)"));
    if (!path.isEmpty())
        savePlanTo(path);
}

bool MainWindow::maybeSave()
{
    if (!m_document->isModified() || !isVisible())
        return true;
    const auto answer = QMessageBox::warning(this, tr("Unsaved changes"),
                                             tr("The plan %1 has changes that are not saved.").arg(m_document->displayName()),
                                             QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Save)
        return savePlan();
    return answer == QMessageBox::Discard;
}

void MainWindow::addRecentFile(const QString &path)
{
    QSettings settings;
    QStringList recent = settings.value(kRecentKey).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kRecentFiles)
        recent.removeLast();
    settings.setValue(kRecentKey, recent);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(kRecentKey).toStringList();
    for (const QString &path : recent)
        m_recentMenu->addAction(QFileInfo(path).fileName(), this, [this, path] {
            if (maybeSave())
                loadPlan(path);
        })->setToolTip(path);
    m_recentMenu->setEnabled(!recent.isEmpty());
    m_startPage->setRecentPlans(recent);
}

bool MainWindow::importConfig(const QString &kind, const QByteArray &text, QStringList *messages)
{
    QStringList warnings;
    const bool deepspeed = kind == QLatin1String("deepspeed");
    const QString error = deepspeed ? m_document->importDeepSpeed(text, &warnings)
                                    : m_document->importMegatron(QString::fromUtf8(text), &warnings);
    const QString what = deepspeed ? tr("DeepSpeed config") : tr("Megatron-LM arguments");
    QStringList shown = warnings;
    if (!error.isEmpty())
        shown.prepend(error);
    if (messages)
        *messages = shown;
    statusBar()->showMessage(error.isEmpty() ? tr("Imported the %1 (Edit › Undo to go back); %n warning(s)", nullptr,
                                                  static_cast<int>(warnings.size()))
                                                   .arg(what)
                                             : tr("Not imported (the plan is unchanged): %1").arg(error.section(QLatin1Char('\n'), 0, 0)),
                             10000);
    if (isVisible() && !shown.isEmpty()) {
        auto *box = new QMessageBox(error.isEmpty() ? QMessageBox::Information : QMessageBox::Warning,
                                    error.isEmpty() ? tr("Imported the %1").arg(what) : tr("The %1 were not imported").arg(what),
                                    error.isEmpty() ? tr("Imported, with these notes:") : tr("The plan is unchanged:"), QMessageBox::Ok, this);
        box->setDetailedText(shown.join(QLatin1Char('\n')));
        box->setInformativeText(shown.mid(0, 6).join(QLatin1Char('\n')));
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
    return error.isEmpty();
}

void MainWindow::searchPlans()
{
    raisePanel(QStringLiteral("estimate"));
    m_estimate->search();
}

void MainWindow::usePlan(const plan::Plan &chosen)
{
    // The planner only offers valid plans; taking one is one undo step like any edit.
    m_document->replacePlan(chosen, tr("Apply searched plan (dp %1 · tp %2 · pp %3 · cp %4)")
                                        .arg(chosen.parallel.dp)
                                        .arg(chosen.parallel.tp)
                                        .arg(chosen.parallel.pp)
                                        .arg(chosen.parallel.cp));
    statusBar()->showMessage(tr("Using the searched plan (Edit › Undo to go back): dp %1 · tp %2 · pp %3 · cp %4")
                                 .arg(chosen.parallel.dp)
                                 .arg(chosen.parallel.tp)
                                 .arg(chosen.parallel.pp)
                                 .arg(chosen.parallel.cp),
                             8000);
}

} // namespace trellis::ui
