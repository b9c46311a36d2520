// Telemetry end to end over real ZeroMQ sockets: the trainer's publisher and the launcher's
// receiver. Ordering and sequence numbers, heartbeats from the publisher's own thread, publish()
// never blocking when nobody listens (drops are counted and the count travels in later
// messages), and the receiver rejecting malformed or foreign frames.
#include "launcher/ingest/telemetry_receiver.h"
#include "backend/protocol/framing.h"
#include "backend/protocol/rank_link.h"
#include "backend/trainer/telemetry/telemetry_publisher.h"
#include "backend/trainer/comm/collective_tracker.h"

#include <zmq.hpp>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <QElapsedTimer>

#include <map>
#include <optional>

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

trainer::TelemetryPublisher::Options publisherTo(launcher::TelemetryReceiver &rx, const char *runId, int heartbeatMs)
{
    trainer::TelemetryPublisher::Options o;
    o.endpoint = rx.endpoint();
    o.runId = runId;
    o.heartbeatMs = heartbeatMs;
    return o;
}

long heartbeatsIn(const std::vector<proto::Envelope> &all)
{
    return std::count_if(all.begin(), all.end(), [](const auto &e) { return e.has_heartbeat(); });
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
        quint64 steps = 0;
        QVERIFY(!all.empty());
        const quint64 firstSeq = all.front().seq();
        for (std::size_t i = 0; i < all.size(); ++i) {
            const auto &e = all[i];
            QCOMPARE(e.rank(), 1u);
            QCOMPARE(e.run_id(), std::string("run-1"));
            QCOMPARE(e.seq(), firstSeq + i); // +1 a message queued, none repeated or skipped
            if (e.has_step())
                QCOMPARE(e.step().step(), ++steps);
        }
        QCOMPARE(steps, 500ull);
        QVERIFY(all.back().has_goodbye());
        QCOMPARE(all.back().goodbye().steps_done(), 500ull);
        QCOMPARE(rx.stats().lost, 0ull);
        QCOMPARE(pub.droppedCount(), 0ull);
    }

    // Remote hosts: only the run's CURVE client key gets in; another key and a plain peer are
    // refused (their steps never reach the inbox), the right key's steps all arrive.
    void curveAcceptsOnlyTheRunsKey()
    {
        std::string error;
        const auto keys = proto::generateCurveKeys(error);
        QVERIFY2(keys, error.c_str());
        const auto stranger = proto::generateCurveKeys(error);
        QVERIFY(stranger);
        launcher::TelemetryReceiver rx;
        rx.setCurve(*keys);
        QCOMPARE(rx.start("run-c", 3), QString());
        auto publish = [&](int rank, const proto::CurveKeys &curve) {
            trainer::TelemetryPublisher::Options o;
            o.endpoint = rx.endpoint();
            o.runId = "run-c";
            o.rank = rank;
            o.heartbeatMs = 10000;
            o.closeTimeoutMs = 1500;
            o.curve = curve;
            auto pub = std::make_unique<trainer::TelemetryPublisher>(o);
            for (int i = 1; i <= 20; ++i) {
                proto::Envelope e;
                e.mutable_step()->set_step(static_cast<quint64>(i));
                pub->publish(std::move(e));
            }
            return pub;
        };
        // A stranger's client key (the right server key), and a plain peer without CURVE.
        proto::CurveKeys wrong = stranger->forRanks();
        wrong.serverPublic = keys->serverPublic;
        auto intruder = publish(1, wrong);
        auto plain = publish(2, {});
        auto member = publish(0, keys->forRanks());
        member->close(0, "completed", 20);
        std::vector<proto::Envelope> all;
        collect(rx, all, proto::Envelope::kGoodbye);
        QTRY_VERIFY_WITH_TIMEOUT(rx.stats().refused >= 1, 5000);
        intruder->close(0, "completed", 20);
        plain->close(0, "completed", 20);
        auto rest = rx.drain();
        all.insert(all.end(), rest.begin(), rest.end());
        int steps = 0;
        for (const auto &e : all) {
            QCOMPARE(e.rank(), 0u); // nothing from ranks 1 and 2
            steps += e.has_step();
        }
        QCOMPARE(steps, 20);
        QVERIFY(rx.stats().lastRejection.contains(QStringLiteral("unknown key")));
        QVERIFY(intruder->droppedCount() > 0 || intruder->heldCount() > 0);
    }

    void curveKeyFilesArePrivate()
    {
        QTemporaryDir dir;
        std::string error;
        const auto keys = proto::generateCurveKeys(error);
        QVERIFY(keys);
        const std::string path = (dir.path() + QStringLiteral("/run.keys")).toStdString();
        QCOMPARE(proto::writeCurveKeys(path, keys->forRanks()), std::string());
        QCOMPARE(QFile::permissions(QString::fromStdString(path)) & (QFile::ReadGroup | QFile::ReadOther), QFileDevice::Permissions());
        auto back = proto::readCurveKeys(path, error);
        QVERIFY2(back, error.c_str());
        QVERIFY(back->hasClient());
        QVERIFY(back->serverSecret.empty());
        QCOMPARE(back->clientSecret, keys->clientSecret);
        // Readable by others: refused, named.
        QFile::setPermissions(QString::fromStdString(path), QFile::ReadOwner | QFile::WriteOwner | QFile::ReadOther);
        QVERIFY(!proto::readCurveKeys(path, error));
        QVERIFY2(error.find("readable by others") != std::string::npos, error.c_str());
        // A broken key line: the file and the line named.
        QFile f(QString::fromStdString(path));
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write("server_public=short\n");
        f.close();
        QFile::setPermissions(QString::fromStdString(path), QFile::ReadOwner | QFile::WriteOwner);
        QVERIFY(!proto::readCurveKeys(path, error));
        QVERIFY2(error.find(":1: server_public is not a 40-character Z85 key") != std::string::npos, error.c_str());
    }

    void heartbeatsComeFromTheirOwnThread()
    {
        launcher::TelemetryReceiver rx;
        QCOMPARE(rx.start("hb", 1), QString());
        trainer::TelemetryPublisher pub(publisherTo(rx, "hb", 50));
        pub.setProgress(7, "backward");
        // The "training thread" (this one) publishes nothing: heartbeats still arrive.
        std::vector<proto::Envelope> all;
        QTRY_VERIFY_WITH_TIMEOUT(([&] {
                                     auto got = rx.drain();
                                     all.insert(all.end(), got.begin(), got.end());
                                     return heartbeatsIn(all) >= 3;
                                 })(),
                                 10000);
        const auto hb = std::find_if(all.begin(), all.end(), [](const auto &e) { return e.has_heartbeat(); });
        QCOMPARE(hb->heartbeat().step(), 7ull);
        QCOMPARE(hb->heartbeat().phase(), std::string("backward"));
        pub.close(0, "", 7);
    }

    // While the training thread waits in a collective, the heartbeat names it with the group's
    // members (world ranks) when the group registered them — what lets a collector, which has no
    // plan, name the member holding the others up; a group too large to send, or never registered,
    // goes without.
    void heartbeatsCarryTheGroupsMembers()
    {
        launcher::TelemetryReceiver rx;
        QCOMPARE(rx.start("members", 1), QString());
        trainer::TelemetryPublisher pub(publisherTo(rx, "members", 50));
        trainer::CollectiveTracker::setMembers("tp", {2, 3});
        trainer::CollectiveTracker::setMembers("dp", std::vector<int>(trainer::CollectiveTracker::kMaxMembers + 1, 0));
        const auto waitIn = [&](const std::string &group) {
            const trainer::InsideCollective inside(group, "all_reduce", 3, 64);
            std::vector<proto::Envelope> all;
            std::optional<proto::Heartbeat> seen;
            QElapsedTimer t;
            t.start();
            while (!seen && t.elapsed() < 10000) {
                QTest::qWait(20);
                for (const auto &e : rx.drain())
                    if (e.has_heartbeat() && e.heartbeat().collective_group() == group)
                        seen = e.heartbeat();
            }
            return seen;
        };
        const auto tp = waitIn("tp");
        QVERIFY(tp);
        QCOMPARE(std::vector<int>(tp->collective_members().begin(), tp->collective_members().end()), (std::vector<int>{2, 3}));
        const auto dp = waitIn("dp");
        QVERIFY(dp);
        QCOMPARE(dp->collective_members_size(), 0);
        const auto other = waitIn("pp");
        QVERIFY(other);
        QCOMPARE(other->collective_members_size(), 0);
        pub.close(0, "", 0);
    }

    // A heartbeat goes out only at a tick with nothing else sent since the last one: while steps
    // come every 10 ms (heartbeat 100 ms) there are none after the first; once the steps stop,
    // they come again. Every message still arrives in sequence.
    void heartbeatsOnlyWhenNothingElseWasSent()
    {
        launcher::TelemetryReceiver rx;
        QCOMPARE(rx.start("quiet", 1), QString());
        trainer::TelemetryPublisher pub(publisherTo(rx, "quiet", 100));
        std::vector<proto::Envelope> all;
        const auto beats = [&all] { return heartbeatsIn(all); };
        QElapsedTimer busy;
        busy.start();
        quint64 step = 0;
        while (busy.elapsed() < 1000) {
            proto::Envelope e;
            e.mutable_step()->set_step(++step);
            pub.publish(std::move(e));
            QTest::qWait(10);
            auto got = rx.drain();
            all.insert(all.end(), got.begin(), got.end());
        }
        const auto whileBusy = beats();
        QVERIFY2(whileBusy <= 2, qPrintable(QStringLiteral("%1 heartbeats among %2 steps").arg(whileBusy).arg(step)));
        QTRY_VERIFY_WITH_TIMEOUT(([&] {
                                     auto got = rx.drain();
                                     all.insert(all.end(), got.begin(), got.end());
                                     return beats() >= whileBusy + 3;
                                 })(),
                                 5000);
        pub.close(0, "", step);
        collect(rx, all, proto::Envelope::kGoodbye);
        for (std::size_t i = 0; i < all.size(); ++i)
            QCOMPARE(all[i].seq(), static_cast<quint64>(i));
    }

    // Nobody listening: publish() never waits for the network — 200,000 messages all return (one
    // that waited for room or for a peer would never return, and the test would time out) — and
    // every message is accounted for: held for a later send (at most the spool's 16) or counted
    // as dropped, never both, never lost; the count then travels in later messages.
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
        const quint64 published = 200000;
        for (quint64 i = 0; i < published; ++i) {
            proto::Envelope e;
            e.mutable_step()->set_step(i);
            pub.publish(std::move(e));
        }
        // Once the sender thread has taken what is queued: held + dropped = published, plus the
        // sender's own heartbeats (one at its start, then one per 10 s).
        QTRY_VERIFY_WITH_TIMEOUT(pub.droppedCount() + pub.heldCount() >= published, 10000);
        QVERIFY2(pub.droppedCount() + pub.heldCount() <= published + 3,
                 qPrintable(QStringLiteral("%1 dropped + %2 held").arg(pub.droppedCount()).arg(pub.heldCount())));
        QVERIFY2(pub.heldCount() <= o.spoolCapacity, qPrintable(QString::number(pub.heldCount())));
        QVERIFY(pub.droppedCount() >= published - o.spoolCapacity - o.queueCapacity);

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
        QVERIFY(rx.stats().lost > 0); // the rank's Skip names what it gave up
    }

    // The supervisor's receiver dies mid-run having stored part of the telemetry (its cursor), and a
    // new one binds the same endpoint: the rank resends everything not acknowledged, and the two
    // together hold every message exactly once.
    void aRestartedReceiverLosesNothing()
    {
        const std::string endpoint = "ipc://" + QDir::tempPath().toStdString() + "/trellis-tst-telemetry-" +
                                     std::to_string(QCoreApplication::applicationPid());
        launcher::TelemetryReceiver first;
        first.setAutoAck(false); // acknowledges only what it "stored", below
        QCOMPARE(first.start("again", 1, endpoint), QString());
        trainer::TelemetryPublisher::Options o;
        o.endpoint = endpoint;
        o.runId = "again";
        o.heartbeatMs = 100;
        o.resendAfterMs = 500;
        trainer::TelemetryPublisher pub(o);
        const quint64 steps = 400;
        auto publishSteps = [&](quint64 from, quint64 to) {
            for (quint64 i = from; i <= to; ++i) {
                proto::Envelope e;
                e.mutable_step()->set_step(i);
                pub.publish(std::move(e));
            }
        };
        publishSteps(1, 150);
        std::vector<proto::Envelope> before;
        QTRY_VERIFY_WITH_TIMEOUT(([&] {
                                     auto got = first.drain();
                                     before.insert(before.end(), got.begin(), got.end());
                                     return std::count_if(before.begin(), before.end(), [](const auto &e) { return e.has_step(); }) >= 150;
                                 })(),
                                 10000);
        // It stored (and acknowledged) the first 100 steps' worth of messages, then died.
        quint64 storedBelow = 0;
        for (const auto &e : before)
            if (!e.has_step() || e.step().step() <= 100)
                storedBelow = std::max<quint64>(storedBelow, e.seq() + 1);
            else
                break;
        first.acknowledge(first.generation(), {{0u, storedBelow}});
        QTest::qWait(200);
        QVERIFY(pub.heldCount() > 0);
        first.stop();
        publishSteps(151, 300); // nobody listens
        QTest::qWait(300);

        launcher::TelemetryReceiver second;
        QCOMPARE(second.start("again", 1, endpoint, {{0u, storedBelow}}), QString());
        publishSteps(301, steps);
        pub.close(0, "completed", steps);
        std::vector<proto::Envelope> after;
        collect(second, after, proto::Envelope::kGoodbye);

        std::vector<quint64> seen;
        for (const auto &e : before)
            if (e.seq() < storedBelow && e.has_step())
                seen.push_back(e.step().step());
        quint64 expectedSeq = storedBelow;
        for (const auto &e : after) {
            QCOMPARE(e.seq(), expectedSeq++); // in order, no gap
            if (e.has_step())
                seen.push_back(e.step().step());
        }
        QCOMPARE(seen.size(), size_t(steps));
        for (quint64 i = 0; i < steps; ++i)
            QCOMPARE(seen[i], i + 1);
        QVERIFY(after.back().has_goodbye());
        QCOMPARE(second.stats().lost, 0ull);
        QCOMPARE(pub.droppedCount(), 0ull);
        QVERIFY(pub.resentCount() > 0);
    }

    // Several ranks on one connection (proto::NodeLink: a node's relay, the simulator's nodes): the
    // receiver routes each acknowledgement by its rank, one rank's acknowledgement frees none of
    // another's messages, and a receiver that restarts loses nothing of any rank.
    void severalRanksShareOneConnection()
    {
        const std::string endpoint = "ipc://" + QDir::tempPath().toStdString() + "/trellis-tst-node-" +
                                     std::to_string(QCoreApplication::applicationPid());
        constexpr std::uint32_t kRanks = 4;
        launcher::TelemetryReceiver first;
        first.setAutoAck(false);
        QCOMPARE(first.start("node", kRanks, endpoint), QString());
        zmq::context_t context(1);
        proto::NodeLink node(context, {endpoint, "node", 0, 65536, 300, {}}, {0, 1, 2, 3});
        QVERIFY(node.connected());
        std::vector<std::uint64_t> seq(kRanks, 0);
        auto send = [&](std::uint64_t from, std::uint64_t to) {
            for (std::uint64_t step = from; step <= to; ++step)
                for (std::uint32_t r = 0; r < kRanks; ++r) {
                    proto::Envelope e;
                    e.set_run_id("node");
                    e.set_rank(r);
                    e.set_seq(seq[r]++);
                    e.set_protocol_version(proto::kProtocolVersion);
                    e.mutable_step()->set_step(step);
                    node.link(r).push(e.seq(), proto::encodeEnvelope(e));
                }
            node.pump();
        };
        send(1, 50);
        std::vector<proto::Envelope> before;
        QTRY_VERIFY_WITH_TIMEOUT(([&] {
                                     node.pump();
                                     auto got = first.drain();
                                     before.insert(before.end(), got.begin(), got.end());
                                     return before.size() >= 50 * kRanks;
                                 })(),
                                 10000);
        // Rank 2's first 30 messages stored and acknowledged; nothing of the others.
        first.acknowledge(first.generation(), {{2u, 30}});
        QTRY_VERIFY_WITH_TIMEOUT((node.pump(), node.link(2).held() == 20), 5000);
        for (std::uint32_t r : {0u, 1u, 3u})
            QCOMPARE(node.link(r).held(), std::size_t(50));
        first.stop();

        launcher::TelemetryReceiver second;
        QCOMPARE(second.start("node", kRanks, endpoint, {{2u, 30}}), QString());
        send(51, 60);
        std::map<std::uint32_t, std::vector<std::uint64_t>> steps;
        QTRY_VERIFY_WITH_TIMEOUT(([&] {
                                     node.pump();
                                     for (const auto &e : second.drain())
                                         if (e.has_step())
                                             steps[e.rank()].push_back(e.step().step());
                                     return node.held() == 0;
                                 })(),
                                 15000);
        for (std::uint32_t r = 0; r < kRanks; ++r) {
            const std::uint64_t firstStep = r == 2 ? 31 : 1; // what the first receiver did not store, then the rest
            QCOMPARE(steps[r].size(), std::size_t(60 - firstStep + 1));
            for (std::size_t i = 0; i < steps[r].size(); ++i)
                QCOMPARE(steps[r][i], firstStep + i);
        }
        QCOMPARE(second.stats().lost, 0ull);
    }

    void receiverRejectsBadFrames()
    {
        launcher::TelemetryReceiver rx;
        QCOMPARE(rx.start("mine", 4), QString());
        zmq::context_t ctx(1);
        zmq::socket_t push(ctx, zmq::socket_type::dealer);
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
        // A gap is not accepted: the receiver asks for a resend from seq 1.
        QTRY_VERIFY_WITH_TIMEOUT(rx.stats().received + rx.stats().rejected + rx.stats().outOfOrder >= 5, 10000);
        zmq::message_t reply;
        QVERIFY(push.recv(reply, zmq::recv_flags::none)); // the ack of seq 0 and/or the resend request
        bool resendAsked = false;
        for (int i = 0; i < 5; ++i) {
            proto::Ack ack;
            QVERIFY(proto::decodeAck(std::string_view(static_cast<const char *>(reply.data()), reply.size()), ack, "mine").ok);
            if (ack.resend()) {
                QCOMPARE(ack.resend_from(), 1ull);
                resendAsked = true;
                break;
            }
            if (!push.recv(reply, zmq::recv_flags::none))
                break;
        }
        QVERIFY(resendAsked);
        const auto stats = rx.stats();
        QCOMPARE(stats.received, 1ull);
        QCOMPARE(stats.rejected, 3ull);
        QCOMPARE(stats.outOfOrder, 1ull);
        QCOMPARE(stats.lost, 0ull);
        QCOMPARE(rx.drain().size(), size_t(1));
    }
};

QTEST_GUILESS_MAIN(TstTelemetry)
#include "tst_telemetry.moc"
