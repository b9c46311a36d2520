// Context parallelism (Megatron-LM's, with ring attention): the cp ranks of a data-parallel
// replica read the same sequences and each keeps seqLen/cp tokens of every one (contextPositions:
// two chunks a rank with the zigzag layout); the model's attention passes keys and values around
// the cp group (model/ring_attention.cpp). Everything else is per token, so the gradients of the
// cp ranks are partial sums over different tokens of the same sequences: the data-parallel
// strategy reduces them over dp × cp (the dp_cp group), which with equal token counts a rank is
// the mean over the whole batch. Threading: training thread only.
#pragma once

#include "backend/trainer/parallel/strategy.h"

#include <cstdint>
#include <vector>

namespace trellis::trainer {

class ContextParallel final : public Strategy {
public:
    explicit ContextParallel(const GptConfig &config);
    const char *name() const override { return "context"; }
    // This rank's tokens and targets of each micro-batch (batch rows of seqLen / cp, in the order
    // of its positions); valid until the next call.
    std::vector<MicroBatch> localBatches(const std::vector<MicroBatch> &whole);

private:
    GptConfig m_config;
    std::vector<std::vector<std::int32_t>> m_tokens, m_targets;
};

} // namespace trellis::trainer
