// The HTML report of a run: plan summary, per-rank table, events and the loss and throughput
// charts drawn as inline SVG, so the report is one self-contained file that renders the same in
// any browser and needs no display to produce (the CLI writes it on headless nodes).
#pragma once

#include "launcher/report/html_charts.h"
#include "launcher/run_types.h"
#include "launcher/metrics/timeline.h"

#include <QPointF>
#include <QString>
#include <QVector>

#include <functional>

namespace trellis::launcher {

class RunDigest;

// calibrationPath: this machine's calibration (trellis-cli calibrate) for the prediction beside
// the measurement; "" or a missing file: the cost model's default rates, said so in the report.
// How a chart goes into the report: by default inline SVG (svgLineChart); the PDF report draws
// images instead.
using ChartRenderer = std::function<QString(const QString &title, const QString &xLabel, const QString &yLabel,
                                            const QList<ChartSeries> &series)>;
using TimelineRenderer = std::function<QString(const telemetry::TimelineView &timeline)>;
// run: the run's summary, plan, ranks and events (its steps are not read: `digest` holds what the
// report draws from them and from the collective reports; run_digest.h).
// spans: the newest traced step's (HistoryDatabase::spansOfLastTracedStep), for the pipeline
// section's timeline; empty: the prediction alone.
QString renderHtmlReport(const RunData &run, const RunDigest &digest, const QString &calibrationPath = {},
                         const ChartRenderer &chart = {}, const QList<SpanRow> &spans = {},
                         const TimelineRenderer &timelineRenderer = {});
// The same from rows in memory (run.steps and `collectives`).
QString renderHtmlReport(const RunData &run, const QList<CollectiveRow> &collectives, const QString &calibrationPath = {},
                         const ChartRenderer &chart = {}, const QList<SpanRow> &spans = {},
                         const TimelineRenderer &timelineRenderer = {});

} // namespace trellis::launcher
