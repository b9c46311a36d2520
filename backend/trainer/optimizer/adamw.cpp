// AdamW and the LR schedule; see adamw.h.
#include "backend/trainer/optimizer/adamw.h"

#include <cmath>
#include <numbers>

namespace trellis::trainer {

namespace {
std::size_t totalSize(const std::vector<ParamRange> &ranges)
{
    std::size_t n = 0;
    for (const auto &r : ranges)
        n += r.end - r.begin;
    return n;
}
} // namespace

AdamW::AdamW(std::vector<ParamRange> owned, AdamWConfig config, Device &device)
    : m_config(config), m_owned(std::move(owned)), m_device(device), m_m(device), m_v(device), m_decay(device)
{
    m_m.assign(totalSize(m_owned));
    m_v.assign(m_m.size());
}

void AdamW::setDecayMask(const std::vector<bool> &mask)
{
    std::vector<std::uint8_t> compact;
    compact.reserve(m_m.size());
    for (const auto &r : m_owned)
        for (std::size_t i = r.begin; i < r.end; ++i)
            compact.push_back(mask[i] ? 1 : 0);
    m_decay.assignFromHost(compact.data(), compact.size());
}

void AdamW::step(float *parameters, const float *gradients, double lr)
{
    std::vector<float *> p;
    std::vector<const float *> g;
    for (const auto &range : m_owned) {
        p.push_back(parameters + range.begin);
        g.push_back(gradients + range.begin);
    }
    step(p, g, lr);
}

void AdamW::step(std::span<float *const> parameters, std::span<const float *const> gradients, double lr)
{
    ++m_step;
    const double correction1 = 1.0 - std::pow(m_config.beta1, static_cast<double>(m_step));
    const double correction2 = 1.0 - std::pow(m_config.beta2, static_cast<double>(m_step));
    const kernels::AdamWStep s{static_cast<float>(m_config.beta1), static_cast<float>(m_config.beta2),
                               static_cast<float>(m_config.eps), static_cast<float>(lr * m_config.weightDecay),
                               static_cast<float>(lr / correction1), static_cast<float>(1.0 / std::sqrt(correction2))};
    std::size_t k = 0; // into the compact moments
    for (std::size_t r = 0; r < m_owned.size(); ++r) {
        const std::size_t n = m_owned[r].end - m_owned[r].begin;
        kernels::adamw(m_device.stream(), parameters[r], gradients[r], m_m.data() + k, m_v.data() + k,
                       m_decay.empty() ? nullptr : m_decay.data() + k, static_cast<std::int64_t>(n), s);
        k += n;
    }
}

bool AdamW::restore(const std::vector<float> &m, const std::vector<float> &v, std::uint64_t step)
{
    if (m.size() != m_m.size() || v.size() != m_v.size())
        return false;
    m_m.assignFromHost(m.data(), m.size());
    m_v.assignFromHost(v.data(), v.size());
    m_step = step;
    return true;
}

double LrSchedule::at(int step) const
{
    if (warmupSteps > 0 && step < warmupSteps)
        return lr * static_cast<double>(step + 1) / warmupSteps;
    const int decaySteps = std::max(1, totalSteps - warmupSteps);
    const double progress = std::min(1.0, static_cast<double>(step - warmupSteps) / decaySteps);
    return minLr + 0.5 * (lr - minLr) * (1.0 + std::cos(std::numbers::pi * progress));
}

double squaredNorm(std::span<const std::span<float>> gradients, Device &device)
{
    double sum = 0;
    for (const auto &span : gradients)
        sum += kernels::sumSquares(device.stream(), span.data(), static_cast<std::int64_t>(span.size()));
    return sum;
}

void clipToNorm(std::span<const std::span<float>> gradients, double norm, double maxNorm, Device &device)
{
    if (!(maxNorm > 0) || norm <= maxNorm)
        return;
    const float scale = static_cast<float>(maxNorm / (norm + 1e-6));
    for (const auto &span : gradients)
        kernels::scale(device.stream(), span.data(), static_cast<std::int64_t>(span.size()), scale);
}

} // namespace trellis::trainer
