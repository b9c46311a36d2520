// See collective_tracker.h.
#include "backend/trainer/comm/collective_tracker.h"

#include <chrono>
#include <map>
#include <mutex>

namespace trellis::trainer {
namespace {

std::mutex g_mutex;
CollectiveActivity g_current; // guarded by g_mutex
std::map<std::string, std::vector<int>> g_members; // guarded by g_mutex

} // namespace

void CollectiveTracker::enter(const std::string &group, const char *op, std::uint64_t call, std::uint64_t bytes)
{
    const std::int64_t now =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::lock_guard lock(g_mutex);
    g_current.active = true;
    g_current.group = group;
    g_current.op = op;
    g_current.call = call;
    g_current.bytes = bytes;
    g_current.sinceNs = now;
    const auto known = g_members.find(group);
    g_current.members = known == g_members.end() ? std::vector<int>{} : known->second;
}

void CollectiveTracker::setMembers(const std::string &group, const std::vector<int> &members)
{
    std::lock_guard lock(g_mutex);
    if (members.size() <= kMaxMembers)
        g_members[group] = members;
    else
        g_members.erase(group);
}

void CollectiveTracker::leave()
{
    std::lock_guard lock(g_mutex);
    g_current.active = false;
}

CollectiveActivity CollectiveTracker::current()
{
    std::lock_guard lock(g_mutex);
    return g_current;
}

} // namespace trellis::trainer
