// Names a hung rank and where the others wait (docs/architecture.md §7, §9): fed every heartbeat (and every
// other message, which proves a rank alive), it finds within a few heartbeats
//   * a silent rank — no message for 3 heartbeat intervals (4 while a live rank is outside the call
//     the others wait in, perhaps on its way into it) (stopped by SIGSTOP, swapped out, frozen) — "rank 2 on node-b stopped responding (no heartbeat for 1.6 s); ranks 0,1,3 wait
//     in dp all_reduce #412 since 2.1 s";
//   * a rank holding up a collective — members of a group have waited in the same call for
//     more than 4 heartbeat intervals (at least 2 s) while it is elsewhere and has not moved on
//     (same step, phase and call) for as long — "rank 2 on node-b
//     stopped making progress (in forward of step 5); ranks 0,1,3 wait in dp all_reduce #412 since
//     2.3 s".
// Group membership comes from plan::Mesh, as in the trainer, and for groups no plan names (a
// PyTorch job's own process groups) from the members the ranks send with their waits. Pure and deterministic: times are
// passed in (monotonic ms of arrival, wall-clock ns for the ranks' own timestamps).
// Threading: one thread (the run's supervisor).
#pragma once

#include "backend/plan/plan.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace trellis::launcher {

struct RankPulse {
    std::uint64_t step = 0;
    std::string phase;
    bool inCollective = false;
    std::string group, op;
    std::uint64_t call = 0, bytes = 0;
    std::int64_t sinceNs = 0; // the rank's wall clock when it started waiting
    // The group's members (world ranks) as the rank said them, for a group no plan names (torch's
    // own process groups); empty for the plan's groups and the world.
    std::vector<int> members;
};

struct HangReport {
    std::vector<int> culprits; // the ranks found silent or holding the others up
    std::vector<int> waiting;  // the ranks waiting for them
    bool silent = false;       // the culprits stopped sending (else they stopped progressing)
    std::int64_t silentMs = 0; // how long the first culprit has been silent
    std::int64_t waitedMs = 0; // how long the waiters have waited in their call (a culprit that stopped moving)
    // Silent culprits that are every live rank behind these node relays (Hello.relay): they went
    // silent together, as a dead relay's ranks do until one of them has started it again.
    std::vector<std::string> relays;
    std::string message;
};

class HangDetector {
public:
    // patienceMs: how long a rank may keep the others waiting while it is in a phase that is
    // slow by nature (init: loading data; checkpoint: writing shards) — launch.hang_timeout_s.
    HangDetector(const plan::Plan &plan, int heartbeatMs, std::int64_t patienceMs = 60000);

    void hello(int rank, const std::string &host, const std::string &relay = {});
    // Any message from the rank at monotonic `nowMs` (it is alive).
    void seen(int rank, std::int64_t nowMs);
    void heartbeat(int rank, std::int64_t nowMs, const RankPulse &pulse);
    // A step report: the rank finished `step` and is in no collective now. Ranks send heartbeats
    // only when they have sent nothing else for an interval, so a step report replaces the pulse
    // (a pulse left from before would still show the rank waiting in a call it has long left).
    void stepDone(int rank, std::int64_t nowMs, std::uint64_t step);
    void goodbye(int rank); // finished: never hung

    std::optional<HangReport> check(std::int64_t nowMs, std::int64_t nowWallNs) const;
    // How long since the rank's step, phase or collective last changed; -1 when unknown.
    std::int64_t msSinceMoved(int rank, std::int64_t nowMs) const;

    std::int64_t silentAfterMs() const { return m_silentMs; }
    std::int64_t stuckAfterMs() const { return m_waitMs; }

private:
    struct Rank {
        std::string host;
        std::string relay; // the node relay it sends through; "" direct
        std::int64_t lastSeenMs = -1;
        std::int64_t lastChangeMs = -1; // when its step, phase or collective last changed
        RankPulse pulse;
        bool done = false;
    };
    using Waits = std::map<std::tuple<std::string, std::string, std::uint64_t>, std::vector<int>>; // call -> ranks in it
    HangReport silentReport(const std::vector<int> &silent, const std::vector<int> *waiting, std::int64_t nowMs,
                            std::int64_t nowWallNs) const;
    std::optional<HangReport> stuckReport(const Waits &waits, std::int64_t nowMs, std::int64_t nowWallNs) const;
    std::vector<int> holdersOf(const std::vector<int> &waiting, const RankPulse &call, std::int64_t nowMs) const;
    std::string where(int rank) const; // "rank 2 on node-b"
    std::vector<std::string> wholeRelays(const std::vector<int> &silent) const;
    bool oneOnTheWay(std::int64_t nowMs, int silentRank) const;
    std::string waitText(const std::vector<int> &ranks, const RankPulse &p, std::int64_t nowWallNs) const;
    std::vector<int> membersOf(int rank, const std::string &group) const;

    plan::Plan m_plan;
    int m_worldSize;
    std::int64_t m_silentMs, m_waitMs, m_patienceMs;
    std::map<int, Rank> m_ranks;
    std::map<std::string, std::vector<int>> m_groupMembers; // groups no plan names, as the ranks said them
};

} // namespace trellis::launcher
