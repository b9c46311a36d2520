// The lighthouse of a run with data-parallel replica groups (fault_tolerance; issue #71): every
// step, which groups train it together (the quorum), and whether the step is committed. Each
// replica group is its own job; its ranks talk to the lighthouse (backend/protocol/lighthouse.proto)
// through backend/trainer/comm/replica_link.h, and to the other groups' ranks of the same place
// through Gloo, whose rendezvous goes through the lighthouse too.
//
// The rules:
//   quorum   formed when every live group has each of its ranks asking for the same step, and at
//            least min_replicas groups are; the very first waits up to joinWaitMs for all groups
//            (then goes on with those there, min_replicas at least). Its id goes up by one each
//            time its groups change, so the ranks rebuild their cross-group communicator only then.
//            A group asking for an older step than the others (a group that came back from an
//            older checkpoint) is refused, said why.
//   out      a group is out of the next quorum when markOut() says so (its job died, its rank
//            stayed in a named stall), or when one of its ranks has not beaten for leaveAfterMs;
//            it is live again once all its ranks beat again. A group leaving the current quorum
//            bumps the id the heartbeats answer, so ranks waiting in a collective with it abort it
//            at once rather than wait for its timeout.
//   commit   a step is committed only when every rank of every group of its quorum voted ok;
//            dropped by all as soon as one voted failed, a group of the quorum left before all
//            voted, or a vote names another quorum.
// One thread of its own (a ZeroMQ ROUTER polled every 50 ms at most); the rest of the supervisor
// is told what happened through `onEvent` (called on that thread).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace trellis::launcher {

struct LighthouseConfig {
    int groups = 1;          // R
    int groupRanks = 1;      // ranks in each group (every group alike)
    int minReplicas = 1;     // m: fewer live groups than this and no quorum forms (the run waits)
    int leaveAfterMs = 5000; // a rank silent this long takes its group out
    int joinWaitMs = 30000;  // the first quorum waits this long for every group
};

struct LighthouseEvent {
    enum class Kind { Quorum, Commit, Drop, Out, Back, Waiting, Refused };
    Kind kind = Kind::Quorum;
    std::uint64_t step = 0;
    std::uint64_t quorumId = 0;
    std::vector<int> groups;    // Quorum: its groups; Out/Back/Refused: the group
    std::string message;        // what happened, in words (the history's event text)
    std::int64_t durationMs = 0; // Quorum: since the first ask of this step; Drop: since the quorum
};

class Lighthouse {
public:
    explicit Lighthouse(LighthouseConfig config);
    ~Lighthouse();
    Lighthouse(const Lighthouse &) = delete;
    Lighthouse &operator=(const Lighthouse &) = delete;

    // Binds `endpoint` (tcp://ADDRESS:0 picks a port) and starts the thread. "" or why not.
    std::string start(const std::string &endpoint);
    void stop();
    // Where the ranks connect (the bound endpoint, its port resolved).
    std::string endpoint() const { return m_endpoint; }
    // Called on the lighthouse's thread for every quorum, commit, drop and group out or back.
    void setEventHandler(std::function<void(const LighthouseEvent &)> handler);
    // Group `group` is out (its job ended, a rank stalled past leave_after_s), from any thread.
    void markOut(int group, const std::string &why);

    struct Counts {
        std::uint64_t committed = 0, dropped = 0, quorumId = 0;
        std::vector<int> quorumGroups;
    };
    Counts counts() const;

private:
    struct State;
    void run();
    // An event from the thread: counted, then handed to the handler.
    void published(const LighthouseEvent &e, std::uint64_t quorumId, const std::vector<int> &quorumGroups);

    std::string m_endpoint;
    std::unique_ptr<State> m_state;
    std::thread m_thread;
    std::atomic<bool> m_stop{false};
    mutable std::mutex m_mutex; // m_handler, m_outs, m_counts
    std::function<void(const LighthouseEvent &)> m_handler;
    std::vector<std::pair<int, std::string>> m_outs;
    Counts m_counts;
};

} // namespace trellis::launcher
