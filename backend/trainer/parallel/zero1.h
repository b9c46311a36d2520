// ZeRO stage 1 (Rajbhandari et al. 2020): data parallelism whose bucket reduction is a
// reduce-scatter, so each dp rank ends with the average of its own chunk of every bucket and
// updates only that chunk (the optimizer state is sharded); the updated chunks are all-gathered
// after the step so every rank holds the whole model again. The one implementation, with or
// without a pipeline or tensor parallelism.
// Threading: training thread only.
#pragma once

#include "trainer/parallel/data_parallel.h"

namespace trellis::trainer {

class Zero1 final : public DataParallel {
public:
    Zero1(Communicator &dp, const GptModel<float> &model, const std::vector<int> &held, bool separateFirstUnit,
          const BucketOptions &options);
    const char *name() const override { return "zero1"; }

    std::vector<OwnedRange> owned() override;
    bool shardsOverDp() const override { return true; }
    void normGroups(std::vector<Communicator *> &groups) override { groups.push_back(&m_dp); }
    std::vector<std::span<float>> reducedGradients(int unit) override;
    void afterOptimizerStep() override;
    // The in-place reduce-scatter stages one chunk per bucket.
    std::uint64_t bufferBytes() const override;
};

} // namespace trellis::trainer
