// The history's packed records, encoder against decoder: step blocks (launcher/history/step_blocks.h,
// every encoding and each record's rank) and collective blocks (collective_blocks.h) give back
// every field bit for bit whatever the values, and damaged blobs are refused naming what is
// wrong, the records before the damage kept. (The databases around them: tst_history.)
#include "launcher/history/collective_blocks.h"
#include "launcher/history/step_blocks.h"

#include <QTest>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

using namespace trellis::launcher;

class TstHistoryBlocks : public QObject {
    Q_OBJECT
private slots:
    // The delta encoding of step records (launcher/history/step_blocks.h) gives back every field bit for
    // bit, whatever the values: extremes, NaN with a payload, −0, infinities, integers wrapping.
    void stepRecordsRoundTrip_data()
    {
        QTest::addColumn<QList<StepRow>>("rows");
        auto trainer = [](int n) {
            QList<StepRow> rows;
            for (int i = 0; i < n; ++i) {
                StepRow s;
                s.step = 1000 + i;
                s.stepMs = 51.25 + 0.37 * std::sin(i);
                s.computeMs = 30.1 + 0.11 * std::cos(3 * i);
                s.commMs = 10;
                s.commExposedMs = i % 3;
                s.tokens = 8192;
                s.tokensPerS = 8192 / (s.stepMs / 1000);
                s.loss = 3 * std::exp(-0.001 * i);
                s.gradNorm = 1 + 0.01 * i;
                s.lr = 3e-4;
                s.memParameters = 1 << 24;
                s.peakRss = (1ll << 28) + (i / 7) * 4096;
                s.memMaster = 1 << 25;
                s.lossScale = i < 3 ? 0 : std::ldexp(1.0, 16 - (i % 5 == 0 ? 1 : 0)); // fp16's scale backing off
                s.skippedSteps = i / 5;
                s.updateSkipped = i % 5 == 0;
                s.outerSteps = i / 8; // DiLoCo, inner_steps 8
                s.dpBytes = s.outerSteps * 410'000'000;
                s.dpDenseBytes = (i + 1) * 410'000'000ll;
                rows.append(s);
            }
            return rows;
        };
        QTest::newRow("a trainer's reports") << trainer(50);
        QTest::newRow("one report") << trainer(1);
        QTest::newRow("all zero") << QList<StepRow>{StepRow{}, StepRow{}};
        StepRow odd;
        odd.step = std::numeric_limits<qint64>::max();
        odd.stepMs = -0.0;
        odd.computeMs = std::numeric_limits<double>::infinity();
        odd.commMs = -std::numeric_limits<double>::infinity();
        odd.commExposedMs = std::bit_cast<double>(0x7FF8'0000'DEAD'BEEFull); // NaN with a payload
        odd.bubbleMs = std::numeric_limits<double>::denorm_min();
        odd.idleMs = std::numeric_limits<double>::max();
        odd.tokens = std::numeric_limits<qint64>::min();
        odd.loss = std::numeric_limits<double>::lowest();
        odd.memParameters = -1;
        odd.memComm = std::numeric_limits<qint64>::max();
        odd.peakRss = 1;
        odd.memMaster = std::numeric_limits<qint64>::min();
        odd.lossScale = std::numeric_limits<double>::quiet_NaN();
        odd.skippedSteps = -7;
        odd.updateSkipped = true;
        odd.outerSteps = std::numeric_limits<qint64>::max();
        odd.dpBytes = -3;
        odd.dpDenseBytes = std::numeric_limits<qint64>::min();
        odd.checkpointMs = -std::numeric_limits<double>::infinity();
        odd.checkpointBehind = true;
        odd.checkpointWriteMs = 41.25;
        StepRow back = odd;
        back.step = std::numeric_limits<qint64>::min(); // the difference wraps
        back.tokens = std::numeric_limits<qint64>::max();
        back.commExposedMs = 0;
        QTest::newRow("extremes") << QList<StepRow>{odd, back, odd, StepRow{}, odd};
        QList<StepRow> repeated(5, trainer(1).first());
        QTest::newRow("the same report five times") << repeated;
    }
    void stepRecordsRoundTrip()
    {
        QFETCH(QList<StepRow>, rows);
        // Encodings 4 and 5 name each record's rank: the rows spread over a group of ranks.
        for (qsizetype i = 0; i < rows.size(); ++i)
            rows[i].rank = static_cast<int>(3 + (i * 7) % kRanksPerBlock);
        StepBlockEncoder encoder;
        encoder.add(StepRow{}); // a block used before: clear() starts from zero again
        encoder.clear();
        for (const StepRow &r : rows)
            encoder.add(r);
        QCOMPARE(encoder.count(), rows.size());
        QList<StepRow> back;
        QString error;
        QVERIFY2(unpackStepBlock(3, encoder.bytes(), rows.size(), StepEncoding::Ranked28, back, &error), qPrintable(error));
        QCOMPARE(back.size(), rows.size());
        for (qsizetype i = 0; i < rows.size(); ++i) {
            QByteArray fixedIn, fixedOut;
            packStepRecord(rows[i], fixedIn);
            packStepRecord(back[i], fixedOut);
            QCOMPARE(fixedOut.toHex(), fixedIn.toHex()); // the first 18 fields, bit for bit
            QCOMPARE(back[i].memMaster, rows[i].memMaster); // and the 4 of schema 8
            QCOMPARE(std::bit_cast<quint64>(back[i].lossScale), std::bit_cast<quint64>(rows[i].lossScale));
            QCOMPARE(back[i].skippedSteps, rows[i].skippedSteps);
            QCOMPARE(back[i].updateSkipped, rows[i].updateSkipped);
            QCOMPARE(back[i].outerSteps, rows[i].outerSteps); // and the 3 of schema 10
            QCOMPARE(back[i].dpBytes, rows[i].dpBytes);
            QCOMPARE(back[i].dpDenseBytes, rows[i].dpDenseBytes);
            QCOMPARE(std::bit_cast<quint64>(back[i].checkpointMs), std::bit_cast<quint64>(rows[i].checkpointMs)); // the 3 of schema 18
            QCOMPARE(back[i].checkpointBehind, rows[i].checkpointBehind);
            QCOMPARE(std::bit_cast<quint64>(back[i].checkpointWriteMs), std::bit_cast<quint64>(rows[i].checkpointWriteMs));
            QCOMPARE(back[i].rank, rows[i].rank);
        }
        // One rank's rows alone (the feed's refill of a rank's missed steps).
        QList<StepRow> mine;
        QVERIFY2(unpackStepBlock(3, encoder.bytes(), rows.size(), StepEncoding::Ranked28, mine, &error, rows.back().rank),
                 qPrintable(error));
        QCOMPARE(mine.size(), std::count_if(rows.begin(), rows.end(), [&](const StepRow &r) { return r.rank == rows.back().rank; }));
        QVERIFY(std::all_of(mine.begin(), mine.end(), [&](const StepRow &r) { return r.rank == rows.back().rank; }));
        // A record of 28 fields is not one of 25: read as encoding 4, a block with checkpoint
        // figures names fields that do not exist there.
        if (std::any_of(rows.begin(), rows.end(), [](const StepRow &r) { return r.checkpointBehind; })) {
            QList<StepRow> older;
            QVERIFY(!unpackStepBlock(3, encoder.bytes(), rows.size(), StepEncoding::Ranked25, older, &error));
            QVERIFY2(error.contains(QStringLiteral("names fields that do not exist")), qPrintable(error));
        }
        // Encodings 3 and 4 (schema 10: a block a rank, no rank in the records; schema 11: ranked,
        // 25 fields) still read as before.
        for (StepRow &r : rows) {
            r.checkpointMs = r.checkpointWriteMs = 0;
            r.checkpointBehind = false;
        }
        StepBlockEncoder four(StepEncoding::Ranked25);
        for (const StepRow &r : rows)
            four.add(r);
        QList<StepRow> ranked25;
        QVERIFY2(unpackStepBlock(3, four.bytes(), rows.size(), StepEncoding::Ranked25, ranked25, &error), qPrintable(error));
        QCOMPARE(ranked25.size(), rows.size());
        QCOMPARE(ranked25.back().rank, rows.back().rank);
        StepBlockEncoder one(StepEncoding::Delta25);
        for (const StepRow &r : rows)
            one.add(r);
        QList<StepRow> single;
        QVERIFY2(unpackStepBlock(9, one.bytes(), rows.size(), StepEncoding::Delta25, single, &error), qPrintable(error));
        QCOMPARE(single.size(), rows.size());
        for (qsizetype i = 0; i < rows.size(); ++i) {
            QCOMPARE(single[i].rank, 9);
            QCOMPARE(single[i].dpBytes, rows[i].dpBytes);
            QCOMPARE(std::bit_cast<quint64>(single[i].loss), std::bit_cast<quint64>(rows[i].loss));
        }
        if (rows.size() > 10) // unchanged fields cost nothing: well below the fixed 144 bytes
            QVERIFY2(encoder.bytes().size() < rows.size() * kStepRecordBytes / 2, qPrintable(QString::number(encoder.bytes().size())));
    }

    // Damaged blocks: each is refused with what is wrong, the rows before the damage kept.
    void damagedStepBlocks_data()
    {
        QTest::addColumn<QByteArray>("blob");
        QTest::addColumn<qint64>("count");
        QTest::addColumn<int>("encoding");
        QTest::addColumn<QString>("why");
        QTest::addColumn<int>("kept");
        StepRow a;
        a.step = 5;
        a.loss = 2.5;
        a.tokens = 300;
        StepBlockEncoder e(StepEncoding::Delta); // a 3-byte mask, as encodings 1 and 2 have
        e.add(a);
        const QByteArray one = e.bytes();
        QTest::newRow("empty for one record") << QByteArray() << qint64(1) << 1 << QStringLiteral("cut short") << 0;
        QTest::newRow("mask cut") << one.left(2) << qint64(1) << 1 << QStringLiteral("cut short") << 0;
        QTest::newRow("field cut") << one.left(one.size() - 1) << qint64(1) << 1 << QStringLiteral("cut") << 0;
        QTest::newRow("a field past the 18") << QByteArray::fromHex("000004") << qint64(1) << 1 << QStringLiteral("do not exist") << 0;
        QTest::newRow("a field past the 22") << QByteArray::fromHex("000040") << qint64(1) << 2 << QStringLiteral("do not exist") << 0;
        QTest::newRow("a field past the 25") << QByteArray::fromHex("00000002") << qint64(1) << 3 << QStringLiteral("do not exist") << 0;
        QTest::newRow("4-byte mask cut") << QByteArray::fromHex("000000") << qint64(1) << 3 << QStringLiteral("cut short") << 0;
        QTest::newRow("bad double header") << QByteArray::fromHex("020000" "44") << qint64(1) << 1 << QStringLiteral("bad field header") << 0;
        QTest::newRow("overlong number") << QByteArray::fromHex("010000" "ffffffffffffffffffff01") << qint64(1) << 1
                                         << QStringLiteral("overlong") << 0;
        QTest::newRow("bytes left over") << one + QByteArray("\x00", 1) << qint64(1) << 1 << QStringLiteral("after its 1 records") << 1;
        QTest::newRow("fewer records than counted") << one << qint64(2) << 1 << QStringLiteral("record 2 of 2") << 1;
        QTest::newRow("negative count") << one << qint64(-1) << 1 << QStringLiteral("-1 records") << 0;
        QTest::newRow("a rank cut") << QByteArray::fromHex("80") << qint64(1) << 4 << QStringLiteral("cut or overlong rank") << 0;
        QTest::newRow("a negative rank") << QByteArray::fromHex("01" "00000000") << qint64(1) << 4 << QStringLiteral("names rank -1") << 0;
        QTest::newRow("unknown encoding") << one << qint64(1) << 9 << QStringLiteral("unknown encoding 9") << 0;
        QTest::newRow("fixed, not whole records") << QByteArray(150, 0) << qint64(1) << 0 << QStringLiteral("150 bytes") << 0;
    }
    void damagedStepBlocks()
    {
        QFETCH(QByteArray, blob);
        QFETCH(qint64, count);
        QFETCH(int, encoding);
        QFETCH(QString, why);
        QFETCH(int, kept);
        QList<StepRow> out;
        QString error;
        QVERIFY(!unpackStepBlock(7, blob, count, static_cast<StepEncoding>(encoding), out, &error));
        QVERIFY2(error.contains(QStringLiteral("rank 7 is corrupt")) && error.contains(why), qPrintable(error));
        QCOMPARE(out.size(), qsizetype(kept)); // the whole records before the damage are kept
    }

    // Collective reports packed (schema 11): every field back bit for bit, names repeated from
    // the block's table or written out (past its 254 names), extremes and wrapping differences.
    void collectiveRecordsRoundTrip()
    {
        QList<CollectiveRow> rows;
        for (int s = 1; s <= 40; ++s)
            for (const char *group : {"dp", "tp"}) {
                CollectiveRow c{5, s, QString::fromLatin1(group), QStringLiteral("all_reduce"), 8 << 20, 1.25 * s, 90.5, 2};
                rows.append(c);
            }
        for (int i = 0; i < 300; ++i) // more names than a block's table holds
            rows.append(CollectiveRow{5, 41, QStringLiteral("group-%1").arg(i), QStringLiteral("op-%1").arg(i % 7), i, 0, 0, i});
        CollectiveRow odd{5, std::numeric_limits<qint64>::max(), QStringLiteral("ünïcode grp"), QString(), std::numeric_limits<qint64>::min(),
                          std::bit_cast<double>(0x7FF8'0000'DEAD'BEEFull), -0.0, std::numeric_limits<int>::min()};
        rows.append(odd);
        rows.append(CollectiveRow{5, std::numeric_limits<qint64>::min(), QStringLiteral("dp"), QStringLiteral("all_reduce"), -1,
                                  std::numeric_limits<double>::infinity(), std::numeric_limits<double>::denorm_min(), 0});
        CollectiveBlockEncoder encoder;
        encoder.add(rows.front()); // a block used before: clear() starts from nothing again
        encoder.clear();
        for (const CollectiveRow &c : rows)
            encoder.add(c);
        QList<CollectiveRow> back;
        QString error;
        QVERIFY2(unpackCollectiveBlock(5, encoder.bytes(), encoder.count(), back, &error), qPrintable(error));
        QCOMPARE(back.size(), rows.size());
        for (qsizetype i = 0; i < rows.size(); ++i) {
            QCOMPARE(back[i].rank, 5);
            QCOMPARE(back[i].step, rows[i].step);
            QCOMPARE(back[i].group, rows[i].group);
            QCOMPARE(back[i].op, rows[i].op);
            QCOMPARE(back[i].bytes, rows[i].bytes);
            QCOMPARE(back[i].count, rows[i].count);
            QCOMPARE(std::bit_cast<quint64>(back[i].ms), std::bit_cast<quint64>(rows[i].ms));
            QCOMPARE(std::bit_cast<quint64>(back[i].busGBps), std::bit_cast<quint64>(rows[i].busGBps));
        }
        // A trainer's steady reports: about 22 bytes each, against a row and an index entry.
        CollectiveBlockEncoder steady;
        for (int i = 0; i < 80; ++i)
            steady.add(rows[i]);
        QVERIFY2(steady.bytes().size() <= 80 * 23, qPrintable(QString::number(steady.bytes().size())));
    }

    void damagedCollectiveBlocks_data()
    {
        QTest::addColumn<QByteArray>("blob");
        QTest::addColumn<qint64>("count");
        QTest::addColumn<QString>("why");
        QTest::addColumn<int>("kept");
        CollectiveBlockEncoder e;
        e.add(CollectiveRow{7, 3, QStringLiteral("dp"), QStringLiteral("all_reduce"), 1024, 1.0, 2.0, 1});
        const QByteArray one = e.bytes();
        QTest::newRow("empty for one record") << QByteArray() << qint64(1) << QStringLiteral("cut short") << 0;
        QTest::newRow("cut in the name") << one.left(4) << qint64(1) << QStringLiteral("cut name") << 0;
        QTest::newRow("cut in the doubles") << one.left(one.size() - 3) << qint64(1) << QStringLiteral("cut short") << 0;
        QTest::newRow("a name never written") << QByteArray::fromHex("00" "06" "03") << qint64(1) << QStringLiteral("never wrote (3 of 0)") << 0;
        QTest::newRow("overlong number") << QByteArray::fromHex("ffffffffffffffffffff01") << qint64(1) << QStringLiteral("cut short") << 0;
        QTest::newRow("bytes left over") << one + QByteArray("\x00", 1) << qint64(1) << QStringLiteral("after its 1 records") << 1;
        QTest::newRow("fewer records than counted") << one << qint64(2) << QStringLiteral("record 2 of 2") << 1;
        QTest::newRow("negative count") << one << qint64(-1) << QStringLiteral("-1 records") << 0;
    }
    void damagedCollectiveBlocks()
    {
        QFETCH(QByteArray, blob);
        QFETCH(qint64, count);
        QFETCH(QString, why);
        QFETCH(int, kept);
        QList<CollectiveRow> out;
        QString error;
        QVERIFY(!unpackCollectiveBlock(7, blob, count, out, &error));
        QVERIFY2(error.contains(QStringLiteral("collective block of rank 7 is corrupt")) && error.contains(why), qPrintable(error));
        QCOMPARE(out.size(), qsizetype(kept));
    }
};

QTEST_GUILESS_MAIN(TstHistoryBlocks)
#include "tst_history_blocks.moc"
