// The dashboards' metric store: downsampling keeps every series within its capacity while the
// minimum, maximum, mean and count of what was appended survive; the capacity follows the world
// size; bands over ranks (min / median / max with the extreme ranks named), the heat map and the
// outlier ranks; memory bounded at 1024 ranks.
#include "launcher/metrics/metric_store.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace trellis::launcher;
using namespace trellis::launcher::telemetry;

namespace {

StepRow row(int rank, qint64 step, double value)
{
    StepRow r;
    r.rank = rank;
    r.step = step;
    r.loss = value;
    r.computeMs = value;
    r.tokensPerS = value;
    return r;
}

} // namespace

class TstMetricStore : public QObject {
    Q_OBJECT
private slots:
    void downsamplingKeepsTheSummary_data()
    {
        QTest::addColumn<int>("world");
        QTest::addColumn<qint64>("steps");
        QTest::addColumn<qint64>("width");
        QTest::newRow("short") << 1 << qint64(10) << qint64(1);
        QTest::newRow("exactly full") << 1 << qint64(4096) << qint64(1);
        QTest::newRow("one step over") << 1 << qint64(4097) << qint64(2);
        QTest::newRow("100k steps") << 1 << qint64(100000) << qint64(32);
        QTest::newRow("64 ranks") << 64 << qint64(5000) << qint64(8);
        QTest::newRow("1024 ranks") << 1024 << qint64(1000) << qint64(8);
    }
    void downsamplingKeepsTheSummary()
    {
        QFETCH(int, world);
        QFETCH(qint64, steps);
        QFETCH(qint64, width);
        MetricStore store(world);
        for (qint64 s = 1; s <= steps; ++s)
            store.append(row(0, s, static_cast<double>(s)));
        QCOMPARE(store.width(), width);
        const auto buckets = store.series(Metric::Loss, 0);
        QVERIFY(static_cast<int>(buckets.size()) <= store.capacity());
        QCOMPARE(static_cast<qint64>(buckets.size()), (steps + width - 1) / width);
        double lo = 1e300, hi = -1e300, weighted = 0;
        qint64 count = 0;
        for (std::size_t i = 0; i < buckets.size(); ++i) {
            const Bucket &b = buckets[i];
            lo = std::min<double>(lo, b.min);
            hi = std::max<double>(hi, b.max);
            weighted += static_cast<double>(b.mean) * b.count;
            count += b.count;
            QCOMPARE(b.last, static_cast<float>(b.lastStep)); // the newest value of its range
            QCOMPARE((b.lastStep - 1) / width, static_cast<qint64>(i)); // inside its bucket's range
        }
        QCOMPARE(count, steps);
        QCOMPARE(lo, 1.0);
        QCOMPARE(hi, static_cast<double>(steps));
        QVERIFY(std::abs(weighted / count - (steps + 1) / 2.0) < 1e-3 * steps);
    }

    void capacityFollowsTheWorld_data()
    {
        QTest::addColumn<int>("world");
        QTest::addColumn<int>("capacity");
        QTest::newRow("1") << 1 << 4096;
        QTest::newRow("8") << 8 << 4096;
        QTest::newRow("64") << 64 << 1024;
        QTest::newRow("1024") << 1024 << 128;
        QTest::newRow("4096: groups of 4") << 4096 << 128;
        QTest::newRow("16384: groups of 16") << 16384 << 128;
    }
    void capacityFollowsTheWorld()
    {
        QFETCH(int, world);
        QFETCH(int, capacity);
        QCOMPARE(MetricStore(world).capacity(), capacity);
    }

    void bandsNameTheExtremeRanks_data()
    {
        QTest::addColumn<QList<double>>("values"); // per rank, constant over the steps
        QTest::addColumn<double>("min");
        QTest::addColumn<double>("median");
        QTest::addColumn<double>("max");
        QTest::addColumn<int>("minRank");
        QTest::addColumn<int>("maxRank");
        QTest::newRow("odd") << QList<double>{3, 1, 5, 2, 4} << 1.0 << 3.0 << 5.0 << 1 << 2;
        QTest::newRow("even") << QList<double>{10, 1, 3, 2} << 1.0 << 2.5 << 10.0 << 1 << 0;
        QTest::newRow("one") << QList<double>{7} << 7.0 << 7.0 << 7.0 << 0 << 0;
    }
    void bandsNameTheExtremeRanks()
    {
        QFETCH(QList<double>, values);
        QFETCH(double, min);
        QFETCH(double, median);
        QFETCH(double, max);
        QFETCH(int, minRank);
        QFETCH(int, maxRank);
        MetricStore store(static_cast<int>(values.size()));
        for (qint64 s = 1; s <= 20; ++s)
            for (int r = 0; r < values.size(); ++r)
                store.append(row(r, s, values[r]));
        const auto band = store.band(Metric::ComputeMs);
        QCOMPARE(band.size(), size_t(20));
        for (const BandPoint &p : band) {
            QCOMPARE(p.min, min);
            QCOMPARE(p.median, median);
            QCOMPARE(p.max, max);
            QCOMPARE(p.minRank, minRank);
            QCOMPARE(p.maxRank, maxRank);
            QCOMPARE(p.ranks, static_cast<int>(values.size()));
        }
        // The heat map's median is the same one (launcher/statistics.h): over an even count, halfway
        // between the two middle values.
        QCOMPARE(double(store.heatMap(Metric::ComputeMs).median), median);
    }

    void heatMapHasEveryRankAndGap()
    {
        MetricStore store(3);
        for (qint64 s = 1; s <= 10; ++s) {
            store.append(row(0, s, 1));
            store.append(row(2, s, 3));
            if (s <= 5)
                store.append(row(1, s, 2)); // rank 1 went silent after step 5
        }
        const HeatMap h = store.heatMap(Metric::Loss);
        QCOMPARE(h.ranks, (std::vector<int>{0, 1, 2}));
        QCOMPARE(h.steps.size(), size_t(10));
        QCOMPARE(h.values[0 * 10 + 9], 1.0f);
        QCOMPARE(h.values[1 * 10 + 4], 2.0f);
        QVERIFY(std::isnan(h.values[1 * 10 + 5]));
        QCOMPARE(h.values[2 * 10 + 9], 3.0f);
    }

    // 1024 ranks grouped into rows: the odd rank's value is what its group shows, each group starts
    // at the right rank, the median is over every cell, a silent group stays empty, and grouping
    // the grouped map again (the GUI fitting its height) keeps the odd one.
    void groupedHeatMapKeepsTheOddRank()
    {
        MetricStore store(1024);
        for (qint64 s = 1; s <= 4; ++s)
            for (int r = 0; r < 1024; ++r)
                if (r < 1016 || s <= 2) // ranks 1016–1023 silent after step 2
                    store.append(row(r, s, r == 333 && s == 3 ? 7.0 : (r % 4 == 1 ? 1.5 : 1.0)));
        const HeatMap h = store.heatMap(Metric::Loss);
        QCOMPARE(h.rankCount, 1024);
        QCOMPARE(h.lastRank, 1023);
        QCOMPARE(h.median, 1.0f);
        const HeatMap g = groupRanks(h, 128);
        QCOMPARE(g.ranks.size(), size_t(128));
        QCOMPARE(g.ranks[41], 41 * 8);
        QCOMPARE(g.rankCount, 1024);
        QCOMPARE(g.lastRank, 1023);
        QCOMPARE(g.steps, h.steps);
        QCOMPARE(g.values[41 * 4 + 2], 7.0f);       // rank 333 in group 41 (328–335), step 3
        QCOMPARE(g.values[41 * 4 + 1], 1.5f);       // ranks 329 and 333: furthest from the median
        QVERIFY(std::isnan(g.values[127 * 4 + 3]));   // the silent group
        QCOMPARE(g.values[127 * 4 + 1], 1.5f);
        const HeatMap again = groupRanks(g, 10);
        QCOMPARE(again.ranks.size(), size_t(10));
        QCOMPARE(again.values[3 * 4 + 2], 7.0f);    // group 41 is in the fourth of ten
        QCOMPARE(groupRanks(g, 200).ranks.size(), size_t(128)); // never more rows than there are
        QCOMPARE(groupRanks(HeatMap{}, 8).ranks.size(), size_t(0));
    }

    void outliersAreTheSlowRanks()
    {
        MetricStore store(16);
        for (qint64 s = 1; s <= 40; ++s)
            for (int r = 0; r < 16; ++r)
                store.append(row(r, s, r == 7 && s > 20 ? 200.0 : 100.0 + r % 3));
        const auto out = store.outliers(Metric::ComputeMs, 2);
        QCOMPARE(out.size(), size_t(2));
        QCOMPARE(out[0].rank, 7);
        QVERIFY(std::abs(out[0].deviation - 0.98) < 0.02); // 200 against a median of 101
        QVERIFY(std::abs(out[1].deviation) < 0.02);
    }

    // A run that outgrew the capacity (the bucket width doubled, once or many times) still has its
    // whole length in the band, from step 1 to the last, one point per bucket, each the median of
    // the ranks' bucket means: the buckets merged by a doubling are no less data than new ones.
    void bandCoversTheWholeRun_data()
    {
        QTest::addColumn<int>("world");
        QTest::addColumn<int>("steps");
        QTest::newRow("8 ranks, within capacity") << 8 << 1000;
        QTest::newRow("8 ranks, doubled once") << 8 << 6000;
        QTest::newRow("64 ranks, doubled 3 times") << 64 << 7000;
        QTest::newRow("1024 ranks, doubled 4 times") << 1024 << 1200;
    }
    void bandCoversTheWholeRun()
    {
        QFETCH(int, world);
        QFETCH(int, steps);
        MetricStore store(world);
        for (qint64 s = 1; s <= steps; ++s) {
            for (int r = 0; r < world; ++r)
                store.append(row(r, s, static_cast<double>(r) + 0.001 * static_cast<double>(s)));
            if (s % 97 == 0)
                (void)store.band(Metric::Loss); // asked as the run goes, across the doublings
        }
        const qint64 width = store.width();
        const auto band = store.band(Metric::Loss);
        QCOMPARE(static_cast<qint64>(band.size()), (steps + width - 1) / width);
        QCOMPARE(band.front().step, std::min<qint64>(width, steps));
        QCOMPARE(band.back().step, static_cast<qint64>(steps));
        for (std::size_t i = 0; i < band.size(); i += std::max<std::size_t>(1, band.size() / 7)) {
            double median = 0;
            std::vector<double> means;
            for (int r = 0; r < world; ++r)
                means.push_back(store.series(Metric::Loss, r)[i].mean);
            std::sort(means.begin(), means.end());
            median = world % 2 ? means[world / 2] : (means[world / 2 - 1] + means[world / 2]) / 2;
            QCOMPARE(band[i].median, median);
            QCOMPARE(band[i].ranks, world);
            QCOMPARE(band[i].maxRank, world - 1);
        }
    }

    // Bands are kept between calls and only the buckets appended to since are computed again: asked
    // for after every step (and across the width doubling), they equal a store filled at once.
    void bandsAskedAsTheRunGoesEqualAFreshStore()
    {
        MetricStore live(64), fresh(64);
        auto value = [](int r, qint64 s) { return std::sin(0.37 * r + 0.11 * static_cast<double>(s)) * 10 + r % 5; };
        for (qint64 s = 1; s <= 700; ++s) { // capacity 1024 buckets at 64 ranks; 700 steps, then more below
            for (int r = 0; r < 64; ++r) {
                if (!(r == 9 && s > 300)) // rank 9 goes silent
                    live.append(row(r, s, value(r, s)));
                if (s % 7 == 0 && r == 31) // half the ranks in
                    (void)live.band(Metric::Loss);
            }
        }
        for (qint64 s = 701; s <= 3000; ++s) // past capacity: the width doubles
            for (int r = 0; r < 64; ++r) {
                live.append(row(r, s, value(r, s)));
                if (s % 5 == 0 && r == 20)
                    (void)live.band(Metric::Loss);
            }
        (void)live.band(Metric::ComputeMs);
        for (qint64 s = 1; s <= 3000; ++s)
            for (int r = 0; r < 64; ++r)
                if (!(r == 9 && s > 300 && s <= 700))
                    fresh.append(row(r, s, value(r, s)));
        QVERIFY(live.width() > 1);
        QCOMPARE(live.width(), fresh.width());
        for (Metric m : {Metric::Loss, Metric::ComputeMs, Metric::TokensPerS}) {
            const auto a = live.band(m), b = fresh.band(m);
            QCOMPARE(a.size(), b.size());
            for (std::size_t i = 0; i < a.size(); ++i) {
                QCOMPARE(a[i].step, b[i].step);
                QCOMPARE(a[i].median, b[i].median);
                QCOMPARE(a[i].minRank, b[i].minRank);
                QCOMPARE(a[i].max, b[i].max);
                QCOMPARE(a[i].ranks, b[i].ranks);
            }
        }
    }

    // 1024 ranks × 3000 steps: every series within its capacity, the whole store a few tens of MB.
    void memoryIsBoundedAt1024Ranks()
    {
        MetricStore store(1024);
        for (qint64 s = 1; s <= 3000; ++s)
            for (int r = 0; r < 1024; ++r)
                store.append(row(r, s, static_cast<double>(r)));
        QCOMPARE(store.ranks().size(), size_t(1024));
        QVERIFY(static_cast<int>(store.series(Metric::Loss, 1023).size()) <= store.capacity());
        QVERIFY2(store.bytes() < 64u << 20, qPrintable(QString::number(store.bytes())));
        const auto band = store.band(Metric::Loss);
        QCOMPARE(band.back().min, 0.0);
        QCOMPARE(band.back().max, 1023.0);
        QCOMPARE(band.back().maxRank, 1023);
    }

    // Beyond kExactRanks ranks, series per group of ranks: at 2048 ranks (groups of 2) and one
    // step per bucket, every band's min and max, and the ranks named for them, equal those over
    // every rank's value (brute force); the ranks counted are all of them.
    void groupedBandsKeepTheExactExtremes()
    {
        const int world = 2048;
        MetricStore store(world);
        QCOMPARE(store.groupSize(), 2);
        std::vector<std::vector<double>> values(60, std::vector<double>(world));
        std::uint64_t x = 12345;
        for (qint64 s = 1; s <= 60; ++s)
            for (int r = 0; r < world; ++r) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                values[s - 1][r] = static_cast<double>(x >> 40) / 1e3;
                store.append(row(r, s, values[s - 1][r]));
            }
        const auto band = store.band(Metric::ComputeMs);
        QCOMPARE(band.size(), std::size_t(60));
        for (qint64 s = 1; s <= 60; ++s) {
            const auto &v = values[s - 1];
            const auto lo = std::min_element(v.begin(), v.end()), hi = std::max_element(v.begin(), v.end());
            const BandPoint &p = band[s - 1];
            QCOMPARE(p.step, s);
            QCOMPARE(p.min, static_cast<double>(static_cast<float>(*lo)));
            QCOMPARE(p.max, static_cast<double>(static_cast<float>(*hi)));
            QCOMPARE(p.minRank, static_cast<int>(lo - v.begin()));
            QCOMPARE(p.maxRank, static_cast<int>(hi - v.begin()));
            QCOMPARE(p.ranks, world);
            QVERIFY(p.min <= p.median && p.median <= p.max);
        }
        QCOMPARE(store.ranks().size(), std::size_t(world));
    }

    // 16,384 ranks (groups of 16): one slow rank (9000, 5×) and one fast (123, at half) among
    // them stand out in the band (named), in the heat map grouped down to 128 rows and among the
    // outliers; the store's memory stays flat once the series are full (width doubling) and far
    // below a series per rank (about 0.9 GB at this width).
    void sixteenThousandRanksStayFlat()
    {
        const int world = 16384;
        MetricStore store(world);
        QCOMPARE(store.groupSize(), 16);
        auto value = [](int r) { return r == 9000 ? 5.0 : r == 123 ? 0.5 : 1.0; };
        std::size_t full = 0;
        for (qint64 s = 1; s <= 400; ++s) {
            for (int r = 0; r < world; ++r)
                store.append(row(r, s, value(r)));
            if (s == 200)
                full = store.bytes();
        }
        QVERIFY2(full < 128u << 20, qPrintable(QString::number(full)));
        QVERIFY2(store.bytes() <= full + full / 20, qPrintable(QStringLiteral("%1 then %2").arg(full).arg(store.bytes())));
        QVERIFY(store.width() > 1);
        const auto band = store.band(Metric::ComputeMs);
        QVERIFY(!band.empty());
        for (const BandPoint &p : band) {
            QCOMPARE(p.min, 0.5);
            QCOMPARE(p.minRank, 123);
            QCOMPARE(p.max, 5.0);
            QCOMPARE(p.maxRank, 9000);
            QCOMPARE(p.median, 1.0);
            QCOMPARE(p.ranks, world);
        }
        const HeatMap heat = groupRanks(store.heatMap(Metric::ComputeMs), 128);
        QCOMPARE(heat.ranks.size(), std::size_t(128));
        QCOMPARE(heat.rankCount, world);
        QCOMPARE(heat.lastRank, world - 1);
        const std::size_t row9000 = 9000 * 128 / world, cols = heat.steps.size();
        for (std::size_t c = 0; c < cols; ++c)
            QCOMPARE(heat.values[row9000 * cols + c], 5.0f);
        const auto out = store.outliers(Metric::ComputeMs, 2);
        QCOMPARE(out.size(), std::size_t(2));
        QCOMPARE(out[0].rank, 9000);
        QCOMPARE(out[0].deviation, 4.0);
        QCOMPARE(out[1].rank, 123);
        QCOMPARE(store.windowMeans(Metric::ComputeMs).size(), std::size_t(world));
    }
};

QTEST_GUILESS_MAIN(TstMetricStore)
#include "tst_metric_store.moc"
