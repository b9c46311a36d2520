// ZeRO stage 1 (Rajbhandari et al. 2020): data parallelism whose bucket reduction is a
// reduce-scatter, so each dp rank ends with the average of its own chunk of every bucket and
// updates only that chunk (the optimizer state is sharded); the updated chunks are all-gathered
// after the step so every rank holds the whole model again. The one implementation, with or
// without a pipeline or tensor parallelism.
// In mixed precision a rank keeps fp32 masters for its chunks only (the optimizer's shard) and
// all-gathers the compute copy's chunks after the step (Megatron-LM's distributed optimizer).
// Threading: training thread only.
#pragma once

#include "backend/trainer/parallel/data_parallel.h"

namespace trellis::trainer {

class Zero1 final : public DataParallel {
public:
    Zero1(DeviceCommunicator &dp, const GptModel<float> &model, const std::vector<int> &held, bool separateFirstUnit,
          const BucketOptions &options, DType compute);
    const char *name() const override { return "zero1"; }

    std::vector<OwnedRange> owned() override;
    bool shardsOverDp() const override { return true; }
    void normGroups(std::vector<plan::GroupKind> &groups) override { groups.push_back(plan::GroupKind::DpCp); }
    std::vector<std::span<float>> reducedGradients(int unit) override;
    void afterOptimizerStep() override;
    void setParameters(const float *model) override;
    std::uint64_t masterBytes() const override { return m_masters.size() * sizeof(float); }
    // The in-place reduce-scatter stages one chunk per bucket (and the bf16 copy when reduced in bf16).
    std::uint64_t bufferBytes() const override;

private:
    // Mixed precision: the masters of this rank's chunks, chunk after chunk in bucket order.
    DeviceBuffer<float> m_masters;
    std::vector<std::size_t> m_masterAt; // per bucket: its chunk's offset in m_masters
};

} // namespace trellis::trainer
