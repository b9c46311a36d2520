// The executor without a pipeline: one model instance runs every micro-batch of the step in turn,
// forward then backward, gradients accumulating with weight 1/m in the storage the data-parallel
// strategy serves through the unit hooks. During the last micro-batch's backward it tells that
// strategy which gradients are final, so their reduction overlaps the rest of backward.
// Threading: training thread only.
#pragma once

#include "backend/trainer/parallel/strategy.h"

#include <memory>

namespace trellis::trainer {

// T: the model's element type (the storage's compute type).
template <typename T>
class Sequential final : public Executor {
public:
    Sequential(const GptConfig &config, GradientSharding &storage, Recompute recompute, const ModelGroups &groups,
               Device &device);
    StepOutput run(const std::vector<MicroBatch> &batches, const Phase &phase, double lossScale) override;
    std::uint64_t activationBytes() const override { return m_model->activationBytes(); }
    const std::vector<TimelineSpan> &spans() const override { return m_spans; }
    ExpertLoad takeExpertLoad() override { return m_model->takeExpertLoad(); }

private:
    GradientSharding &m_storage;
    std::unique_ptr<GptModel<T>> m_model;
    std::vector<TimelineSpan> m_spans; // none: only pipelines trace their actions
};

} // namespace trellis::trainer
