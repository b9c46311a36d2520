// See telemetry_receiver.h.
#include "launcher/ingest/telemetry_receiver.h"

#include "backend/protocol/zap_handler.h"
#include "backend/protocol/framing.h"

#include <zmq.hpp>

#include <sys/eventfd.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

namespace trellis::launcher {
namespace {

using Clock = std::chrono::steady_clock;

} // namespace

TelemetryReceiver::TelemetryReceiver() : m_wake(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}

TelemetryReceiver::~TelemetryReceiver()
{
    stop();
    if (m_wake >= 0)
        ::close(m_wake);
}

QString TelemetryReceiver::start(const std::string &expectedRunId, quint32 worldSize, const std::string &bindEndpoint,
                                 std::map<quint32, quint64> nextSeq)
{
    stop();
    m_runId = expectedRunId;
    m_worldSize = worldSize;
    m_stop = false;
    m_throttledAtMs = -1;
    {
        std::lock_guard lock(m_mutex);
        ++m_generation;
        m_nextSeq = std::move(nextSeq);
        m_lost.clear();
        m_pendingAcks.clear();
        m_inbox.clear();
    }
    std::promise<QString> ready;
    auto result = ready.get_future();
    m_thread = std::thread([this, bindEndpoint, &ready] {
        pthread_setname_np(pthread_self(), "trellis-receive");
        run(bindEndpoint, &ready);
    });
    const QString error = result.get();
    if (!error.isEmpty())
        m_thread.join();
    return error;
}

void TelemetryReceiver::stop()
{
    m_stop = true;
    if (m_thread.joinable())
        m_thread.join();
}

void TelemetryReceiver::acknowledge(quint64 generation, const std::map<quint32, quint64> &nextSeq)
{
    std::lock_guard lock(m_mutex);
    if (generation != m_generation.load())
        return;
    for (const auto &[rank, next] : nextSeq)
        m_pendingAcks[rank] = std::max(m_pendingAcks[rank], next);
    const std::uint64_t one = 1; // the receiver thread sends them now, not at its next idle wake-up
    if (m_wake >= 0)
        (void)::write(m_wake, &one, sizeof one);
}

EnvelopeBatch TelemetryReceiver::drain()
{
    std::lock_guard lock(m_mutex);
    EnvelopeBatch out;
    std::swap(out, m_inbox);
    return out;
}

ReceiverStats TelemetryReceiver::stats() const
{
    std::lock_guard lock(m_mutex);
    return m_stats;
}

std::map<quint32, quint64> TelemetryReceiver::lostByRank() const
{
    std::lock_guard lock(m_mutex);
    return m_lost;
}

std::map<quint32, quint64> TelemetryReceiver::cursor() const
{
    std::lock_guard lock(m_mutex);
    return m_nextSeq;
}

// The receiver thread's sockets and what it knows of each rank's connection; made, used and
// closed on that thread only.
struct TelemetryReceiver::RouterState {
    zmq::context_t context{1};
    zmq::socket_t socket{context, zmq::socket_type::router};
    std::optional<zmq::socket_t> zap;
    std::string allowedKey; // the run's client public key, 32 bytes
    // The socket, the wake-up descriptor acknowledge() signals, and the ZAP handler's socket.
    zmq::pollitem_t items[3] = {};
    int itemCount = 2;
    bool drained = true; // the last round took everything the socket had

    std::map<quint32, std::string> peer;                // rank -> routing id of its connection
    std::map<quint32, quint64> acked;                   // rank -> next_seq last acknowledged
    std::map<quint32, Clock::time_point> resendAskedAt; // rank -> when a resend was last asked for
    Clock::time_point lastBusy{};                       // when busy acknowledgements last went out

    std::vector<std::string_view> parts; // the envelopes of one frame
    EnvelopeBatch decoded;               // this round's, to accept under one lock
    std::vector<bool> accepted;
    std::uint64_t rejected = 0; // this round's
    std::string lastRejection;

    void reject(std::string why)
    {
        ++rejected;
        lastRejection = std::move(why);
    }
};

void TelemetryReceiver::run(std::string bindEndpoint, std::promise<QString> *ready)
{
    RouterState st;
    const QString error = openSockets(st, bindEndpoint);
    ready->set_value(error);
    if (!error.isEmpty())
        return;

    st.items[0] = {st.socket.handle(), 0, ZMQ_POLLIN, 0};
    st.items[1] = {nullptr, m_wake, ZMQ_POLLIN, 0};
    st.items[2] = {st.zap ? st.zap->handle() : nullptr, 0, ZMQ_POLLIN, 0};
    st.itemCount = st.zap ? 3 : 2;
    while (!m_stop.load()) {
        if (!waitForWork(st))
            continue;
        // Take everything available before notifying, so the owner sees one batch; decode outside
        // the lock, then accept what was decoded under one lock.
        readRound(st);
        const std::map<quint32, quint64> resends = acceptRound(st);
        askForResends(st, resends);
        if (sendDueAcks(st) && m_notify)
            m_notify();
        sendBusyAcks(st);
    }
    st.socket.close();
}

// Sets up the ROUTER socket (and, with CURVE, the ZAP handler) and binds it; "" or the reason.
QString TelemetryReceiver::openSockets(RouterState &st, const std::string &bindEndpoint)
{
    // Per connection: while this receiver holds back, at most this many messages a rank wait here;
    // the rest wait in the rank's own link (bounded memory here at any world size).
    // Messages queued per connection while reading is held back (backpressure): ZeroMQ buffers up
    // to this many per peer, so the total is bounded by the world, not per connection — 1000 for a
    // few ranks, 16 (of batches up to 64 KiB) for each of 2048 node relays at 16,384 ranks.
    st.socket.set(zmq::sockopt::rcvhwm, static_cast<int>(std::clamp<quint32>(262144 / std::max<quint32>(1, m_worldSize), 16, 1000)));
    st.socket.set(zmq::sockopt::sndhwm, 100000);
    st.socket.set(zmq::sockopt::linger, 0);
    st.socket.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(proto::kMaxFrameBytes));
    // CURVE: the ZAP handler's socket must exist before a peer can connect.
    if (m_curve.hasServer()) {
        st.allowedKey.resize(32);
        if (!zmq_z85_decode(reinterpret_cast<std::uint8_t *>(st.allowedKey.data()), m_curve.clientPublic.c_str()))
            return QStringLiteral("telemetry: the run's client key is not a Z85 key");
        try {
            st.zap.emplace(st.context, zmq::socket_type::rep);
            st.zap->set(zmq::sockopt::linger, 0);
            st.zap->bind("inproc://zeromq.zap.01");
            st.socket.set(zmq::sockopt::curve_server, 1);
            st.socket.set(zmq::sockopt::curve_secretkey, m_curve.serverSecret);
            st.socket.set(zmq::sockopt::zap_domain, "trellis");
        } catch (const zmq::error_t &e) {
            return QStringLiteral("telemetry: cannot set up CURVE (%1)").arg(QString::fromUtf8(e.what()));
        }
    }
    try {
        st.socket.bind(bindEndpoint);
        m_endpoint = st.socket.get(zmq::sockopt::last_endpoint);
    } catch (const zmq::error_t &e) {
        return QStringLiteral("telemetry: cannot bind %1 (%2)").arg(QString::fromStdString(bindEndpoint), QString::fromUtf8(e.what()));
    }
    return QString();
}

// Waits for messages, acknowledgements to send or handshakes to answer (or, held back, a little);
// false when the poll failed.
bool TelemetryReceiver::waitForWork(RouterState &st)
{
    bool full = false;
    {
        std::lock_guard lock(m_mutex);
        full = m_inbox.size() >= kMaxInbox;
    }
    if (full || (m_overloaded && m_overloaded())) {
        // Held back: acknowledgements still go out below, nothing more comes in.
        m_throttledAtMs = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
        st.items[0].revents = 0;
        st.items[2].revents = ZMQ_POLLIN; // still answer handshakes (answerZap does not wait)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } else {
        try {
            // Idle, the thread wakes ten times a second, or when acknowledgements are due: on a
            // machine whose cores the ranks fill, each wake-up is taken from them.
            zmq::poll(st.items, st.itemCount, std::chrono::milliseconds(100));
        } catch (const zmq::error_t &) {
            return false;
        }
    }
    if ((st.items[0].revents & ZMQ_POLLIN) && st.drained) {
        // Messages after a quiet spell are the start of a burst (the ranks end a step within
        // a millisecond of each other): let the burst arrive and take it in one round, one
        // wake-up here and in the owner instead of one per rank. Under load the socket is never
        // drained and nothing waits.
        std::this_thread::sleep_for(kGather);
    }
    if (st.items[1].revents & ZMQ_POLLIN) {
        std::uint64_t signalled = 0;
        (void)::read(m_wake, &signalled, sizeof signalled);
    }
    if (st.zap && (st.items[2].revents & ZMQ_POLLIN))
        answerZap(st);
    return true;
}

// A connection's key checked (zap_handler.h): a refused one counted and its address kept.
void TelemetryReceiver::answerZap(RouterState &st)
{
    proto::answerZapRequests(*st.zap, st.allowedKey, [this](const std::string &address) {
        std::lock_guard lock(m_mutex);
        ++m_stats.refused;
        ++m_stats.rejected;
        m_stats.lastRejection = QStringLiteral("a connection from %1 with an unknown key was refused").arg(QString::fromStdString(address));
    });
}

// Reads what the socket has (up to 10000 messages) into st.decoded, counting what is rejected.
void TelemetryReceiver::readRound(RouterState &st)
{
    st.decoded.clear();
    st.rejected = 0;
    st.lastRejection.clear();
    st.drained = (st.items[0].revents & ZMQ_POLLIN) == 0;
    for (int i = 0; (st.items[0].revents & ZMQ_POLLIN) && i < 10000; ++i) {
        zmq::message_t identity, message;
        zmq::recv_result_t got;
        try {
            got = st.socket.recv(identity, zmq::recv_flags::dontwait);
            if (!got) {
                st.drained = true;
                break;
            }
            if (!identity.more())
                continue; // a routing id always comes with a body
            if (!st.socket.recv(message, zmq::recv_flags::none))
                break;
            const bool multipart = message.more(); // a multi-part body is not ours: drop it whole
            for (bool more = multipart; more;) {
                zmq::message_t rest;
                more = st.socket.recv(rest, zmq::recv_flags::none) && rest.more();
            }
            if (multipart) {
                st.reject("a multi-part message");
                continue;
            }
        } catch (const zmq::error_t &) {
            break;
        }
        decodeFrame(st, std::string_view(static_cast<const char *>(identity.data()), identity.size()),
                    std::string_view(static_cast<const char *>(message.data()), message.size()));
    }
}

// One frame's envelopes into st.decoded; the sender's routing id is remembered for each rank.
void TelemetryReceiver::decodeFrame(RouterState &st, std::string_view identity, std::string_view frame)
{
    const auto split = proto::splitFrame(frame, st.parts);
    if (!split.ok) {
        st.reject(split.error);
        return;
    }
    for (const std::string_view part : st.parts) {
        proto::Envelope *envelope = st.decoded.add();
        auto result = proto::decodeEnvelope(part, *envelope, m_worldSize);
        if (result.ok && !m_runId.empty() && envelope->run_id() != m_runId)
            result = {false, "run_id '" + envelope->run_id() + "' does not belong to this run"};
        if (!result.ok) {
            st.decoded.removeLast();
            st.reject(std::move(result.error));
            continue;
        }
        if (auto &known = st.peer[envelope->rank()]; known != identity)
            known.assign(identity);
    }
}

// Accepts the round's envelopes into the inbox under one lock; per rank, the first gap of the
// round (where a resend should start).
std::map<quint32, quint64> TelemetryReceiver::acceptRound(RouterState &st)
{
    std::map<quint32, quint64> resends;
    if (st.decoded.empty() && st.rejected == 0)
        return resends;
    std::lock_guard lock(m_mutex);
    m_stats.rejected += st.rejected;
    if (st.rejected > 0)
        m_stats.lastRejection = QString::fromStdString(st.lastRejection);
    st.accepted.assign(st.decoded.size(), false);
    for (std::size_t i = 0; i < st.decoded.size(); ++i) {
        quint64 resendFrom = 0;
        st.accepted[i] = acceptLocked(st.decoded[i], &resendFrom);
        if (!st.accepted[i] && resendFrom != ~0ull)
            resends.emplace(st.decoded[i].rank(), resendFrom); // the first gap of the round
    }
    m_inbox.appendSome(std::move(st.decoded), st.accepted); // the round's arenas go with what was accepted
    return resends;
}

// Gaps: ask once per 300 ms per rank for everything from the first missing message.
void TelemetryReceiver::askForResends(RouterState &st, const std::map<quint32, quint64> &resends)
{
    const auto now = Clock::now();
    for (const auto &[rank, from] : resends) {
        auto &asked = st.resendAskedAt[rank];
        if (now - asked < std::chrono::milliseconds(300))
            continue;
        asked = now;
        sendAck(st, rank, st.acked[rank], true, from);
    }
}

// Sends the acknowledgements that are due; true when the inbox holds something for the owner.
bool TelemetryReceiver::sendDueAcks(RouterState &st)
{
    std::map<quint32, quint64> acks;
    bool notify = false;
    {
        std::lock_guard lock(m_mutex);
        if (m_autoAck)
            for (const auto &[rank, next] : m_nextSeq)
                m_pendingAcks[rank] = std::max(m_pendingAcks[rank], next);
        acks.swap(m_pendingAcks);
        notify = !m_inbox.empty();
    }
    for (const auto &[rank, next] : acks)
        if (next > st.acked[rank] || !st.peer.count(rank)) {
            st.acked[rank] = next;
            sendAck(st, rank, next, false, 0);
        }
    return notify;
}

// Once a second while behind: every rank whose messages wait here unacknowledged (or, while reading
// is held back, every rank) hears that the supervisor is alive.
void TelemetryReceiver::sendBusyAcks(RouterState &st)
{
    const auto now = Clock::now();
    if (now - st.lastBusy < std::chrono::seconds(1))
        return;
    st.lastBusy = now;
    const qint64 sinceThrottled = msSinceThrottled();
    const bool heldBack = sinceThrottled >= 0 && sinceThrottled < 1000;
    std::map<quint32, quint64> received;
    {
        std::lock_guard lock(m_mutex);
        received = m_nextSeq;
    }
    for (const auto &[rank, identity] : st.peer) {
        const quint64 acked = st.acked[rank];
        const auto it = received.find(rank);
        if (heldBack || (it != received.end() && it->second > acked))
            sendAck(st, rank, acked, false, 0, true);
    }
}

void TelemetryReceiver::sendAck(RouterState &st, quint32 rank, quint64 next, bool resend, quint64 resendFrom, bool busy)
{
    const auto it = st.peer.find(rank);
    if (it == st.peer.end())
        return;
    proto::Ack ack;
    ack.set_run_id(m_runId);
    ack.set_rank(rank); // a connection carrying several ranks routes it by this
    ack.set_next_seq(next);
    ack.set_resend(resend);
    ack.set_resend_from(resendFrom);
    ack.set_busy(busy);
    try {
        st.socket.send(zmq::buffer(it->second), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
        st.socket.send(zmq::buffer(proto::encodeAck(ack)), zmq::send_flags::dontwait);
    } catch (const zmq::error_t &) {
    }
}

qint64 TelemetryReceiver::msSinceThrottled() const
{
    const qint64 at = m_throttledAtMs.load();
    if (at < 0)
        return -1;
    const qint64 now =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
    return now - at;
}

bool TelemetryReceiver::acceptLocked(const proto::Envelope &envelope, quint64 *resendFrom)
{
    *resendFrom = ~0ull;
    const quint32 rank = envelope.rank();
    quint64 &expected = m_nextSeq[rank];
    if (envelope.has_skip()) {
        // The rank holds nothing below next_seq any more: what is missing there is lost.
        if (envelope.skip().next_seq() > expected) {
            m_stats.lost += envelope.skip().next_seq() - expected;
            m_lost[rank] += envelope.skip().next_seq() - expected;
            expected = envelope.skip().next_seq();
        }
        return false;
    }
    const quint64 seq = envelope.seq();
    if (seq < expected) {
        ++m_stats.duplicates;
        return false;
    }
    if (seq > expected) {
        ++m_stats.outOfOrder;
        *resendFrom = expected;
        return false;
    }
    expected = seq + 1;
    ++m_stats.received;
    return true;
}

} // namespace trellis::launcher
