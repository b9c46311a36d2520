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
            ++m_seq; // the sequence number is spent, so the receiver sees the gap
            ++m_dropped;
            return;
        }
        stamp(envelope);
        m_goodbyeQueued = m_goodbyeQueued || envelope.has_goodbye();
        m_queue.push_back(proto::encodeEnvelope(envelope));
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
    zmq::context_t context(1);
    zmq::socket_t socket(context, zmq::socket_type::push);
    socket.set(zmq::sockopt::sndhwm, 10000);
    socket.set(zmq::sockopt::linger, m_options.closeTimeoutMs);
    socket.set(zmq::sockopt::immediate, 0);
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

    std::deque<std::string> spool; // refused by the socket (HWM reached); retried first
    auto sendOne = [&](const std::string &bytes) {
        try {
            auto sent = socket.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
            if (sent) {
                ++m_sent;
                return true;
            }
        } catch (const zmq::error_t &) {
        }
        return false;
    };
    auto nextHeartbeat = std::chrono::steady_clock::now();
    const auto interval = std::chrono::milliseconds(m_options.heartbeatMs);
    std::chrono::steady_clock::time_point closeDeadline{};

    for (;;) {
        std::deque<std::string> batch;
        bool stopping = false;
        {
            std::unique_lock lock(m_mutex);
            // While something waits in the spool, retry it every 50 ms even if nothing new comes.
            auto wakeAt = nextHeartbeat;
            if (!spool.empty())
                wakeAt = std::min(wakeAt, std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
            m_wake.wait_until(lock, wakeAt, [&] { return !m_queue.empty() || m_stopping; });
            batch.swap(m_queue);
            stopping = m_stopping;
            if (std::chrono::steady_clock::now() >= nextHeartbeat && !stopping && !m_goodbyeQueued) {
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
                batch.push_back(proto::encodeEnvelope(hb));
                nextHeartbeat = std::chrono::steady_clock::now() + interval;
            }
        }
        // Older messages first, so the receiver sees them in order.
        while (!spool.empty() && sendOne(spool.front()))
            spool.pop_front();
        for (auto &bytes : batch) {
            if (spool.empty() && sendOne(bytes))
                continue;
            if (spool.size() >= m_options.spoolCapacity) {
                spool.pop_front(); // keep the newest: the latest state (and Goodbye) matter most
                ++m_dropped;
            }
            spool.push_back(std::move(bytes));
        }

        if (stopping) {
            if (closeDeadline == std::chrono::steady_clock::time_point{})
                closeDeadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(m_options.closeTimeoutMs);
            {
                std::lock_guard lock(m_mutex);
                if ((spool.empty() && m_queue.empty()) || std::chrono::steady_clock::now() >= closeDeadline) {
                    m_dropped += spool.size() + m_queue.size();
                    break;
                }
            }
            // The peer is slow or absent: retry the spool without spinning.
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    socket.close(); // linger delivers what the socket already accepted
}

} // namespace trellis::trainer
