// Telemetry framing: every payload survives a round trip; batches split into their envelopes;
// malformed, oversized, wrong-version and out-of-range frames are rejected with a reason.
#include "backend/protocol/framing.h"

#include <QTest>

#include <cmath>

using namespace trellis::proto;

class TstProtocol : public QObject {
    Q_OBJECT
private slots:
    void roundTrip()
    {
        Envelope e;
        e.set_run_id("r1");
        e.set_rank(3);
        e.set_seq(42);
        e.set_sent_ns(nowNs());
        e.set_protocol_version(kProtocolVersion);
        e.set_dropped(7);
        auto *s = e.mutable_step();
        s->set_step(12);
        s->set_loss(2.5);
        s->set_tokens_per_s(1234.5);
        s->mutable_memory()->set_activations(1 << 20);
        Envelope back;
        auto r = decodeEnvelope(encodeEnvelope(e), back, 4);
        QVERIFY2(r.ok, r.error.c_str());
        QCOMPARE(back.SerializeAsString(), e.SerializeAsString());
        QCOMPARE(back.step().memory().activations(), quint64(1 << 20));
        QCOMPARE(payloadName(back), "step");
    }

    void everyPayload_data()
    {
        QTest::addColumn<int>("which");
        for (int i = 0; i < 7; ++i)
            QTest::newRow(std::to_string(i).c_str()) << i;
    }
    void everyPayload()
    {
        QFETCH(int, which);
        Envelope e;
        e.set_protocol_version(kProtocolVersion);
        switch (which) {
        case 0: e.mutable_hello()->set_host("h"); break;
        case 1: e.mutable_step()->set_step(1); break;
        case 2: e.mutable_heartbeat()->set_phase("forward"); break;
        case 3: e.mutable_event()->set_kind(Event::NON_FINITE); break;
        case 4: e.mutable_goodbye()->set_exit_code(70); break;
        case 5: e.mutable_collective()->set_op("all_reduce"); break;
        case 6: e.mutable_spans()->add_spans()->set_name("forward"); break;
        }
        Envelope back;
        QVERIFY(decodeEnvelope(encodeEnvelope(e), back).ok);
        QCOMPARE(back.payload_case(), e.payload_case());
    }

    void rejects_data()
    {
        QTest::addColumn<QByteArray>("frame");
        QTest::addColumn<QString>("reason");
        Envelope noPayload;
        noPayload.set_protocol_version(kProtocolVersion);
        Envelope oldVersion;
        oldVersion.set_protocol_version(99);
        oldVersion.mutable_step();
        Envelope badRank;
        badRank.set_protocol_version(kProtocolVersion);
        badRank.set_rank(9);
        badRank.mutable_step();
        auto bytes = [](const Envelope &e) { return QByteArray::fromStdString(e.SerializeAsString()); };
        QTest::newRow("empty") << QByteArray() << "empty frame";
        QTest::newRow("garbage") << QByteArray("\xff\xff\xff\xff", 4) << "not a valid protobuf Envelope (4 bytes)";
        QTest::newRow("no payload") << bytes(noPayload) << "envelope without payload";
        QTest::newRow("version") << bytes(oldVersion) << "protocol version 99 (this receiver speaks 3)";
        QTest::newRow("rank") << bytes(badRank) << "rank 9 outside a world of 4";
        // A step report's expert load must have layers × experts counts and a finite loss.
        Envelope shortLoad;
        shortLoad.set_protocol_version(kProtocolVersion);
        auto *load = shortLoad.mutable_step()->mutable_experts();
        load->set_layers(2);
        load->set_experts(4);
        for (int i = 0; i < 7; ++i)
            load->add_tokens(5);
        Envelope nanLoad = shortLoad;
        nanLoad.mutable_step()->mutable_experts()->add_tokens(5);
        nanLoad.mutable_step()->mutable_experts()->set_aux_loss(std::nan(""));
        Envelope noExperts;
        noExperts.set_protocol_version(kProtocolVersion);
        noExperts.mutable_step()->mutable_experts()->set_layers(3);
        QTest::newRow("expert load short") << bytes(shortLoad) << "step report's expert load has 7 token counts for 2 layers × 4 experts";
        QTest::newRow("expert load without experts") << bytes(noExperts)
                                                     << "step report's expert load has 0 token counts for 3 layers × 0 experts";
        QTest::newRow("expert load aux loss") << bytes(nanLoad) << "step report's expert load has a non-finite aux_loss";
        QTest::newRow("oversized") << QByteArray(int(kMaxFrameBytes + 1), 'x')
                                   << "frame of 4194305 bytes exceeds the 4 MiB limit";
    }
    void rejects()
    {
        QFETCH(QByteArray, frame);
        QFETCH(QString, reason);
        Envelope out;
        auto r = decodeEnvelope(std::string_view(frame.constData(), size_t(frame.size())), out, 4);
        QVERIFY(!r.ok);
        QCOMPARE(QString::fromStdString(r.error), reason);
    }

    void batchSplitsIntoItsEnvelopes()
    {
        std::vector<std::string> sent;
        std::string frame;
        for (int i = 0; i < 3; ++i) {
            Envelope e;
            e.set_protocol_version(kProtocolVersion);
            e.set_seq(static_cast<std::uint64_t>(i));
            if (i < 2)
                e.mutable_step()->set_step(static_cast<std::uint64_t>(i + 1));
            else // a large one: a two-byte length
                e.mutable_event()->set_message(std::string(300, 'm'));
            sent.push_back(encodeEnvelope(e));
            appendToBatch(frame, sent.back());
        }
        std::vector<std::string_view> parts;
        auto r = splitFrame(frame, parts);
        QVERIFY2(r.ok, r.error.c_str());
        QCOMPARE(parts.size(), size_t(3));
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(std::string(parts[size_t(i)]), sent[size_t(i)]);
            Envelope back;
            QVERIFY(decodeEnvelope(parts[size_t(i)], back).ok);
            QCOMPARE(back.seq(), quint64(i));
        }
        // The same bytes parse as telemetry.proto's Batch (the wire format is protobuf's own).
        Batch batch;
        QVERIFY(batch.ParseFromString(frame));
        QCOMPARE(batch.envelopes_size(), 3);
        QCOMPARE(batch.envelopes(1), sent[1]);
        // A bare envelope is a frame of one.
        QVERIFY(splitFrame(sent[0], parts).ok);
        QCOMPARE(parts.size(), size_t(1));
        QCOMPARE(std::string(parts[0]), sent[0]);
    }

    void rejectsBrokenBatches_data()
    {
        QTest::addColumn<QByteArray>("frame");
        QTest::addColumn<QString>("reason");
        std::string one;
        Envelope e;
        e.set_protocol_version(kProtocolVersion);
        e.mutable_step()->set_step(1);
        appendToBatch(one, encodeEnvelope(e));
        const QByteArray good = QByteArray::fromStdString(one);
        QTest::newRow("lying length") << QByteArray("\xA2\x06\x40" "abc", 6) << "a batch frame whose envelope of 64 bytes runs past its end";
        QTest::newRow("truncated length") << QByteArray("\xA2\x06\x80", 3) << "a batch frame with a truncated or oversized length";
        QTest::newRow("huge length") << QByteArray("\xA2\x06\xff\xff\xff\xff\xff\x01", 8) << "a batch frame with a truncated or oversized length";
        QTest::newRow("trailing garbage") << good + QByteArray("\x01\x02", 2)
                                          << QStringLiteral("a batch frame with something other than envelopes at byte %1").arg(good.size());
        QTest::newRow("empty") << QByteArray() << "empty frame";
    }
    void rejectsBrokenBatches()
    {
        QFETCH(QByteArray, frame);
        QFETCH(QString, reason);
        std::vector<std::string_view> parts;
        const auto r = splitFrame(std::string_view(frame.constData(), size_t(frame.size())), parts);
        QVERIFY(!r.ok);
        QCOMPARE(QString::fromStdString(r.error), reason);
    }
};

QTEST_GUILESS_MAIN(TstProtocol)
#include "tst_protocol.moc"
