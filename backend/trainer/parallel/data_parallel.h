// Data parallelism (ZeRO stage 0): every dp rank holds the whole of its model's parameters and
// gradients (model_state.h) and averages the gradients over the dp group in buckets
// (buckets.h), started during the last micro-batch's backward as their gradients become final.
// Every rank then updates everything it holds, identically. ZeRO-1 (zero1.h) is this with a
// reduce-scatter and a sharded update.
// Threading: training thread only.
#pragma once

#include "trainer/parallel/buckets.h"
#include "trainer/parallel/model_state.h"
#include "trainer/parallel/strategy.h"

#include <memory>
#include <optional>

namespace trellis::trainer {

struct BucketOptions {
    double bucketMb = 25.0;
    double firstBucketMb = 25.0;
    bool overlap = true;
};

class DataParallel : public GradientSharding {
public:
    // model: the full-size reference (its units and current parameters); held: the units this
    // rank holds (ascending); separateFirstUnit: the tied embedding is its own segment (pipelines).
    DataParallel(Communicator &dp, const GptModel<float> &model, const std::vector<int> &held, bool separateFirstUnit,
                 const BucketOptions &options);
    const char *name() const override { return "data_parallel"; }

    View acquire(int unit, Pass pass) override;
    void release(int, Pass) override {}

    void beginStep() override;
    void onGradientsReady(std::size_t offset) override;
    void reduceGradients() override;
    std::vector<OwnedRange> owned() override;
    bool shardsOverDp() const override { return false; }
    std::vector<std::span<float>> reducedGradients(int unit) override;
    void setParameters(const float *model) override { m_state.load(model); }
    // Expert parallelism: the gradients of `experts` (model-index ranges) reduce over expertDp
    // (see BucketReducer::setExpertRanges).
    void setExpertParallel(Communicator &expertDp, int ep, const std::vector<ParamRange> &experts,
                           const kernels::Stream &stream);

    std::uint64_t parameterBytes() const override { return m_state.size() * sizeof(float); }
    std::uint64_t gradientBytes() const override { return m_state.size() * sizeof(float); }
    std::uint64_t bufferBytes() const override { return 0; }
    double commMs() const override { return m_reducer->commMs(); }
    double exposedMs() const override { return m_reducer->exposedMs(); }

protected:
    DataParallel(Communicator &dp, const GptModel<float> &model, const std::vector<int> &held, bool separateFirstUnit,
                 const BucketOptions &options, BucketReducer::Mode mode);
    // The owned ranges of local [begin, end), without padding.
    std::vector<OwnedRange> ownedIn(std::size_t begin, std::size_t end);

    Communicator &m_dp;
    ModelState m_state;
    std::unique_ptr<BucketReducer> m_reducer;
};

} // namespace trellis::trainer
