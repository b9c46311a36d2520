// See timeline.h.
#include "launcher/metrics/timeline.h"

#include <algorithm>
#include <limits>
#include <map>

namespace trellis::launcher::telemetry {

bool isComputeKind(const QString &kind)
{
    return kind == QLatin1String("F") || kind == QLatin1String("B") || kind == QLatin1String("W") || kind == QLatin1String("BW");
}

const char *timelineColour(const QString &kind)
{
    if (kind == QLatin1String("F"))
        return "#1f77b4";
    if (kind == QLatin1String("B") || kind == QLatin1String("BW"))
        return "#2ca02c";
    if (kind == QLatin1String("W"))
        return "#9467bd";
    return "#b0b0b0"; // sends, receives, the rest
}

namespace {

// Busy time and bubble of a lane over a timeline `spanMs` long.
void finish(TimelineLane &lane, double spanMs)
{
    lane.busyMs = 0;
    for (const TimelineBar &b : lane.bars)
        if (b.compute)
            lane.busyMs += b.endMs - b.startMs;
    lane.bubbleFraction = spanMs > 0 ? std::clamp(1.0 - lane.busyMs / spanMs, 0.0, 1.0) : 0.0;
}

double overall(const std::vector<TimelineLane> &lanes, bool predicted, double spanMs)
{
    double busy = 0;
    int n = 0;
    for (const TimelineLane &l : lanes)
        if (l.predicted == predicted) {
            busy += l.busyMs;
            ++n;
        }
    return n > 0 && spanMs > 0 ? std::clamp(1.0 - busy / (n * spanMs), 0.0, 1.0) : -1.0;
}

} // namespace

std::vector<TimelineLane> predictedLanes(const std::vector<std::vector<TimelineBar>> &perStage)
{
    std::vector<TimelineLane> lanes;
    double end = 0;
    for (const auto &bars : perStage)
        for (const TimelineBar &b : bars)
            end = std::max(end, b.endMs);
    for (std::size_t s = 0; s < perStage.size(); ++s) {
        TimelineLane lane;
        lane.stage = static_cast<int>(s);
        lane.predicted = true;
        lane.label = QStringLiteral("stage %1 · predicted").arg(s);
        lane.bars = perStage[s];
        finish(lane, end);
        lanes.push_back(std::move(lane));
    }
    return lanes;
}

std::vector<TimelineLane> predictedLanes(const plan::Estimate &e)
{
    std::vector<std::vector<TimelineBar>> stages;
    for (const auto &actions : e.timeline) {
        std::vector<TimelineBar> bars;
        for (const plan::TimedAction &a : actions) {
            if (a.action.kind == plan::ActionKind::OptimizerStep)
                continue;
            const QString kind = QString::fromLatin1(plan::toString(a.action.kind));
            bars.push_back({a.start, a.end, kind, a.action.microBatch, a.action.chunk, isComputeKind(kind)});
        }
        stages.push_back(std::move(bars));
    }
    return predictedLanes(stages);
}

TimelineView predictedTimeline(const plan::Estimate &e)
{
    TimelineView v;
    v.lanes = predictedLanes(e);
    for (const TimelineLane &l : v.lanes)
        for (const TimelineBar &b : l.bars)
            v.predictedMs = std::max(v.predictedMs, b.endMs);
    v.predictedBubble = v.lanes.empty() ? -1 : e.bubbleFraction; // the simulator's, as the estimate states it
    if (v.lanes.empty())
        v.note = QObject::tr("No schedule to show.");
    return v;
}

TimelineView timelineOf(const QList<RankRow> &ranks, const QList<SpanRow> &spans, const std::vector<TimelineLane> &predicted,
                        double predictedBubble)
{
    TimelineView v;
    // Which rank stands for each stage: the lowest rank with spans there.
    std::map<int, int> stageOf;
    for (const RankRow &r : ranks)
        stageOf[r.rank] = r.pp;
    std::map<int, int> laneRank; // stage -> rank
    qint64 step = -1;
    for (const SpanRow &s : spans) {
        step = std::max(step, s.step);
        const auto it = stageOf.find(s.rank);
        const int stage = it == stageOf.end() ? s.rank : it->second;
        auto [lane, inserted] = laneRank.emplace(stage, s.rank);
        if (!inserted)
            lane->second = std::min(lane->second, s.rank);
    }
    v.step = step;
    qint64 origin = std::numeric_limits<qint64>::max(), last = std::numeric_limits<qint64>::min();
    std::map<int, int> laneOfRank; // rank -> stage, for the chosen ranks
    for (const auto &[stage, rank] : laneRank)
        laneOfRank[rank] = stage;
    for (const SpanRow &s : spans)
        if (s.step == step && laneOfRank.count(s.rank)) {
            origin = std::min(origin, s.startNs);
            last = std::max(last, s.endNs);
        }
    if (step >= 0 && origin < last) {
        std::map<int, TimelineLane> lanes;
        for (const SpanRow &s : spans) {
            const auto it = laneOfRank.find(s.rank);
            if (s.step != step || it == laneOfRank.end())
                continue;
            TimelineLane &lane = lanes[it->second];
            lane.stage = it->second;
            lane.rank = s.rank;
            lane.bars.push_back({(s.startNs - origin) / 1e6, (s.endNs - origin) / 1e6, s.name, s.microBatch, s.stage,
                                 isComputeKind(s.name)});
        }
        v.measuredMs = (last - origin) / 1e6;
        for (auto &[stage, lane] : lanes) {
            lane.label = QStringLiteral("stage %1 · rank %2").arg(stage).arg(lane.rank);
            std::sort(lane.bars.begin(), lane.bars.end(), [](const TimelineBar &a, const TimelineBar &b) { return a.startMs < b.startMs; });
            finish(lane, v.measuredMs);
            v.lanes.push_back(std::move(lane));
        }
        v.measuredBubble = overall(v.lanes, false, v.measuredMs);
    } else {
        v.note = QStringLiteral("no traced step: spans are recorded for pipeline-parallel runs with telemetry.trace_every > 0");
    }
    for (const TimelineLane &l : predicted) {
        v.lanes.push_back(l);
        for (const TimelineBar &b : l.bars)
            v.predictedMs = std::max(v.predictedMs, b.endMs);
    }
    if (!predicted.empty())
        v.predictedBubble = predictedBubble >= 0 ? predictedBubble : overall(v.lanes, true, v.predictedMs);
    else if (v.note.isEmpty())
        v.note = QStringLiteral("no prediction: the plan has one pipeline stage or could not be simulated");
    return v;
}

} // namespace trellis::launcher::telemetry
