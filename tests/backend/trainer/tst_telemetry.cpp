// Telemetry end to end over real ZeroMQ sockets: the trainer's publisher and the launcher's
// receiver. Ordering and sequence numbers, heartbeats from the publisher's own thread, publish()
// never blocking when nobody listens (drops are counted and the count travels in later
// messages), and the receiver rejecting malformed or foreign frames.
#include "launcher/telemetry_receiver.h"
#include "protocol/framing.h"
#include "trainer/telemetry_publisher.h"

#include <zmq.hpp>

#include <QTest>

using namespace trellis;

namespace {

std::vector<proto::Envelope> collect(launcher::TelemetryReceiver &rx, std::vector<proto::Envelope> &all,
                                     proto::Envelope::PayloadCase until)
{
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < 10000) {
        auto got = rx.drain();
        all.insert(all.end(), got.begin(), got.end());
        for (const auto &e : all)
            if (e.payload_case() == until)
                return all;
        QTest::qWait(20);
    }
    return all;
}

} // namespace

class TstTelemetry : public QObject {
    Q_OBJECT
private slots:
    void stepsArriveInOrder()
    {
        launcher::TelemetryReceiver rx;
        QCOMPARE(rx.start("run-1", 2), QString());
        trainer::TelemetryPublisher::Options o;
        o.endpoint = rx.endpoint();
        o.runId = "run-1";
        o.rank = 1;
        o.heartbeatMs = 10000;
        trainer::TelemetryPublisher pub(o);
        for (int i = 1; i <= 500; ++i) {
            proto::Envelope e;
            e.mutable_step()->set_step(static_cast<quint64>(i));
            e.mutable_step()->set_loss(1.0 / i);
            pub.publish(std::move(e));
        }
        pub.close(0, "completed", 500);
        std::vector<proto::Envelope> all;
        collect(rx, all, proto::Envelope::kGoodbye);
        quint64 steps = 0, lastSeq = 0;
        for (const auto &e : all) {
            QCOMPARE(e.rank(), 1u);
            QCOMPARE(e.run_id(), std::string("run-1"));
            if (e.has_step()) {
                QCOMPARE(e.step().step(), ++steps);
                QVERIFY(e.seq() >= lastSeq);
                lastSeq = e.seq();
            }
        }
        QCOMPARE(steps, 500ull);
        QVERIFY(all.back().has_goodbye());
        QCOMPARE(all.back().goodbye().steps_done(), 500ull);
        QCOMPARE(rx.stats().lost, 0ull);
        QCOMPARE(pub.droppedCount(), 0ull);
    }

    void heartbeatsComeFromTheirOwnThread()
    {
        launcher::TelemetryReceiver rx;
        QCOMPARE(rx.start("hb", 1), QString());
        trainer::TelemetryPublisher::Options o;
        o.endpoint = rx.endpoint();
        o.runId = "hb";
        o.heartbeatMs = 50;
        trainer::TelemetryPublisher pub(o);
        pub.setProgress(7, "backward");
        // The "training thread" (this one) publishes nothing: heartbeats still arrive.
        std::vector<proto::Envelope> all;
        QTRY_VERIFY_WITH_TIMEOUT(([&] {
                                     auto got = rx.drain();
                                     all.insert(all.end(), got.begin(), got.end());
                                     return std::count_if(all.begin(), all.end(), [](const auto &e) { return e.has_heartbeat(); }) >= 3;
                                 })(),
                                 10000);
        const auto hb = std::find_if(all.begin(), all.end(), [](const auto &e) { return e.has_heartbeat(); });
        QCOMPARE(hb->heartbeat().step(), 7ull);
        QCOMPARE(hb->heartbeat().phase(), std::string("backward"));
        pub.close(0, "", 7);
    }

    void neverBlocksAndCountsDrops()
    {
        // Find a free loopback port, then leave it unbound: nobody is listening.
        std::string endpoint;
        {
            launcher::TelemetryReceiver probe;
            QCOMPARE(probe.start("x", 1), QString());
            endpoint = probe.endpoint();
        }
        trainer::TelemetryPublisher::Options o;
        o.endpoint = endpoint;
        o.runId = "drops";
        o.queueCapacity = 16;
        o.spoolCapacity = 16;
        o.heartbeatMs = 10000;
        o.closeTimeoutMs = 3000;
        trainer::TelemetryPublisher pub(o);
        for (int i = 0; i < 200000; ++i) {
            proto::Envelope e;
            e.mutable_step()->set_step(static_cast<quint64>(i));
            pub.publish(std::move(e));
        }
        QVERIFY(pub.droppedCount() > 0);

        // A receiver appears on that port: later messages carry the drop count.
        launcher::TelemetryReceiver rx;
        QCOMPARE(rx.start("drops", 1, endpoint), QString());
        QTest::qWait(300);
        proto::Envelope late;
        late.mutable_event()->set_message("after the outage");
        pub.publish(std::move(late));
        pub.close(0, "done", 0);
        std::vector<proto::Envelope> all;
        collect(rx, all, proto::Envelope::kGoodbye);
        QVERIFY(!all.empty());
        QVERIFY(all.back().has_goodbye());
        QVERIFY(all.back().dropped() > 0);
        QVERIFY(rx.stats().lost > 0); // the receiver sees the gaps in the sequence numbers
    }

    void receiverRejectsBadFrames()
    {
        launcher::TelemetryReceiver rx;
        QCOMPARE(rx.start("mine", 4), QString());
        zmq::context_t ctx(1);
        zmq::socket_t push(ctx, zmq::socket_type::push);
        push.set(zmq::sockopt::linger, 2000);
        push.connect(rx.endpoint());
        auto send = [&](const proto::Envelope &e) { push.send(zmq::buffer(proto::encodeEnvelope(e))); };
        proto::Envelope good;
        good.set_run_id("mine");
        good.set_protocol_version(proto::kProtocolVersion);
        good.set_rank(2);
        good.mutable_step()->set_step(1);
        send(good);
        push.send(zmq::buffer(std::string("\x08\x96\x01garbage\xff")));
        proto::Envelope foreign = good;
        foreign.set_run_id("someone-else");
        send(foreign);
        proto::Envelope outside = good;
        outside.set_rank(17);
        send(outside);
        proto::Envelope gap = good;
        gap.set_seq(5);
        send(gap);
        QTRY_VERIFY_WITH_TIMEOUT(rx.stats().received + rx.stats().rejected >= 5, 10000);
        const auto stats = rx.stats();
        QCOMPARE(stats.received, 2ull);
        QCOMPARE(stats.rejected, 3ull);
        QCOMPARE(stats.lost, 4ull);
        QCOMPARE(rx.drain().size(), size_t(2));
    }
};

QTEST_GUILESS_MAIN(TstTelemetry)
#include "tst_telemetry.moc"
