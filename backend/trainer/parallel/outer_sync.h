// Local updates over the data-parallel replicas (parallel.dp_sync local_sgd and diloco; plan.h
// gives the maths): counts the replicas' own optimizer steps and, every inner_steps of them,
// averages the fp32 parameters over the dp group and applies the outer step. The anchor (the
// parameters after the last outer step) and DiLoCo's outer momentum are fp32, like the parameters.
// The average is taken of the parameters themselves, and the outer step written as
// θ = mean(θ) + (Δ − outer_lr·step): mathematically anchor − outer_lr·step, and exactly the mean
// when outer_lr is 1 and the momentum 0 — so one replica with that outer optimizer is plain
// training to the bit, at any inner_steps.
// Host-accessible memory only (the CPU; validation refuses local updates on CUDA devices).
// Threading: training thread only.
#pragma once

#include "backend/plan/plan.h"
#include "backend/trainer/comm/communicator.h"
#include "backend/trainer/device/buffer.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace trellis::trainer {

class OuterSync {
public:
    // params: the n fp32 parameters this rank holds (its replica's), from now on the anchor.
    OuterSync(DeviceCommunicator &dp, const plan::DpSyncSpec &spec, float *params, std::size_t n, Device &device);
    // The parameters were replaced (initial load): they become the anchor, the momentum zero.
    void reset();
    // After each optimizer step; true when it ended an outer step (the replicas now agree).
    bool afterInnerStep();
    std::uint64_t outerSteps() const { return m_outerSteps; }
    std::uint64_t innerSteps() const { return m_innerSteps; } // optimizer steps counted so far
    const plan::DpSyncSpec &spec() const { return m_spec; }
    // Checkpoints: the outer state of the parameter at `param` (a pointer into this rank's
    // parameters) and the n after it — the anchor, DiLoCo's momentum (nothing for local SGD).
    void saveState(const float *param, std::size_t n, std::vector<float> &anchor, std::vector<float> &momentum) const;
    // Puts saved state back (after the parameters were set: reset() made them the anchor); the
    // counters last, once every range is back.
    void restoreState(const float *param, std::size_t n, const float *anchor, const float *momentum);
    void restoreCounters(std::uint64_t innerSteps, std::uint64_t outerSteps);
    std::uint64_t stateBytes() const { return (m_anchor.size() + m_momentum.size()) * sizeof(float); }
    std::uint64_t bytesPerSync() const { return m_n * sizeof(float); } // what one outer step all-reduces

private:
    void outerStep();
    std::size_t offsetOf(const float *param, std::size_t n) const; // throws for a pointer outside

    DeviceCommunicator &m_dp;
    plan::DpSyncSpec m_spec;
    float *m_params;
    std::size_t m_n;
    DeviceBuffer<float> m_anchor, m_momentum;
    std::uint64_t m_innerSteps = 0, m_outerSteps = 0;
};

} // namespace trellis::trainer
