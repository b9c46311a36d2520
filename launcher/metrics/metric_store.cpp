// See metric_store.h.
#include "launcher/metrics/metric_store.h"

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
                                        "loss scale"};
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
    case Metric::Count: break;
    }
    return 0;
}

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
    const std::size_t factor = static_cast<std::size_t>(toWidth / fromWidth);
    if (factor <= 1)
        return;
    std::vector<Bucket> merged((m_buckets.size() + factor - 1) / factor);
    for (std::size_t i = 0; i < m_buckets.size(); ++i)
        merged[i / factor].merge(m_buckets[i]);
    m_buckets = std::move(merged);
}

MetricStore::MetricStore(int worldSize) { clear(worldSize); }

void MetricStore::clear(int worldSize)
{
    std::lock_guard lock(m_mutex);
    m_capacity = std::clamp(65536 / std::max(1, worldSize), 128, 4096);
    m_width = 1;
    m_series.clear();
    m_bucketChanged.clear();
    m_bands.clear();
    ++m_version;
}

void MetricStore::setWorldSize(int worldSize)
{
    {
        std::lock_guard lock(m_mutex);
        if (!m_series.empty())
            return;
    }
    clear(worldSize);
}

void MetricStore::append(const StepRow &row) { append(std::span<const StepRow>(&row, 1)); }

void MetricStore::append(std::span<const StepRow> rows)
{
    std::lock_guard lock(m_mutex);
    int lastRank = -1;
    std::vector<DownsampledSeries> *perMetric = nullptr;
    for (const StepRow &row : rows) {
        if (row.step <= 0)
            continue;
        // Outgrown: double the width until the step fits, merging every series' neighbours.
        qint64 width = m_width;
        while ((row.step - 1) / width >= m_capacity)
            width *= 2;
        if (width != m_width) {
            for (auto &[rank, series] : m_series)
                for (auto &s : series)
                    s.coarsen(m_width, width);
            // Every bucket is another now, and each merged one holds data: all changed (a stamp of
            // 0 would read as "never had data" and leave the run's past out of the bands).
            const auto factor = static_cast<std::size_t>(width / m_width);
            m_width = width;
            ++m_version;
            m_bucketChanged.assign((m_bucketChanged.size() + factor - 1) / factor, m_version);
            m_bands.clear();
        }
        if (!perMetric || row.rank != lastRank) {
            perMetric = &m_series[row.rank];
            lastRank = row.rank;
            if (perMetric->empty())
                perMetric->resize(kMetricCount);
        }
        const auto index = static_cast<std::size_t>((row.step - 1) / m_width);
        for (int m = 0; m < kMetricCount; ++m)
            (*perMetric)[m].appendAt(index, row.step, metricOf(row, static_cast<Metric>(m)));
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
    std::vector<int> out;
    for (const auto &[rank, s] : m_series)
        out.push_back(rank);
    return out;
}

std::vector<Bucket> MetricStore::series(Metric metric, int rank) const
{
    std::lock_guard lock(m_mutex);
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
        const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
        std::nth_element(values.begin(), mid, values.end());
        double median = mid->first;
        if (values.size() % 2 == 0) // the mean of the two middle values
            median = (median + std::max_element(values.begin(), mid)->first) / 2.0;
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
    if (!seen.empty()) {
        std::nth_element(seen.begin(), seen.begin() + static_cast<std::ptrdiff_t>(seen.size() / 2), seen.end());
        h.median = seen[seen.size() / 2];
    }
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
    const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), mid, values.end());
    const double median = *mid;
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
    return total;
}

} // namespace trellis::launcher::telemetry
