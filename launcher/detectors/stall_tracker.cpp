// See stall_tracker.h.
#include "launcher/detectors/stall_tracker.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace trellis::launcher {
namespace {

std::string seconds(std::int64_t ms)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ms) / 1000.0);
    return text;
}

std::string factorText(double factor)
{
    char text[32];
    std::snprintf(text, sizeof text, "%g", factor);
    return text;
}

std::vector<int> sorted(std::vector<int> ranks)
{
    std::sort(ranks.begin(), ranks.end());
    return ranks;
}

} // namespace

StallTracker::StallTracker(HangRule rule) : m_rule(rule) {}

void StallTracker::learnStep(double stepMs)
{
    if (std::isfinite(stepMs) && stepMs > static_cast<double>(m_longestStepMs))
        m_longestStepMs = static_cast<std::int64_t>(std::ceil(stepMs));
}

std::int64_t StallTracker::learnedTimeoutMs() const
{
    const double learned = m_rule.stepFactor * static_cast<double>(m_longestStepMs);
    return std::max(m_rule.floorMs, static_cast<std::int64_t>(std::ceil(learned)));
}

StallTracker::Update StallTracker::observe(const std::optional<HangReport> &report, std::int64_t nowMs, std::uint64_t step)
{
    Update u;
    const std::vector<int> culprits = report ? sorted(report->culprits) : std::vector<int>{};
    bool same = report && m_current && culprits == m_current->holders;
    // Some holders move again while the others still hold the rest up: the same stall, narrowed
    // to those, its silence counted as the report counts theirs. Ranks joining a stall make a
    // stall of all of them (its own timing: a rank starved for a moment is not silent as long as
    // the stopped one beside it), not named again — only ranks none of whom held it before make a
    // stall that is named.
    const auto held = [&](int rank) { return m_current && std::binary_search(m_current->holders.begin(), m_current->holders.end(), rank); };
    const bool overlaps = report && m_current && !same && std::any_of(culprits.begin(), culprits.end(), held);
    if (overlaps && std::all_of(culprits.begin(), culprits.end(), held)) {
        m_current->holders = culprits;
        m_current->what = report->message;
        std::erase_if(m_stoppedSinceMs, [&](const auto &e) { return !std::binary_search(culprits.begin(), culprits.end(), e.first); });
        std::erase_if(m_goneSinceMs, [&](const auto &e) { return !std::binary_search(culprits.begin(), culprits.end(), e.first); });
        m_current->silent = report->silent;
        m_silentSinceMs = report->silent ? nowMs - std::max<std::int64_t>(0, report->silentMs) : -1;
        same = true;
    }
    const bool continues = overlaps && !same;
    if (m_current && !same)
        u.cleared = close(nowMs);
    if (report && !same && !report->culprits.empty()) {
        StallRecord s;
        s.number = ++m_count;
        s.holders = sorted(report->culprits);
        s.waiting = sorted(report->waiting);
        s.silent = report->silent;
        s.what = report->message;
        s.step = step;
        s.namedMs = nowMs;
        s.startMs = nowMs - std::max<std::int64_t>(0, report->silent ? report->silentMs : report->waitedMs);
        m_current = s;
        m_silentSinceMs = s.silent ? s.startMs : -1;
        if (continues)
            u.grew = true;
        else
            u.started = s;
    } else if (same) {
        if (m_current->waiting.size() < report->waiting.size())
            m_current->waiting = sorted(report->waiting); // more ranks have come to wait
        // A holder named while busy (in a collective, not moving) that has since gone silent: its
        // silence is counted from when it began, not from when the stall was named.
        if (report->silent && !m_current->silent) {
            m_current->silent = true;
            m_silentSinceMs = nowMs - std::max<std::int64_t>(0, report->silentMs);
        }
    }
    return u;
}

std::optional<StallRecord> StallTracker::close(std::int64_t nowMs)
{
    if (!m_current)
        return std::nullopt;
    StallRecord s = *m_current;
    s.endMs = nowMs;
    m_history.push_back(s);
    m_current.reset();
    m_stoppedSinceMs.clear();
    m_goneSinceMs.clear();
    m_silentSinceMs = -1;
    return s;
}

std::optional<HangVerdict> StallTracker::decide(std::int64_t nowMs, const std::map<int, HolderState> &holders,
                                                const std::map<int, std::int64_t> &sinceMovedMs)
{
    if (!m_current)
        return std::nullopt;
    const StallRecord &s = *m_current;
    const std::int64_t lasted = nowMs - s.startMs; // silent, or waited on, this long
    const std::int64_t learned = learnedTimeoutMs();
    for (int rank : s.holders) {
        const auto state = holders.find(rank);
        const HolderState h = state == holders.end() ? HolderState{} : state->second;
        HangVerdict v;
        v.holder = rank;
        v.silent = s.silent;
        const std::string who = "rank " + std::to_string(rank);
        // A gone process is certain whether the holder was silent or busy when named: nothing of it
        // can move again. The grace is for mpirun's own report of how it ended.
        if (h.gone) {
            const std::int64_t since = m_goneSinceMs.emplace(rank, nowMs).first->second;
            if (nowMs - since >= m_rule.crashGraceMs) {
                v.reason = who + "'s process is gone (" + seconds(nowMs - since) + " without " + m_rule.crashReporter + "'s report of how it ended)";
                return v;
            }
            continue;
        }
        m_goneSinceMs.erase(rank);
        if (h.stopped) {
            const std::int64_t since = m_stoppedSinceMs.emplace(rank, nowMs).first->second;
            if (nowMs - since >= m_rule.confirmMs) {
                v.reason = who + "'s process has been stopped for " + seconds(nowMs - since) + " (launch.hang_confirm_s " +
                           seconds(m_rule.confirmMs) + ")";
                return v;
            }
            continue;
        }
        m_stoppedSinceMs.erase(rank); // continued: the confirmation starts again if it stops again
        if (const std::int64_t silentFor = s.silent ? nowMs - m_silentSinceMs : 0; s.silent && !h.local && silentFor >= m_rule.confirmMs) {
            v.reason = who + " has been silent for " + seconds(silentFor) + " and its host cannot be looked at from here " +
                       "(launch.hang_confirm_s " + seconds(m_rule.confirmMs) + ")";
            return v;
        }
        // A holder that answers (or a local one running normally) and has not moved for the
        // learned timeout.
        const auto moved = sinceMovedMs.find(rank);
        const std::int64_t still = moved == sinceMovedMs.end() ? lasted : std::max(moved->second, lasted);
        if (still >= learned) {
            v.reason = who + " has not moved for " + seconds(still) + " (the learned timeout: " + seconds(learned) +
                       (m_longestStepMs > 0 ? ", " + factorText(m_rule.stepFactor) + "x the longest step, " + seconds(m_longestStepMs)
                                            : std::string(", launch.hang_timeout_s before a first step")) +
                       ")";
            return v;
        }
    }
    return std::nullopt;
}

} // namespace trellis::launcher
