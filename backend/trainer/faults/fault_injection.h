// Fault injection for tests of supervision and failure handling: --inject KIND@RANK:STEP makes
// rank RANK crash (exit 70), hang (stop making progress, heartbeats going on), run slow (200 ms
// more a step from then on), report a NaN loss, or throw an exception (what the trainer's
// top-level catch turns into an Event and exit code 12), at the start of step STEP (1-based).
// Threading: training thread only.
#pragma once

#include <cstdint>
#include <string>

namespace trellis::trainer {

class TelemetryPublisher;

enum class FaultKind { None, Crash, Hang, Slow, Nan, Throw };

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
    // The local loss, replaced by NaN from the injected step on.
    double loss(double value, std::uint64_t step) const;

private:
    bool mine(std::uint64_t step) const
    {
        return m_fault.rank == m_rank && static_cast<std::int64_t>(step) >= m_fault.step;
    }
    FaultInjection m_fault;
    int m_rank;
    bool m_slow = false;
};

} // namespace trellis::trainer
