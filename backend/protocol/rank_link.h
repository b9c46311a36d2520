// The rank's side of the telemetry protocol on one connection (telemetry.proto): a DEALER socket
// to the supervisor, what waits sent in Batch frames, every message held until an Ack covers it, a Skip and a resend when the
// receiver asks (a gap) or when acknowledgements stall (after resendAfterMs, then twice as long each
// time while they stay stalled, at most kMaxStallBackoffMs: a supervisor that is only behind is not
// flooded with copies of what it has yet to read), duplicates left for the receiver to drop.
// Used by the trainer's publisher (one link) and by the simulator (a link per simulated
// rank, all on one thread). Threading: one thread uses a link; nothing here blocks.
#pragma once

#include "backend/protocol/curve_keys.h"
#include "backend/protocol/telemetry.pb.h"

#include <zmq.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace trellis::proto {

// Sets up a telemetry DEALER (high-water marks, reconnect, no linger, CURVE client keys when
// given) and connects it; false when the endpoint or the keys are unusable.
bool connectTelemetryDealer(zmq::socket_t &socket, const std::string &endpoint, const CurveKeys &curve);

class RankLink {
public:
    struct Options {
        std::string endpoint;
        std::string runId;
        std::uint32_t rank = 0;
        std::size_t spoolCapacity = 65536;
        int resendAfterMs = 2000;
        CurveKeys curve; // client keys (hasClient()): connect as a CURVE client; else plain
    };

    RankLink(zmq::context_t &context, Options options);
    // A rank on a connection it shares with others (NodeLink): sends through `shared`, and is
    // handed the acknowledgements for it (accept()) instead of reading them itself.
    RankLink(zmq::socket_t &shared, Options options);
    bool connected() const { return m_connected; } // false: a bad endpoint (everything is dropped)

    // A stamped, encoded message of sequence number `seq` (consecutive per rank). When the spool
    // is full the oldest message is given up (counted in dropped()).
    void push(std::uint64_t seq, std::string bytes);
    // Reads acknowledgements, resends what they ask for (or what stalled), sends what is unsent.
    void pump();
    // One acknowledgement for this rank (already decoded and checked for the run).
    void accept(const Ack &ack);
    // Its own connection moved to `endpoint` (a node's relay gone: straight to the supervisor):
    // everything held is sent again there, after a Skip. False (nothing changed) when unusable.
    bool reconnect(zmq::context_t &context, const std::string &endpoint, const CurveKeys &curve);
    // Everything held sent again now, after a Skip (a relay started again in place of a dead one).
    void resendAll() { resendFrom(0); }
    // When an acknowledgement last took something off the spool (or the link was made).
    std::chrono::steady_clock::time_point lastAckProgress() const { return m_lastAckProgress; }

    std::size_t held() const { return m_held.size(); }
    // The oldest sequence number not acknowledged yet (the next one to push when nothing is held).
    std::uint64_t unacknowledgedFrom() const { return m_held.empty() ? m_nextSeq : m_held.front().first; }
    std::uint64_t dropped() const { return m_dropped; }
    std::uint64_t sent() const { return m_sent; }
    std::uint64_t resent() const { return m_resent; }
    void addDropped(std::uint64_t n) { m_dropped += n; } // given up elsewhere (a full queue before the link)

private:
    using Clock = std::chrono::steady_clock;
    zmq::socket_t &socket() { return m_shared ? *m_shared : m_socket; }
    bool trySend(const std::string &bytes);
    void resendFrom(std::uint64_t from);
    void readAcks();

    Options m_options;
    zmq::socket_t m_socket;          // its own connection (unused when shared)
    zmq::socket_t *m_shared = nullptr;
    bool m_connected = false;
    std::deque<std::pair<std::uint64_t, std::string>> m_held; // oldest first; [0, m_unsent) went out
    std::size_t m_sentIndex = 0;
    std::uint64_t m_nextSeq = 0;
    std::uint64_t m_dropped = 0, m_sent = 0, m_resent = 0;
    Clock::time_point m_lastAckProgress = Clock::now();
    Clock::time_point m_lastResend{};
    std::uint64_t m_lastResendFrom = ~0ull;
    int m_stallBackoffMs = 0; // the wait before the next resend on a stall: doubles while it lasts
    std::string m_frame; // the batch being sent (kept: its buffer is reused)
    static constexpr std::size_t kBatchBytes = 64 * 1024;

public:
    static constexpr int kMaxStallBackoffMs = 30000;
};

// Several ranks on one connection, as a node's relay presents them to the supervisor (and as the
// simulator does, which cannot hold a socket per rank at 16,384 ranks): one DEALER socket, a
// RankLink per rank spooling, batching and resending on its own, acknowledgements routed to their
// rank by Ack.rank. Threading: one thread uses it; nothing here blocks.
class NodeLink {
public:
    NodeLink(zmq::context_t &context, const RankLink::Options &common, const std::vector<std::uint32_t> &ranks);
    bool connected() const { return m_connected; }
    RankLink &link(std::uint32_t rank) { return *m_links[m_index.at(rank)]; }
    void pump(); // acknowledgements to their ranks, then every rank's link
    std::size_t held() const;

private:
    std::string m_runId;
    zmq::socket_t m_socket;
    bool m_connected = false;
    std::vector<std::unique_ptr<RankLink>> m_links;
    std::map<std::uint32_t, std::size_t> m_index;
};

} // namespace trellis::proto
