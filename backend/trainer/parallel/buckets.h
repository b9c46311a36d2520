// Gradient buckets shared by data parallelism (ZeRO 0) and ZeRO-1: each segment of the local
// gradient buffer (model_state.h) is cut into buckets from its end towards its start — the order
// in which backward finishes them — with the same boundaries on every rank of the dp group. Each
// bucket's non-blocking reduction starts as soon as its gradients are final (during the last
// backward) or at finish(). AllReduce averages whole buckets; ReduceScatter leaves each rank the
// average of its own contiguous chunk of every bucket. comm_ms is the union of the buckets'
// lifetimes, exposed_ms the time finish() waited. The gradients are fp32; `wire` bf16 (the plan's
// parallel.grad_reduce) reduces a bf16 copy of each bucket instead (one bf16 buffer the size of
// the gradients, kept) and widens the result back — half the bytes, a sum rounded at every step
// of the algorithm.
// Threading: training thread only.
#pragma once

#include "kernels/ops.h"
#include "backend/trainer/comm/communicator.h"
#include "backend/trainer/parallel/model_state.h"
#include "backend/trainer/precision/compute_copy.h"

#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

namespace trellis::trainer {

struct Bucket {
    std::size_t begin = 0;
    std::size_t end = 0;
    std::size_t size() const { return end - begin; }
    bool operator==(const Bucket &) const = default;
};

// Buckets over the segments (last segment first, each from its end): the very first bucket has
// firstElements, the others bucketElements, a segment's last whatever remains of it; sizes are
// rounded up to `multiple`, which divides every segment.
std::vector<Bucket> makeBuckets(const std::vector<ModelState::Segment> &segments, std::size_t bucketElements,
                                std::size_t firstElements, std::size_t multiple);

class BucketReducer {
public:
    enum class Mode { AllReduce, ReduceScatter };

    BucketReducer(DeviceCommunicator &dp, float *gradients, std::vector<Bucket> buckets, Mode mode, bool overlap,
                  Device &device, DType wire = DType::F32);

    void beginStep();
    // Gradients in local [offset, end of their segment) and every later segment are final.
    void onGradientsReady(std::size_t offset);
    // Starts the remaining buckets and waits for all of them.
    void finish();

    // Expert parallelism (AllReduce mode): the parts of a bucket inside `ranges` (local, sorted)
    // hold experts, which only the ranks holding the same experts share: they are averaged over
    // `expertDp` (after a 1/ep scale, so the result is the sum over all dp ranks' contributions
    // / dp, like the rest) instead of over dp; the other parts as before. A bucket then takes
    // one call per part.
    void setExpertRanges(std::vector<Bucket> ranges, DeviceCommunicator &expertDp, int ep, const kernels::Stream &stream);

    // This rank's chunk of bucket i in ReduceScatter mode.
    Bucket ownedChunk(std::size_t i) const;
    const std::vector<Bucket> &buckets() const { return m_buckets; }
    double commMs() const { return m_commMs; }
    double exposedMs() const { return m_exposedMs; }
    // Bytes of the bf16 copy of the gradients (0 with fp32 on the wire).
    std::uint64_t stagingBytes() const { return m_wireCopy ? m_wireCopy->bytes() : 0; }

private:
    void launch(std::size_t i);
    void poll();
    void complete(std::size_t i); // widens staged results back into the gradients

    using Clock = std::chrono::steady_clock;
    // A reduction of gradients staged in the wire copy: the `count` reduced values at `at` in the
    // copy (and in the gradients) are widened back.
    struct Staged {
        std::size_t at = 0, count = 0;
    };
    struct InFlight {
        std::vector<std::unique_ptr<CommHandle>> handles;
        std::vector<Staged> staged;
        Clock::time_point start;
        Clock::time_point end;
        bool done = false;
    };

    DeviceCommunicator &m_dp;
    float *m_gradients;
    std::vector<Bucket> m_buckets;
    Mode m_mode;
    bool m_overlap;
    std::vector<InFlight> m_inFlight; // per bucket
    std::vector<Bucket> m_expertRanges;
    DeviceCommunicator *m_expertDp = nullptr;
    int m_ep = 1;
    kernels::Stream m_stream;
    DType m_wire;
    std::unique_ptr<ComputeBuffer> m_wireCopy; // the gradients in the wire type (bf16 only)
    std::size_t m_next = 0;           // next bucket to launch (in backward order)
    double m_commMs = 0;
    double m_exposedMs = 0;
};

// Union of time intervals, in ms.
double unionMs(std::vector<std::pair<std::chrono::steady_clock::time_point, std::chrono::steady_clock::time_point>> spans);

} // namespace trellis::trainer
