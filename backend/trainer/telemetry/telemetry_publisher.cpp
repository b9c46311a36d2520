// See telemetry_publisher.h for the threading contract.
#include "backend/trainer/telemetry/telemetry_publisher.h"

#include "backend/protocol/framing.h"
#include "backend/protocol/rank_link.h"
#include "backend/trainer/comm/collective_tracker.h"

#include <zmq.hpp>

#include <pthread.h>

#include <algorithm>
#include <cstdio>
#include <chrono>

namespace trellis::trainer {

TelemetryPublisher::TelemetryPublisher(Options options) : m_options(std::move(options))
{
    if (enabled())
        m_thread = std::thread([this] {
            pthread_setname_np(pthread_self(), "trellis-publish");
            run();
        });
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
    publish(std::span(&envelope, 1));
}

void TelemetryPublisher::publish(std::span<proto::Envelope> envelopes)
{
    if (!enabled() || envelopes.empty())
        return;
    {
        std::lock_guard lock(m_mutex);
        for (proto::Envelope &envelope : envelopes) {
            if (m_stopping || m_queue.size() >= m_options.queueCapacity) {
                ++m_dropped; // no sequence number is spent: the count travels in later envelopes
                continue;
            }
            if (envelope.has_hello() && !m_options.relayName.empty())
                envelope.mutable_hello()->set_relay(m_options.relayName);
            stamp(envelope);
            m_goodbyeQueued = m_goodbyeQueued || envelope.has_goodbye();
            m_queue.emplace_back(envelope.seq(), proto::encodeEnvelope(envelope));
        }
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

void TelemetryPublisher::checkRelay(zmq::context_t &context, proto::RankLink &link, bool &onRelay, int &starts)
{
    using Clock = std::chrono::steady_clock;
    const auto now = Clock::now();
    // Closing, the rank has closeTimeoutMs left to see its last messages acknowledged.
    const auto stall = std::chrono::milliseconds(m_stopping ? 500 : 2 * m_options.resendAfterMs);
    if (link.held() == 0 || now - link.lastAckProgress() < stall || now - m_lastRelayCheck < stall / 2)
        return;
    m_lastRelayCheck = now;
    if (m_options.relayRunning && m_options.relayRunning())
        return; // the relay is there: the supervisor is what is slow or away, as without one
    if (starts < kRelayStarts && m_options.startRelay && m_options.startRelay()) {
        ++starts;
        link.resendAll();
        std::fprintf(stderr, "trellis-trainer: rank %d: the node's telemetry relay was gone; started it again\n", m_options.rank);
        return;
    }
    if (link.reconnect(context, m_options.supervisor, m_options.curve)) {
        onRelay = false;
        std::fprintf(stderr, "trellis-trainer: rank %d: the node's telemetry relay is gone and does not start again; "
                             "this rank now sends to the supervisor directly\n", m_options.rank);
    }
}

void TelemetryPublisher::holdFor(std::chrono::milliseconds duration)
{
    std::lock_guard lock(m_mutex);
    m_heldUntil = std::chrono::steady_clock::now() + duration;
}

// A bad endpoint must not stop training: everything published is counted as dropped.
void TelemetryPublisher::dropUntilStopped()
{
    std::unique_lock lock(m_mutex);
    while (!m_stopping) {
        m_dropped += m_queue.size();
        m_queue.clear();
        m_wake.wait_for(lock, std::chrono::milliseconds(m_options.heartbeatMs));
    }
    m_dropped += m_queue.size();
}

// A heartbeat: where the rank is (step, phase) and the collective it waits in, if any; stamped
// with the next sequence number. Called with m_mutex held.
proto::Envelope TelemetryPublisher::heartbeat()
{
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
        for (int m : c.members)
            h->add_collective_members(static_cast<std::uint32_t>(m));
    }
    stamp(hb);
    return hb;
}

// The link's counters where the training thread reads them. What the link gave up (its spool
// full) counts as dropped, like a full queue; `linkDropped` is how much of it was counted before.
void TelemetryPublisher::publishCounts(const proto::RankLink &link, std::uint64_t &linkDropped)
{
    m_dropped += link.dropped() - linkDropped;
    linkDropped = link.dropped();
    m_sent.store(link.sent(), std::memory_order_relaxed);
    m_resent.store(link.resent(), std::memory_order_relaxed);
    m_held.store(link.held(), std::memory_order_relaxed);
}

void TelemetryPublisher::run()
{
    using Clock = std::chrono::steady_clock;
    zmq::context_t context(1);
    const bool relay = !m_options.supervisor.empty();
    proto::RankLink link(context, {m_options.endpoint, m_options.runId, static_cast<std::uint32_t>(m_options.rank),
                                   m_options.spoolCapacity, m_options.resendAfterMs, relay ? proto::CurveKeys{} : m_options.curve});
    bool onRelay = relay;
    int relayStarts = 0;
    if (!link.connected()) {
        dropUntilStopped();
        return;
    }
    auto nextHeartbeat = Clock::now();
    const auto interval = std::chrono::milliseconds(m_options.heartbeatMs);
    // A heartbeat only proves the rank alive and says where it is: it is sent at a tick only when
    // nothing else was sent since the last one (a step report proves as much; a rank that waits
    // in a collective or computes a long step sends nothing else, and its heartbeats go on). At
    // 16,384 ranks stepping at 2 Hz a quarter of the messages are saved; the longest silence of
    // a live rank is under two intervals, inside the three that make it silent (docs/protocol.md).
    bool sentSinceBeat = false;
    Clock::time_point closeDeadline{};
    std::uint64_t linkDropped = 0;

    for (;;) {
        std::deque<std::pair<std::uint64_t, std::string>> batch;
        bool stopping = false;
        {
            std::unique_lock lock(m_mutex);
            if (!m_stopping && Clock::now() < m_heldUntil) {
                m_wake.wait_until(lock, m_heldUntil, [&] { return m_stopping.load(); });
                continue;
            }
            // Wake for new messages and the next heartbeat. Acknowledgements are read on those
            // wake-ups: they only free memory, and every wake-up is CPU taken from training on a
            // busy node. While anything is held the link is also pumped at half the resend delay
            // (a stalled supervisor is noticed in time whatever the heartbeat interval) and, once
            // closing, every 100 ms to see the last acknowledgements.
            auto wakeAt = nextHeartbeat;
            if (link.held() > 0)
                wakeAt = std::min(wakeAt, Clock::now() + std::chrono::milliseconds(m_stopping ? 100 : std::max(50, m_options.resendAfterMs / 2)));
            m_wake.wait_until(lock, wakeAt, [&] { return !m_queue.empty() || (m_stopping && link.held() == 0); });
            batch.swap(m_queue);
            stopping = m_stopping;
            const bool tick = Clock::now() >= nextHeartbeat && !stopping && !m_goodbyeQueued;
            if (tick)
                nextHeartbeat = Clock::now() + interval;
            // What this wake-up sends counts for the next tick.
            const bool quiet = !sentSinceBeat;
            sentSinceBeat = (sentSinceBeat && !tick) || !batch.empty();
            if (tick && quiet) {
                proto::Envelope hb = heartbeat();
                batch.emplace_back(hb.seq(), proto::encodeEnvelope(hb));
            }
        }
        for (auto &item : batch)
            link.push(item.first, std::move(item.second));
        link.pump();
        if (onRelay)
            checkRelay(context, link, onRelay, relayStarts);
        publishCounts(link, linkDropped);

        if (stopping) {
            if (closeDeadline == Clock::time_point{})
                closeDeadline = Clock::now() + std::chrono::milliseconds(m_options.closeTimeoutMs);
            std::lock_guard lock(m_mutex);
            if ((link.held() == 0 && m_queue.empty()) || Clock::now() >= closeDeadline) {
                m_dropped += link.held() + m_queue.size();
                break;
            }
        }
    }
}

} // namespace trellis::trainer
