// Data parallelism (ZeRO stage 0): every dp rank holds the whole of its model's parameters and
// gradients (model_state.h) and averages the gradients over the dp group in buckets
// (buckets.h), started during the last micro-batch's backward as their gradients become final.
// Every rank then updates everything it holds, identically. ZeRO-1 (zero1.h) is this with a
// reduce-scatter and a sharded update. In mixed precision the fp32 parameters are the master
// weights and a whole compute copy (bf16/fp16) is what the model reads, remade from the masters
// after each step; gradients stay fp32 (accumulated in fp32 across micro-batches).
// Threading: training thread only.
#pragma once

#include "backend/trainer/parallel/buckets.h"
#include "backend/trainer/parallel/model_state.h"
#include "backend/trainer/parallel/outer_sync.h"
#include "backend/trainer/parallel/powersgd.h"
#include "backend/trainer/parallel/strategy.h"

#include <memory>
#include <optional>

namespace trellis::trainer {

struct BucketOptions {
    double bucketMb = 25.0;
    double firstBucketMb = 25.0;
    bool overlap = true;
    DType wire = DType::F32; // the element type gradients are reduced in (parallel.grad_reduce)
};

class DataParallel : public GradientSharding {
public:
    // model: the full-size fp32 reference (its units and initial parameters); held: the units this
    // rank holds (ascending); separateFirstUnit: the tied embedding is its own segment
    // (pipelines); compute: the element type the model computes in.
    DataParallel(DeviceCommunicator &dp, const GptModel<float> &model, const std::vector<int> &held, bool separateFirstUnit,
                 const BucketOptions &options, DType compute);
    const char *name() const override { return "data_parallel"; }

    void beginStep() override;
    void onGradientsReady(std::size_t offset) override;
    void reduceGradients() override;
    void afterOptimizerStep() override;
    std::vector<OwnedRange> owned() override;
    bool shardsOverDp() const override { return false; }
    std::vector<std::span<float>> reducedGradients(int unit) override;
    void setParameters(const float *model) override;
    // Expert parallelism: the gradients of `experts` (model-index ranges) reduce over expertDp
    // (see BucketReducer::setExpertRanges).
    void setExpertParallel(DeviceCommunicator &expertDp, int ep, const std::vector<ParamRange> &experts,
                           const kernels::Stream &stream);
    // Local updates (parallel.dp_sync local_sgd or diloco): no gradient reduction over dp; the
    // replicas step alone and meet every inner_steps steps (outer_sync.h). ZeRO stage 0 only.
    void setLocalUpdates(const plan::DpSyncSpec &spec);
    const OuterSync *outerSync() const { return m_outer.get(); }
    OuterSync *outerSync() { return m_outer.get(); }
    // Gradient compression (parallel.grad_compression powersgd): the 2-D tensors among `tensors`
    // (model index) are compressed, the rest averaged whole, all when the gradients are final (no
    // overlap with backward). ZeRO stage 0, every-step sync.
    void setGradCompression(const plan::GradCompressionSpec &spec, const std::vector<ParamTensor> &tensors, std::uint64_t seed);
    const PowerSgd *powerSgd() const { return m_powerSgd.get(); }
    PowerSgd *powerSgd() { return m_powerSgd.get(); }
    DpTraffic traffic() const; // all 0 with every-step whole-gradient reduction

    std::uint64_t parameterBytes() const override;
    std::uint64_t masterBytes() const override;
    std::uint64_t gradientBytes() const override { return m_state.size() * sizeof(float); }
    std::uint64_t bufferBytes() const override;
    double commMs() const override { return m_reducer->commMs(); }
    double exposedMs() const override { return m_reducer->exposedMs(); }

protected:
    // masters: whether the state keeps whole fp32 parameters (ZeRO-1 in mixed precision keeps
    // only its chunks' masters, apart).
    DataParallel(DeviceCommunicator &dp, const GptModel<float> &model, const std::vector<int> &held, bool separateFirstUnit,
                 const BucketOptions &options, DType compute, BucketReducer::Mode mode, bool masters);
    RawView acquireRaw(int unit, Pass pass) override;
    void releaseRaw(int, Pass) override {}
    // The owned ranges of local [begin, end), without padding; their parameters at params(local).
    template <typename Params>
    std::vector<OwnedRange> ownedIn(std::size_t begin, std::size_t end, Params params)
    {
        std::vector<OwnedRange> out;
        for (const auto &[range, local] : m_state.modelRanges(begin, end))
            out.push_back({range, params(local), m_state.grads() + local});
        return out;
    }

    DeviceCommunicator &m_dp;
    ModelState m_state;
    ComputeBuffer m_copy; // mixed precision: the held units' compute copy, laid out like m_state
    std::unique_ptr<BucketReducer> m_reducer;
    std::unique_ptr<OuterSync> m_outer; // local updates
    std::unique_ptr<PowerSgd> m_powerSgd; // gradient compression
    std::size_t m_wireBytes = 4;          // a gradient element on the wire (parallel.grad_reduce)
};

} // namespace trellis::trainer
