// Live dashboard: loss and tokens/s per rank (QCustomPlot), run state and progress. In live mode
// (attached to a run's live feed) it drains the feed's SeriesStore on a short timer and replots once per tick with
// rpQueuedReplot, so the redraw rate is bounded whatever the telemetry rate. It can also show a
// finished run loaded from the history.
#pragma once

#include "launcher/supervisor/run_feed.h"
#include "launcher/run_types.h"

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
    void showRun(const launcher::RunData &run);
    void setState(const QString &state, const QString &detail = {});

    int lossPointCount() const;
    int throughputPointCount() const;
    QCustomPlot *lossPlot() const { return m_loss; }
    QCustomPlot *throughputPlot() const { return m_throughput; }

private:
    void drain();
    void clearPlots();
    void addRow(const launcher::StepRow &row);
    void ensureGraph(int rank);
    void replot();

    QCustomPlot *m_loss;
    QCustomPlot *m_throughput;
    QLabel *m_state;
    QLabel *m_stats;
    QProgressBar *m_progress;
    QTimer m_timer;
    launcher::RunFeed *m_feed = nullptr;
    quint64 m_version = 0;
};

} // namespace trellis::ui
