// See dashboard_snapshot.h.
#include "launcher/metrics/dashboard_snapshot.h"

#include "launcher/document/calibration_file.h"
#include "launcher/statistics.h"
#include "backend/plan/cost/cost_model.h"
#include "backend/plan/plan_json.h"
#include "backend/plan/plan_validate.h"

#include <QRegularExpression>

#include <algorithm>
#include <set>
#include <tuple>

namespace trellis::launcher::telemetry {

void SnapshotBuilder::reset(int worldSize)
{
    m_store.clear(worldSize);
    m_collectives.clear();
    m_events.clear();
    m_health = {};
    m_rankRows.clear();
    m_step = m_totalSteps = 0;
    m_worldSize = worldSize;
    m_skippedUpdates = 0;
    m_lossScaled = false;
    m_dpTraffic = {};
    m_checkpoints = {};
}

void SnapshotBuilder::setWorldSize(int worldSize)
{
    m_store.setWorldSize(worldSize);
    m_worldSize = worldSize;
}

void SnapshotBuilder::addCollective(const CollectiveRow &row) { m_collectives[{row.group, row.op, row.rank}] = row; }

void SnapshotBuilder::addEvent(const EventRow &event)
{
    m_events.push_back(event);
    if (m_events.size() > 500)
        m_events.erase(m_events.begin(), m_events.begin() + static_cast<std::ptrdiff_t>(m_events.size() - 500));
}

void SnapshotBuilder::addStall(const StallRow &stall)
{
    for (const StallRow &s : m_stalls)
        if (s.number == stall.number && s.attempt == stall.attempt)
            return; // backfilled from the history and then seen on the feed
    m_stalls.push_back(stall);
    if (m_stalls.size() > 500)
        m_stalls.erase(m_stalls.begin());
    ++m_stallSummary.count;
    m_stallSummary.totalMs += stall.durationMs;
    m_stallSummary.longestMs = std::max(m_stallSummary.longestMs, stall.durationMs);
    for (int rank : stall.holders)
        ++m_stallSummary.byHolder[rank];
}

void SnapshotBuilder::setProgress(qint64 step, qint64 totalSteps, int worldSize)
{
    m_step = step;
    m_totalSteps = totalSteps;
    if (worldSize > 0)
        m_worldSize = worldSize;
}

void SnapshotBuilder::addExpertLoad(const ExpertLoadRow &row)
{
    if (row.layers <= 0 || row.experts <= 0 || row.tokens.size() != static_cast<std::size_t>(row.layers) * row.experts)
        return;
    if (m_experts.layers == 0) {
        m_experts.layers = row.layers;
        m_experts.experts = row.experts;
    } else if (row.layers != m_experts.layers || row.experts != m_experts.experts) {
        return;
    }
    if (!m_experts.steps.empty() && row.step <= static_cast<qint64>(m_experts.steps.back()))
        return; // a step already finished (a late or repeated report)
    ExpertStep &s = m_expertPending[row.step];
    if (s.tokens.empty())
        s.tokens.assign(row.tokens.size(), 0);
    for (std::size_t i = 0; i < row.tokens.size(); ++i)
        s.tokens[i] += row.tokens[i];
    s.dropped += row.dropped;
    s.auxLoss += row.auxLoss;
    ++s.reports;
    // Ranks report a step at about the same time: two steps back is complete.
    while (m_expertPending.size() > 2) {
        const auto oldest = m_expertPending.begin();
        finishExpertStep(m_experts, oldest->first, oldest->second);
        m_expertPending.erase(oldest);
    }
}

void SnapshotBuilder::finishExperts()
{
    for (const auto &[step, sum] : m_expertPending)
        finishExpertStep(m_experts, step, sum);
    m_expertPending.clear();
}

void SnapshotBuilder::finishExpertStep(ExpertView &v, qint64 step, const ExpertStep &sum)
{
    const auto E = static_cast<std::size_t>(v.experts);
    double worst = 0, total = 0;
    v.share.assign(sum.tokens.size(), 0.0);
    for (std::size_t l = 0; l < static_cast<std::size_t>(v.layers); ++l) {
        qint64 layerTotal = 0, most = 0;
        for (std::size_t e = 0; e < E; ++e) {
            layerTotal += sum.tokens[l * E + e];
            most = std::max(most, sum.tokens[l * E + e]);
        }
        if (layerTotal == 0)
            continue; // a layer no rank routed (none reported it)
        total += static_cast<double>(layerTotal);
        worst = std::max(worst, static_cast<double>(most) * static_cast<double>(E) / static_cast<double>(layerTotal));
        for (std::size_t e = 0; e < E; ++e)
            v.share[l * E + e] = static_cast<double>(sum.tokens[l * E + e]) / static_cast<double>(layerTotal);
    }
    v.step = step;
    v.steps.push_back(static_cast<double>(step));
    v.imbalance.push_back(worst);
    v.droppedFraction.push_back(total > 0 ? static_cast<double>(sum.dropped) / total : 0.0);
    v.auxLoss.push_back(sum.reports > 0 ? sum.auxLoss / sum.reports : 0.0);
    if (v.steps.size() > kMaxExpertSteps)
        for (auto *series : {&v.steps, &v.imbalance, &v.droppedFraction, &v.auxLoss})
            series->erase(series->begin(), series->begin() + static_cast<std::ptrdiff_t>(series->size() - kMaxExpertSteps));
}

std::shared_ptr<const DashboardSnapshot> SnapshotBuilder::build(Metric heatMetric) const
{
    auto s = std::make_shared<DashboardSnapshot>();
    s->experts = m_experts; // bounded (kMaxExpertSteps)
    if (m_expertPending.size() > 1) // the older pending step is all but complete: show it too
        finishExpertStep(s->experts, m_expertPending.begin()->first, m_expertPending.begin()->second);
    s->version = m_store.version();
    const std::vector<int> ranks = m_store.ranks();
    s->worldSize = std::max(m_worldSize, static_cast<int>(ranks.size()));
    s->ranksReporting = static_cast<int>(ranks.size());
    s->step = m_step;
    s->totalSteps = m_totalSteps;
    s->lossScaled = m_lossScaled;
    s->dpTraffic = m_dpTraffic;
    s->checkpoints = m_checkpoints;
    s->skippedUpdates = m_skippedUpdates;
    addMetricViews(*s, ranks);
    addThroughput(*s);
    addStageBreakdown(*s);
    addAchievedFlops(*s);
    addMemory(*s);
    addCollectiveViews(*s);
    s->heatMetric = heatMetric;
    s->heat = groupRanks(m_store.heatMap(heatMetric), kHeatMapRows);
    s->events = m_events;
    s->stalls = m_stalls;
    s->stallSummary = m_stallSummary;
    s->health = m_health;
    std::vector<const RankRow *> rows;
    rows.reserve(m_rankRows.size());
    for (const auto &[rank, row] : m_rankRows)
        rows.push_back(&row);
    s->rankKinds = rankKinds(rows);
    s->prediction = m_prediction;
    return s;
}

void SnapshotBuilder::setRank(const RankRow &rank)
{
    m_stageOf[rank.rank] = rank.pp;
    m_rankRows[rank.rank] = rank;
}

namespace {

// "0-3, 8-11" for the sorted ranks, cut with "…" past about 80 characters.
QString rankRanges(const std::vector<int> &ranks)
{
    QString out;
    for (std::size_t i = 0; i < ranks.size();) {
        std::size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
            ++j;
        if (!out.isEmpty())
            out += QStringLiteral(", ");
        if (out.size() > 80)
            return out + QStringLiteral("…");
        out += j == i ? QString::number(ranks[i]) : QStringLiteral("%1-%2").arg(ranks[i]).arg(ranks[j]);
        i = j + 1;
    }
    return out;
}

} // namespace

std::vector<RankKind> rankKinds(const std::vector<const RankRow *> &ranks)
{
    static const QRegularExpression index(QStringLiteral("^cuda:\\d+"));
    std::map<std::tuple<QString, QString, QString, int>, std::pair<std::vector<int>, std::set<QString>>> kinds;
    for (const RankRow *r : ranks) {
        QString device = r->device;
        device.replace(index, QStringLiteral("cuda")); // one kind for every GPU of a model
        auto &kind = kinds[{device, r->precision, r->kernels, r->threads}];
        kind.first.push_back(r->rank);
        kind.second.insert(r->host);
    }
    std::vector<RankKind> out;
    for (auto &[key, members] : kinds) {
        RankKind k;
        std::tie(k.device, k.precision, k.kernels, k.threads) = key;
        std::sort(members.first.begin(), members.first.end());
        k.count = static_cast<int>(members.first.size());
        k.hosts = static_cast<int>(members.second.size());
        k.ranks = rankRanges(members.first);
        out.push_back(std::move(k));
    }
    std::stable_sort(out.begin(), out.end(), [](const RankKind &a, const RankKind &b) { return a.count > b.count; });
    return out;
}

// Each metric's lines (one per rank), or its band and outliers past kMaxRankLines ranks.
void SnapshotBuilder::addMetricViews(DashboardSnapshot &s, const std::vector<int> &ranks) const
{
    const bool perRank = ranks.size() <= static_cast<std::size_t>(kMaxRankLines);
    for (Metric m : {Metric::Loss, Metric::GradNorm, Metric::Lr, Metric::TokensPerS, Metric::StepMs, Metric::LossScale,
                     Metric::DpBytes}) {
        MetricView v;
        v.perRank = perRank;
        if (perRank) {
            for (int r : ranks) {
                Line line;
                line.rank = r;
                for (const Bucket &b : m_store.series(m, r)) {
                    line.steps.push_back(b.lastStep);
                    line.values.push_back(b.mean);
                }
                v.lines.push_back(std::move(line));
            }
        } else {
            v.band = m_store.band(m);
            v.outliers = m_store.outliers(m, 3);
        }
        s.metrics[m] = std::move(v);
    }
}

// The job's tokens/s per bucket, and the step's breakdown (medians over ranks).
void SnapshotBuilder::addThroughput(DashboardSnapshot &s) const
{
    {
        const auto tokens = m_store.band(Metric::TokensPerS);
        for (const BandPoint &p : tokens) {
            s.bucketSteps.push_back(static_cast<double>(p.step));
            s.totalTokensPerS.push_back(p.median * p.ranks);
        }
    }
    const auto compute = m_store.band(Metric::ComputeMs);
    const auto exposed = m_store.band(Metric::CommExposedMs);
    const auto bubble = m_store.band(Metric::BubbleMs);
    const auto idle = m_store.band(Metric::IdleMs);
    const auto checkpoint = m_store.band(Metric::CheckpointMs);
    for (std::size_t i = 0; i < compute.size(); ++i)
        s.breakdown.push_back({compute[i].step, compute[i].median, i < exposed.size() ? exposed[i].median : 0,
                               i < bubble.size() ? bubble[i].median : 0, i < idle.size() ? idle[i].median : 0,
                               i < checkpoint.size() ? checkpoint[i].median : 0});
}

// Per pipeline stage: medians over its ranks of their latest window.
void SnapshotBuilder::addStageBreakdown(DashboardSnapshot &s) const
{
    if (m_stageOf.empty())
        return;
    std::map<Metric, std::map<int, double>> means;
    for (Metric m : {Metric::StepMs, Metric::ComputeMs, Metric::CommExposedMs, Metric::BubbleMs, Metric::IdleMs})
        means[m] = m_store.windowMeans(m);
    std::map<int, std::map<Metric, std::vector<double>>> byStage;
    for (const auto &[m, valueOf] : means)
        for (const auto &[rank, value] : valueOf)
            if (const auto it = m_stageOf.find(rank); it != m_stageOf.end())
                byStage[it->second][m].push_back(value);
    for (auto &[stage, values] : byStage) {
        StageBreakdown b;
        b.stage = stage;
        b.ranks = static_cast<int>(values[Metric::StepMs].size());
        b.stepMs = median(values[Metric::StepMs]);
        b.computeMs = median(values[Metric::ComputeMs]);
        b.exposedCommMs = median(values[Metric::CommExposedMs]);
        b.bubbleMs = median(values[Metric::BubbleMs]);
        b.idleMs = median(values[Metric::IdleMs]);
        b.bubbleFraction = b.stepMs > 0 ? b.bubbleMs / b.stepMs : 0;
        if (stage >= 0 && static_cast<std::size_t>(stage) < m_prediction.stageBubbleFraction.size())
            b.predictedBubbleFraction = m_prediction.stageBubbleFraction[static_cast<std::size_t>(stage)];
        if (b.ranks > 0)
            s.stages.push_back(b);
    }
}

// Model FLOPs achieved: the job's tokens/s × the model's FLOPs per token.
void SnapshotBuilder::addAchievedFlops(DashboardSnapshot &s) const
{
    if (!m_prediction.known || m_prediction.tokensPerStep <= 0)
        return;
    const double flopsPerToken = m_prediction.modelFlopsPerStep / m_prediction.tokensPerStep;
    const double peak = m_prediction.peakFlopsPerDevice * std::max(1, m_prediction.devices);
    for (double tokens : s.totalTokensPerS) {
        s.achievedTflops.push_back(tokens * flopsPerToken / 1e12);
        if (peak > 0)
            s.mfu.push_back(tokens * flopsPerToken / peak);
    }
}

void SnapshotBuilder::addMemory(DashboardSnapshot &s) const
{
    for (auto [m, name] : {std::pair{Metric::MemParameters, "parameters"}, std::pair{Metric::MemMaster, "master weights"},
                           std::pair{Metric::MemGradients, "gradients"}, std::pair{Metric::MemOptimizer, "optimizer"},
                           std::pair{Metric::MemActivations, "activations"}, std::pair{Metric::MemComm, "communication"},
                           std::pair{Metric::PeakRss, "peak RSS"}}) {
        const auto band = m_store.band(m);
        if (band.empty() || (m == Metric::MemMaster && band.back().max <= 0))
            continue; // fp32 runs keep no masters apart
        s.memory.push_back({QString::fromLatin1(name), band.back().median, band.back().max, band.back().maxRank});
    }
}

// Collectives: per (group, op), means over ranks of their latest report, the slowest link named.
void SnapshotBuilder::addCollectiveViews(DashboardSnapshot &s) const
{
    std::map<std::pair<QString, QString>, CollectiveView> views;
    for (const auto &[key, row] : m_collectives) {
        CollectiveView &v = views[{row.group, row.op}];
        v.group = row.group;
        v.op = row.op;
        v.bytes += static_cast<double>(row.bytes);
        v.ms += row.ms;
        v.busGbps += row.busGBps;
        if (v.ranks == 0 || row.busGBps < v.minBusGbps) {
            v.minBusGbps = row.busGBps;
            v.slowestRank = row.rank;
        }
        ++v.ranks;
    }
    for (auto &[key, v] : views) {
        v.bytes /= v.ranks;
        v.ms /= v.ranks;
        v.busGbps /= v.ranks;
        s.collectives.push_back(v);
    }
}

Prediction predictionFor(const QString &planJson, const QString &calibrationPath)
{
    Prediction out;
    auto parsed = plan::parsePlan(planJson.toStdString());
    if (!parsed || plan::hasErrors(plan::validatePlan(parsed.value())))
        return out;
    plan::Plan p = parsed.value();
    if (p.ownTrainer.external() && !p.ownTrainer.hasModel)
        return out; // a job with its own trainer and no model: nothing to predict from
    plan::DeviceSpec device = plan::deviceFor(p.cluster);
    if (!calibrationPath.isEmpty())
        applyCalibrationFile(calibrationPath, false, p, device, out.calibrated);
    const plan::Estimate e = plan::estimatePlan(p, device);
    out.known = true;
    out.bubbleFraction = p.parallel.pp > 1 ? e.bubbleFraction : -1;
    out.stageBubbleFraction = e.stageBubbleFraction;
    out.timeline = predictedLanes(e);
    out.modelFlopsPerStep = e.modelFlopsPerStep;
    out.tokensPerStep = e.tokensPerStep;
    const bool cpu = device.name == "cpu";
    out.peakFlopsPerDevice =
        cpu ? 0.0 : (p.parallel.precision == plan::Precision::Fp32 ? device.peakTflopsFp32 : device.peakTflopsBf16) * 1e12;
    out.devices = p.parallel.worldSize();
    out.stepMs = e.stepMs;
    out.computeMs = e.computeMs;
    out.exposedCommMs = e.exposedCommMs;
    out.bubbleMs = e.bubbleMs;
    plan::StageMemory busiest;
    for (const auto &m : e.memory)
        if (m.total() >= busiest.total())
            busiest = m;
    out.memoryBytes = {{QStringLiteral("parameters"), static_cast<double>(busiest.parameters)},
                       {QStringLiteral("master weights"), static_cast<double>(busiest.masterWeights)},
                       {QStringLiteral("gradients"), static_cast<double>(busiest.gradients)},
                       {QStringLiteral("optimizer"), static_cast<double>(busiest.optimizer)},
                       {QStringLiteral("activations"), static_cast<double>(busiest.activations)},
                       {QStringLiteral("communication"), static_cast<double>(busiest.commBuffers)}};
    return out;
}

std::shared_ptr<const DashboardSnapshot> snapshotOf(const RunData &run, const QList<CollectiveRow> &collectives, Metric heatMetric,
                                                    const QString &calibrationPath, const ExpertSource &experts,
                                                    const StepSource &steps, const CollectiveSource &moreCollectives)
{
    SnapshotBuilder b(run.run.worldSize);
    b.setPrediction(predictionFor(run.planJson, calibrationPath));
    for (const RankRow &r : run.ranks)
        b.setRank(r);
    for (const StepRow &row : run.steps)
        b.addStep(row);
    if (steps)
        steps([&b](const StepRow &row) { b.addStep(row); });
    for (const CollectiveRow &c : collectives)
        b.addCollective(c);
    if (moreCollectives)
        moreCollectives([&b](const CollectiveRow &c) { b.addCollective(c); });
    for (const EventRow &e : run.events)
        b.addEvent(e);
    for (const StallRow &s : run.stalls)
        b.addStall(s);
    if (experts)
        experts([&b](const ExpertLoadRow &x) { b.addExpertLoad(x); });
    b.finishExperts();
    HealthView h;
    for (const RankRow &r : run.ranks) {
        h.received += static_cast<quint64>(std::max<qint64>(0, r.receivedSeq));
        h.lost += static_cast<quint64>(std::max<qint64>(0, r.lost));
        h.dropped += static_cast<quint64>(std::max<qint64>(0, r.dropped));
    }
    b.setHealth(h);
    b.setProgress(run.run.stepsDone, run.run.totalSteps, run.run.worldSize);
    return b.build(heatMetric);
}

} // namespace trellis::launcher::telemetry
