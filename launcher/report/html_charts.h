// The charts of the HTML report, drawn as inline SVG so a report is one self-contained file that
// renders the same in any browser and needs no display to produce: line charts with "nice" axis
// ticks (long series thinned to about 600 points so reports stay small), and the step timeline.
#pragma once

#include "launcher/metrics/timeline.h"

#include <QList>
#include <QPointF>
#include <QString>
#include <QVector>

namespace trellis::launcher {

struct ChartSeries {
    QString name;
    QVector<QPointF> points;
};

// A round tick spacing (1, 2 or 5 × 10^n) giving about targetTicks ticks over range.
double niceStep(double range, int targetTicks);

QString svgLineChart(const QString &title, const QString &xLabel, const QString &yLabel,
                     const QList<ChartSeries> &series, int width = 640, int height = 320);

// The step timeline (measured beside predicted) as inline SVG; the PDF draws an image instead.
QString svgTimeline(const telemetry::TimelineView &timeline, int width = 900);

} // namespace trellis::launcher
