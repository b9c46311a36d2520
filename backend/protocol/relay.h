// A node's telemetry relay (docs/protocol.md, "Relays"): one process per node that the node's ranks
// connect to over ipc:// in a node-local 0700 folder, and that holds one connection to the
// supervisor for all of them. It forwards what the ranks send, re-batched into large frames, and
// routes each acknowledgement back to its rank by Ack.rank. It acknowledges nothing itself: a rank
// keeps every message until the supervisor's acknowledgement reaches it, so a relay that dies or
// restarts, like a supervisor that does, loses nothing (the ranks send again what is not
// acknowledged, the receiver drops what it already has). It refuses, counts and names: a rank not
// on its node, a rank that another live connection already speaks for, another run's frames and
// malformed frames.
// Threading: one thread owns a Relay; nothing in poll() blocks longer than its timeout.
#pragma once

#include "backend/protocol/curve_keys.h"
#include "backend/protocol/telemetry.pb.h"

#include <zmq.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace trellis::proto {

struct RelayOptions {
    std::string runId;
    std::string listen;   // where the node's ranks connect (ipc://FOLDER/relay.sock)
    std::string upstream; // the supervisor's receiver
    CurveKeys curve;      // client keys toward the supervisor (another host), else a plain connection
    std::vector<std::uint32_t> ranks; // the world ranks of this node: any other rank is refused
    int idleExitMs = 30000;    // no rank heard from for this long (the job is gone): the relay ends
    int claimTimeoutMs = 3000; // a rank's connection silent this long may be taken over (a rank restarted)
};

struct RelayStats {
    std::uint64_t framesIn = 0;    // frames from ranks
    std::uint64_t envelopesUp = 0; // envelopes forwarded
    std::uint64_t framesUp = 0;    // frames sent to the supervisor
    std::uint64_t acksDown = 0;    // acknowledgements delivered to a rank's connection
    std::uint64_t acksUnrouted = 0; // for a rank with no connection here, or unreadable
    std::uint64_t refused = 0;     // envelopes or frames refused
    std::map<std::string, std::uint64_t> refusedBy; // by kind: "not on this node", "claimed", "other run", "malformed"
    std::string lastRefusal;       // the last reason, whole
};

class Relay {
public:
    enum class State { Running, Finished, Idle };

    Relay(zmq::context_t &context, RelayOptions options);
    // Binds the ranks' side and connects to the supervisor: "" or why not.
    std::string open();
    // Waits up to timeoutMs for work; forwards frames up and acknowledgements down. Finished once
    // every rank of the node has said Goodbye and the supervisor acknowledged it; Idle when no rank
    // has been heard from for idleExitMs (while the supervisor takes what is sent).
    State poll(int timeoutMs);
    const RelayStats &stats() const { return m_stats; }
    // Called with each refusal's reason as it happens (a log, rate-limited by the caller).
    void setOnRefusal(std::function<void(const std::string &)> f) { m_onRefusal = std::move(f); }

private:
    using Clock = std::chrono::steady_clock;
    struct Claim {
        std::string identity;
        Clock::time_point last;
    };
    void readRanks();
    void fromRank(std::string_view identity, std::string_view frame);
    bool admit(std::string_view identity, const Envelope &e);
    void readSupervisor();
    void appendUp(std::string_view envelope);
    void flushUp();
    void refuse(const std::string &kind, const std::string &reason);

    RelayOptions m_options;
    zmq::socket_t m_ranks;    // ROUTER, bound on the node
    zmq::socket_t m_upstream; // DEALER to the supervisor
    std::set<std::uint32_t> m_onNode;
    std::map<std::uint32_t, Claim> m_claims;
    std::map<std::uint32_t, std::uint64_t> m_goodbyeSeq; // rank -> its Goodbye's sequence number
    std::set<std::uint32_t> m_finished;                  // ranks whose Goodbye was acknowledged
    std::string m_frame;               // the batch being filled
    std::deque<std::string> m_pending; // batches the supervisor's connection did not take yet
    Clock::time_point m_lastFromRank = Clock::now();
    std::vector<std::string_view> m_parts;
    Envelope m_envelope;
    RelayStats m_stats;
    std::function<void(const std::string &)> m_onRefusal;
};

// The node-local folder of a run's relay: $TMPDIR (else /tmp)/trellis-UID/RUN-NODE, created 0700,
// refused when it or its parent is not this user's own or is open to others (another user could
// then connect). A run id that is long or has other characters than [A-Za-z0-9._-] is replaced by
// a hash, so that the socket's path stays under the 107 bytes an ipc:// path may have. "" and
// `error` when no usable folder can be had.
std::string relayFolder(const std::string &runId, const std::string &nodeKey, std::string &error);
inline std::string relaySocketPath(const std::string &folder) { return folder + "/relay.sock"; }
inline std::string relayEndpoint(const std::string &folder) { return "ipc://" + relaySocketPath(folder); }
// The folder's lock, held by its relay for the relay's life: a descriptor (kept open), -1 when
// another process holds it, -2 when the lock file cannot be opened; `waitMs` as lockFile's.
int lockRelayFolder(const std::string &folder, int waitMs = 0);
// Whether a relay holds the folder's lock now.
bool relayRunning(const std::string &folder);
// Removes the folders of relays long gone beside `folder` (in the same trellis-UID folder): this
// user's, no relay holding their lock, relay.log untouched for `olderThanS` seconds, nothing in
// them but a relay's files (relay.log, relay.pid, relay.lock, relay.sock). A relay calls it as it
// starts, so that a node's /tmp keeps the logs of the last day's runs and not every run's. Returns
// how many it removed.
int sweepOldRelayFolders(const std::string &folder, std::int64_t olderThanS);

} // namespace trellis::proto
