// Data-parallel gradient reduction in buckets, overlapped with backward. The flat gradient buffer
// is cut into buckets from its end towards offset 0 — the order in which backward finishes them —
// with the same boundaries on every rank. Each bucket's non-blocking reduction starts as soon as
// the model reports its gradients final; finish() starts what is left and waits for everything.
// AllReduce mode averages whole buckets (ZeRO 0); ReduceScatter mode leaves each rank the average
// of its own contiguous chunk of every bucket (ZeRO 1), the chunk it updates. Times: comm_ms is
// the sum of bucket lifetimes (launch to completion), exposed_ms the time finish() waited.
// Threading: used from the training thread only.
#pragma once

#include "trainer/communicator.h"

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

// Buckets covering [0, total) from the end: the first (highest) has firstElements, the others
// bucketElements, the last whatever remains. Sizes are rounded up to `multiple` (total must be a
// multiple of it), so every bucket splits evenly between `multiple` ranks.
std::vector<Bucket> makeBuckets(std::size_t total, std::size_t bucketElements, std::size_t firstElements,
                                std::size_t multiple);

class GradientReducer {
public:
    enum class Mode { AllReduce, ReduceScatter };

    GradientReducer(Communicator &dp, float *gradients, std::vector<Bucket> buckets, Mode mode, bool overlap);

    void beginStep();
    // Gradients in [offset, end of buffer) are final: start every bucket they cover.
    void onGradientsReady(std::size_t offset);
    // Starts the remaining buckets and waits for all of them.
    void finish();

    // This rank's chunk of bucket i in ReduceScatter mode.
    Bucket ownedChunk(std::size_t i) const;
    const std::vector<Bucket> &buckets() const { return m_buckets; }
    double commMs() const { return m_commMs; }
    double exposedMs() const { return m_exposedMs; }
    std::size_t bucketsStartedEarly() const { return m_startedEarly; }

private:
    void launch(std::size_t i);
    void poll();

    using Clock = std::chrono::steady_clock;
    struct InFlight {
        std::unique_ptr<CommHandle> handle;
        Clock::time_point start;
        Clock::time_point end;
        bool done = false;
    };

    Communicator &m_dp;
    float *m_gradients;
    std::vector<Bucket> m_buckets;
    Mode m_mode;
    bool m_overlap;
    std::vector<InFlight> m_inFlight; // per bucket
    std::size_t m_next = 0;           // next bucket to launch (buckets are ordered end → start)
    std::size_t m_startedEarly = 0;
    double m_commMs = 0;
    double m_exposedMs = 0;
};

} // namespace trellis::trainer
