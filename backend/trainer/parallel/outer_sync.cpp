// See outer_sync.h.
#include "backend/trainer/parallel/outer_sync.h"

#include <algorithm>
#include <stdexcept>

namespace trellis::trainer {

OuterSync::OuterSync(DeviceCommunicator &dp, const plan::DpSyncSpec &spec, float *params, std::size_t n, Device &device)
    : m_dp(dp), m_spec(spec), m_params(params), m_n(n), m_anchor(device), m_momentum(device)
{
    if (!device.hostAccessible())
        throw std::logic_error("OuterSync: local updates (parallel.dp_sync) need host-accessible memory");
    m_anchor.assign(n);
    if (spec.mode == plan::DpSyncMode::DiLoCo)
        m_momentum.assign(n);
    reset();
}

void OuterSync::reset()
{
    for (std::size_t i = 0; i < m_n; ++i)
        m_anchor.data()[i] = m_params[i];
    m_momentum.zero();
}

bool OuterSync::afterInnerStep()
{
    if (++m_innerSteps % static_cast<std::uint64_t>(m_spec.innerSteps) != 0)
        return false;
    outerStep();
    ++m_outerSteps;
    return true;
}

std::size_t OuterSync::offsetOf(const float *param, std::size_t n) const
{
    if (param < m_params || param + n > m_params + m_n)
        throw std::logic_error("OuterSync: a checkpoint range outside this rank's parameters");
    return static_cast<std::size_t>(param - m_params);
}

void OuterSync::saveState(const float *param, std::size_t n, std::vector<float> &anchor, std::vector<float> &momentum) const
{
    const std::size_t at = offsetOf(param, n);
    anchor.insert(anchor.end(), m_anchor.data() + at, m_anchor.data() + at + n);
    if (m_spec.mode == plan::DpSyncMode::DiLoCo)
        momentum.insert(momentum.end(), m_momentum.data() + at, m_momentum.data() + at + n);
}

void OuterSync::restoreState(const float *param, std::size_t n, const float *anchor, const float *momentum)
{
    const std::size_t at = offsetOf(param, n);
    std::copy_n(anchor, n, m_anchor.data() + at);
    if (m_spec.mode == plan::DpSyncMode::DiLoCo && momentum)
        std::copy_n(momentum, n, m_momentum.data() + at);
}

void OuterSync::restoreCounters(std::uint64_t innerSteps, std::uint64_t outerSteps)
{
    m_innerSteps = innerSteps;
    m_outerSteps = outerSteps;
}

void OuterSync::outerStep()
{
    m_dp.allReduce(m_params, m_n, ReduceOp::Avg); // every replica: mean(θ)
    float *anchor = m_anchor.data();
    if (m_spec.mode == plan::DpSyncMode::LocalSgd) {
        for (std::size_t i = 0; i < m_n; ++i)
            anchor[i] = m_params[i];
        return;
    }
    const auto mu = static_cast<float>(m_spec.outerMomentum), lr = static_cast<float>(m_spec.outerLr);
    float *momentum = m_momentum.data();
    for (std::size_t i = 0; i < m_n; ++i) {
        const float delta = anchor[i] - m_params[i]; // the outer gradient
        momentum[i] = mu * momentum[i] + delta;
        const float step = m_spec.nesterov ? delta + mu * momentum[i] : momentum[i];
        m_params[i] += delta - lr * step; // = anchor − lr·step
        anchor[i] = m_params[i];
    }
}

} // namespace trellis::trainer
