// The run report as PDF: the same sections as the HTML report (html_report.h), laid out by
// QTextDocument and printed with QPdfWriter, the charts drawn with QPainter. Needs a
// QGuiApplication (trellis-cli makes an offscreen one when it writes a PDF).
#pragma once

#include "launcher/report/run_comparison.h"
#include "launcher/run_types.h"

#include <QString>

namespace trellis::launcher {

// Writes the PDF to `path` (atomically); "" or why not.
// run: summary, plan, ranks and events; digest: what the report draws from its steps (run_digest.h).
QString writePdfReport(const RunData &run, const RunDigest &digest, const QString &calibrationPath, const QString &path,
                       const QList<SpanRow> &spans = {});

// The comparison report (run_comparison.h) as PDF.
QString writeComparisonPdf(const QList<RunData> &runs, const QList<RunDigest> &digests, const QList<RunFigures> &figures,
                           const QList<PlanDifference> &differences, const QString &path);

} // namespace trellis::launcher
