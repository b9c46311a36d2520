// What the run report and the comparison draw from a run's step rows and collective reports,
// gathered a window of whole steps at a time (HistoryDatabase::forEachStepChunk), so that a report
// costs memory by the run's steps and ranks, not by its rows: a 16,384-rank run's 20 million step
// rows were about 9 GB loaded whole. Per step it keeps the job's figures (tokens/s summed over the
// ranks, the slowest rank's step time, the median rank's step-time parts, rank 0's loss) and the
// minimum, median and maximum over the ranks of the charted values; per rank, sums for the ranks
// table, and each rank's lines while a run has no more ranks than a chart draws lines for.
// Threading: a plain value; built on whichever thread reads the history.
#pragma once

#include "launcher/metrics/checkpoint_costs.h"
#include "launcher/report/html_report.h"
#include "launcher/run_types.h"

#include <QList>
#include <QMap>
#include <QString>
#include <QVector>

#include <array>
#include <map>
#include <vector>

namespace trellis::launcher {

// A chart's lines: one a rank up to this many ranks, as the dashboards draw them; beyond, the
// minimum, median and maximum over the ranks at each step (a line a rank of 1024 ranks made a
// 23 MB report that no browser draws).
constexpr int kReportRankLines = 8;

// Per-rank sums over the run's steps, for the ranks table.
struct RankAgg {
    qint64 steps = 0;
    double stepMs = 0, tokensPerS = 0, commMs = 0, lastLoss = 0;
    qint64 peakRss = 0;
};

// One step's figures over its ranks.
struct DigestStep {
    qint64 step = 0;
    double tokensPerS = 0;                      // the job's: summed over the ranks
    double slowestMs = 0;                       // the slowest rank's step time
    double computeMs = 0, exposedMs = 0, bubbleMs = 0, idleMs = 0; // medians over the ranks
    double checkpointMs = 0;                    // rank 0's time on checkpoints at the step's boundary
    bool haveRank0 = false;
    double loss0 = 0, gradNorm0 = 0, lossScale0 = 0; // rank 0's (every rank reports the global norm)
    // Minimum, median and maximum over the ranks.
    double loss[3] = {}, throughput[3] = {}, stepMs[3] = {};
};

class RunDigest {
public:
    // meta: the run without its steps (loadRun(id, false)); the pipeline's per-stage figures are
    // gathered only for a plan with pp > 1, from its ranks' stages.
    explicit RunDigest(const RunData &meta = {});

    // Whole steps, in ascending order, each (step, rank) once: what forEachStepChunk gives.
    void addSteps(const QList<StepRow> &rows);
    void addCollectives(const QList<CollectiveRow> &rows);

    const QVector<DigestStep> &steps() const { return m_steps; }
    bool empty() const { return m_rows == 0; }
    const StepRow &firstRow() const { return m_first; }
    const StepRow &lastRow() const { return m_last; }
    // Ranks that reported a step.
    int rankCount() const { return static_cast<int>(m_agg.size()); }
    const QMap<int, RankAgg> &ranks() const { return m_agg; }
    // Each rank's loss, throughput and step-time lines; empty beyond kReportRankLines ranks.
    const QMap<int, ChartSeries> &lossLines() const { return m_lossLines; }
    const QMap<int, ChartSeries> &throughputLines() const { return m_throughputLines; }
    const QMap<int, ChartSeries> &stepTimeLines() const { return m_stepTimeLines; }
    qint64 skippedUpdates() const { return m_skippedUpdates; }
    const telemetry::CheckpointCosts &checkpoints() const { return m_checkpoints; }
    bool hasLossScale() const { return m_hasLossScale; }
    // Largest over the rows: parameters, master, gradients, optimizer, activations, communication.
    const std::array<qint64, 6> &memory() const { return m_memory; }
    qint64 peakRss() const { return m_peakRss; }
    // Per pipeline stage, per rank: bubble / step time and step time of every step (pp > 1 only).
    const std::map<int, std::map<int, std::vector<double>>> &bubbleFractions() const { return m_fractions; }
    const std::map<int, std::map<int, std::vector<double>>> &stageStepMs() const { return m_stageStepMs; }

    struct OpTotals {
        qint64 bytes = 0;
        double ms = 0, bus = 0;
        int n = 0;
    };
    // "group/op" -> totals over the collective reports.
    const QMap<QString, OpTotals> &collectivesByOp() const { return m_byOp; }
    // Mean bus bandwidth over the reports: the gradient all-reduce's (dp or dp_cp) where there is one.
    double busGbps() const;

private:
    void addStep(const StepRow *begin, const StepRow *end);

    QVector<DigestStep> m_steps;
    qint64 m_rows = 0;
    StepRow m_first, m_last;
    QMap<int, RankAgg> m_agg;
    QMap<int, ChartSeries> m_lossLines, m_throughputLines, m_stepTimeLines;
    qint64 m_skippedUpdates = 0;
    telemetry::CheckpointCosts m_checkpoints;
    bool m_hasLossScale = false;
    std::array<qint64, 6> m_memory{};
    qint64 m_peakRss = 0;
    std::map<int, int> m_stageOf; // pp > 1 only
    std::map<int, std::map<int, std::vector<double>>> m_fractions, m_stageStepMs;
    QMap<QString, OpTotals> m_byOp;
    double m_gradBus = 0, m_allBus = 0;
    qint64 m_gradReports = 0, m_allReports = 0;
};

// A digest of rows already in memory (run.steps, in the order loadRun gives them). One read from
// the history a window at a time: digestFromHistory (launcher/history/history_digest.h).
RunDigest digestOf(const RunData &run, const QList<CollectiveRow> &collectives);

} // namespace trellis::launcher
