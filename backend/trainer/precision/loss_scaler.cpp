// See loss_scaler.h.
#include "backend/trainer/precision/loss_scaler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace trellis::trainer {

LossScaler::LossScaler(const plan::LossScaleSpec &spec, bool enabled)
    : m_spec(spec), m_enabled(enabled), m_scale(spec.initial)
{
}

bool LossScaler::update(bool overflow)
{
    if (!m_enabled)
        return false;
    if (overflow) {
        m_scale = std::max(m_spec.minScale, m_scale * m_spec.backoff);
        m_clean = 0;
        ++m_inARow;
        ++m_skipped;
        return true;
    }
    m_inARow = 0;
    if (++m_clean >= m_spec.growthInterval) {
        m_scale *= m_spec.growth;
        m_clean = 0;
    }
    return false;
}

void LossScaler::restore(double scale, int cleanSteps)
{
    if (scale > 0) {
        m_scale = scale;
        m_clean = std::max(0, cleanSteps);
    }
}

std::string formatScale(double scale)
{
    char text[64];
    if (std::isfinite(scale) && scale == std::floor(scale) && std::fabs(scale) < 9.0e15)
        std::snprintf(text, sizeof text, "%.0f", scale);
    else
        std::snprintf(text, sizeof text, "%g", scale);
    return text;
}

} // namespace trellis::trainer
