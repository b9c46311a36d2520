// See rank_link.h.
#include "backend/protocol/rank_link.h"

#include "backend/protocol/framing.h"

#include <algorithm>

namespace trellis::proto {

bool connectTelemetryDealer(zmq::socket_t &socket, const std::string &endpoint, const CurveKeys &curve)
{
    socket.set(zmq::sockopt::sndhwm, 10000);
    socket.set(zmq::sockopt::rcvhwm, 10000);
    socket.set(zmq::sockopt::linger, 0); // delivery is judged by acknowledgements, not by the socket
    socket.set(zmq::sockopt::immediate, 0);
    socket.set(zmq::sockopt::reconnect_ivl, 100);
    socket.set(zmq::sockopt::reconnect_ivl_max, 1000);
    socket.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(1024));
    try {
        if (curve.hasClient()) {
            socket.set(zmq::sockopt::curve_serverkey, curve.serverPublic);
            socket.set(zmq::sockopt::curve_publickey, curve.clientPublic);
            socket.set(zmq::sockopt::curve_secretkey, curve.clientSecret);
        }
        socket.connect(endpoint);
        return true;
    } catch (const zmq::error_t &) {
        return false;
    }
}

RankLink::RankLink(zmq::context_t &context, Options options)
    : m_options(std::move(options)), m_socket(context, zmq::socket_type::dealer)
{
    m_connected = connectTelemetryDealer(m_socket, m_options.endpoint, m_options.curve);
}

RankLink::RankLink(zmq::socket_t &shared, Options options) : m_options(std::move(options)), m_shared(&shared), m_connected(true) {}

bool RankLink::trySend(const std::string &bytes)
{
    try {
        return socket().send(zmq::buffer(bytes), zmq::send_flags::dontwait).has_value();
    } catch (const zmq::error_t &) {
        return false;
    }
}

void RankLink::push(std::uint64_t seq, std::string bytes)
{
    if (!m_connected) {
        ++m_dropped;
        return;
    }
    m_nextSeq = seq + 1;
    if (m_held.size() >= m_options.spoolCapacity) {
        m_held.pop_front(); // keep the newest: the latest state (and Goodbye) matter most
        m_sentIndex = m_sentIndex > 0 ? m_sentIndex - 1 : 0;
        ++m_dropped;
    }
    m_held.emplace_back(seq, std::move(bytes));
}

// Sends everything held from `from` on again, after a Skip naming the oldest message still held.
void RankLink::resendFrom(std::uint64_t from)
{
    Envelope skip;
    skip.set_run_id(m_options.runId);
    skip.set_rank(m_options.rank);
    skip.set_protocol_version(kProtocolVersion);
    skip.set_sent_ns(nowNs());
    skip.set_dropped(m_dropped);
    skip.mutable_skip()->set_next_seq(m_held.empty() ? m_nextSeq : m_held.front().first);
    trySend(encodeEnvelope(skip));
    std::size_t index = 0;
    while (index < m_held.size() && m_held[index].first < from)
        ++index;
    if (index < m_sentIndex)
        m_resent += m_sentIndex - index;
    m_sentIndex = std::min(m_sentIndex, index);
    m_lastResend = Clock::now();
    m_lastResendFrom = from;
}

void RankLink::readAcks()
{
    for (int i = 0; i < 1000; ++i) {
        zmq::message_t message;
        zmq::recv_result_t got;
        try {
            got = socket().recv(message, zmq::recv_flags::dontwait);
        } catch (const zmq::error_t &) {
            return;
        }
        if (!got)
            return;
        Ack ack;
        if (!decodeAck(std::string_view(static_cast<const char *>(message.data()), message.size()), ack, m_options.runId).ok)
            continue; // not ours: ignore
        accept(ack);
    }
}

void RankLink::accept(const Ack &ack)
{
    if (ack.busy())
        m_lastAckProgress = Clock::now(); // alive and behind: what is held is not lost, no resend yet
    {
        std::size_t acked = 0;
        while (acked < m_held.size() && m_held[acked].first < ack.next_seq())
            ++acked;
        if (acked > 0) {
            m_held.erase(m_held.begin(), m_held.begin() + static_cast<std::ptrdiff_t>(acked));
            m_sentIndex = m_sentIndex > acked ? m_sentIndex - acked : 0;
            m_lastAckProgress = Clock::now();
            m_stallBackoffMs = m_options.resendAfterMs;
        }
        if (ack.resend()) {
            // One resend per gap: the same request repeated within 300 ms is the same gap.
            const bool repeated = ack.resend_from() == m_lastResendFrom && Clock::now() - m_lastResend < std::chrono::milliseconds(300);
            if (!repeated)
                resendFrom(ack.resend_from());
        }
    }
}

bool RankLink::reconnect(zmq::context_t &context, const std::string &endpoint, const CurveKeys &curve)
{
    if (m_shared)
        return false;
    zmq::socket_t socket(context, zmq::socket_type::dealer);
    if (!connectTelemetryDealer(socket, endpoint, curve))
        return false;
    m_socket = std::move(socket);
    m_options.endpoint = endpoint;
    m_options.curve = curve;
    m_connected = true;
    resendFrom(0); // the receiver drops what it already has
    m_lastAckProgress = Clock::now();
    return true;
}

void RankLink::pump()
{
    if (!m_connected)
        return;
    if (!m_shared) // a shared connection's acknowledgements are read by its NodeLink
        readAcks();
    // Acknowledgements stalled (the supervisor restarted, or a message was lost on a dead
    // connection): send again what is held — and, while they stay stalled (a supervisor that is
    // behind and reads nothing meanwhile), again only after twice as long each time.
    const auto now = Clock::now();
    if (m_stallBackoffMs <= 0)
        m_stallBackoffMs = m_options.resendAfterMs;
    const auto stall = std::chrono::milliseconds(m_options.resendAfterMs);
    if (!m_held.empty() && m_sentIndex == m_held.size() && now - m_lastAckProgress > stall &&
        now - m_lastResend > std::chrono::milliseconds(m_stallBackoffMs)) {
        resendFrom(0);
        m_stallBackoffMs = std::min(2 * m_stallBackoffMs, kMaxStallBackoffMs);
    }
    // What waits goes out in batches (one ZeroMQ message each, at most kBatchBytes): under load a
    // link sends a few large messages instead of many small ones.
    while (m_sentIndex < m_held.size()) {
        m_frame.clear();
        std::size_t n = 0;
        for (std::size_t i = m_sentIndex; i < m_held.size(); ++i, ++n) {
            if (n > 0 && m_frame.size() + m_held[i].second.size() + 12 > kBatchBytes)
                break;
            appendToBatch(m_frame, m_held[i].second);
        }
        if (!trySend(m_frame))
            break;
        m_sentIndex += n;
        m_sent += n;
    }
}

NodeLink::NodeLink(zmq::context_t &context, const RankLink::Options &common, const std::vector<std::uint32_t> &ranks)
    : m_runId(common.runId), m_socket(context, zmq::socket_type::dealer)
{
    m_connected = connectTelemetryDealer(m_socket, common.endpoint, common.curve);
    for (std::uint32_t rank : ranks) {
        RankLink::Options o = common;
        o.rank = rank;
        m_index[rank] = m_links.size();
        m_links.push_back(std::make_unique<RankLink>(m_socket, o));
    }
}

void NodeLink::pump()
{
    if (!m_connected)
        return;
    for (int i = 0; i < 10000; ++i) {
        zmq::message_t message;
        zmq::recv_result_t got;
        try {
            got = m_socket.recv(message, zmq::recv_flags::dontwait);
        } catch (const zmq::error_t &) {
            break;
        }
        if (!got)
            break;
        Ack ack;
        if (!decodeAck(std::string_view(static_cast<const char *>(message.data()), message.size()), ack, m_runId).ok || !ack.has_rank())
            continue; // not ours, or from a receiver that does not say the rank: the ranks resend on a stall
        if (const auto it = m_index.find(ack.rank()); it != m_index.end())
            m_links[it->second]->accept(ack);
    }
    for (auto &l : m_links)
        l->pump();
}

std::size_t NodeLink::held() const
{
    std::size_t n = 0;
    for (const auto &l : m_links)
        n += l->held();
    return n;
}

} // namespace trellis::proto
