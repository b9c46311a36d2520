// One dashboard panel: a widget that draws a DashboardSnapshot (launcher/metrics/
// dashboard_snapshot.h), which was computed off the GUI thread. show() does work bounded by the
// snapshot's size, never by the message rate or the run's length. Each panel lives in its own
// dock, which a person can move, tab and hide; the arrangement is saved with the window.
#pragma once

#include "launcher/metrics/dashboard_snapshot.h"

#include <QString>
#include <QWidget>

class QCustomPlot;

namespace trellis::ui::dashboards {

class Panel : public QWidget {
    Q_OBJECT
public:
    using QWidget::QWidget;
    virtual QString title() const = 0;
    virtual QString objectId() const = 0; // stable, for the saved arrangement
    virtual void show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot) = 0;
    virtual void markStep(qint64 step) { Q_UNUSED(step); } // an event was chosen: show its step

signals:
    void stepChosen(qint64 step);
};

// A metric's name as the dashboards show it (translated).
QString metricLabel(launcher::telemetry::Metric metric);

// Shared drawing helpers.
QColor rankColour(int rank);
QCustomPlot *makePlot(const QString &title, const QString &yLabel, QWidget *parent);
// Draws a metric: one line per rank (≤ 8 ranks), else the min–max band, the median and the
// outlier ranks named in the legend. Replots (queued).
void drawMetric(QCustomPlot *plot, const launcher::telemetry::MetricView &view, const QString &name);
// A vertical marker at `step` on the plot (replacing the previous one).
void markStepOn(QCustomPlot *plot, qint64 step);

} // namespace trellis::ui::dashboards
