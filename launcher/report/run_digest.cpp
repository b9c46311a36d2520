// See run_digest.h.
#include "launcher/report/run_digest.h"

#include "launcher/report/run_comparison.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

namespace trellis::launcher {
namespace {

// Minimum, median and maximum of `values` into out[0..2].
void spread(std::vector<double> &values, double (&out)[3])
{
    const auto [least, most] = std::minmax_element(values.begin(), values.end());
    out[0] = *least;
    out[2] = *most;
    out[1] = median(values);
}

bool gradientReduce(const CollectiveRow &c)
{
    // The gradient all-reduce: over dp, or dp × cp with context parallelism.
    return (c.group == QLatin1String("dp") || c.group == QLatin1String("dp_cp")) && c.op == QLatin1String("all_reduce");
}

} // namespace

RunDigest::RunDigest(const RunData &meta)
{
    const QJsonObject parallel = QJsonDocument::fromJson(meta.planJson.toUtf8()).object().value(QStringLiteral("parallel")).toObject();
    if (parallel.value(QStringLiteral("pp")).toInt() > 1)
        for (const RankRow &k : meta.ranks)
            m_stageOf[k.rank] = k.pp;
}

void RunDigest::addSteps(const QList<StepRow> &rows)
{
    if (rows.isEmpty())
        return;
    if (m_rows == 0)
        m_first = rows.first();
    m_last = rows.last();
    m_rows += rows.size();
    const StepRow *begin = rows.constData(), *end = begin + rows.size();
    while (begin != end) {
        const StepRow *stepEnd = std::find_if(begin, end, [&](const StepRow &s) { return s.step != begin->step; });
        addStep(begin, stepEnd);
        begin = stepEnd;
    }
}

void RunDigest::addStep(const StepRow *begin, const StepRow *end)
{
    DigestStep d;
    d.step = begin->step;
    const std::size_t n = static_cast<std::size_t>(end - begin);
    std::vector<double> compute, exposed, bubble, idle, loss, throughput, stepMs;
    for (auto *v : {&compute, &exposed, &bubble, &idle, &loss, &throughput, &stepMs})
        v->reserve(n);
    for (const StepRow *s = begin; s != end; ++s) {
        d.tokensPerS += s->tokensPerS;
        d.slowestMs = std::max(d.slowestMs, s->stepMs);
        compute.push_back(s->computeMs);
        exposed.push_back(s->commExposedMs);
        bubble.push_back(s->bubbleMs);
        idle.push_back(s->idleMs);
        loss.push_back(s->loss);
        throughput.push_back(s->tokensPerS);
        stepMs.push_back(s->stepMs);
        if (s->rank == 0) {
            d.haveRank0 = true;
            d.loss0 = s->loss;
            d.gradNorm0 = s->gradNorm;
            d.lossScale0 = s->lossScale;
            d.checkpointMs = s->checkpointMs;
            m_hasLossScale = m_hasLossScale || s->lossScale > 0;
        }
        m_skippedUpdates = std::max(m_skippedUpdates, s->skippedSteps);
        m_checkpoints.add(*s);
        const qint64 memory[6] = {s->memParameters, s->memMaster, s->memGradients, s->memOptimizer, s->memActivations, s->memComm};
        for (int i = 0; i < 6; ++i)
            m_memory[static_cast<std::size_t>(i)] = std::max(m_memory[static_cast<std::size_t>(i)], memory[i]);
        m_peakRss = std::max(m_peakRss, s->peakRss);
        RankAgg &a = m_agg[s->rank];
        ++a.steps;
        a.stepMs += s->stepMs;
        a.tokensPerS += s->tokensPerS;
        a.commMs += s->commMs;
        a.lastLoss = s->loss;
        a.peakRss = std::max(a.peakRss, s->peakRss);
        if (const auto stage = m_stageOf.find(s->rank); stage != m_stageOf.end() && s->stepMs > 0) {
            m_fractions[stage->second][s->rank].push_back(s->bubbleMs / s->stepMs);
            m_stageStepMs[stage->second][s->rank].push_back(s->stepMs);
        }
        if (m_agg.size() <= kReportRankLines) {
            const QString name = QStringLiteral("rank %1").arg(s->rank);
            auto line = [&](QMap<int, ChartSeries> &lines, double value) {
                ChartSeries &series = lines[s->rank];
                series.name = name;
                series.points.append(QPointF(s->step, value));
            };
            line(m_lossLines, s->loss);
            line(m_throughputLines, s->tokensPerS);
            line(m_stepTimeLines, s->stepMs);
        }
    }
    if (m_agg.size() > kReportRankLines && !m_lossLines.isEmpty()) { // the charts draw bands: the lines go
        m_lossLines.clear();
        m_throughputLines.clear();
        m_stepTimeLines.clear();
    }
    d.computeMs = median(std::move(compute));
    d.exposedMs = median(std::move(exposed));
    d.bubbleMs = median(std::move(bubble));
    d.idleMs = median(std::move(idle));
    spread(loss, d.loss);
    spread(throughput, d.throughput);
    spread(stepMs, d.stepMs);
    m_steps.append(d);
}

void RunDigest::addCollectives(const QList<CollectiveRow> &rows)
{
    for (const CollectiveRow &c : rows) {
        OpTotals &a = m_byOp[c.group + QLatin1Char('/') + c.op];
        a.bytes += c.bytes;
        a.ms += c.ms;
        a.bus += c.busGBps;
        ++a.n;
        m_allBus += c.busGBps;
        ++m_allReports;
        if (gradientReduce(c)) {
            m_gradBus += c.busGBps;
            ++m_gradReports;
        }
    }
}

double RunDigest::busGbps() const
{
    if (m_gradReports > 0)
        return m_gradBus / static_cast<double>(m_gradReports);
    return m_allReports > 0 ? m_allBus / static_cast<double>(m_allReports) : 0;
}

RunDigest digestOf(const RunData &run, const QList<CollectiveRow> &collectives)
{
    RunDigest d(run);
    d.addSteps(run.steps);
    d.addCollectives(collectives);
    return d;
}

} // namespace trellis::launcher
