// One dashboard panel: a widget that draws a DashboardSnapshot (launcher/metrics/
// dashboard_snapshot.h), which was computed off the GUI thread. show() does work bounded by the
// snapshot's size, never by the message rate or the run's length. Panels sit in the Run mode's
// grid (ui/workspace/dashboard_grid.h), each in a frame that shows the panel's empty state instead
// of empty axes while it has nothing to draw.
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
    // What the panel says instead of drawing: empty while `snapshot` holds what it draws; without a
    // snapshot (nothing followed or opened yet), what will appear here and how to get it.
    virtual QString emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const = 0;
    // The charts whose x axis is the step: they share the step cursor and the x-range.
    virtual QList<QCustomPlot *> stepPlots() const { return {}; }
    // A panel with several views shows the one `key` names (trellis --panel training.dp_bytes);
    // false when it has none of that name.
    virtual bool chooseView(const QString &key)
    {
        Q_UNUSED(key);
        return false;
    }

signals:
    void stepChosen(qint64 step);
};

// A metric's name as the dashboards show it (translated).
QString metricLabel(launcher::telemetry::Metric metric);

// Local updates' and gradient compression's dp traffic in a line: "24 outer steps; 40.8 MB
// all-reduced a rank instead of 326.6 MB every step would (8.0× fewer)"; empty without them.
QString dpTrafficSummary(const launcher::telemetry::DashboardSnapshot::DpTrafficView &traffic);

// Shared drawing helpers.
QColor rankColour(int rank);
QCustomPlot *makePlot(const QString &title, const QString &yLabel, QWidget *parent);
// Draws a metric: one line per rank (≤ 8 ranks), else the min–max band, the median and the
// outlier ranks named in the legend. Replots (queued).
void drawMetric(QCustomPlot *plot, const launcher::telemetry::MetricView &view, const QString &name);
// A vertical marker at `step` on the plot (replacing the previous one).
void markStepOn(QCustomPlot *plot, qint64 step);
// The shared step cursor: a thin dotted line at `step` (a queued replot); a negative step hides it.
void showCursorOn(QCustomPlot *plot, double step);
// Charts follow the application's palette (light or dark): background, axes, grid and text.
void applyPalette(QCustomPlot *plot);

} // namespace trellis::ui::dashboards
