// AdamW and the LR schedule; see adamw.h.
#include "trainer/adamw.h"

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

AdamW::AdamW(std::vector<ParamRange> owned, AdamWConfig config)
    : m_config(config), m_owned(std::move(owned)), m_m(totalSize(m_owned), 0.0f), m_v(m_m.size(), 0.0f)
{
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
    const float b1 = static_cast<float>(m_config.beta1);
    const float b2 = static_cast<float>(m_config.beta2);
    const float stepSize = static_cast<float>(lr / correction1);
    const float invSqrtCorrection2 = static_cast<float>(1.0 / std::sqrt(correction2));
    const float eps = static_cast<float>(m_config.eps);
    const float decay = static_cast<float>(lr * m_config.weightDecay);
    std::size_t k = 0; // index into the compact moment arrays
    for (std::size_t r = 0; r < m_owned.size(); ++r) {
        const ParamRange &range = m_owned[r];
        float *p = parameters[r];
        const float *grad = gradients[r];
        for (std::size_t i = range.begin, j = 0; i < range.end; ++i, ++j, ++k) {
            const float g = grad[j];
            m_m[k] = b1 * m_m[k] + (1.0f - b1) * g;
            m_v[k] = b2 * m_v[k] + (1.0f - b2) * g * g;
            if (m_decay.empty() || m_decay[i])
                p[j] -= decay * p[j];
            p[j] -= stepSize * m_m[k] / (std::sqrt(m_v[k]) * invSqrtCorrection2 + eps);
        }
    }
}

bool AdamW::restore(std::vector<float> m, std::vector<float> v, std::uint64_t step)
{
    if (m.size() != m_m.size() || v.size() != m_v.size())
        return false;
    m_m = std::move(m);
    m_v = std::move(v);
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

double squaredNorm(const float *gradients, const std::vector<ParamRange> &ranges)
{
    double sum = 0;
    for (const auto &r : ranges)
        for (std::size_t i = r.begin; i < r.end; ++i)
            sum += static_cast<double>(gradients[i]) * gradients[i];
    return sum;
}

double squaredNorm(std::span<const std::span<float>> gradients)
{
    double sum = 0;
    for (const auto &span : gradients)
        for (const float g : span)
            sum += static_cast<double>(g) * g;
    return sum;
}

void clipToNorm(std::span<const std::span<float>> gradients, double norm, double maxNorm)
{
    if (!(maxNorm > 0) || norm <= maxNorm)
        return;
    const float scale = static_cast<float>(maxNorm / (norm + 1e-6));
    for (const auto &span : gradients)
        for (float &g : span)
            g *= scale;
}

void clipToNorm(float *gradients, const std::vector<ParamRange> &ranges, double norm, double maxNorm)
{
    if (!(maxNorm > 0) || norm <= maxNorm)
        return;
    const float scale = static_cast<float>(maxNorm / (norm + 1e-6));
    for (const auto &r : ranges)
        for (std::size_t i = r.begin; i < r.end; ++i)
            gradients[i] *= scale;
}

} // namespace trellis::trainer
