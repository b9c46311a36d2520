// Asynchronous reads of the run history for the GUI. The reader lives on its own QThread with its
// own database connection; requests are queued slots, answers come back as signals, so the GUI
// thread never waits on SQLite or on writing a report file.
#pragma once

#include "launcher/report/run_comparison.h"
#include "launcher/run_types.h"
#include "launcher/metrics/dashboard_snapshot.h"

#include <QObject>
#include <QThread>

#include <memory>

namespace trellis::launcher {

class HistoryDatabase;

class HistoryReader : public QObject {
    Q_OBJECT
public:
    explicit HistoryReader(QString path);
    ~HistoryReader() override;

    // Moves the reader onto its own thread. Call once, from the thread that created it.
    void startThread();

public slots:
    void requestRuns();
    void requestRun(qint64 id);
    void requestRunOf(const QString &reference); // a run id, a row number or "last"
    void requestReport(qint64 id, const QString &path);
    void requestComparison(const QList<qint64> &ids);
    void requestComparisonOf(const QStringList &references); // run ids, row numbers or "last"
    // The newest traced step's timeline beside the prediction (by row id, or by run id for a run
    // being followed).
    void requestTimeline(qint64 id);
    void requestTimelineOf(const QString &runId);

signals:
    void runsReady(const QList<trellis::launcher::RunSummary> &runs);
    void runReady(const trellis::launcher::RunData &run); // its steps: the newest row alone (the rest: runSnapshotReady)
    void runSnapshotReady(const std::shared_ptr<const trellis::launcher::telemetry::DashboardSnapshot> &snapshot);
    void reportWritten(const QString &path, const QString &error);
    void comparisonReady(const trellis::launcher::Comparison &comparison);
    void timelineReady(const trellis::launcher::telemetry::TimelineView &timeline);
    // A run asked for that the history does not hold (never there, or deleted since it was listed).
    void runMissing(const QString &message);
    void failed(const QString &message);

private:
    bool ensureOpen();

    QString m_path;
    std::unique_ptr<HistoryDatabase> m_db; // created and used on the reader thread only
    QThread m_thread;
};

} // namespace trellis::launcher
