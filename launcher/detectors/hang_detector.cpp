// See hang_detector.h.
#include "launcher/detectors/hang_detector.h"

#include "backend/plan/mesh.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <tuple>

namespace trellis::launcher {
namespace {

std::string seconds(double s)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s", s);
    return text;
}

// "0,1,3", with runs of three or more as ranges ("0-4999,5001-16383") and at most 12 pieces, the
// rest counted ("…, and 812 more ranks"): a message about 16,383 waiting ranks stays a line.
std::string rankList(std::vector<int> ranks)
{
    std::sort(ranks.begin(), ranks.end());
    constexpr int kMaxPieces = 12;
    std::string out;
    int pieces = 0;
    std::size_t i = 0;
    for (; i < ranks.size() && pieces < kMaxPieces; ++pieces) {
        std::size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
            ++j;
        if (pieces)
            out += ',';
        if (j - i >= 2) {
            out += std::to_string(ranks[i]) + "-" + std::to_string(ranks[j]);
            i = j + 1;
        } else {
            out += std::to_string(ranks[i]);
            i += 1;
        }
    }
    if (i < ranks.size())
        out += ", and " + std::to_string(ranks.size() - i) + " more";
    return out;
}

} // namespace

HangDetector::HangDetector(const plan::Plan &plan, int heartbeatMs, std::int64_t patienceMs)
    : m_plan(plan), m_worldSize(plan.parallel.worldSize()), m_silentMs(3LL * std::max(1, heartbeatMs)),
      m_waitMs(std::max<std::int64_t>(2000, 4LL * std::max(1, heartbeatMs))), m_patienceMs(patienceMs)
{
}

void HangDetector::hello(int rank, const std::string &host, const std::string &relay)
{
    m_ranks[rank].host = host;
    m_ranks[rank].relay = relay;
}

// The relays all of whose live ranks are among `silent`, when every silent rank is behind one of
// them; empty otherwise.
std::vector<std::string> HangDetector::wholeRelays(const std::vector<int> &silent) const
{
    std::map<std::string, int> silentBehind;
    for (int rank : silent) {
        const std::string &relay = m_ranks.at(rank).relay;
        if (relay.empty())
            return {};
        ++silentBehind[relay];
    }
    std::vector<std::string> out;
    for (const auto &[relay, count] : silentBehind) {
        int live = 0;
        for (const auto &[rank, r] : m_ranks)
            live += r.relay == relay && !r.done && r.lastSeenMs >= 0;
        if (live != count)
            return {};
        out.push_back(relay);
    }
    return out;
}

void HangDetector::seen(int rank, std::int64_t nowMs) { m_ranks[rank].lastSeenMs = nowMs; }

void HangDetector::heartbeat(int rank, std::int64_t nowMs, const RankPulse &pulse)
{
    Rank &r = m_ranks[rank];
    const bool moved = r.lastChangeMs < 0 || r.pulse.step != pulse.step || r.pulse.phase != pulse.phase ||
                       r.pulse.inCollective != pulse.inCollective || r.pulse.call != pulse.call || r.pulse.group != pulse.group;
    if (moved)
        r.lastChangeMs = nowMs;
    r.lastSeenMs = nowMs;
    r.pulse = pulse;
    // A group's members as a rank in it said them; a rank outside the group, or beyond the world,
    // cannot make itself or others members of it.
    if (pulse.inCollective && !pulse.members.empty() && pulse.members.size() <= static_cast<std::size_t>(m_worldSize) && pulse.group != "world" &&
        std::find(pulse.members.begin(), pulse.members.end(), rank) != pulse.members.end() &&
        std::all_of(pulse.members.begin(), pulse.members.end(), [&](int m) { return m >= 0 && m < m_worldSize; }))
        m_groupMembers[pulse.group] = pulse.members;
}

void HangDetector::stepDone(int rank, std::int64_t nowMs, std::uint64_t step)
{
    Rank &r = m_ranks[rank];
    r.pulse = RankPulse{};
    r.pulse.step = step;
    r.pulse.phase = "step done";
    r.lastChangeMs = nowMs;
    r.lastSeenMs = nowMs;
}

void HangDetector::goodbye(int rank) { m_ranks[rank].done = true; }

std::string HangDetector::where(int rank) const
{
    const auto it = m_ranks.find(rank);
    const std::string host = it == m_ranks.end() || it->second.host.empty() ? "an unknown host" : it->second.host;
    return "rank " + std::to_string(rank) + " on " + host;
}

std::string HangDetector::waitText(const std::vector<int> &ranks, const RankPulse &p, std::int64_t nowWallNs) const
{
    return (ranks.size() == 1 ? "rank " : "ranks ") + rankList(ranks) + " wait" + (ranks.size() == 1 ? "s" : "") + " in " +
           p.group + " " + p.op + " #" + std::to_string(p.call) + " since " +
           seconds(std::max<double>(0.0, static_cast<double>(nowWallNs - p.sinceNs) / 1e9));
}

std::vector<int> HangDetector::membersOf(int rank, const std::string &group) const
{
    if (group == "world") {
        std::vector<int> all(static_cast<std::size_t>(m_worldSize));
        for (int r = 0; r < m_worldSize; ++r)
            all[static_cast<std::size_t>(r)] = r;
        return all;
    }
    if (const auto said = m_groupMembers.find(group);
        said != m_groupMembers.end() && std::find(said->second.begin(), said->second.end(), rank) != said->second.end())
        return said->second;
    const plan::Mesh mesh(m_plan.parallel);
    for (plan::GroupKind kind : {plan::GroupKind::Tp, plan::GroupKind::Cp, plan::GroupKind::Dp, plan::GroupKind::Pp,
                                 plan::GroupKind::Ep, plan::GroupKind::ExpertDp, plan::GroupKind::Embedding,
                                 plan::GroupKind::DpCp})
        if (group == plan::toString(kind))
            return mesh.groupOf(rank, kind);
    // The world of a purely data-parallel plan is named "dp" and is its dp group anyway.
    return {rank};
}

// A live rank not yet in a collective may be on its way into the call the others wait in (its last
// heartbeat shows it computing): it is given one more heartbeat after `silentRank` is silent, so
// that the report names every rank that waits.
bool HangDetector::oneOnTheWay(std::int64_t nowMs, int silentRank) const
{
    const std::int64_t heartbeatMs = std::max<std::int64_t>(1, m_silentMs / 3);
    if (nowMs - m_ranks.at(silentRank).lastSeenMs >= m_silentMs + heartbeatMs)
        return false;
    return std::any_of(m_ranks.begin(), m_ranks.end(), [&](const auto &entry) {
        const Rank &r = entry.second;
        return !r.done && r.lastSeenMs >= 0 && nowMs - r.lastSeenMs <= m_silentMs && !r.pulse.inCollective;
    });
}

std::int64_t HangDetector::msSinceMoved(int rank, std::int64_t nowMs) const
{
    const auto it = m_ranks.find(rank);
    return it == m_ranks.end() || it->second.lastChangeMs < 0 ? -1 : nowMs - it->second.lastChangeMs;
}

std::optional<HangReport> HangDetector::check(std::int64_t nowMs, std::int64_t nowWallNs) const
{
    // Who waits where: (group, op, call) -> ranks, among live ranks inside a collective.
    Waits waits;
    std::vector<int> silent;
    for (const auto &[rank, r] : m_ranks) {
        if (r.done || r.lastSeenMs < 0)
            continue;
        if (nowMs - r.lastSeenMs > m_silentMs)
            silent.push_back(rank);
        else if (r.pulse.inCollective)
            waits[{r.pulse.group, r.pulse.op, r.pulse.call}].push_back(rank);
    }
    // The call most ranks wait in, for the context of a report.
    const auto busiest = std::max_element(waits.begin(), waits.end(), [](const auto &a, const auto &b) {
        return a.second.size() < b.second.size();
    });
    if (!silent.empty() && busiest != waits.end() && oneOnTheWay(nowMs, silent.front()))
        return std::nullopt;
    if (!silent.empty())
        return silentReport(silent, busiest == waits.end() ? nullptr : &busiest->second, nowMs, nowWallNs);
    return stuckReport(waits, nowMs, nowWallNs);
}

HangReport HangDetector::silentReport(const std::vector<int> &silent, const std::vector<int> *waiting, std::int64_t nowMs,
                                      std::int64_t nowWallNs) const
{
    HangReport report;
    report.silent = true;
    report.culprits = silent;
    report.silentMs = nowMs - m_ranks.at(silent.front()).lastSeenMs;
    const double quiet = static_cast<double>(report.silentMs) / 1000.0;
    constexpr std::size_t kNamed = 12; // then counted: a line even when a thousand fall silent
    for (std::size_t i = 0; i < std::min(silent.size(), kNamed); ++i)
        report.message += (i ? ", " : "") + where(silent[i]);
    if (silent.size() > kNamed)
        report.message += " and " + std::to_string(silent.size() - kNamed) + " more ranks";
    report.message += " stopped responding (no heartbeat for " + seconds(quiet) + ")";
    report.relays = wholeRelays(silent);
    for (std::size_t i = 0; i < report.relays.size(); ++i)
        report.message += (i ? ", " : " — every rank behind the telemetry relay of ") + report.relays[i];
    if (!report.relays.empty())
        report.message += " went silent together: the relay (its ranks start it again within seconds) or the node";
    if (waiting) {
        report.waiting = *waiting;
        report.message += "; " + waitText(*waiting, m_ranks.at(waiting->front()).pulse, nowWallNs);
    }
    return report;
}

// A call some ranks have waited in for too long: the members of their group not in it hold them up.
std::optional<HangReport> HangDetector::stuckReport(const Waits &waits, std::int64_t nowMs, std::int64_t nowWallNs) const
{
    for (const auto &[call, ranks] : waits) {
        const RankPulse &p = m_ranks.at(ranks.front()).pulse;
        std::int64_t longest = 0;
        for (int r : ranks)
            longest = std::max(longest, nowWallNs - m_ranks.at(r).pulse.sinceNs);
        if (longest / 1000000 <= m_waitMs)
            continue;
        const std::vector<int> culprits = holdersOf(ranks, p, nowMs);
        if (culprits.empty())
            continue; // everyone is in the call, or someone is on the way: slow, not stuck
        // A member loading data or writing a checkpoint is slow by nature: wait longer for it.
        const bool patient = std::any_of(culprits.begin(), culprits.end(), [&](int c) {
            const auto it = m_ranks.find(c);
            return it != m_ranks.end() && (it->second.pulse.phase == "init" || it->second.pulse.phase == "checkpoint");
        });
        if (patient && longest / 1000000 <= m_patienceMs)
            continue;
        HangReport report;
        report.culprits = culprits;
        report.waiting = ranks;
        report.waitedMs = longest / 1000000;
        for (std::size_t i = 0; i < culprits.size(); ++i) {
            const auto it = m_ranks.find(culprits[i]);
            report.message += (i ? ", " : "") + where(culprits[i]);
            if (it != m_ranks.end() && it->second.lastSeenMs >= 0) {
                const RankPulse &c = it->second.pulse;
                report.message += c.inCollective ? " (waiting in " + c.group + " " + c.op + " #" + std::to_string(c.call) + ")"
                                                 : " (in " + c.phase + " of step " + std::to_string(c.step) + ")";
            }
        }
        report.message += " stopped making progress; " + waitText(ranks, p, nowWallNs);
        return report;
    }
    return std::nullopt;
}

// The members of the waiters' group not in the call, when none of them moved (a new phase, step or
// call) lately: a member still moving is slow, not stuck, and then nobody is named.
// A member waiting in a later call of the same group has passed this one (a non-blocking
// collective completes on a rank once every part it needs has arrived, and the slow rank's part of
// the earlier buckets went out before it stopped): it waits too, and holds nobody up.
std::vector<int> HangDetector::holdersOf(const std::vector<int> &waiting, const RankPulse &call, std::int64_t nowMs) const
{
    std::set<int> members;
    for (int r : waiting)
        for (int m : membersOf(r, call.group))
            members.insert(m);
    std::vector<int> culprits;
    for (int m : members) {
        if (std::find(waiting.begin(), waiting.end(), m) != waiting.end())
            continue;
        const auto it = m_ranks.find(m);
        if (it != m_ranks.end() && it->second.pulse.inCollective && it->second.pulse.group == call.group && it->second.pulse.call > call.call)
            continue;
        if (it != m_ranks.end() && it->second.lastChangeMs >= 0 && nowMs - it->second.lastChangeMs <= m_waitMs)
            return {};
        culprits.push_back(m);
    }
    return culprits;
}

} // namespace trellis::launcher
