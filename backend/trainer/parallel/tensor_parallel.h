// Tensor parallelism (Megatron-LM) around the step: the split itself lives in the model (heads,
// MLP width and vocabulary divided over the tp group, gpt_model_parallel.cpp); here is what the
// step needs besides. Tensors every tp rank holds alike (norms, position embeddings, row-parallel
// biases) count in the norm and in checkpoints on tp rank 0 only, the squared norm is summed
// over the tp group, and a rank's ranges map to the whole model's index (the tp = 1 layout) so
// checkpoints and dumps are independent of tp: a checkpoint written at one tp resumes at another.
// Threading: training thread only.
#pragma once

#include "backend/trainer/parallel/strategy.h"

namespace trellis::trainer {

// Where ranges of a tp shard's model index sit in the whole model's index: for each run, the
// whole-model range and the offset within the local range it starts at (runs follow local order).
// Identity for tp = 1.
class WholeIndex {
public:
    explicit WholeIndex(const GptConfig &config);
    std::size_t wholeCount() const { return m_wholeCount; }
    std::vector<std::pair<ParamRange, std::size_t>> runs(const ParamRange &local) const;

private:
    struct Run {
        std::size_t local, whole, size;
    };
    std::vector<Run> m_runs; // sorted by local offset, covering the local model
    std::size_t m_wholeCount = 0;
};

class TensorParallel final : public Strategy {
public:
    TensorParallel(DeviceCommunicator &tp, const GptConfig &config);
    const char *name() const override { return "tensor_parallel"; }
    void removeCopies(std::vector<ParamRange> &ranges) const override;
    void normGroups(std::vector<plan::GroupKind> &groups) override { groups.push_back(plan::GroupKind::Tp); }

private:
    DeviceCommunicator &m_tp;
    std::vector<ParamRange> m_replicated; // sorted; counted on tp rank 0
};

// Removes `cut` (sorted, disjoint) from `ranges`.
std::vector<ParamRange> subtractRanges(const std::vector<ParamRange> &ranges, const std::vector<ParamRange> &cut);

} // namespace trellis::trainer
