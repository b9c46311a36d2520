// See history_panel.h.
#include "ui/history/history_panel.h"
#include "ui/widgets/run_words.h"

#include "launcher/history/run_files.h"
#include "launcher/history/run_filter.h"
#include "ui/history/run_table_model.h"

#include <QAction>

#include <algorithm>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

namespace trellis::ui {
namespace {

bool stillGoing(const launcher::RunSummary &r)
{
    return r.status == QLatin1String("running") || r.status == QLatin1String("launching");
}

QPushButton *buttonFor(QAction *action, QWidget *parent)
{
    auto *b = new QPushButton(action->text().remove(QLatin1Char('&')), parent);
    b->setToolTip(action->toolTip());
    QObject::connect(b, &QPushButton::clicked, action, &QAction::trigger);
    QObject::connect(action, &QAction::changed, b, [b, action] { b->setEnabled(action->isEnabled()); });
    b->setEnabled(action->isEnabled());
    return b;
}

} // namespace

HistoryPanel::HistoryPanel(QWidget *parent)
    : QWidget(parent), m_model(new RunTableModel(this)), m_sorted(new QSortFilterProxyModel(this)), m_table(new QTableView(this)),
      m_filter(new QLineEdit(this)), m_filterError(new QLabel(this)), m_status(new QLabel(this)), m_count(new QLabel(this)),
      m_filterDelay(new QTimer(this)), m_compare(nullptr)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto *filterRow = new QHBoxLayout;
    m_filter->setObjectName(QStringLiteral("runFilter"));
    m_filter->setClearButtonEnabled(true);
    m_filter->setPlaceholderText(tr("Filter: words, status:failed, tag:baseline, after:2026-11-01, parallel.tp=2, model.preset=llama2-70b"));
    m_filter->setToolTip(tr("Words match a run's id, name, note and tags. Terms: status:NAME[,NAME], kind:launched|simulated|collected|adopted, tag:NAME, owner:NAME|me, "
                            "after:YYYY-MM-DD, before:YYYY-MM-DD, archived:yes|any, and plan fields by path "
                            "with = != < <= > >= (parallel.tp=2, training.steps>=1000)."));
    filterRow->addWidget(m_filter, 1);
    filterRow->addWidget(m_count);
    layout->addLayout(filterRow);
    m_filterError->setObjectName(QStringLiteral("filterError"));
    m_filterError->setStyleSheet(QStringLiteral("color:#b00020"));
    m_filterError->setWordWrap(true);
    m_filterError->hide();
    layout->addWidget(m_filterError);

    m_sorted->setSourceModel(m_model);
    m_sorted->setSortRole(Qt::UserRole);
    m_table->setModel(m_sorted);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(RunTableModel::RunId, Qt::DescendingOrder);
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setWordWrap(false);
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    QHeaderView *header = m_table->horizontalHeader();
    header->setSectionsMovable(true);
    header->setStretchLastSection(true);
    header->setResizeContentsPrecision(100); // fitting columns reads 100 rows, not 10,000
    header->setContextMenuPolicy(Qt::CustomContextMenu);
    header->setToolTip(tr("Right-click to choose the columns; drag a column to move it; click to sort"));
    connect(header, &QHeaderView::customContextMenuRequested, this, &HistoryPanel::showHeaderMenu);
    connect(header, &QHeaderView::sectionMoved, this, [this] { saveColumns(); });
    connect(header, &QHeaderView::sortIndicatorChanged, this, [this] { saveColumns(); });
    layout->addWidget(m_table, 1);

    createActions();
    auto *buttons = new QHBoxLayout;
    for (QAction *a : {m_open, m_compareAction, m_report, m_tag, m_note, m_archive, m_delete, m_again}) {
        QPushButton *b = buttonFor(a, this);
        if (a == m_compareAction)
            m_compare = b;
        buttons->addWidget(b);
    }
    buttons->addStretch(1);
    layout->addLayout(buttons);
    m_status->setWordWrap(true);
    m_status->setObjectName(QStringLiteral("historyStatus"));
    layout->addWidget(m_status);

    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        updateActions();
        if (const qint64 id = selectedRunId(); id > 0)
            emit runSelected(id);
        else if (selectedRunIds().isEmpty())
            emit selectionCleared();
    });
    connect(m_table, &QTableView::doubleClicked, this, [this] { m_open->trigger(); });
    connect(m_table, &QTableView::customContextMenuRequested, this, [this](const QPoint &at) {
        QMenu menu(this);
        menu.addActions({m_open, m_compareAction, m_report});
        menu.addSeparator();
        menu.addActions({m_tag, m_note, m_rename});
        menu.addSeparator();
        menu.addActions({m_archive, m_unarchive, m_delete});
        menu.addSeparator();
        menu.addAction(m_again);
        menu.exec(m_table->viewport()->mapToGlobal(at));
    });
    m_filterDelay->setSingleShot(true);
    m_filterDelay->setInterval(250);
    connect(m_filter, &QLineEdit::textChanged, this, [this] { m_filterDelay->start(); });
    connect(m_filter, &QLineEdit::returnPressed, this, &HistoryPanel::filterTyped);
    connect(m_filterDelay, &QTimer::timeout, this, &HistoryPanel::filterTyped);
    restoreColumns();
    updateActions();
}

void HistoryPanel::createActions()
{
    auto make = [this](const QString &text, const QString &tip, void (HistoryPanel::*slot)()) {
        auto *a = new QAction(text, this);
        a->setToolTip(tip);
        connect(a, &QAction::triggered, this, slot);
        return a;
    };
    m_open = new QAction(tr("&Open"), this);
    m_open->setToolTip(tr("Open the run's dashboards in Run mode (a run still going is followed live)"));
    connect(m_open, &QAction::triggered, this, [this] {
        if (const qint64 id = selectedRunId(); id > 0)
            emit openRequested(id);
    });
    m_compareAction = new QAction(tr("&Compare"), this);
    m_compareAction->setToolTip(tr("Select two or more runs (Ctrl or Shift) to compare them"));
    connect(m_compareAction, &QAction::triggered, this, [this] { emit compareRequested(selectedRunIds()); });
    m_report = new QAction(tr("&Report…"), this);
    m_report->setToolTip(tr("Write the run's report (HTML or PDF)"));
    connect(m_report, &QAction::triggered, this, [this] {
        if (const qint64 id = selectedRunId(); id > 0)
            emit reportRequested(id);
    });
    m_tag = make(tr("&Tag…"), tr("Add a tag to the selected runs (Untag in the tag box takes one off)"), &HistoryPanel::askTag);
    m_note = make(tr("&Note…"), tr("The run's note"), &HistoryPanel::askNote);
    m_rename = make(tr("Re&name…"), tr("The run's name"), &HistoryPanel::askRename);
    m_archive = new QAction(tr("&Archive"), this);
    m_archive->setToolTip(tr("Hide the selected runs from the list (archived:yes shows them)"));
    connect(m_archive, &QAction::triggered, this, [this] { archiveSelected(true); });
    m_unarchive = new QAction(tr("Unarchive"), this);
    connect(m_unarchive, &QAction::triggered, this, [this] { archiveSelected(false); });
    m_delete = new QAction(tr("&Delete…"), this);
    m_delete->setToolTip(tr("Delete the selected runs' rows and folders, after saying what goes"));
    connect(m_delete, &QAction::triggered, this, [this] { deleteSelected(true); });
    m_again = new QAction(tr("Launch &again"), this);
    m_again->setToolTip(tr("Open the run's plan as a new plan and launch it"));
    connect(m_again, &QAction::triggered, this, [this] {
        if (canLaunchAgain())
            emit launchAgainRequested(selectedRunId());
    });
}

void HistoryPanel::updateActions()
{
    const QList<qint64> ids = selectedRunIds();
    const bool one = ids.size() == 1;
    m_open->setEnabled(one);
    m_report->setEnabled(one);
    m_compareAction->setEnabled(ids.size() >= 2);
    m_tag->setEnabled(!ids.isEmpty());
    m_note->setEnabled(one);
    m_rename->setEnabled(one);
    bool anyArchived = false, anyShown = false;
    for (const qint64 id : ids)
        if (const auto *r = m_model->run(id))
            (r->archived ? anyArchived : anyShown) = true;
    m_archive->setEnabled(anyShown);
    m_unarchive->setEnabled(anyArchived);
    QString refusal;
    const bool deletable = !ids.isEmpty() && !deletionText(&refusal, false).isEmpty(); // no file-system reads here
    m_delete->setEnabled(deletable);
    m_delete->setToolTip(deletable || refusal.isEmpty() ? tr("Delete the selected runs' rows and folders, after saying what goes") : refusal);
    m_again->setEnabled(canLaunchAgain());
}

void HistoryPanel::setRuns(const QList<launcher::RunSummary> &runs)
{
    const QList<qint64> selected = selectedRunIds();
    const QSignalBlocker block(m_table->selectionModel());
    m_model->setRuns(runs);
    selectRunIds(selected);
    m_count->setText(runs.size() == 1 ? tr("1 run") : tr("%1 runs").arg(runs.size()));
    if (!m_sized && !runs.isEmpty()) { // once: the columns fit what the first rows hold
        m_table->resizeColumnsToContents();
        m_sized = true;
    }
    updateActions();
}

void HistoryPanel::updateRun(const launcher::RunSummary &run) { m_model->updateRun(run); }

qint64 HistoryPanel::selectedRunId() const
{
    const QList<qint64> ids = selectedRunIds();
    return ids.size() == 1 ? ids.first() : 0;
}

QList<qint64> HistoryPanel::selectedRunIds() const
{
    QList<qint64> ids;
    for (const QModelIndex &row : m_table->selectionModel()->selectedRows())
        ids << row.data(RunTableModel::kIdRole).toLongLong();
    return ids;
}

const launcher::RunSummary *HistoryPanel::runById(qint64 id) const { return m_model->run(id); }

int HistoryPanel::rowCount() const { return m_sorted->rowCount(); }

void HistoryPanel::selectRow(int row) { m_table->selectRow(row); }

void HistoryPanel::selectRunIds(const QList<qint64> &ids)
{
    QItemSelection selection;
    for (int row = 0; row < m_sorted->rowCount(); ++row) {
        const QModelIndex index = m_sorted->index(row, 0);
        if (ids.contains(index.data(RunTableModel::kIdRole).toLongLong()))
            selection.select(index, m_sorted->index(row, RunTableModel::ColumnCount - 1));
    }
    m_table->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

void HistoryPanel::sortBy(int column, Qt::SortOrder order) { m_table->sortByColumn(column, order); }

void HistoryPanel::setColumnShown(int column, bool shown)
{
    m_table->setColumnHidden(column, !shown);
    saveColumns();
}

bool HistoryPanel::isColumnShown(int column) const { return !m_table->isColumnHidden(column); }

void HistoryPanel::showHeaderMenu(const QPoint &at)
{
    QMenu menu(this);
    for (int c = 0; c < RunTableModel::ColumnCount; ++c) {
        QAction *a = menu.addAction(m_model->headerData(c, Qt::Horizontal).toString());
        a->setCheckable(true);
        a->setChecked(isColumnShown(c));
        a->setEnabled(c != RunTableModel::RunId); // a row always says which run it is
        connect(a, &QAction::toggled, this, [this, c](bool on) { setColumnShown(c, on); });
    }
    menu.addSeparator();
    menu.addAction(tr("Default columns"), this, [this] {
        for (int c = 0; c < RunTableModel::ColumnCount; ++c)
            m_table->setColumnHidden(c, !RunTableModel::shownByDefault(static_cast<RunTableModel::Column>(c)));
        saveColumns();
    });
    menu.exec(m_table->horizontalHeader()->mapToGlobal(at));
}

void HistoryPanel::saveColumns() const
{
    if (m_restoring)
        return;
    QSettings settings;
    settings.setValue(QStringLiteral("history/columns"), m_table->horizontalHeader()->saveState());
}

void HistoryPanel::restoreColumns()
{
    m_restoring = true;
    const QByteArray state = QSettings().value(QStringLiteral("history/columns")).toByteArray();
    m_sized = !state.isEmpty() && m_table->horizontalHeader()->restoreState(state); // widths as the person left them
    if (!m_sized) {
        for (int c = 0; c < RunTableModel::ColumnCount; ++c)
            m_table->setColumnHidden(c, !RunTableModel::shownByDefault(static_cast<RunTableModel::Column>(c)));
        m_table->sortByColumn(RunTableModel::RunId, Qt::DescendingOrder);
    }
    m_table->setColumnHidden(RunTableModel::RunId, false);
    m_restoring = false;
}

void HistoryPanel::filterTyped()
{
    m_filterDelay->stop();
    const launcher::RunFilterParse parsed = launcher::parseRunFilter(m_filter->text());
    if (!parsed.error.isEmpty()) {
        showFilterError(parsed.error);
        return;
    }
    m_filterError->hide();
    m_filter->setPalette(QPalette());
    emit filterChanged(m_filter->text());
}

void HistoryPanel::showFilterError(const QString &error)
{
    m_filterError->setText(tr("The filter does not apply: %1").arg(error));
    m_filterError->show();
    QPalette marked = m_filter->palette(); // the line itself shows it does not apply
    marked.setColor(QPalette::Base, QColor(0xfd, 0xe7, 0xea));
    marked.setColor(QPalette::Text, QColor(0x60, 0x00, 0x10));
    m_filter->setPalette(marked);
}

void HistoryPanel::showEditResult(const QString &message, const QString &error)
{
    m_status->setStyleSheet(error.isEmpty() ? QString() : QStringLiteral("color:#b00020"));
    m_status->setText(error.isEmpty() ? message : (message.isEmpty() ? error : message + QLatin1Char('\n') + error));
}

bool HistoryPanel::tagSelected(const QString &tag)
{
    const QString t = tag.trimmed();
    const bool untag = t.startsWith(QLatin1Char('-'));
    const QString name = untag ? t.mid(1) : t;
    if (const QString why = launcher::checkTag(name); !why.isEmpty()) {
        showEditResult(QString(), tr("Tag refused: %1").arg(why));
        return false;
    }
    emit editRequested(selectedRunIds(), untag ? launcher::RunEdit::Untag : launcher::RunEdit::Tag, name);
    return true;
}

bool HistoryPanel::noteSelected(const QString &note)
{
    if (const QString why = launcher::checkNote(note); !why.isEmpty()) {
        showEditResult(QString(), tr("Note refused: %1").arg(why));
        return false;
    }
    emit editRequested(selectedRunIds(), launcher::RunEdit::Note, note);
    return true;
}

bool HistoryPanel::renameSelected(const QString &name)
{
    if (const QString why = launcher::checkRunName(name); !why.isEmpty()) {
        showEditResult(QString(), tr("Name refused: %1").arg(why));
        return false;
    }
    emit editRequested(selectedRunIds(), launcher::RunEdit::Rename, name);
    return true;
}

void HistoryPanel::archiveSelected(bool archived)
{
    emit editRequested(selectedRunIds(), archived ? launcher::RunEdit::Archive : launcher::RunEdit::Unarchive, QString());
}

QString HistoryPanel::deletionText(QString *refusal, bool withFiles) const
{
    QStringList lines;
    for (const qint64 id : selectedRunIds()) {
        const launcher::RunSummary *r = m_model->run(id);
        if (!r)
            continue;
        if (stillGoing(*r)) {
            if (refusal)
                *refusal = tr("Run %1 is still %2: stop it before deleting it").arg(r->runId, statusText(r->status));
            return {};
        }
        const QStringList files = m_databasePath.isEmpty() || !withFiles ? QStringList() : launcher::runFilesFor(m_databasePath, r->runId);
        lines << (files.isEmpty() ? tr("• %1 (%2): its rows in the history").arg(r->runId, r->name)
                                  : tr("• %1 (%2): its rows in the history and %3").arg(r->runId, r->name, files.join(QStringLiteral(", "))));
    }
    return lines.join(QLatin1Char('\n'));
}

bool HistoryPanel::deleteSelected(bool askFirst)
{
    QString refusal;
    const QString what = deletionText(&refusal);
    if (what.isEmpty()) {
        showEditResult(QString(), refusal.isEmpty() ? tr("Select the runs to delete") : refusal);
        return false;
    }
    if (askFirst) {
        const auto answer = QMessageBox::warning(this, tr("Delete runs"),
                                                 tr("This deletes, and cannot be undone:\n\n%1\n\nArchive keeps a run but hides it.").arg(what),
                                                 QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
        if (answer != QMessageBox::Yes)
            return false;
    }
    emit editRequested(selectedRunIds(), launcher::RunEdit::Delete, QString());
    return true;
}

bool HistoryPanel::canLaunchAgain() const
{
    const launcher::RunSummary *r = m_model->run(selectedRunId());
    // A job Trellis only watched has no plan it could start; a simulated run's plan stood in for
    // simulated ranks, and launched it would train for real (launcher::canLaunchAgain); a run still
    // going is running.
    return r && launcher::canLaunchAgain(r->kind) && !stillGoing(*r);
}

void HistoryPanel::askTag()
{
    bool ok = false;
    const QString tag = QInputDialog::getText(this, tr("Tag runs"), tr("Tag (letters, digits, . _ - + : / = @; a leading - takes it off):"),
                                              QLineEdit::Normal, QString(), &ok);
    if (ok && !tag.isEmpty())
        tagSelected(tag);
}

void HistoryPanel::askNote()
{
    const launcher::RunSummary *r = m_model->run(selectedRunId());
    if (!r)
        return;
    bool ok = false;
    const QString note = QInputDialog::getMultiLineText(this, tr("Note"), tr("Note on run %1 (up to 4000 characters):").arg(r->runId), r->note, &ok);
    if (ok)
        noteSelected(note);
}

void HistoryPanel::askRename()
{
    const launcher::RunSummary *r = m_model->run(selectedRunId());
    if (!r)
        return;
    bool ok = false;
    const QString name = QInputDialog::getText(this, tr("Rename run"), tr("Name of run %1:").arg(r->runId), QLineEdit::Normal, r->name, &ok);
    if (ok)
        renameSelected(name);
}

} // namespace trellis::ui
