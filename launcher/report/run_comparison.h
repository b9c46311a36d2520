// Comparing runs: per run a summary (throughput, step-time breakdown, bubble, bus bandwidth, final
// loss, memory), the plan fields that differ between them, and their curves overlaid by step.
// Shown by `trellis-cli compare RUN RUN…` as text, written as one self-contained HTML report.
#pragma once

#include "launcher/report/html_report.h"
#include "launcher/report/run_digest.h"
#include "launcher/run_types.h"
#include "launcher/statistics.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <QMetaType>
#include <QVector>

#include <functional>
#include <vector>

namespace trellis::launcher {

struct RunFigures {
    QString runId, name, status;
    int worldSize = 0;
    qint64 steps = 0;
    double finalLoss = 0;
    double tokensPerS = 0;  // the job's, median over steps
    double stepMs = 0;      // the slowest rank's, median over steps
    double computeMs = 0, exposedCommMs = 0, bubbleMs = 0, idleMs = 0; // medians over steps of the rank medians
    double busGbps = 0;     // mean over the run's collective reports (dp all_reduce where there is one)
    qint64 peakRss = 0;     // the largest rank's
};

RunFigures figuresOf(const RunData &run, const RunDigest &digest);
RunFigures figuresOf(const RunData &run, const QList<CollectiveRow> &collectives); // rows in memory


struct PlanDifference {
    QString field;        // "parallel.dp"
    QStringList values;   // one per run ("—" where absent)
};
QList<PlanDifference> planDifferences(const QList<RunData> &runs);

QString compareText(const QList<RunFigures> &figures, const QList<PlanDifference> &differences);

struct OverlaySeries {
    QString runId;
    QVector<double> steps, values;
};

// Everything a comparison view shows, built off the GUI thread (the history reader's).
struct Comparison {
    QList<RunFigures> figures;
    QList<PlanDifference> differences;
    QList<OverlaySeries> loss;      // rank 0's loss by step, per run
    QList<OverlaySeries> tokensPerS; // the job's tokens/s by step, per run
};
// runs: each run's summary and plan (their steps are not read); digests: one a run.
Comparison compareRuns(const QList<RunData> &runs, const QList<RunDigest> &digests);
Comparison compareRuns(const QList<RunData> &runs, const QList<QList<CollectiveRow>> &collectives); // rows in memory
// chart: how a chart goes in (default inline SVG; the PDF draws images), as for the run report.
QString renderComparisonHtml(const QList<RunData> &runs, const QList<RunDigest> &digests, const QList<RunFigures> &figures,
                             const QList<PlanDifference> &differences, const ChartRenderer &chart = {});

} // namespace trellis::launcher

Q_DECLARE_METATYPE(trellis::launcher::Comparison)
