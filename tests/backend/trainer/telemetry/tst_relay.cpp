// A node's telemetry relay over real ZeroMQ sockets, between real rank links (each its own
// connection, as a trainer's) and the launcher's receiver: everything forwarded in order and
// batched, acknowledgements back to their ranks, the relay done once every Goodbye is
// acknowledged; a relay that dies and a new one in its place lose nothing and store nothing twice;
// a rank not on the node, a rank another connection already speaks for, another run's and
// malformed frames refused and counted; a publisher whose relay is gone for good falls back to the
// supervisor; the relay's folder private and its socket path short enough.
#include "launcher/ingest/telemetry_receiver.h"
#include "backend/protocol/framing.h"
#include "backend/protocol/rank_link.h"
#include "backend/protocol/relay.h"
#include "backend/trainer/telemetry/telemetry_publisher.h"

#include <zmq.hpp>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <map>
#include <memory>

using namespace trellis;

namespace {

proto::Envelope stepMessage(const std::string &run, std::uint32_t rank, std::uint64_t seq, std::uint64_t step)
{
    proto::Envelope e;
    e.set_run_id(run);
    e.set_rank(rank);
    e.set_seq(seq);
    e.set_protocol_version(proto::kProtocolVersion);
    e.mutable_step()->set_step(step);
    return e;
}

// The ranks of one node, each on its own connection to the relay, as trainers are.
struct Ranks {
    zmq::context_t context{1};
    std::vector<std::unique_ptr<proto::RankLink>> links;
    std::vector<std::uint64_t> seq;
    Ranks(const std::string &endpoint, const std::string &run, const std::vector<std::uint32_t> &ranks)
    {
        for (std::uint32_t r : ranks) {
            links.push_back(std::make_unique<proto::RankLink>(context, proto::RankLink::Options{endpoint, run, r, 65536, 300, {}}));
            seq.push_back(0);
        }
    }
    void steps(const std::string &run, std::uint64_t from, std::uint64_t to)
    {
        for (std::uint64_t step = from; step <= to; ++step)
            for (std::size_t i = 0; i < links.size(); ++i) {
                const auto e = stepMessage(run, static_cast<std::uint32_t>(i), seq[i]++, step);
                links[i]->push(e.seq(), proto::encodeEnvelope(e));
            }
    }
    void goodbyes(const std::string &run)
    {
        for (std::size_t i = 0; i < links.size(); ++i) {
            proto::Envelope e = stepMessage(run, static_cast<std::uint32_t>(i), seq[i]++, 0);
            e.mutable_goodbye()->set_exit_code(0);
            links[i]->push(e.seq(), proto::encodeEnvelope(e));
        }
    }
    void pump()
    {
        for (auto &l : links)
            l->pump();
    }
    std::size_t held() const
    {
        std::size_t n = 0;
        for (const auto &l : links)
            n += l->held();
        return n;
    }
};

std::string tempEndpoint(const QTemporaryDir &dir, const char *name)
{
    return "ipc://" + dir.filePath(QString::fromLatin1(name)).toStdString();
}

} // namespace

class TstRelay : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir{QDir::tempPath() + QStringLiteral("/rl-XXXXXX")};

private slots:
    // Four ranks through one relay: every step in order, in fewer frames than messages, every
    // acknowledgement back at its rank, and the relay finished once the Goodbyes are acknowledged.
    void forwardsBatchedAndRoutesAcknowledgements()
    {
        launcher::TelemetryReceiver rx;
        QCOMPARE(rx.start("relay", 8, tempEndpoint(m_dir, "sup1")), QString());
        zmq::context_t context(1);
        proto::Relay relay(context, {"relay", tempEndpoint(m_dir, "relay1"), rx.endpoint(), {}, {0, 1, 2, 3}, 30000, 3000});
        QCOMPARE(relay.open(), std::string());
        Ranks ranks(tempEndpoint(m_dir, "relay1"), "relay", {0, 1, 2, 3});
        ranks.steps("relay", 1, 200);
        ranks.goodbyes("relay");
        std::map<std::uint32_t, std::vector<std::uint64_t>> steps;
        int goodbyes = 0;
        proto::Relay::State state = proto::Relay::State::Running;
        QTRY_VERIFY_WITH_TIMEOUT(([&] {
                                     ranks.pump();
                                     state = relay.poll(5);
                                     for (const auto &e : rx.drain()) {
                                         if (e.has_step())
                                             steps[e.rank()].push_back(e.step().step());
                                         goodbyes += e.has_goodbye();
                                     }
                                     return state == proto::Relay::State::Finished && ranks.held() == 0;
                                 })(),
                                 10000);
        QCOMPARE(goodbyes, 4);
        for (std::uint32_t r = 0; r < 4; ++r) {
            QCOMPARE(steps[r].size(), std::size_t(200));
            for (std::size_t i = 0; i < 200; ++i)
                QCOMPARE(steps[r][i], i + 1);
        }
        const auto &s = relay.stats();
        QCOMPARE(s.envelopesUp, 804ull);
        QVERIFY2(s.framesUp < s.envelopesUp / 4, qPrintable(QStringLiteral("%1 frames").arg(s.framesUp)));
        QVERIFY(s.acksDown > 0);
        QCOMPARE(s.refused, 0ull);
        QCOMPARE(rx.stats().lost, 0ull);
    }

    // A relay killed with messages in flight and a new one on the same path: the ranks' links send
    // again what was not acknowledged, and the receiver stores each message once.
    void aRelayRestartLosesNothing()
    {
        launcher::TelemetryReceiver rx;
        QCOMPARE(rx.start("restart", 4, tempEndpoint(m_dir, "sup2")), QString());
        const std::string listen = tempEndpoint(m_dir, "relay2");
        zmq::context_t context(1);
        auto relay = std::make_unique<proto::Relay>(context, proto::RelayOptions{"restart", listen, rx.endpoint(), {}, {0, 1}, 30000, 3000});
        QCOMPARE(relay->open(), std::string());
        Ranks ranks(listen, "restart", {0, 1});
        std::map<std::uint32_t, std::vector<std::uint64_t>> steps;
        auto drain = [&] {
            for (const auto &e : rx.drain())
                if (e.has_step())
                    steps[e.rank()].push_back(e.step().step());
        };
        ranks.steps("restart", 1, 50);
        QTRY_VERIFY_WITH_TIMEOUT((ranks.pump(), relay->poll(5), drain(), steps[0].size() == 50 && steps[1].size() == 50), 10000);
        // Sent to the relay, never forwarded: the relay dies with them.
        ranks.steps("restart", 51, 80);
        ranks.pump();
        QTest::qWait(50);
        relay.reset();
        ::unlink(listen.substr(6).c_str());
        QTest::qWait(500);
        drain();
        QCOMPARE(steps[0].size(), std::size_t(50));
        relay = std::make_unique<proto::Relay>(context, proto::RelayOptions{"restart", listen, rx.endpoint(), {}, {0, 1}, 30000, 3000});
        QCOMPARE(relay->open(), std::string());
        ranks.steps("restart", 81, 100);
        QTRY_VERIFY_WITH_TIMEOUT((ranks.pump(), relay->poll(5), drain(), ranks.held() == 0), 15000);
        for (std::uint32_t r = 0; r < 2; ++r) {
            QCOMPARE(steps[r].size(), std::size_t(100)); // each once: nothing lost, nothing twice
            for (std::size_t i = 0; i < 100; ++i)
                QCOMPARE(steps[r][i], i + 1);
        }
        QCOMPARE(rx.stats().lost, 0ull);
    }

    // What a relay must not pass on: a rank of another node, a second connection speaking for a
    // rank, another run's messages, a frame that is not telemetry. Each refused with its reason and
    // counted; the receiver stores the real rank's messages once and nothing of the others.
    void refusesWhatIsNotItsNodesAndCountsIt()
    {
        launcher::TelemetryReceiver rx;
        QCOMPARE(rx.start("guard", 16, tempEndpoint(m_dir, "sup3")), QString());
        const std::string listen = tempEndpoint(m_dir, "relay3");
        zmq::context_t context(1);
        proto::Relay relay(context, {"guard", listen, rx.endpoint(), {}, {0, 1}, 30000, 3000});
        QCOMPARE(relay.open(), std::string());
        std::vector<std::string> reasons;
        relay.setOnRefusal([&](const std::string &why) { reasons.push_back(why); });
        Ranks node(listen, "guard", {0, 1});
        Ranks stranger(listen, "guard", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}); // ranks 0..9 on other connections
        node.steps("guard", 1, 5);
        std::map<std::uint32_t, std::vector<std::uint64_t>> steps;
        QTRY_VERIFY_WITH_TIMEOUT(([&] {
                                     node.pump();
                                     relay.poll(5);
                                     for (const auto &e : rx.drain())
                                         steps[e.rank()].push_back(e.step().step());
                                     return node.held() == 0;
                                 })(),
                                 10000);
        // Now the others: rank 1 again from another connection (claimed), rank 9 (not on the node),
        // another run's rank 0, and a frame of garbage.
        auto one = [&](std::size_t link, const std::string &run, std::uint32_t rank) {
            const auto e = stepMessage(run, rank, 100, 100);
            stranger.links[link]->push(e.seq(), proto::encodeEnvelope(e));
            stranger.links[link]->pump();
        };
        one(1, "guard", 1);
        one(9, "guard", 9);
        one(0, "another-run", 0);
        zmq::socket_t raw(context, zmq::socket_type::dealer);
        raw.connect(listen);
        raw.send(zmq::str_buffer("\x0a\xff\xff garbage"), zmq::send_flags::none);
        QTRY_VERIFY_WITH_TIMEOUT((relay.poll(5), relay.stats().refused >= 4), 5000);
        QTest::qWait(300);
        relay.poll(5);
        for (const auto &e : rx.drain())
            steps[e.rank()].push_back(e.step().step());
        const auto &s = relay.stats();
        QCOMPARE(s.refused, 4ull);
        QCOMPARE(s.refusedBy.at("claimed"), 1ull);
        QCOMPARE(s.refusedBy.at("not on this node"), 1ull);
        QCOMPARE(s.refusedBy.at("other run"), 1ull);
        QCOMPARE(s.refusedBy.at("malformed"), 1ull);
        QVERIFY(std::any_of(reasons.begin(), reasons.end(), [](const std::string &r) {
            return r == "rank 9 is not on this node (its ranks: 0, 1)";
        }));
        QVERIFY(std::any_of(reasons.begin(), reasons.end(), [](const std::string &r) {
            return r == "rank 1 is already connected to this relay from another process";
        }));
        QCOMPARE(steps.size(), std::size_t(2));
        QCOMPARE(steps[0], (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
        QCOMPARE(steps[1], (std::vector<std::uint64_t>{1, 2, 3, 4, 5})); // the impostor's step 100 is not there
    }

    // A rank whose relay is gone and cannot be started again sends to the supervisor itself, and
    // everything it published arrives, in order.
    void publisherFallsBackToTheSupervisor()
    {
        launcher::TelemetryReceiver rx;
        QCOMPARE(rx.start("fallback", 1, tempEndpoint(m_dir, "sup4")), QString());
        int starts = 0;
        trainer::TelemetryPublisher::Options o;
        o.endpoint = tempEndpoint(m_dir, "no-relay-here");
        o.supervisor = rx.endpoint();
        o.runId = "fallback";
        o.heartbeatMs = 100;
        o.resendAfterMs = 200;
        o.relayRunning = [] { return false; };
        o.startRelay = [&] { return ++starts, false; };
        trainer::TelemetryPublisher publisher(o);
        for (int step = 1; step <= 20; ++step) {
            proto::Envelope e;
            e.mutable_step()->set_step(static_cast<std::uint64_t>(step));
            publisher.publish(std::move(e));
        }
        std::vector<std::uint64_t> steps;
        QTRY_VERIFY_WITH_TIMEOUT(([&] {
                                     for (const auto &e : rx.drain())
                                         if (e.has_step())
                                             steps.push_back(e.step().step());
                                     return steps.size() >= 20;
                                 })(),
                                 10000);
        QCOMPARE(steps.size(), std::size_t(20));
        for (std::size_t i = 0; i < 20; ++i)
            QCOMPARE(steps[i], i + 1);
        QVERIFY(starts >= 1); // it tried to start the relay before giving up on it
        publisher.close(0, "done", 20);
        QCOMPARE(publisher.droppedCount(), 0ull);
    }

    // A receiver that reads but never acknowledges (a supervisor far behind): the rank sends its
    // messages again after resendAfterMs, then after twice as long each time — 3 rounds in 4.5 s
    // at 500 ms (0.5, 1.5, 3.5 s), where a fixed interval would have sent 8 — and once an
    // acknowledgement comes, the next stall is answered after resendAfterMs again.
    void stalledAcknowledgementsBackOff()
    {
        zmq::context_t context(1);
        zmq::socket_t router(context, zmq::socket_type::router);
        const std::string endpoint = tempEndpoint(m_dir, "behind");
        router.bind(endpoint);
        proto::RankLink link(context, {endpoint, "behind", 0, 65536, 500, {}});
        for (std::uint64_t i = 0; i < 5; ++i)
            link.push(i, proto::encodeEnvelope(stepMessage("behind", 0, i, i + 1)));
        int skips = 0;
        zmq::message_t identity;
        auto drain = [&] {
            zmq::message_t id, body;
            while (router.recv(id, zmq::recv_flags::dontwait)) {
                identity.copy(id);
                (void)router.recv(body, zmq::recv_flags::dontwait);
                std::vector<std::string_view> parts;
                if (proto::splitFrame(body.to_string_view(), parts).ok)
                    for (std::string_view p : parts) {
                        proto::Envelope e;
                        if (proto::decodeEnvelope(p, e).ok && e.has_skip())
                            ++skips;
                    }
            }
        };
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 4500) {
            link.pump();
            drain();
            QTest::qWait(10);
        }
        // 3 expected; a loaded machine may shift one round across the window's end.
        QVERIFY2(skips >= 2 && skips <= 4, qPrintable(QStringLiteral("%1 resend rounds").arg(skips)));
        // An acknowledgement of the first two: the back-off starts over.
        proto::Ack ack;
        ack.set_run_id("behind");
        ack.set_rank(0);
        ack.set_next_seq(2);
        link.accept(ack);
        QCOMPARE(link.held(), std::size_t(3));
        skips = 0;
        t.restart();
        while (t.elapsed() < 1300) {
            link.pump();
            drain();
            QTest::qWait(10);
        }
        QCOMPARE(skips, 1); // after 500 ms (not after the 8 s the back-off had reached)
    }

    // A supervisor that has a rank's messages but has not stored them yet (its writer behind) says
    // it is busy once a second: the rank, waiting well past its resendAfterMs, sends nothing
    // again. Once that supervisor is gone, the stall is real and the rank does send again.
    void aBusySupervisorIsNotSentEverythingAgain()
    {
        launcher::TelemetryReceiver rx;
        rx.setAutoAck(false); // stores nothing: no acknowledgement ever comes
        QCOMPARE(rx.start("busy", 1, tempEndpoint(m_dir, "sup5")), QString());
        zmq::context_t context(1);
        proto::RankLink link(context, {rx.endpoint(), "busy", 0, 65536, 2500, {}}); // busy acks come every 1 s
        for (std::uint64_t i = 0; i < 10; ++i)
            link.push(i, proto::encodeEnvelope(stepMessage("busy", 0, i, i + 1)));
        std::size_t received = 0;
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 4500) {
            link.pump();
            received += rx.drain().size();
            QTest::qWait(20);
        }
        QCOMPARE(received, std::size_t(10));
        QCOMPARE(link.held(), std::size_t(10));
        QCOMPARE(link.resent(), 0ull);
        rx.stop();
        QTRY_VERIFY_WITH_TIMEOUT((link.pump(), link.resent() >= 10), 5000);
    }

    // The relay's folder: this user's, 0700, under TMPDIR; refused when open to others; a long run
    // id hashed so that the socket path fits; one relay per folder (the lock).
    void folderIsPrivateAndLocked()
    {
        QTemporaryDir tmp(QDir::tempPath() + QStringLiteral("/rf-XXXXXX"));
        const QByteArray saved = qgetenv("TMPDIR");
        qputenv("TMPDIR", tmp.path().toUtf8());
        std::string error;
        const std::string folder = proto::relayFolder("run-1", "node0", error);
        QCOMPARE(error, std::string());
        QCOMPARE(QString::fromStdString(folder), tmp.path() + QStringLiteral("/trellis-%1/run-1-node0").arg(::getuid()));
        struct stat st {};
        QCOMPARE(::stat(folder.c_str(), &st), 0);
        QCOMPARE(st.st_mode & 0777, 0700u);
        const std::string longId(300, 'x');
        const std::string hashed = proto::relayFolder(longId + "/../etc", "node0", error);
        QVERIFY2(!hashed.empty(), error.c_str());
        QVERIFY(proto::relaySocketPath(hashed).size() <= 107);
        QVERIFY(hashed.find("..") == std::string::npos);

        const int lock = proto::lockRelayFolder(folder);
        QVERIFY(lock >= 0);
        QCOMPARE(proto::lockRelayFolder(folder), -1); // a second relay for the node is refused
        QVERIFY(proto::relayRunning(folder));
        ::close(lock);
        QVERIFY(!proto::relayRunning(folder));

        const std::string parent = tmp.path().toStdString() + "/trellis-" + std::to_string(::getuid());
        ::chmod(parent.c_str(), 0755);
        QVERIFY(proto::relayFolder("run-2", "node0", error).empty());
        QVERIFY2(error.find("is open to other users") != std::string::npos, error.c_str());
        ::chmod(parent.c_str(), 0700);
        if (saved.isNull())
            qunsetenv("TMPDIR");
        else
            qputenv("TMPDIR", saved);
    }

    // Finished relays' folders are removed by a relay starting beside them once their log is a day
    // old: not one whose relay still runs (its lock), not a fresh one, not one holding other files,
    // not its own.
    void oldRelayFoldersAreSwept()
    {
        QTemporaryDir tmp(QDir::tempPath() + QStringLiteral("/rs-XXXXXX"));
        const std::string parent = tmp.path().toStdString();
        const auto make = [&](const std::string &name, bool old, const char *extra = nullptr) {
            const std::string folder = parent + "/" + name;
            ::mkdir(folder.c_str(), 0700);
            for (const char *file : {"relay.log", "relay.pid", "relay.lock"})
                QFile(QString::fromStdString(folder + "/" + file)).open(QIODevice::WriteOnly);
            if (extra)
                QFile(QString::fromStdString(folder + "/" + extra)).open(QIODevice::WriteOnly);
            if (old) {
                const struct timeval then[2] = {{std::time(nullptr) - 2 * 86400, 0}, {std::time(nullptr) - 2 * 86400, 0}};
                ::utimes((folder + "/relay.log").c_str(), then);
            }
            return folder;
        };
        const std::string own = make("run-9-node0", true), gone = make("run-1-node0", true), fresh = make("run-2-node0", false),
                          running = make("run-3-node0", true), other = make("run-4-node0", true, "notes.txt");
        const int held = proto::lockRelayFolder(running);
        QVERIFY(held >= 0);
        QCOMPARE(proto::sweepOldRelayFolders(own, 86400), 1);
        ::close(held);
        QVERIFY(!QFileInfo::exists(QString::fromStdString(gone)));
        for (const std::string &kept : {own, fresh, running, other})
            QVERIFY2(QFileInfo::exists(QString::fromStdString(kept + "/relay.log")), kept.c_str());
    }
};

QTEST_GUILESS_MAIN(TstRelay)
#include "tst_relay.moc"
