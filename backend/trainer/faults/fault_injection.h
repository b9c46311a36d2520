// Fault injection for tests of supervision and failure handling: --inject KIND@RANK:STEP makes
// rank RANK crash (exit 70), hang (stop making progress, heartbeats going on: an endless loop in
// forward), run slow (200 ms more a step from then on), delay (5 s more in that one step's
// compute: a throttled GPU, a slow read), corrupt its copy of a parameter with a NaN (the final
// norm's gain, or the first tensor it owns: what training.on_non_finite must catch and name),
// report a NaN loss for that one step only (nanloss: a transient fault, as a bad batch), throw an
// exception (what the trainer's top-level catch turns into an Event and exit code 12), stall
// (send nothing and do nothing for kStallMs, its process running normally, then go on: what a
// machine that keeps a process off its cores does), pause (its whole process stopped, SIGSTOP,
// for kPauseMs and then continued by a helper it forked: a VM steal, a debugger, a laptop's
// suspend) or stop (SIGSTOP for good) — at the start of step STEP (1-based); or, nomem, find no
// host memory for a checkpoint's staging buffers at the save of step STEP (std::bad_alloc where
// they are sized), or, slowcopy, copy its state into a checkpoint's staging buffers kSlowCopyMs
// late at the save of step STEP (a copy slower than the next step's forward and backward: the
// update must wait for it). STEP may be a list, 5,9,13: the fault fires at each.
// Threading: training thread only.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace trellis::trainer {

class TelemetryPublisher;

enum class FaultKind { None, Crash, Hang, Slow, Delay, Nan, NanLoss, Throw, Stall, Pause, Stop, NoMemory, SlowCopy };

// How long an injected stall lasts: longer than the 10 s a silent local rank was once given
// before being called hung, well inside the default hang timeout (60 s).
constexpr int kStallMs = 13000;
// How long an injected pause stops the process: past the 1.5 s (3 heartbeats) after which the
// supervisor names a stall, far inside the 30 s after which a stopped rank is a hang.
constexpr int kPauseMs = 2500;
// How much longer an injected delay makes one step: past the 2 s the others may wait in a
// collective before the one holding them up is named a stall, with room for a busy machine.
constexpr int kDelayMs = 5000;
// How much later an injected slow copy starts: far longer than a test model's forward and backward.
constexpr int kSlowCopyMs = 1500;

struct FaultInjection {
    FaultKind kind = FaultKind::None;
    int rank = -1;
    std::vector<int> steps; // the steps it fires at (1-based)

    bool firesAt(std::uint64_t step) const;
    static bool parse(const std::string &text, FaultInjection &out, std::string &error);
};

class FaultInjector {
public:
    FaultInjector(FaultInjection fault, int rank) : m_fault(fault), m_rank(rank) {}
    // At the start of a step: crash or hang here, or start being slow.
    void beforeStep(std::uint64_t step, TelemetryPublisher &telemetry);
    // After the step's compute: the injected slowness.
    void afterCompute(std::uint64_t step) const;
    // Whether this rank corrupts a parameter at the start of `step`.
    // The rank's loss of `step`: NaN for an injected nanloss.
    double loss(double value, std::uint64_t step) const
    {
        return m_fault.kind == FaultKind::NanLoss && m_fault.rank == m_rank && m_fault.firesAt(step)
                   ? std::numeric_limits<double>::quiet_NaN()
                   : value;
    }
    // Whether this rank's staging buffers for the save of `step` find no memory (nomem).
    bool noMemoryAt(std::uint64_t step) const
    {
        return m_fault.kind == FaultKind::NoMemory && m_fault.rank == m_rank && m_fault.firesAt(step);
    }
    // Whether this rank's copy into the staging buffers for the save of `step` is late (slowcopy).
    bool slowCopyAt(std::uint64_t step) const
    {
        return m_fault.kind == FaultKind::SlowCopy && m_fault.rank == m_rank && m_fault.firesAt(step);
    }
    bool poisonAt(std::uint64_t step) const
    {
        return m_fault.kind == FaultKind::Nan && m_fault.rank == m_rank && m_fault.firesAt(step);
    }
    // Whether an injected fault ends the run at the start of `step` on some rank (a crash, a
    // hang, a throw, a stop): every rank knows, so the boundary before it can let a save in flight
    // land first and a test's resume finds the same checkpoints whatever the disk.
    bool endsRunAt(std::uint64_t step) const
    {
        const FaultKind k = m_fault.kind;
        return (k == FaultKind::Crash || k == FaultKind::Hang || k == FaultKind::Throw || k == FaultKind::Stop) &&
               m_fault.firesAt(step);
    }

private:
    FaultInjection m_fault;
    int m_rank;
    bool m_slow = false;
};

} // namespace trellis::trainer
