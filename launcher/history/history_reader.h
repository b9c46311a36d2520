// Asynchronous reads of the run history for the GUI. The reader lives on its own QThread with its
// own database connection; requests are queued slots, answers come back as signals, so the GUI
// thread never waits on SQLite or on writing a report file.
#pragma once

#include "launcher/report/run_comparison.h"
#include "launcher/history/run_filter.h"
#include "launcher/run_types.h"
#include "launcher/metrics/dashboard_snapshot.h"

#include <QObject>
#include <QThread>

#include <memory>

namespace trellis::launcher {

class HistoryDatabase;

// What the runs list asks the history to change (HistoryReader::editRuns).
enum class RunEdit { Tag, Untag, Note, Rename, Archive, Unarchive, Delete };

class HistoryReader : public QObject {
    Q_OBJECT
public:
    explicit HistoryReader(QString path);
    ~HistoryReader() override;

    // Moves the reader onto its own thread. Call once, from the thread that created it.
    void startThread();

public slots:
    // The runs the current filter lets through (runsReady), newest first; with no filter also the
    // newest for the start page (recentRunsReady). Ended runs whose figures are not kept yet get
    // them computed afterwards, one run at a time between other requests (runFiguresReady).
    void requestRuns();
    // Parses and keeps the filter (run_filter.h), then lists; a filter that does not parse is
    // answered by filterFailed and the list stays as it was.
    void setRunFilter(const QString &text);
    // Tags, notes, renames, archives or deletes runs, then lists again; runsEdited says what was
    // done or why not (a run still going is not deleted).
    void editRuns(const QList<qint64> &ids, trellis::launcher::RunEdit edit, const QString &text);
    void requestRun(qint64 id);
    void requestRunOf(const QString &reference); // a run id, a row number or "last"
    void requestReport(qint64 id, const QString &path);
    void requestComparison(const QList<qint64> &ids);
    void requestComparisonOf(const QStringList &references); // run ids, row numbers or "last"
    // The newest traced step's timeline beside the prediction (by row id, or by run id for a run
    // being followed).
    void requestTimeline(qint64 id);
    void requestTimelineOf(const QString &runId);
    // Reads another history from now on (the workbench's File › Run history, a plan's
    // telemetry.history): the open one is closed, its notifications with it; the filter is kept;
    // then lists (requestRuns).
    void switchTo(const QString &path);

signals:
    void runsReady(const QList<trellis::launcher::RunSummary> &runs);
    void recentRunsReady(const QList<trellis::launcher::RunSummary> &runs);
    void runFiguresReady(const trellis::launcher::RunSummary &run);
    void filterFailed(const QString &error);
    void runsEdited(const QString &message, const QString &error);
    void runReady(const trellis::launcher::RunData &run); // its steps: the newest row alone (the rest: runSnapshotReady)
    void runSnapshotReady(const std::shared_ptr<const trellis::launcher::telemetry::DashboardSnapshot> &snapshot);
    void reportWritten(const QString &path, const QString &error);
    void comparisonReady(const trellis::launcher::Comparison &comparison);
    void timelineReady(const trellis::launcher::telemetry::TimelineView &timeline);
    // PostgreSQL: a supervisor (this user's or another's, on any machine) committed rows of the run
    // (its run id): at most one a run per writer transaction, 200 ms apart. SQLite: never (a
    // file's writers are on this machine, followed through their live feeds).
    void runWritten(const QString &runId);
    // A run asked for that the history does not hold (never there, or deleted since it was listed).
    void runMissing(const QString &message);
    void failed(const QString &message);

private:
    bool ensureOpen();
    void computeNextFigures();

    static constexpr int kListLimit = 100000;
    RunFilter m_filter;
    QList<RunSummary> m_needFigures; // listed runs whose figures are not kept yet, newest first

    QString m_path;
    std::unique_ptr<HistoryDatabase> m_db; // created and used on the reader thread only
    QThread m_thread;
};

} // namespace trellis::launcher

Q_DECLARE_METATYPE(trellis::launcher::RunEdit)
