// The run's header in Run mode: its state, progress and newest figures. Live, it passes the
// feed's snapshots on (computed off the GUI thread, at most 4 a second) and reads the progress
// counters on a short timer; a finished run from the history passes on the snapshot the history
// reader builds. The dashboard grid (ui/workspace/dashboard_grid.h) draws them: snapshotShown()
// with nullptr when there is nothing to draw (a new run attached, a run with no steps).
#pragma once

#include "launcher/feed/run_feed.h"
#include "launcher/run_types.h"
#include "ui/widgets/live_text.h"

#include <QTimer>
#include <QWidget>

class QLabel;
class QProgressBar;

namespace trellis::ui {

class RunHeader : public QWidget {
    Q_OBJECT
public:
    explicit RunHeader(QWidget *parent = nullptr);

    void attach(launcher::RunFeed *feed);
    void detach();
    void showRun(const launcher::RunData &run); // state and progress of a finished run
    void showSnapshot(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot);
    void setState(const QString &state, const QString &detail = {});

    QString stateText() const;

signals:
    void snapshotShown(const std::shared_ptr<const trellis::launcher::telemetry::DashboardSnapshot> &snapshot);

private:
    void drain();
    void clear();

    QLabel *m_state;
    LiveText *m_stats; // changes ten times a second: repaints itself only
    QProgressBar *m_progress;
    QTimer m_timer;
    launcher::RunFeed *m_feed = nullptr;
};

} // namespace trellis::ui
