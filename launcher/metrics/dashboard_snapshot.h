// What the dashboards draw, computed off the GUI thread: a plain, bounded snapshot of a run built
// from its metric store (per-rank lines up to 8 ranks, min/median/max bands with outliers beyond),
// the step-time breakdown, memory by category, collectives per group and operation, the rank ×
// step heat map of one metric, events and telemetry health. The GUI thread only copies a shared
// pointer to the newest snapshot and draws it: its work depends on the snapshot's bounded size,
// never on the message rate or the run's length.
// Threading: a SnapshotBuilder is used by one thread (the feed's, or the history reader's);
// snapshots are immutable and shared.
#pragma once

#include "launcher/run_types.h"
#include "launcher/metrics/checkpoint_costs.h"
#include "launcher/metrics/metric_store.h"
#include "launcher/metrics/timeline.h"

#include <QString>

#include <map>
#include <algorithm>
#include <functional>
#include <memory>
#include <tuple>
#include <vector>

namespace trellis::launcher::telemetry {

inline constexpr int kMaxRankLines = 8;

struct Line {
    int rank = -1;
    std::vector<double> steps, values;
};

struct MetricView {
    bool perRank = true;           // lines (≤ 8 ranks), else band + outliers
    std::vector<Line> lines;
    std::vector<BandPoint> band;
    std::vector<Outlier> outliers;
};

struct BreakdownPoint {             // medians over ranks, per bucket
    qint64 step = 0;
    double computeMs = 0, exposedCommMs = 0, bubbleMs = 0, idleMs = 0;
    double checkpointMs = 0;        // at the step boundaries, outside the step (a bucket's mean: amortised)
};

struct MemoryCategory {
    QString name;
    double median = 0, max = 0;     // bytes, over ranks, latest
    int maxRank = -1;
};

struct CollectiveView {
    QString group, op;
    int ranks = 0;
    double bytes = 0, ms = 0;       // means over ranks of their latest report
    double busGbps = 0, minBusGbps = 0;
    int slowestRank = -1;
};

// The cost model's prediction for the run's plan (with this machine's calibration when there is
// one), drawn beside the measurement.
struct Prediction {
    bool known = false;
    bool calibrated = false;
    double stepMs = 0, computeMs = 0, exposedCommMs = 0, bubbleMs = 0;
    std::map<QString, double> memoryBytes; // by category name, as MemoryCategory::name (busiest stage)
    double bubbleFraction = -1;            // the schedule simulator's; -1: one stage
    std::vector<double> stageBubbleFraction; // per pipeline stage
    std::vector<TimelineLane> timeline;    // the simulated step, one lane per stage
    double modelFlopsPerStep = 0, tokensPerStep = 0;
    double peakFlopsPerDevice = 0;         // datasheet (bf16 or fp32 as the plan trains); 0: none (CPU)
    int devices = 0;
};

// The step-time breakdown of one pipeline stage: medians over its ranks of their latest window.
struct StageBreakdown {
    int stage = 0;
    int ranks = 0;
    double stepMs = 0, computeMs = 0, exposedCommMs = 0, bubbleMs = 0, idleMs = 0;
    double bubbleFraction = 0;             // bubble / step
    double predictedBubbleFraction = -1;   // the simulator's for this stage; -1: none
};

// Mixture-of-experts routing, summed over the reporting ranks: per step the worst layer's load
// imbalance (its busiest expert's tokens over the mean, 1 = balanced), the fraction of choices
// dropped for capacity and the load-balancing loss (mean over ranks); and for the newest complete
// step each expert's share of its layer's tokens.
inline constexpr std::size_t kMaxExpertSteps = 4096;
struct ExpertView {
    int layers = 0, experts = 0;
    qint64 step = 0;                 // the step `share` shows
    std::vector<double> share;       // layer-major, each layer's shares sum to 1
    std::vector<double> steps, imbalance, droppedFraction, auxLoss; // newest last, at most kMaxExpertSteps
};

struct HealthView {
    quint64 received = 0, lost = 0, duplicates = 0, outOfOrder = 0, rejected = 0;
    quint64 dropped = 0;            // at the senders (their latest reports)
    quint64 feedGaps = 0;           // feed messages this view missed
};

// Ranks alike in what their Hello said — device (model, not index), precision, how the kernels
// run it, kernel threads —, one row however many ranks: the Ranks panel and reports show which
// kernels ran (a rank whose CPU lacks native bf16 stands apart from the others).
struct RankKind {
    QString device, precision, kernels;
    int threads = 0;
    int count = 0, hosts = 0;
    QString ranks; // "0-3, 8-11" (at most about 80 characters; "…" beyond)
};
// The kinds of `ranks`, most ranks first (the Ranks panel, reports).
std::vector<RankKind> rankKinds(const std::vector<const RankRow *> &ranks);

struct DashboardSnapshot {
    quint64 version = 0;
    int worldSize = 0;
    int ranksReporting = 0;
    qint64 step = 0, totalSteps = 0;
    std::map<Metric, MetricView> metrics; // loss, grad norm, lr, tokens/s, step ms
    std::vector<double> bucketSteps;      // each bucket's last step, for the job-wide series below
    std::vector<double> totalTokensPerS;  // per bucket, summed over ranks (median × ranks)
    std::vector<BreakdownPoint> breakdown;
    std::vector<StageBreakdown> stages;   // per pipeline stage (ranks' coordinates known), else empty
    // Model FLOPs achieved by the whole job per bucket (as totalTokensPerS), and the MFU where the
    // device has a datasheet peak (else empty).
    std::vector<double> achievedTflops, mfu;
    std::vector<MemoryCategory> memory;
    std::vector<CollectiveView> collectives;
    Metric heatMetric = Metric::StepMs;
    HeatMap heat;                         // at most kHeatMapRows rows (ranks grouped beyond)
    std::vector<EventRow> events;         // newest last, at most 500
    // Stalls that ended (a rank held the others up for a while, docs/failures.md): the newest 500,
    // and over the whole run how many, their total and longest, and how often each rank held.
    std::vector<StallRow> stalls;
    struct StallSummary {
        int count = 0;
        qint64 totalMs = 0, longestMs = 0;
        std::map<int, int> byHolder; // rank -> stalls it held
    } stallSummary;
    HealthView health;
    std::vector<RankKind> rankKinds;      // most ranks first
    Prediction prediction;
    ExpertView experts;                   // layers 0: a dense model
    bool lossScaled = false;              // fp16 with dynamic loss scaling
    qint64 skippedUpdates = 0;            // updates skipped for overflow so far (fp16)
    // Local updates and gradient compression: the newest figures, the most any rank reported
    // (each rank all-reduces its own part of the model): outer steps, the dp payload so far, what
    // every-step whole-gradient reduction would have been, and the step they were reported at.
    struct DpTrafficView {
        qint64 outerSteps = 0, bytes = 0, denseBytes = 0, step = 0;
    } dpTraffic;
    CheckpointCosts checkpoints;          // what the run's saves cost so far (rank 0's reports)
};

// The heat map's rows in a snapshot: more ranks are grouped here, on the feed's thread, so that
// drawing it costs the GUI the same at 1024 ranks as at 128.
inline constexpr int kHeatMapRows = 128;

class SnapshotBuilder {
public:
    explicit SnapshotBuilder(int worldSize = 64) : m_store(worldSize) {}
    void reset(int worldSize);
    void setWorldSize(int worldSize);
    MetricStore &store() { return m_store; }
    void addStep(const StepRow &row)
    {
        m_store.append(row);
        m_skippedUpdates = std::max(m_skippedUpdates, row.skippedSteps);
        m_lossScaled = m_lossScaled || row.lossScale > 0;
        m_checkpoints.add(row);
        if (row.dpDenseBytes > 0 && row.step >= m_dpTraffic.step) {
            m_dpTraffic.outerSteps = std::max(m_dpTraffic.outerSteps, row.outerSteps);
            m_dpTraffic.bytes = row.step > m_dpTraffic.step ? row.dpBytes : std::max(m_dpTraffic.bytes, row.dpBytes);
            m_dpTraffic.denseBytes =
                row.step > m_dpTraffic.step ? row.dpDenseBytes : std::max(m_dpTraffic.denseBytes, row.dpDenseBytes);
            m_dpTraffic.step = row.step;
        }
    }
    void addCollective(const CollectiveRow &row);
    void addEvent(const EventRow &event);
    void addStall(const StallRow &stall);
    // A rank's routing report; one of another shape than the first seen is ignored.
    void addExpertLoad(const ExpertLoadRow &row);
    void finishExperts(); // the run is over: every pending step is complete
    void setHealth(const HealthView &health) { m_health = health; }
    void setProgress(qint64 step, qint64 totalSteps, int worldSize);
    void setPrediction(const Prediction &prediction) { m_prediction = prediction; }
    // A rank's Hello (live) or its row in the history: its pipeline stage and its kind.
    void setRank(const RankRow &rank);
    std::shared_ptr<const DashboardSnapshot> build(Metric heatMetric) const;

private:
    // build()'s steps, each filling its part of the snapshot.
    void addMetricViews(DashboardSnapshot &s, const std::vector<int> &ranks) const;
    void addThroughput(DashboardSnapshot &s) const;
    void addStageBreakdown(DashboardSnapshot &s) const;
    void addAchievedFlops(DashboardSnapshot &s) const;
    void addMemory(DashboardSnapshot &s) const;
    void addCollectiveViews(DashboardSnapshot &s) const;

    MetricStore m_store;
    std::map<std::tuple<QString, QString, int>, CollectiveRow> m_collectives; // (group, op, rank) -> latest
    std::vector<EventRow> m_events;
    std::vector<StallRow> m_stalls;
    DashboardSnapshot::StallSummary m_stallSummary;
    HealthView m_health;
    Prediction m_prediction;
    std::map<int, int> m_stageOf; // rank -> pipeline stage
    std::map<int, RankRow> m_rankRows; // from Hellos
    // Routing: the newest steps summed over ranks (complete once a later step has begun), and the
    // finished steps' figures.
    struct ExpertStep {
        std::vector<qint64> tokens;
        qint64 dropped = 0;
        double auxLoss = 0;
        int reports = 0;
    };
    static void finishExpertStep(ExpertView &view, qint64 step, const ExpertStep &sum);
    std::map<qint64, ExpertStep> m_expertPending;
    ExpertView m_experts;
    qint64 m_step = 0, m_totalSteps = 0;
    int m_worldSize = 0;
    qint64 m_skippedUpdates = 0; // fp16: updates skipped for overflow (the most any rank reported)
    bool m_lossScaled = false;   // fp16: some rank reported a loss scale
    DashboardSnapshot::DpTrafficView m_dpTraffic; // the newest step's, the most any rank reported
    CheckpointCosts m_checkpoints;
};

// The prediction for a run's recorded plan (JSON); calibrationPath "" or missing: default rates.
Prediction predictionFor(const QString &planJson, const QString &calibrationPath);

// Hands each of a run's step rows to the function it is given (in step order), so that a long run's
// rows need never be in memory at once (HistoryDatabase::forEachStepChunk).
using StepSource = std::function<void(const std::function<void(const StepRow &)> &)>;
using CollectiveSource = std::function<void(const std::function<void(const CollectiveRow &)> &)>;
using ExpertSource = std::function<void(const std::function<void(const ExpertLoadRow &)> &)>;

// A finished run from the history, as a snapshot: the steps of `run.steps`, then those of `steps`;
// the collectives of `collectives`, then those of `moreCollectives`; the routing reports of `experts`.
std::shared_ptr<const DashboardSnapshot> snapshotOf(const RunData &run, const QList<CollectiveRow> &collectives,
                                                    Metric heatMetric = Metric::StepMs, const QString &calibrationPath = {},
                                                    const ExpertSource &experts = {}, const StepSource &steps = {},
                                                    const CollectiveSource &moreCollectives = {});

} // namespace trellis::launcher::telemetry

#include <QMetaType>
Q_DECLARE_METATYPE(std::shared_ptr<const trellis::launcher::telemetry::DashboardSnapshot>)
