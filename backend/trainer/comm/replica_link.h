// A rank's link to the other data-parallel replica groups of its run (fault_tolerance; issue #71):
// each group is its own job, and rank i of a group averages its gradients with rank i of every
// other group of the step's quorum through Gloo (TCP), a collective that a lost peer cannot hang.
// The quorum, Gloo's rendezvous and the commit of each step go through the run's lighthouse
// (launcher/supervisor/lighthouse.h; backend/protocol/lighthouse.proto).
//
// A step:  beginStep(committed)  the quorum for it (waits for the lighthouse); the cross-group
//                                communicator rebuilt only when the quorum's id changed
//          allreduceMean(...)    the sum over the quorum's groups, divided by their number
//          endStep(...)          this rank's vote; the lighthouse's verdict: commit, or drop (then
//                                the step's update must not be applied — train it again)
// A thread of the link's own beats every 200 ms on a socket of its own; when the lighthouse's
// answer names a newer quorum than the one a collective runs in (a group left), it aborts that
// collective (Gloo's abort of its pending sends and receives), which then fails at once instead of
// timing out. The all-reduce is a ring over Gloo's pairs on buffers the link holds: Gloo 0.5's own
// all-reduce waits on buffers of its own that nothing outside it can abort.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gloo {
class Context;
namespace transport {
class Device;
class UnboundBuffer;
} // namespace transport
} // namespace gloo

namespace trellis::trainer {

struct ReplicaLinkOptions {
    std::string endpoint;    // the lighthouse (tcp://HOST:PORT)
    int group = 0;           // this rank's replica group
    int rank = 0;            // its rank in the group
    std::string address = "127.0.0.1"; // where the other groups' ranks reach this one (Gloo listens there)
    std::chrono::milliseconds timeout{30000}; // a Gloo operation's own limit (an abort comes first)
    std::chrono::milliseconds beatEvery{200};
};

struct ReplicaQuorum {
    std::uint64_t id = 0;
    std::uint64_t step = 0;
    std::vector<int> groups;
    int position = -1;     // this group's place among them
    std::string refused;   // the lighthouse refused (why); nothing else set
    std::string error;     // the lighthouse could not be reached (why)
};

struct ReplicaVerdict {
    bool answered = false; // the lighthouse decided (else `why` says why there is no answer)
    bool commit = false;
    std::string why;
};

class ReplicaLink {
public:
    explicit ReplicaLink(ReplicaLinkOptions options);
    ~ReplicaLink();
    ReplicaLink(const ReplicaLink &) = delete;
    ReplicaLink &operator=(const ReplicaLink &) = delete;

    // Connects to the lighthouse and starts the beat. "" or why not.
    std::string start();
    // The quorum for the step after `committed` steps (waits for it).
    ReplicaQuorum beginStep(std::uint64_t committed);
    // data[0..n) summed over the quorum's groups and divided by their number, in place. false (and
    // `why`) when the collective failed or was aborted: vote not ok.
    bool allreduceMean(float *data, std::size_t n, std::string &why);
    // The same, summed only (no division).
    bool allreduceSum(float *data, std::size_t n, std::string &why);
    // This rank's vote on the step; the lighthouse's verdict.
    ReplicaVerdict endStep(std::uint64_t committed, bool ok, const std::string &why);
    // Milliseconds the last quorum change took to connect the new communicator (0: none this step).
    std::int64_t lastConnectMs() const { return m_connectMs; }

    struct Channel; // a DEALER socket and its requests (replica_link.cpp)
    class Store;    // Gloo's rendezvous through the lighthouse (replica_link.cpp)

private:
    void beat();
    std::string connectQuorum(const ReplicaQuorum &q);
    void abortCollective(const std::string &why);
    void ringAllreduce(gloo::Context &context, float *data, std::size_t n);

    ReplicaLinkOptions m_options;
    std::unique_ptr<Channel> m_requests;
    std::shared_ptr<gloo::transport::Device> m_device;
    std::mutex m_contextMutex; // m_context, against the beat thread's abort
    std::shared_ptr<gloo::Context> m_context;
    std::vector<gloo::transport::UnboundBuffer *> m_buffers; // the running collective's, to abort
    std::string m_abortWhy;
    ReplicaQuorum m_quorum;
    std::atomic<std::uint64_t> m_inUse{0};   // the quorum id the communicator belongs to
    std::atomic<std::uint64_t> m_newest{0};  // the newest id the lighthouse named
    std::atomic<bool> m_aborted{false};
    std::atomic<bool> m_stop{false};
    std::thread m_beat;
    std::int64_t m_connectMs = 0;
    std::uint64_t m_callInStep = 0; // all-reduces so far in this step (part of their Gloo slot)
};

} // namespace trellis::trainer
