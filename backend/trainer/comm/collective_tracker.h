// Which collective this process is inside right now, for the heartbeat (docs/architecture.md §9): the
// training thread enters and leaves as its communicators block in a call or wait for a handle;
// the telemetry thread reads a consistent snapshot every heartbeat. What names a hung rank: the
// others' heartbeats say "dp all_reduce #412 since 2.1 s", the hung one's something else (or
// nothing at all).
// Threading: enter/leave from the training thread, current() from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trellis::trainer {

struct CollectiveActivity {
    bool active = false;
    std::string group;        // "dp", "tp", "pp", "world", ...
    std::string op;           // "all_reduce", "recv", ...
    std::uint64_t call = 0;   // its number among the calls issued on that group (1-based)
    std::uint64_t bytes = 0;
    std::int64_t sinceNs = 0; // wall clock when the rank started waiting
    std::vector<int> members; // the group's world ranks, when registered (setMembers)
};

class CollectiveTracker {
public:
    static void enter(const std::string &group, const char *op, std::uint64_t call, std::uint64_t bytes);
    static void leave();
    static CollectiveActivity current();
    // A group's members (world ranks, in group order), sent with every wait in it so that a
    // receiver without the plan (a collector watching a trainer started by hand) can name the member
    // holding the others up. Groups of more than kMaxMembers are not registered (a heartbeat stays
    // small; a launched run's supervisor has the plan's groups anyway).
    static constexpr std::size_t kMaxMembers = 4096;
    static void setMembers(const std::string &group, const std::vector<int> &members);
};

// Enters on construction, leaves on destruction.
class InsideCollective {
public:
    InsideCollective(const std::string &group, const char *op, std::uint64_t call, std::uint64_t bytes)
    {
        CollectiveTracker::enter(group, op, call, bytes);
    }
    ~InsideCollective() { CollectiveTracker::leave(); }
    InsideCollective(const InsideCollective &) = delete;
    InsideCollective &operator=(const InsideCollective &) = delete;
};

} // namespace trellis::trainer
