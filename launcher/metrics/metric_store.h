// Live series for the dashboards, bounded whatever the run's length or width: per metric and rank
// a downsampled series of buckets (min, max, mean, last, count over a range of steps), all series
// sharing one bucket width that doubles (neighbours merging) when the run outgrows the capacity.
// From these, views for any number of ranks: per-rank lines, min/median/max bands over ranks with
// the extreme ranks named, a rank × step heat map, and the outlier ranks of the latest window.
// Capacity per series follows the world size (clamp(65536 / series, 128, 4096) buckets), so memory
// stays near 24 B × 65536 × metrics however many ranks there are. Beyond kExactRanks ranks the
// series are kept per group of consecutive ranks (16 at 16,384), each bucket holding the group's
// extremes with the ranks that reached them: the bands' min and max stay exact and name their
// ranks, the median is that of the groups' means, a heat map row is a group (its cell the extreme
// furthest from the median, so one odd rank still stands out), and each rank keeps only its newest
// kWindowSlots buckets for the outliers and stage means. Memory then stays flat at any width.
// Threading: every method is thread-safe (one mutex); the feed thread appends and computes views,
// the GUI copies ready views.
#pragma once

#include "launcher/run_types.h"

#include <QString>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

namespace trellis::launcher::telemetry {

enum class Metric : int {
    Loss, GradNorm, Lr, TokensPerS, StepMs, ComputeMs, CommMs, CommExposedMs, BubbleMs, IdleMs,
    MemParameters, MemGradients, MemOptimizer, MemActivations, MemComm, PeakRss,
    MemMaster, LossScale, // mixed precision's fp32 masters; fp16's dynamic loss scale
    DpBytes,              // local updates, gradient compression: dp all-reduce payload so far, MB
    CheckpointMs,         // the step boundary's time on checkpoints, outside the step
    Count
};
inline constexpr int kMetricCount = static_cast<int>(Metric::Count);
const char *metricName(Metric metric);
double metricOf(const StepRow &row, Metric metric);

struct Bucket { // 24 bytes: 1024 ranks × 21 metrics × 128 buckets stay near 66 MB
    std::int32_t lastStep = 0; // the newest step seen in it
    std::int32_t count = 0;
    float min = 0, max = 0, mean = 0, last = 0;
    void add(qint64 step, double value);
    void merge(const Bucket &later);
};

// A group of ranks' bucket: the values of all its ranks, the extremes with the ranks that reached them.
struct RankedBucket {
    Bucket b;
    std::int32_t minRank = -1, maxRank = -1;
    void add(qint64 step, double value, int rank);
    void merge(const RankedBucket &later);
};

inline constexpr int kExactRanks = 1024; // up to this many ranks, a series per rank
inline constexpr int kWindowSlots = 4;   // beyond it, each rank's newest buckets kept

// One rank's series of one metric. Bucket i covers steps [i·width + 1, (i+1)·width].
class DownsampledSeries {
public:
    void append(qint64 step, double value, qint64 width);
    void appendAt(std::size_t index, qint64 step, double value); // index: (step − 1) / width
    void coarsen(qint64 fromWidth, qint64 toWidth); // toWidth a power-of-two multiple of fromWidth
    const std::vector<Bucket> &buckets() const { return m_buckets; } // index = bucket; count 0: empty
    std::size_t bytes() const { return m_buckets.capacity() * sizeof(Bucket); }

private:
    std::vector<Bucket> m_buckets;
};

// A group of ranks' series of one metric, bucketed like DownsampledSeries.
class GroupSeries {
public:
    void appendAt(std::size_t index, qint64 step, double value, int rank);
    void coarsen(qint64 fromWidth, qint64 toWidth);
    const std::vector<RankedBucket> &buckets() const { return m_buckets; }
    std::size_t bytes() const { return m_buckets.capacity() * sizeof(RankedBucket); }

private:
    std::vector<RankedBucket> m_buckets;
};

struct BandPoint {
    qint64 step = 0;              // the bucket's last step
    double min = 0, median = 0, max = 0;
    int minRank = -1, maxRank = -1;
    int ranks = 0;                // ranks with data in the bucket
};

struct HeatMap {
    std::vector<int> ranks;       // rows: each row's (first) rank
    std::vector<qint64> steps;    // columns: each bucket's last step
    std::vector<float> values;    // ranks.size() × steps.size(), row-major; NaN where a row has no data
    int lastRank = -1;            // the last row's last rank
    int rankCount = 0;            // ranks in the map (more than rows once grouped)
    float median = 0;             // over every cell with data, before any grouping
};

// At most `rows` rows: consecutive ranks grouped, each cell the value of its group furthest from
// the median, so that one odd rank among 1024 still stands out. Work ∝ the map's cells; a map with
// no more rows than asked is returned as it is. A grouped map can be grouped again (the GUI fits
// the snapshot's rows to its height): the median travels with the map.
HeatMap groupRanks(const HeatMap &map, int rows);

struct Outlier {
    int rank = -1;
    double value = 0;             // its mean over the window
    double deviation = 0;         // (value − median) / median, signed
};

class MetricStore {
public:
    explicit MetricStore(int worldSize = 1);

    void clear(int worldSize);
    // Sizes the store for `worldSize` ranks if nothing was appended yet (the world is often known
    // only after the store is made).
    void setWorldSize(int worldSize);
    void append(const StepRow &row);
    void append(std::span<const StepRow> rows); // one lock for a drained batch
    quint64 version() const;     // +1 per row appended
    qint64 width() const;        // steps per bucket, a power of two
    int capacity() const { return m_capacity; }
    int groupSize() const { return m_groupSize; } // ranks per series: 1 up to kExactRanks ranks
    std::vector<int> ranks() const;

    // The rank's series (beyond kExactRanks ranks: its group's).
    std::vector<Bucket> series(Metric metric, int rank) const;
    std::vector<BandPoint> band(Metric metric) const; // per bucket, over the ranks' bucket means
    HeatMap heatMap(Metric metric) const;
    // The `count` ranks furthest from the median over the last `windowBuckets` buckets.
    std::vector<Outlier> outliers(Metric metric, int count, int windowBuckets = 4) const;
    // Each rank's mean over the last `windowBuckets` buckets (ranks without data there left out).
    std::map<int, double> windowMeans(Metric metric, int windowBuckets = 4) const;
    std::size_t bytes() const;

private:
    // Called with m_mutex held.
    void fitWidth(qint64 step); // doubles the width until `step` fits, merging every series' neighbours
    void appendGrouped(const StepRow &row, std::size_t index);
    std::vector<BandPoint> bandGrouped(Metric metric) const;
    HeatMap heatMapGrouped(Metric metric) const;
    std::map<int, double> windowMeansGrouped(Metric metric, int windowBuckets) const;
    std::optional<BandPoint> groupedBandPoint(Metric metric, std::size_t bucket, std::vector<std::pair<float, int>> &values) const;

    int m_capacity = 4096;
    int m_groupSize = 1;
    mutable std::mutex m_mutex;
    qint64 m_width = 1;
    quint64 m_version = 0;
    std::map<int, std::vector<DownsampledSeries>> m_series; // rank -> per metric (groupSize 1)
    // groupSize > 1: the group's first rank -> per metric; ranks seen, per group and in all.
    std::map<int, std::vector<GroupSeries>> m_groups;
    std::map<int, int> m_groupRanks;
    std::vector<int> m_ranksSeen; // sorted
    struct WindowSlot {
        Bucket b;
        std::int32_t index = -1; // the bucket it holds; slot = index % kWindowSlots
    };
    std::map<int, std::vector<WindowSlot>> m_windows; // rank -> kMetricCount × kWindowSlots
    // band() is asked for every metric several times a second at 1024 ranks, while appends touch
    // only the newest bucket or two: each bucket remembers when it last changed (a stamp from
    // m_version), and each metric's band keeps its points with the stamp they were computed at.
    std::vector<quint64> m_bucketChanged;
    struct CachedBand {
        std::vector<quint64> stamp;             // per bucket: m_bucketChanged when computed
        std::vector<std::optional<BandPoint>> points;
    };
    mutable std::vector<CachedBand> m_bands; // per metric
};

} // namespace trellis::launcher::telemetry
