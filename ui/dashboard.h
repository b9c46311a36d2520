// The run overview (central): state, progress, and the loss and tokens/s charts (a line per rank
// up to 8 ranks, bands beyond). Live, it draws the feed's snapshots (computed off the GUI thread,
// at most 4 a second) and reads the progress counters on a short timer; a finished run from the
// history is drawn from the snapshot the history reader builds. The other panels
// (ui/dashboards/) get the same snapshots through snapshotShown().
#pragma once

#include "launcher/supervisor/run_feed.h"
#include "launcher/run_types.h"
#include "ui/live_text.h"

#include <QTimer>
#include <QWidget>

class QCustomPlot;
class QLabel;
class QProgressBar;

namespace trellis::ui {

class Dashboard : public QWidget {
    Q_OBJECT
public:
    explicit Dashboard(QWidget *parent = nullptr);

    void attach(launcher::RunFeed *feed);
    void detach();
    void showRun(const launcher::RunData &run); // state and progress of a finished run
    void showSnapshot(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot);
    void setState(const QString &state, const QString &detail = {});

    int lossPointCount() const;
    int throughputPointCount() const;
    QCustomPlot *lossPlot() const { return m_loss; }
    QCustomPlot *throughputPlot() const { return m_throughput; }

signals:
    void snapshotShown(const std::shared_ptr<const trellis::launcher::telemetry::DashboardSnapshot> &snapshot);

private:
    void drain();
    void clearPlots();
    void replot();

    QCustomPlot *m_loss;
    QCustomPlot *m_throughput;
    QLabel *m_state;
    LiveText *m_stats; // changes ten times a second: repaints itself only
    QProgressBar *m_progress;
    QTimer m_timer;
    launcher::RunFeed *m_feed = nullptr;
};

} // namespace trellis::ui
