// Per-rank telemetry sender. The training thread hands Envelopes to publish(), which only takes a
// short lock and appends to a bounded queue: it never waits for the network. One sender thread
// owns the ZeroMQ DEALER socket (created, used and closed there), sends queued messages without
// blocking and keeps every message in a bounded spool until the supervisor acknowledges it
// (protocol Ack): on a gap the receiver reports, or when acknowledgements stall, it sends again
// what is not acknowledged, so a supervisor that restarts loses nothing. It also emits a Heartbeat
// every heartbeat interval from the training thread's published step/phase. Messages that could
// be neither queued nor kept are counted; the count travels in every later Envelope.
#pragma once

#include "backend/protocol/curve_keys.h"
#include "backend/protocol/telemetry.pb.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <thread>

namespace zmq {
class context_t;
}
namespace trellis::proto {
class RankLink;
}

namespace trellis::trainer {

class TelemetryPublisher {
public:
    struct Options {
        std::string endpoint; // empty: telemetry off (publish() only counts)
        std::string runId;
        int rank = 0;
        int heartbeatMs = 500;
        std::size_t queueCapacity = 4096;
        std::size_t spoolCapacity = 65536;
        int closeTimeoutMs = 3000; // how long close() waits for what is queued to be acknowledged
        int resendAfterMs = 2000;  // no acknowledgement for this long: send again what is held
        proto::CurveKeys curve;    // client keys: connect as a CURVE client (the supervisor's)
        // Through a node's relay (backend/trainer/telemetry/node_relay.h): `endpoint` is the relay's, plain; when
        // acknowledgements stall and no relay runs, startRelay() starts one (at most kRelayStarts
        // times), after which the rank connects to `supervisor` itself (with `curve`).
        std::string supervisor;
        std::string relayName; // said in the Hello (protocol Hello.relay)
        std::function<bool()> relayRunning;
        std::function<bool()> startRelay;
    };
    static constexpr int kRelayStarts = 3;

    explicit TelemetryPublisher(Options options);
    ~TelemetryPublisher();
    TelemetryPublisher(const TelemetryPublisher &) = delete;
    TelemetryPublisher &operator=(const TelemetryPublisher &) = delete;

    // Thread-safe, non-blocking. Fills run_id, rank, seq, sent_ns, protocol_version, dropped.
    void publish(proto::Envelope envelope);
    // The same for several envelopes at once (a step's reports): one lock and one wake-up of the
    // sender thread, which sends them as one frame.
    void publish(std::span<proto::Envelope> envelopes);
    // Cheap state for heartbeats, set by the training thread.
    void setProgress(std::uint64_t step, const char *phase);
    // The sender thread sends nothing (no heartbeat either) for `duration`, as if kept off the
    // CPU; what is published meanwhile waits in the queue. For the injected stall fault.
    void holdFor(std::chrono::milliseconds duration);
    // Sends Goodbye, delivers what it can within closeTimeoutMs and stops the sender thread.
    void close(int exitCode, const std::string &reason, std::uint64_t stepsDone);

    std::uint64_t droppedCount() const { return m_dropped.load(); }
    std::uint64_t sentCount() const { return m_sent.load(); }
    std::uint64_t resentCount() const { return m_resent.load(); }
    std::uint64_t heldCount() const { return m_held.load(); } // sent or queued, not yet acknowledged
    bool enabled() const { return !m_options.endpoint.empty(); }

private:
    void run();
    void dropUntilStopped();
    proto::Envelope heartbeat();
    void publishCounts(const proto::RankLink &link, std::uint64_t &linkDropped);
    // A stalled relay: started again, or left for the supervisor (relay.h). `onRelay` false after.
    void checkRelay(zmq::context_t &context, proto::RankLink &link, bool &onRelay, int &starts);
    void stamp(proto::Envelope &envelope);

    Options m_options;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::pair<std::uint64_t, std::string>> m_queue; // (seq, encoded envelope), guarded by m_mutex
    std::uint64_t m_seq = 0;         // guarded by m_mutex
    bool m_goodbyeQueued = false;    // guarded by m_mutex: Goodbye is the last message a rank sends
    std::chrono::steady_clock::time_point m_heldUntil{}; // guarded by m_mutex: holdFor
    std::atomic<bool> m_stopping{false};
    std::atomic<std::uint64_t> m_dropped{0};
    std::atomic<std::uint64_t> m_sent{0};
    std::atomic<std::uint64_t> m_resent{0};
    std::atomic<std::uint64_t> m_held{0};
    std::atomic<std::uint64_t> m_step{0};
    std::atomic<const char *> m_phase{"init"};
    std::chrono::steady_clock::time_point m_lastRelayCheck{}; // the sender thread's
    std::thread m_thread;
};

} // namespace trellis::trainer
