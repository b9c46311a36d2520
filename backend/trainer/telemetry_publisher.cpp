// See telemetry_publisher.h for the threading contract.
#include "trainer/telemetry_publisher.h"

#include "protocol/framing.h"
#include "trainer/comm/collective_tracker.h"

#include <zmq.hpp>

#include <chrono>

namespace trellis::trainer {

TelemetryPublisher::TelemetryPublisher(Options options) : m_options(std::move(options))
{
    if (enabled())
        m_thread = std::thread([this] { run(); });
}

TelemetryPublisher::~TelemetryPublisher()
{
    if (m_thread.joinable()) {
        m_stopping = true;
        m_wake.notify_all();
        m_thread.join();
    }
}

void TelemetryPublisher::stamp(proto::Envelope &e)
{
    e.set_run_id(m_options.runId);
    e.set_rank(static_cast<std::uint32_t>(m_options.rank));
    e.set_seq(m_seq++);
    e.set_sent_ns(proto::nowNs());
    e.set_protocol_version(proto::kProtocolVersion);
    e.set_dropped(m_dropped.load());
}

void TelemetryPublisher::publish(proto::Envelope envelope)
{
    if (!enabled())
        return;
    {
        std::lock_guard lock(m_mutex);
        if (m_stopping || m_queue.size() >= m_options.queueCapacity) {
            ++m_dropped; // no sequence number is spent: the count travels in later envelopes
            return;
        }
        stamp(envelope);
        m_goodbyeQueued = m_goodbyeQueued || envelope.has_goodbye();
        m_queue.emplace_back(envelope.seq(), proto::encodeEnvelope(envelope));
    }
    m_wake.notify_one();
}

void TelemetryPublisher::setProgress(std::uint64_t step, const char *phase)
{
    m_step.store(step, std::memory_order_relaxed);
    m_phase.store(phase, std::memory_order_relaxed);
}

void TelemetryPublisher::close(int exitCode, const std::string &reason, std::uint64_t stepsDone)
{
    if (!enabled())
        return;
    proto::Envelope e;
    auto *bye = e.mutable_goodbye();
    bye->set_exit_code(exitCode);
    bye->set_reason(reason);
    bye->set_steps_done(stepsDone);
    publish(std::move(e));
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable())
        m_thread.join();
}

void TelemetryPublisher::run()
{
    using Clock = std::chrono::steady_clock;
    zmq::context_t context(1);
    zmq::socket_t socket(context, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::sndhwm, 10000);
    socket.set(zmq::sockopt::rcvhwm, 10000);
    socket.set(zmq::sockopt::linger, 0); // delivery is judged by acknowledgements, not by the socket
    socket.set(zmq::sockopt::immediate, 0);
    socket.set(zmq::sockopt::reconnect_ivl, 100);
    socket.set(zmq::sockopt::reconnect_ivl_max, 1000);
    socket.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(1024));
    try {
        socket.connect(m_options.endpoint);
    } catch (const zmq::error_t &) {
        // A bad endpoint must not stop training: everything published is counted as dropped.
        std::unique_lock lock(m_mutex);
        while (!m_stopping) {
            m_dropped += m_queue.size();
            m_queue.clear();
            m_wake.wait_for(lock, std::chrono::milliseconds(m_options.heartbeatMs));
        }
        m_dropped += m_queue.size();
        return;
    }

    // Every message not yet acknowledged, oldest first; held[0, sent) went to the socket already.
    std::deque<std::pair<std::uint64_t, std::string>> held;
    std::size_t sent = 0;
    std::uint64_t nextSeq = 0; // the seq after the newest message taken from the queue
    auto lastAckProgress = Clock::now();
    auto lastResend = Clock::time_point{};
    std::uint64_t lastResendFrom = ~0ull;

    auto trySend = [&](const std::string &bytes) {
        try {
            return socket.send(zmq::buffer(bytes), zmq::send_flags::dontwait).has_value();
        } catch (const zmq::error_t &) {
            return false;
        }
    };
    // Sends everything held from `from` on again, after a Skip naming the oldest message still held.
    auto resendFrom = [&](std::uint64_t from) {
        proto::Envelope skip;
        skip.set_run_id(m_options.runId);
        skip.set_rank(static_cast<std::uint32_t>(m_options.rank));
        skip.set_protocol_version(proto::kProtocolVersion);
        skip.set_sent_ns(proto::nowNs());
        skip.set_dropped(m_dropped.load());
        skip.mutable_skip()->set_next_seq(held.empty() ? nextSeq : held.front().first);
        trySend(proto::encodeEnvelope(skip));
        std::size_t index = 0;
        while (index < held.size() && held[index].first < from)
            ++index;
        if (index < sent)
            m_resent += sent - index;
        sent = std::min(sent, index);
        lastResend = Clock::now();
        lastResendFrom = from;
    };
    auto readAcks = [&] {
        for (int i = 0; i < 1000; ++i) {
            zmq::message_t message;
            zmq::recv_result_t got;
            try {
                got = socket.recv(message, zmq::recv_flags::dontwait);
            } catch (const zmq::error_t &) {
                return;
            }
            if (!got)
                return;
            proto::Ack ack;
            if (!proto::decodeAck(std::string_view(static_cast<const char *>(message.data()), message.size()), ack,
                                  m_options.runId)
                     .ok)
                continue; // not ours: ignore
            std::size_t acked = 0;
            while (acked < held.size() && held[acked].first < ack.next_seq())
                ++acked;
            if (acked > 0) {
                held.erase(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(acked));
                sent = sent > acked ? sent - acked : 0;
                lastAckProgress = Clock::now();
            }
            if (ack.resend()) {
                // One resend per gap: the same request repeated within 300 ms is the same gap.
                const bool repeated = ack.resend_from() == lastResendFrom && Clock::now() - lastResend < std::chrono::milliseconds(300);
                if (!repeated)
                    resendFrom(ack.resend_from());
            }
        }
    };

    auto nextHeartbeat = Clock::now();
    const auto interval = std::chrono::milliseconds(m_options.heartbeatMs);
    Clock::time_point closeDeadline{};

    for (;;) {
        std::deque<std::pair<std::uint64_t, std::string>> batch;
        bool stopping = false;
        {
            std::unique_lock lock(m_mutex);
            // Wake for new messages, the next heartbeat, and every 20 ms to read acknowledgements
            // while anything is held.
            auto wakeAt = nextHeartbeat;
            if (!held.empty())
                wakeAt = std::min(wakeAt, Clock::now() + std::chrono::milliseconds(20));
            m_wake.wait_until(lock, wakeAt, [&] { return !m_queue.empty() || (m_stopping && held.empty()); });
            batch.swap(m_queue);
            stopping = m_stopping;
            if (Clock::now() >= nextHeartbeat && !stopping && !m_goodbyeQueued) {
                proto::Envelope hb;
                auto *h = hb.mutable_heartbeat();
                h->set_step(m_step.load(std::memory_order_relaxed));
                h->set_phase(m_phase.load(std::memory_order_relaxed));
                const CollectiveActivity c = CollectiveTracker::current();
                if (c.active) {
                    h->set_collective(c.group + " " + c.op);
                    h->set_collective_since_ns(c.sinceNs);
                    h->set_collective_group(c.group);
                    h->set_collective_op(c.op);
                    h->set_collective_call(c.call);
                    h->set_collective_bytes(c.bytes);
                }
                stamp(hb);
                batch.emplace_back(hb.seq(), proto::encodeEnvelope(hb));
                nextHeartbeat = Clock::now() + interval;
            }
        }
        for (auto &item : batch) {
            nextSeq = item.first + 1;
            if (held.size() >= m_options.spoolCapacity) {
                held.pop_front(); // keep the newest: the latest state (and Goodbye) matter most
                sent = sent > 0 ? sent - 1 : 0;
                ++m_dropped;
            }
            held.push_back(std::move(item));
        }
        readAcks();
        // Acknowledgements stalled (the supervisor restarted, or a message was lost on a dead
        // connection): send again what is held.
        const auto now = Clock::now();
        if (!held.empty() && sent == held.size() && now - lastAckProgress > std::chrono::milliseconds(m_options.resendAfterMs) &&
            now - lastResend > std::chrono::milliseconds(m_options.resendAfterMs))
            resendFrom(0);
        while (sent < held.size() && trySend(held[sent].second)) {
            ++sent;
            ++m_sent;
        }
        m_held.store(held.size(), std::memory_order_relaxed);

        if (stopping) {
            if (closeDeadline == Clock::time_point{})
                closeDeadline = Clock::now() + std::chrono::milliseconds(m_options.closeTimeoutMs);
            std::lock_guard lock(m_mutex);
            if ((held.empty() && m_queue.empty()) || Clock::now() >= closeDeadline) {
                m_dropped += held.size() + m_queue.size();
                break;
            }
        }
    }
    socket.close();
}

} // namespace trellis::trainer
