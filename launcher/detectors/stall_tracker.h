// Two levels for a rank that holds the others up (docs/failures.md): a *stall* is named as soon as
// the hang detector's rule fires (a rank silent for 3 heartbeats, or holding up a collective its
// group has waited in for 2 s) and the run goes on; a *hang* — the supervisor ends or restarts the
// job — is decided only when it is certain:
//   * a holder's process is gone (it crashed; mpirun reports how, given 3 s to say it);
//   * a holder's process has stayed stopped (SIGSTOP, a debugger) past the confirmation time
//     (launch.hang_confirm_s), or a remote holder has stayed silent that long (this machine cannot
//     look at its process);
//   * a holder that answers has not moved (step, phase or collective) for the learned timeout:
//     launch.hang_step_factor times the longest step seen so far in the run, every attempt
//     counted, with launch.hang_timeout_s as its floor (and as the whole timeout before a first
//     step). The "no step finished" backstop uses the same timeout.
// A local holder whose process runs normally is never decided on its silence alone: its
// heartbeats come from a thread of its own, so the silence is its telemetry's path or a machine
// that keeps it off the CPU; the learned timeout judges whether it still trains.
// A stall that clears is a record: when it started and ended, who held it and who waited.
// Pure and deterministic: times are passed in (monotonic ms). Threading: one thread (the supervisor).
#pragma once

#include "launcher/detectors/hang_detector.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trellis::launcher {

struct StallRecord {
    int number = 0;              // 1, 2, … in the run
    std::vector<int> holders;    // the ranks holding the others up
    std::vector<int> waiting;    // the ranks waiting for them
    bool silent = false;         // the holders stopped sending (else they stopped moving)
    std::string what;            // the detector's words when it was named
    std::uint64_t step = 0;      // the run's step when it began
    // Monotonic: since the holders went silent or the others began to wait (startMs), since it was
    // named (namedMs, when the detector's rule fired), until it ended (endMs, -1 while it lasts).
    std::int64_t startMs = 0, namedMs = 0, endMs = -1;
    std::int64_t durationMs() const { return endMs < 0 ? 0 : endMs - startMs; }
};

// What the supervisor can tell of a holder's process this moment.
struct HolderState {
    bool local = true;    // on this machine: its process can be looked at
    bool gone = false;    // local, and no longer there
    bool stopped = false; // local, and stopped (state T)
};

struct HangRule {
    std::int64_t confirmMs = 30000;   // launch.hang_confirm_s
    double stepFactor = 5;            // launch.hang_step_factor
    std::int64_t floorMs = 60000;     // launch.hang_timeout_s
    std::int64_t crashGraceMs = 3000; // a gone holder: mpirun's report of the crash comes first
    // Whose report of a crash the grace waits for, as a verdict names it: mpirun for a launched
    // run, the job's own launcher for one a collector watches (torchrun, srun, …).
    std::string crashReporter = "mpirun";
};

// A decided hang: why it is certain.
struct HangVerdict {
    std::string reason;          // "rank 3's process has been stopped for 30.2 s (launch.hang_confirm_s 30)"
    int holder = -1;             // the rank it names first
    bool silent = false;
};

class StallTracker {
public:
    explicit StallTracker(HangRule rule = {});
    void setCrashReporter(std::string who) { m_rule.crashReporter = std::move(who); }

    // The longest step a rank took so far (every attempt of the run): what the learned timeout
    // is a multiple of. Kept across restarts; learnStep only raises it.
    void learnStep(double stepMs);
    std::int64_t longestStepMs() const { return m_longestStepMs; }
    // factor × the longest step, at least the floor; the floor alone before a first step.
    std::int64_t learnedTimeoutMs() const;

    struct Update {
        std::optional<StallRecord> started; // named now
        std::optional<StallRecord> cleared; // ended now (the holders moved on, or others hold up)
        bool grew = false; // cleared only because more ranks joined its holders: the stall goes on as current()
    };
    // The detector's verdict this moment (none: nobody holds anyone up). `step`: the run's step.
    Update observe(const std::optional<HangReport> &report, std::int64_t nowMs, std::uint64_t step);
    // Ends the stall in progress (the run ended, or a hang was decided); returns it.
    std::optional<StallRecord> close(std::int64_t nowMs);
    const std::optional<StallRecord> &current() const { return m_current; }

    // Whether the stall in progress is now a certain hang. `holders`: what can be told of each
    // holder's process; `sinceMovedMs`: for each holder, how long since its step, phase or
    // collective last changed (the detector's view).
    std::optional<HangVerdict> decide(std::int64_t nowMs, const std::map<int, HolderState> &holders,
                                      const std::map<int, std::int64_t> &sinceMovedMs);

    const std::vector<StallRecord> &history() const { return m_history; } // every stall cleared so far

private:
    HangRule m_rule;
    std::int64_t m_longestStepMs = 0;
    std::optional<StallRecord> m_current;
    std::vector<StallRecord> m_history;
    std::map<int, std::int64_t> m_stoppedSinceMs; // holder -> first seen stopped in this stall
    std::map<int, std::int64_t> m_goneSinceMs;    // holder -> first seen gone in this stall
    std::int64_t m_silentSinceMs = -1;            // since when the stall's holders are silent (-1: busy, not silent)
    int m_count = 0;
};

} // namespace trellis::launcher
