// The epoch sampler and the data sources: DP slices are disjoint and an epoch covers every window
// exactly once; the same seed gives the same order and another seed another; token shards in the
// llm.c layout load, and bad files are refused with the file named.
#include "backend/trainer/data/data_loader.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <map>
#include <set>

using namespace trellis::trainer;

class TstDataLoader : public QObject {
    Q_OBJECT
private:
    static std::vector<std::uint16_t> ramp(std::size_t n)
    {
        std::vector<std::uint16_t> t(n);
        for (std::size_t i = 0; i < n; ++i)
            t[i] = static_cast<std::uint16_t>(i % 1000);
        return t;
    }

private slots:
    void epochIsDisjointAndCovering_data()
    {
        QTest::addColumn<int>("dp");
        QTest::addColumn<int>("mbs");
        QTest::addColumn<int>("micro");
        QTest::newRow("dp1") << 1 << 8 << 1;
        QTest::newRow("dp4") << 4 << 2 << 1;
        QTest::newRow("dp3 accumulate 2") << 3 << 1 << 2;
    }
    void epochIsDisjointAndCovering()
    {
        QFETCH(int, dp);
        QFETCH(int, mbs);
        QFETCH(int, micro);
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("t.bin")).toStdString();
        const int seq = 16;
        const std::size_t windows = 120;
        QVERIFY(DataLoader::writeTokenFile(path, ramp(windows * seq + 1)));
        auto loaded = DataLoader::fromTokenFile(path, seq, 1000, 42);
        QVERIFY2(loaded.ok(), loaded.errorText().c_str());
        const DataLoader &data = loaded.value();
        QCOMPARE(data.windowCount(), windows);
        // One epoch: every window once, each (step, rank) slice disjoint from the others.
        const std::size_t global = static_cast<std::size_t>(dp * mbs * micro);
        std::map<int, int> seen; // first token of a window -> times used
        for (std::uint64_t step = 0; step < windows / global; ++step)
            for (int r = 0; r < dp; ++r)
                for (int m = 0; m < micro; ++m) {
                    const Batch b = data.batch(step, r, dp, m, micro, mbs);
                    for (int i = 0; i < mbs; ++i) {
                        ++seen[b.tokens[static_cast<std::size_t>(i) * seq]];
                        QCOMPARE(b.targets[static_cast<std::size_t>(i) * seq], b.tokens[static_cast<std::size_t>(i) * seq + 1]);
                    }
                }
        QCOMPARE(seen.size(), std::size_t(windows / global * global));
        for (const auto &[token, count] : seen)
            QCOMPARE(count, 1);
    }

    void sameSeedSameOrder()
    {
        auto a = DataLoader::synthetic(10000, 256, 32, 7);
        auto b = DataLoader::synthetic(10000, 256, 32, 7);
        auto c = DataLoader::synthetic(10000, 256, 32, 8);
        std::vector<std::size_t> oa, ob, oc;
        for (std::uint64_t g = 0; g < 600; ++g) { // crosses an epoch boundary (312 windows)
            oa.push_back(a.windowOf(g));
            ob.push_back(b.windowOf(g));
            oc.push_back(c.windowOf(g));
        }
        QVERIFY(oa == ob);
        QVERIFY(oa != oc);
        // The second epoch is a different permutation of the same windows.
        const std::vector<std::size_t> first(oa.begin(), oa.begin() + 312), second(oa.begin() + 312, oa.begin() + 600);
        QVERIFY(std::set<std::size_t>(first.begin(), first.end()).size() == 312);
        QVERIFY(!std::equal(second.begin(), second.end(), first.begin()));
    }

    void badFiles_data()
    {
        QTest::addColumn<QByteArray>("contents");
        QTest::addColumn<QString>("message");
        QByteArray header(1024, 0);
        auto set = [](QByteArray &h, int i, std::int32_t v) { std::memcpy(h.data() + 4 * i, &v, 4); };
        QByteArray wrongMagic = header;
        set(wrongMagic, 0, 1234);
        QByteArray truncated = header;
        set(truncated, 0, kTokenShardMagic);
        set(truncated, 1, 1);
        set(truncated, 2, 5000);
        truncated.append(QByteArray(100, 1));
        QByteArray version = header;
        set(version, 0, kTokenShardMagic);
        set(version, 1, 7);
        QByteArray outside = header;
        set(outside, 0, kTokenShardMagic);
        set(outside, 1, 1);
        set(outside, 2, 100);
        outside.append(QByteArray(200, char(0x7f))); // token 0x7f7f = 32639
        QTest::newRow("short") << QByteArray("abc") << "shorter than the 1024-byte token-shard header";
        QTest::newRow("magic") << wrongMagic << "not a token shard (magic 1234, expected 20240520)";
        QTest::newRow("version") << version << "token shard version 7 is not supported (expected 1)";
        QTest::newRow("truncated") << truncated << "header promises 5000 tokens but the file holds 50 (truncated or padded)";
        QTest::newRow("vocab") << outside << "token 32639 at position 0 is outside model.vocab (1000)";
    }
    void badFiles()
    {
        QFETCH(QByteArray, contents);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("bad.bin"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(contents);
        f.close();
        auto loaded = DataLoader::fromTokenFile(path.toStdString(), 16, 1000, 1);
        QVERIFY(!loaded.ok());
        QCOMPARE(QString::fromStdString(loaded.errorText()), QStringLiteral("training.data.path: %1: %2").arg(path, message));
    }
};

QTEST_GUILESS_MAIN(TstDataLoader)
#include "tst_data_loader.moc"
