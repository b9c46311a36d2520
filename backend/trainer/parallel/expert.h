// Expert parallelism (Megatron-LM's layout, GShard's all-to-all): the ep ranks of a group are ep
// consecutive data-parallel replicas; each holds experts/ep of every mixture-of-experts layer's
// experts and reads its own micro-batches. The model sends each routed token to the rank holding
// its expert and the expert's output back (model/moe.cpp); here is what the step needs besides.
// Everything but the experts is replicated over dp as usual. An expert's gradient already sums
// every ep rank's tokens routed to it: the data-parallel reduction averages it over the ranks
// holding the same experts (expert_dp, dp/ep of them) after a 1/ep scale, i.e. the sum over all
// dp ranks' contributions / dp like every other gradient. In the norm and in checkpoints the
// experts count on every ep rank, the replicated rest on ep rank 0 only.
// Threading: training thread only.
#pragma once

#include "backend/trainer/parallel/strategy.h"

#include <vector>

namespace trellis::trainer {

class ExpertParallel final : public Strategy {
public:
    ExpertParallel(DeviceCommunicator &ep, const GptConfig &config);
    const char *name() const override { return "expert_parallel"; }
    void removeCopies(std::vector<ParamRange> &ranges) const override;
    void normGroups(std::vector<plan::GroupKind> &groups) override { groups.push_back(plan::GroupKind::Ep); }
    // The expert tensors of this rank's model, in model-index order.
    const std::vector<ParamRange> &expertRanges() const { return m_experts; }

private:
    DeviceCommunicator &m_ep;
    std::vector<ParamRange> m_experts, m_replicated; // replicated: everything else (counted on ep rank 0)
};

} // namespace trellis::trainer
