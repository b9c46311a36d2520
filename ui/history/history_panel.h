// History mode's list of runs: a table whose columns a person chooses (right-click the header) and
// drags into order, sorted by any column, narrowed by a filter line (launcher/history/run_filter.h:
// words, status:, tag:, after:/before:, plan fields such as parallel.tp=2) that says where it is
// typed what does not parse. Runs are opened, compared, reported, tagged, annotated, renamed,
// archived, deleted (after saying what goes) and launched again from here. The rows come from
// HistoryReader signals; every change is asked of the reader, never done on the GUI thread.
#pragma once

#include "launcher/history/history_reader.h"
#include "launcher/run_types.h"

#include <QWidget>

class QAction;
class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;
class QTimer;

namespace trellis::ui {

class RunTableModel;

class HistoryPanel : public QWidget {
    Q_OBJECT
public:
    explicit HistoryPanel(QWidget *parent = nullptr);
    void setRuns(const QList<launcher::RunSummary> &runs);
    void updateRun(const launcher::RunSummary &run);
    void setDatabasePath(const QString &path) { m_databasePath = path; }
    qint64 selectedRunId() const;          // the one selected run, 0 unless exactly one is
    QList<qint64> selectedRunIds() const;
    const launcher::RunSummary *runById(qint64 id) const;
    int rowCount() const;
    void selectRow(int row);               // in the order shown
    void selectRunIds(const QList<qint64> &ids);
    QTableView *table() const { return m_table; }
    RunTableModel *model() const { return m_model; }
    QPushButton *compareButton() const { return m_compare; }
    QLineEdit *filterEdit() const { return m_filter; }
    QLabel *filterError() const { return m_filterError; }
    QLabel *statusLabel() const { return m_status; }
    void setColumnShown(int column, bool shown);
    bool isColumnShown(int column) const;
    void sortBy(int column, Qt::SortOrder order);

    // What the buttons and the context menu do once a person has answered (tests call these).
    bool tagSelected(const QString &tag);      // false: refused (the reason in statusLabel())
    bool noteSelected(const QString &note);
    bool renameSelected(const QString &name);
    void archiveSelected(bool archived);
    // What deleting the selected runs removes, as the confirmation says it; "" when nothing can go
    // (a run still going, with the reason in *refusal).
    QString deletionText(QString *refusal = nullptr, bool withFiles = true) const;
    bool deleteSelected(bool askFirst = true);
    // Whether the selected run can be launched again: one run whose plan Trellis has and runs.
    bool canLaunchAgain() const;

    // The filter error from the reader (launcher-side parse), shown under the filter line.
    void showFilterError(const QString &error);
    void showEditResult(const QString &message, const QString &error);

signals:
    void runSelected(qint64 id);
    void selectionCleared();
    void compareRequested(const QList<qint64> &ids); // two or more runs
    void openRequested(qint64 id);
    void reportRequested(qint64 id);
    void launchAgainRequested(qint64 id);
    void filterChanged(const QString &text);
    void editRequested(const QList<qint64> &ids, trellis::launcher::RunEdit edit, const QString &text);

private:
    void createActions();
    void updateActions();
    void showHeaderMenu(const QPoint &at);
    void saveColumns() const;
    void restoreColumns();
    void askTag();
    void askNote();
    void askRename();
    void filterTyped();

    RunTableModel *m_model;
    QSortFilterProxyModel *m_sorted;
    QTableView *m_table;
    QLineEdit *m_filter;
    QLabel *m_filterError, *m_status, *m_count;
    QTimer *m_filterDelay;
    QPushButton *m_compare;
    QAction *m_open, *m_report, *m_tag, *m_note, *m_rename, *m_archive, *m_unarchive, *m_delete, *m_again, *m_compareAction;
    QString m_databasePath;
    bool m_restoring = false;
    bool m_sized = false;
};

} // namespace trellis::ui
