// AdamW and the LR schedule; see adamw.h.
#include "trainer/adamw.h"

#include <cmath>
#include <numbers>

namespace trellis::trainer {

AdamW::AdamW(std::size_t parameterCount, AdamWConfig config)
    : m_config(config), m_m(parameterCount, 0.0f), m_v(parameterCount, 0.0f), m_decay(parameterCount, true)
{
}

void AdamW::step(std::span<float> parameters, std::span<const float> gradients, double lr)
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
    for (std::size_t i = 0; i < parameters.size(); ++i) {
        const float g = gradients[i];
        m_m[i] = b1 * m_m[i] + (1.0f - b1) * g;
        m_v[i] = b2 * m_v[i] + (1.0f - b2) * g * g;
        if (m_decay[i])
            parameters[i] -= decay * parameters[i];
        parameters[i] -= stepSize * m_m[i] / (std::sqrt(m_v[i]) * invSqrtCorrection2 + eps);
    }
}

double LrSchedule::at(int step) const
{
    if (warmupSteps > 0 && step < warmupSteps)
        return lr * static_cast<double>(step + 1) / warmupSteps;
    const int decaySteps = std::max(1, totalSteps - warmupSteps);
    const double progress = std::min(1.0, static_cast<double>(step - warmupSteps) / decaySteps);
    return minLr + 0.5 * (lr - minLr) * (1.0 + std::cos(std::numbers::pi * progress));
}

double clipGradientNorm(std::span<float> gradients, double maxNorm)
{
    double sum = 0;
    for (float g : gradients)
        sum += static_cast<double>(g) * g;
    const double norm = std::sqrt(sum);
    if (maxNorm > 0 && norm > maxNorm) {
        const float scale = static_cast<float>(maxNorm / (norm + 1e-6));
        for (float &g : gradients)
            g *= scale;
    }
    return norm;
}

} // namespace trellis::trainer
