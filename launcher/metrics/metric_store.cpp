// See metric_store.h.
#include "launcher/metrics/metric_store.h"
#include "launcher/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace trellis::launcher::telemetry {

const char *metricName(Metric metric)
{
    static const char *const names[] = {"loss", "grad norm", "learning rate", "tokens/s", "step ms", "compute ms",
                                        "communication ms", "exposed communication ms", "bubble ms", "idle ms",
                                        "parameter bytes", "gradient bytes", "optimizer bytes", "activation bytes",
                                        "communication buffer bytes", "peak RSS bytes", "master weight bytes",
                                        "loss scale", "dp MB all-reduced", "checkpoint ms"};
    const int i = static_cast<int>(metric);
    return i >= 0 && i < kMetricCount ? names[i] : "?";
}

double metricOf(const StepRow &r, Metric metric)
{
    switch (metric) {
    case Metric::Loss: return r.loss;
    case Metric::GradNorm: return r.gradNorm;
    case Metric::Lr: return r.lr;
    case Metric::TokensPerS: return r.tokensPerS;
    case Metric::StepMs: return r.stepMs;
    case Metric::ComputeMs: return r.computeMs;
    case Metric::CommMs: return r.commMs;
    case Metric::CommExposedMs: return r.commExposedMs;
    case Metric::BubbleMs: return r.bubbleMs;
    case Metric::IdleMs: return r.idleMs;
    case Metric::MemParameters: return static_cast<double>(r.memParameters);
    case Metric::MemGradients: return static_cast<double>(r.memGradients);
    case Metric::MemOptimizer: return static_cast<double>(r.memOptimizer);
    case Metric::MemActivations: return static_cast<double>(r.memActivations);
    case Metric::MemComm: return static_cast<double>(r.memComm);
    case Metric::PeakRss: return static_cast<double>(r.peakRss);
    case Metric::MemMaster: return static_cast<double>(r.memMaster);
    case Metric::LossScale: return r.lossScale;
    case Metric::DpBytes: return static_cast<double>(r.dpBytes) / 1e6; // MB: a chart's scale
    case Metric::CheckpointMs: return r.checkpointMs;
    case Metric::Count: break;
    }
    return 0;
}

namespace {
// Neighbours merged `factor` at a time (a series whose width grew by that factor).
template <class B>
void coarsenBuckets(std::vector<B> &buckets, std::size_t factor)
{
    if (factor <= 1)
        return;
    std::vector<B> merged((buckets.size() + factor - 1) / factor);
    for (std::size_t i = 0; i < buckets.size(); ++i)
        merged[i / factor].merge(buckets[i]);
    buckets = std::move(merged);
}
} // namespace

void Bucket::add(qint64 step, double value)
{
    const float v = static_cast<float>(value);
    const auto s = static_cast<std::int32_t>(std::min<qint64>(step, std::numeric_limits<std::int32_t>::max()));
    if (count == 0) {
        lastStep = s;
        min = max = mean = last = v;
        count = 1;
        return;
    }
    if (s >= lastStep) {
        lastStep = s;
        last = v;
    }
    min = std::min(min, v);
    max = std::max(max, v);
    ++count;
    mean += (v - mean) / static_cast<float>(count);
}

void Bucket::merge(const Bucket &later)
{
    if (later.count == 0)
        return;
    if (count == 0) {
        *this = later;
        return;
    }
    const double total = static_cast<double>(count) + later.count;
    mean = static_cast<float>((static_cast<double>(mean) * count + static_cast<double>(later.mean) * later.count) / total);
    min = std::min(min, later.min);
    max = std::max(max, later.max);
    if (later.lastStep >= lastStep) {
        lastStep = later.lastStep;
        last = later.last;
    }
    count += later.count;
}

void DownsampledSeries::append(qint64 step, double value, qint64 width)
{
    appendAt(static_cast<std::size_t>(std::max<qint64>(0, step - 1) / width), step, value);
}

void DownsampledSeries::appendAt(std::size_t index, qint64 step, double value)
{
    if (index >= m_buckets.size())
        m_buckets.resize(index + 1);
    m_buckets[index].add(step, value);
}

void DownsampledSeries::coarsen(qint64 fromWidth, qint64 toWidth)
{
    coarsenBuckets(m_buckets, static_cast<std::size_t>(toWidth / fromWidth));
}

void RankedBucket::add(qint64 step, double value, int rank)
{
    const bool first = b.count == 0;
    b.add(step, value);
    const auto v = static_cast<float>(value);
    if (first || v <= b.min)
        minRank = rank;
    if (first || v >= b.max)
        maxRank = rank;
}

void RankedBucket::merge(const RankedBucket &later)
{
    if (later.b.count == 0)
        return;
    if (b.count == 0) {
        *this = later;
        return;
    }
    if (later.b.min < b.min)
        minRank = later.minRank;
    if (later.b.max > b.max)
        maxRank = later.maxRank;
    b.merge(later.b);
}

void GroupSeries::appendAt(std::size_t index, qint64 step, double value, int rank)
{
    if (index >= m_buckets.size())
        m_buckets.resize(index + 1);
    m_buckets[index].add(step, value, rank);
}

void GroupSeries::coarsen(qint64 fromWidth, qint64 toWidth)
{
    coarsenBuckets(m_buckets, static_cast<std::size_t>(toWidth / fromWidth));
}

MetricStore::MetricStore(int worldSize) { clear(worldSize); }

void MetricStore::clear(int worldSize)
{
    std::lock_guard lock(m_mutex);
    const int world = std::max(1, worldSize);
    m_groupSize = world > kExactRanks ? (world + kExactRanks - 1) / kExactRanks : 1;
    const int series = (world + m_groupSize - 1) / m_groupSize;
    m_capacity = std::clamp(65536 / series, 128, 4096);
    m_width = 1;
    m_series.clear();
    m_groups.clear();
    m_groupRanks.clear();
    m_ranksSeen.clear();
    m_windows.clear();
    m_bucketChanged.clear();
    m_bands.clear();
    ++m_version;
}

void MetricStore::setWorldSize(int worldSize)
{
    {
        std::lock_guard lock(m_mutex);
        if (!m_series.empty() || !m_groups.empty())
            return;
    }
    clear(worldSize);
}

void MetricStore::append(const StepRow &row) { append(std::span<const StepRow>(&row, 1)); }

void MetricStore::fitWidth(qint64 step)
{
    qint64 width = m_width;
    while ((step - 1) / width >= m_capacity)
        width *= 2;
    if (width == m_width)
        return;
    for (auto &[rank, series] : m_series)
        for (auto &s : series)
            s.coarsen(m_width, width);
    for (auto &[first, series] : m_groups)
        for (auto &s : series)
            s.coarsen(m_width, width);
    const auto factor = static_cast<std::size_t>(width / m_width);
    for (auto &[rank, ringOf] : m_windows) { // each metric's ring: buckets merged, the newest kept
        for (int m = 0; m < kMetricCount; ++m) {
            WindowSlot *ring = &ringOf[static_cast<std::size_t>(m * kWindowSlots)];
            std::vector<WindowSlot> old(ring, ring + kWindowSlots);
            std::sort(old.begin(), old.end(), [](const WindowSlot &a, const WindowSlot &b) { return a.index < b.index; });
            std::fill(ring, ring + kWindowSlots, WindowSlot{});
            for (const WindowSlot &w : old) {
                if (w.index < 0)
                    continue;
                const auto index = static_cast<std::int32_t>(static_cast<std::size_t>(w.index) / factor);
                WindowSlot &to = ring[index % kWindowSlots];
                if (to.index == index)
                    to.b.merge(w.b);
                else
                    to = WindowSlot{w.b, index};
            }
        }
    }
    // Every bucket is another now, and each merged one holds data: all changed (a stamp of 0 would
    // read as "never had data" and leave the run's past out of the bands).
    m_width = width;
    ++m_version;
    m_bucketChanged.assign((m_bucketChanged.size() + factor - 1) / factor, m_version);
    m_bands.clear();
}

void MetricStore::appendGrouped(const StepRow &row, std::size_t index)
{
    const int first = row.rank / m_groupSize * m_groupSize;
    auto &series = m_groups[first];
    if (series.empty())
        series.resize(kMetricCount);
    auto &ringOf = m_windows[row.rank];
    if (ringOf.empty()) {
        ringOf.resize(static_cast<std::size_t>(kMetricCount * kWindowSlots));
        m_ranksSeen.insert(std::lower_bound(m_ranksSeen.begin(), m_ranksSeen.end(), row.rank), row.rank);
        ++m_groupRanks[first];
    }
    const auto at = static_cast<std::int32_t>(index);
    for (int m = 0; m < kMetricCount; ++m) {
        const double v = metricOf(row, static_cast<Metric>(m));
        series[static_cast<std::size_t>(m)].appendAt(index, row.step, v, row.rank);
        WindowSlot &w = ringOf[static_cast<std::size_t>(m * kWindowSlots + at % kWindowSlots)];
        if (w.index > at)
            continue; // older than what the ring holds now
        if (w.index < at)
            w = WindowSlot{Bucket{}, at};
        w.b.add(row.step, v);
    }
}

void MetricStore::append(std::span<const StepRow> rows)
{
    std::lock_guard lock(m_mutex);
    int lastRank = -1;
    std::vector<DownsampledSeries> *perMetric = nullptr;
    for (const StepRow &row : rows) {
        if (row.step <= 0 || row.rank < 0)
            continue;
        fitWidth(row.step);
        const auto index = static_cast<std::size_t>((row.step - 1) / m_width);
        if (m_groupSize > 1) {
            appendGrouped(row, index);
        } else {
            if (!perMetric || row.rank != lastRank) {
                perMetric = &m_series[row.rank];
                lastRank = row.rank;
                if (perMetric->empty())
                    perMetric->resize(kMetricCount);
            }
            for (int m = 0; m < kMetricCount; ++m)
                (*perMetric)[m].appendAt(index, row.step, metricOf(row, static_cast<Metric>(m)));
        }
        ++m_version;
        if (index >= m_bucketChanged.size())
            m_bucketChanged.resize(index + 1, 0);
        m_bucketChanged[index] = m_version;
    }
}

quint64 MetricStore::version() const
{
    std::lock_guard lock(m_mutex);
    return m_version;
}

qint64 MetricStore::width() const
{
    std::lock_guard lock(m_mutex);
    return m_width;
}

std::vector<int> MetricStore::ranks() const
{
    std::lock_guard lock(m_mutex);
    if (m_groupSize > 1)
        return m_ranksSeen;
    std::vector<int> out;
    for (const auto &[rank, s] : m_series)
        out.push_back(rank);
    return out;
}

std::vector<Bucket> MetricStore::series(Metric metric, int rank) const
{
    std::lock_guard lock(m_mutex);
    if (m_groupSize > 1) {
        std::vector<Bucket> out;
        if (const auto g = m_groups.find(rank / m_groupSize * m_groupSize); g != m_groups.end())
            for (const RankedBucket &b : g->second[static_cast<int>(metric)].buckets())
                if (b.b.count > 0)
                    out.push_back(b.b);
        return out;
    }
    const auto it = m_series.find(rank);
    if (it == m_series.end())
        return {};
    std::vector<Bucket> out;
    for (const Bucket &b : it->second[static_cast<int>(metric)].buckets())
        if (b.count > 0)
            out.push_back(b);
    return out;
}

std::vector<BandPoint> MetricStore::band(Metric metric) const
{
    std::lock_guard lock(m_mutex);
    const std::size_t buckets = m_bucketChanged.size();
    if (m_bands.size() < static_cast<std::size_t>(kMetricCount))
        m_bands.resize(kMetricCount);
    CachedBand &cache = m_bands[static_cast<std::size_t>(metric)];
    cache.stamp.resize(buckets, 0);
    cache.points.resize(buckets);
    std::vector<std::pair<float, int>> values;
    for (std::size_t i = 0; i < buckets; ++i) {
        if (cache.stamp[i] == m_bucketChanged[i])
            continue; // unchanged since computed (0: never had data)
        cache.stamp[i] = m_bucketChanged[i];
        cache.points[i].reset();
        if (m_groupSize > 1) {
            cache.points[i] = groupedBandPoint(metric, i, values);
            continue;
        }
        values.clear();
        qint64 lastStep = 0;
        for (const auto &[rank, perMetric] : m_series) {
            const auto &b = perMetric[static_cast<int>(metric)].buckets();
            if (i < b.size() && b[i].count > 0) {
                values.emplace_back(b[i].mean, rank);
                lastStep = std::max<qint64>(lastStep, b[i].lastStep);
            }
        }
        if (values.empty())
            continue;
        const double median = medianInPlace(values.begin(), values.end(), [](const auto &v) { return v.first; });
        const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
        cache.points[i] = BandPoint{lastStep, lo->first, median, hi->first, lo->second, hi->second, static_cast<int>(values.size())};
    }
    std::vector<BandPoint> out;
    out.reserve(buckets);
    for (const auto &p : cache.points)
        if (p)
            out.push_back(*p);
    return out;
}

HeatMap MetricStore::heatMap(Metric metric) const
{
    std::lock_guard lock(m_mutex);
    if (m_groupSize > 1)
        return heatMapGrouped(metric);
    HeatMap h;
    std::size_t buckets = 0;
    for (const auto &[rank, perMetric] : m_series) {
        h.ranks.push_back(rank);
        buckets = std::max(buckets, perMetric[static_cast<int>(metric)].buckets().size());
    }
    h.steps.assign(buckets, 0);
    h.values.assign(h.ranks.size() * buckets, std::numeric_limits<float>::quiet_NaN());
    std::size_t row = 0;
    for (const auto &[rank, perMetric] : m_series) {
        const auto &b = perMetric[static_cast<int>(metric)].buckets();
        for (std::size_t i = 0; i < b.size(); ++i)
            if (b[i].count > 0) {
                h.values[row * buckets + i] = b[i].mean;
                h.steps[i] = std::max<qint64>(h.steps[i], b[i].lastStep);
            }
        ++row;
    }
    h.rankCount = static_cast<int>(h.ranks.size());
    h.lastRank = h.ranks.empty() ? -1 : h.ranks.back();
    std::vector<float> seen;
    seen.reserve(h.values.size());
    for (float v : h.values)
        if (!std::isnan(v))
            seen.push_back(v);
    if (!seen.empty())
        h.median = static_cast<float>(medianInPlace(seen.begin(), seen.end(), [](float v) { return v; }));
    return h;
}

HeatMap groupRanks(const HeatMap &map, int rows)
{
    const std::size_t from = map.ranks.size(), cols = map.steps.size();
    if (rows <= 0 || from <= static_cast<std::size_t>(rows))
        return map;
    const auto to = static_cast<std::size_t>(rows);
    HeatMap g;
    g.steps = map.steps;
    g.lastRank = map.lastRank;
    g.rankCount = map.rankCount;
    g.median = map.median;
    g.ranks.resize(to);
    g.values.assign(to * cols, std::numeric_limits<float>::quiet_NaN());
    for (std::size_t b = 0; b < to; ++b) {
        const std::size_t first = b * from / to, last = (b + 1) * from / to;
        g.ranks[b] = map.ranks[first];
        float *out = &g.values[b * cols];
        for (std::size_t r = first; r < last; ++r) { // row by row: the cells in memory order
            const float *in = &map.values[r * cols];
            for (std::size_t c = 0; c < cols; ++c) {
                const float v = in[c];
                if (!std::isnan(v) && (std::isnan(out[c]) || std::abs(v - map.median) > std::abs(out[c] - map.median)))
                    out[c] = v;
            }
        }
    }
    return g;
}

std::map<int, double> MetricStore::windowMeans(Metric metric, int windowBuckets) const
{
    std::map<int, double> means;
    std::lock_guard lock(m_mutex);
    if (m_groupSize > 1)
        return windowMeansGrouped(metric, windowBuckets);
    std::size_t buckets = 0;
    for (const auto &[rank, perMetric] : m_series)
        buckets = std::max(buckets, perMetric[static_cast<int>(metric)].buckets().size());
    const std::size_t from = buckets > static_cast<std::size_t>(windowBuckets) ? buckets - windowBuckets : 0;
    for (const auto &[rank, perMetric] : m_series) {
        Bucket window;
        const auto &b = perMetric[static_cast<int>(metric)].buckets();
        for (std::size_t i = from; i < b.size(); ++i)
            window.merge(b[i]);
        if (window.count > 0)
            means[rank] = window.mean;
    }
    return means;
}

std::vector<Outlier> MetricStore::outliers(Metric metric, int count, int windowBuckets) const
{
    std::vector<Outlier> all;
    for (const auto &[rank, mean] : windowMeans(metric, windowBuckets))
        all.push_back({rank, mean, 0});
    if (all.size() < 3)
        return {};
    std::vector<double> values;
    for (const auto &o : all)
        values.push_back(o.value);
    const double median = launcher::median(std::move(values));
    for (auto &o : all)
        o.deviation = median != 0 ? (o.value - median) / std::abs(median) : o.value - median;
    std::sort(all.begin(), all.end(), [](const Outlier &a, const Outlier &b) { return std::abs(a.deviation) > std::abs(b.deviation); });
    if (static_cast<int>(all.size()) > count)
        all.resize(static_cast<std::size_t>(count));
    return all;
}

std::size_t MetricStore::bytes() const
{
    std::lock_guard lock(m_mutex);
    std::size_t total = 0;
    for (const auto &[rank, perMetric] : m_series)
        for (const auto &s : perMetric)
            total += s.bytes();
    for (const auto &[first, perMetric] : m_groups)
        for (const auto &s : perMetric)
            total += s.bytes();
    for (const auto &[rank, ringOf] : m_windows)
        total += ringOf.capacity() * sizeof(WindowSlot);
    return total + m_ranksSeen.capacity() * sizeof(int);
}

// One bucket's band over the groups: the exact extremes (and their ranks) of every value in it,
// the median of the groups' means, the ranks of the groups with data.
std::optional<BandPoint> MetricStore::groupedBandPoint(Metric metric, std::size_t bucket, std::vector<std::pair<float, int>> &values) const
{
    values.clear();
    BandPoint p;
    for (const auto &[first, perMetric] : m_groups) {
        const auto &b = perMetric[static_cast<int>(metric)].buckets();
        if (bucket >= b.size() || b[bucket].b.count == 0)
            continue;
        const RankedBucket &rb = b[bucket];
        if (values.empty() || rb.b.min < p.min) {
            p.min = rb.b.min;
            p.minRank = rb.minRank;
        }
        if (values.empty() || rb.b.max > p.max) {
            p.max = rb.b.max;
            p.maxRank = rb.maxRank;
        }
        values.emplace_back(rb.b.mean, first);
        p.step = std::max<qint64>(p.step, rb.b.lastStep);
        p.ranks += m_groupRanks.at(first);
    }
    if (values.empty())
        return std::nullopt;
    p.median = medianInPlace(values.begin(), values.end(), [](const auto &v) { return v.first; });
    return p;
}

// Rows are the groups; each cell the group's extreme furthest from the median of the groups' means.
HeatMap MetricStore::heatMapGrouped(Metric metric) const
{
    HeatMap h;
    std::size_t buckets = 0;
    std::vector<float> means;
    for (const auto &[first, perMetric] : m_groups) {
        h.ranks.push_back(first);
        const auto &b = perMetric[static_cast<int>(metric)].buckets();
        buckets = std::max(buckets, b.size());
        for (const RankedBucket &rb : b)
            if (rb.b.count > 0)
                means.push_back(rb.b.mean);
    }
    if (!means.empty())
        h.median = static_cast<float>(medianInPlace(means.begin(), means.end(), [](float v) { return v; }));
    h.steps.assign(buckets, 0);
    h.values.assign(h.ranks.size() * buckets, std::numeric_limits<float>::quiet_NaN());
    std::size_t row = 0;
    for (const auto &[first, perMetric] : m_groups) {
        const auto &b = perMetric[static_cast<int>(metric)].buckets();
        for (std::size_t i = 0; i < b.size(); ++i)
            if (b[i].b.count > 0) {
                const float lo = b[i].b.min, hi = b[i].b.max;
                h.values[row * buckets + i] = std::abs(hi - h.median) >= std::abs(lo - h.median) ? hi : lo;
                h.steps[i] = std::max<qint64>(h.steps[i], b[i].b.lastStep);
            }
        ++row;
    }
    h.rankCount = static_cast<int>(m_ranksSeen.size());
    h.lastRank = m_ranksSeen.empty() ? -1 : m_ranksSeen.back();
    return h;
}

std::map<int, double> MetricStore::windowMeansGrouped(Metric metric, int windowBuckets) const
{
    std::map<int, double> means;
    const auto newest = static_cast<std::int32_t>(m_bucketChanged.size()) - 1;
    const std::int32_t from = newest - std::min(windowBuckets, kWindowSlots) + 1;
    for (const auto &[rank, ringOf] : m_windows) {
        Bucket window;
        for (int k = 0; k < kWindowSlots; ++k) {
            const WindowSlot &w = ringOf[static_cast<std::size_t>(static_cast<int>(metric) * kWindowSlots + k)];
            if (w.index >= from && w.index <= newest)
                window.merge(w.b);
        }
        if (window.count > 0)
            means[rank] = window.mean;
    }
    return means;
}

} // namespace trellis::launcher::telemetry
