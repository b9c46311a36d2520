// fp16's dynamic loss scaling (Micikevicius et al. 2018, as apex and Megatron-LM do it; the plan's
// parallel.loss_scale): the loss is multiplied by scale() before backward, so small gradients do
// not underflow fp16, and the fp32 gradients divided by it before the optimizer. A step whose
// gradients overflowed (inf or NaN anywhere, agreed by every rank) is skipped and the scale backs
// off; after growth_interval clean steps it grows. Disabled (fp32, bf16): scale 1, never skips.
// Threading: training thread only.
#pragma once

#include "backend/plan/plan.h"

#include <cstdint>
#include <string>

namespace trellis::trainer {

class LossScaler {
public:
    LossScaler(const plan::LossScaleSpec &spec, bool enabled);
    bool enabled() const { return m_enabled; }
    double scale() const { return m_enabled ? m_scale : 1.0; }
    // After the step's gradients are known: overflow (every rank's verdict) backs the scale off and
    // skips the step; otherwise the clean-step count may grow it. Returns whether to skip.
    bool update(bool overflow);
    // Skipped steps in a row (the last ones) and in all.
    int skippedInARow() const { return m_inARow; }
    std::uint64_t skippedTotal() const { return m_skipped; }
    bool tooManySkipped() const { return m_inARow > m_spec.maxSkipped; }
    // Checkpoint state: the scale and the clean steps since the last change.
    int cleanSteps() const { return m_clean; }
    void restore(double scale, int cleanSteps);

private:
    plan::LossScaleSpec m_spec;
    bool m_enabled;
    double m_scale;
    int m_clean = 0;
    int m_inARow = 0;
    std::uint64_t m_skipped = 0;
};

// A scale as people read it: a whole number as such (65536, 137438953472), else %g.
std::string formatScale(double scale);

} // namespace trellis::trainer
