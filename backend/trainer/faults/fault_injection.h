// Fault injection for tests of supervision and failure handling: --inject KIND@RANK:STEP makes
// rank RANK crash (exit 70), hang (stop making progress, heartbeats going on), run slow (200 ms
// more a step from then on), corrupt its copy of a parameter with a NaN (the final norm's gain, or
// the first tensor it owns: what training.on_non_finite must catch and name), report a NaN loss
// for that one step only (nanloss: a transient fault, as a bad batch), throw an
// exception (what the trainer's top-level catch turns into an Event and exit code 12), or stall:
// send nothing and do nothing for kStallMs, its process running normally, then go on (what a
// machine that keeps a process off its cores does; not a hang) — at the start of step STEP
// (1-based).
// Threading: training thread only.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace trellis::trainer {

class TelemetryPublisher;

enum class FaultKind { None, Crash, Hang, Slow, Nan, NanLoss, Throw, Stall };

// How long an injected stall lasts: longer than the 10 s a silent local rank was once given
// before being called hung, well inside the default hang timeout (60 s).
constexpr int kStallMs = 13000;

struct FaultInjection {
    FaultKind kind = FaultKind::None;
    int rank = -1;
    int step = -1;

    static bool parse(const std::string &text, FaultInjection &out, std::string &error);
};

class FaultInjector {
public:
    FaultInjector(FaultInjection fault, int rank) : m_fault(fault), m_rank(rank) {}
    // At the start of a step: crash or hang here, or start being slow.
    void beforeStep(std::uint64_t step, TelemetryPublisher &telemetry);
    // After the step's compute: the injected slowness.
    void afterCompute() const;
    // Whether this rank corrupts a parameter at the start of `step`.
    // The rank's loss of `step`: NaN for an injected nanloss.
    double loss(double value, std::uint64_t step) const
    {
        return m_fault.kind == FaultKind::NanLoss && m_fault.rank == m_rank && static_cast<std::int64_t>(step) == m_fault.step
                   ? std::numeric_limits<double>::quiet_NaN()
                   : value;
    }
    bool poisonAt(std::uint64_t step) const
    {
        return m_fault.kind == FaultKind::Nan && m_fault.rank == m_rank && static_cast<std::int64_t>(step) == m_fault.step;
    }

private:
    FaultInjection m_fault;
    int m_rank;
    bool m_slow = false;
};

} // namespace trellis::trainer
