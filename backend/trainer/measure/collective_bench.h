// trellis-trainer --bench-collectives: times every collective of the communicator over a range
// of sizes and prints time, algorithm bandwidth and bus bandwidth (nccl-tests definitions:
// algbw = bytes / time, busbw = algbw · factor, factor 2(n−1)/n for all-reduce, (n−1)/n for
// reduce-scatter, all-gather and all-to-all, 1 for broadcast and send/recv).
#pragma once

#include "backend/trainer/comm/communicator.h"

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace trellis::trainer {

struct CollectiveBenchOptions {
    std::size_t minBytes = 8;
    std::size_t maxBytes = 64u << 20;
    int factor = 4;           // size multiplier between rows
    int warmup = 3;
    double targetMs = 200;    // time budget per row; iterations adapt to it
    std::vector<std::string> ops = {"all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "send_recv"};
};

struct CollectiveBenchRow {
    std::string op;
    std::size_t bytes = 0;
    int iterations = 0;
    double timeUs = 0;
    double algGBps = 0;
    double busGBps = 0;
};

// Collective over `comm`; every rank must call it. Rank 0 prints the table to `out` (may be null).
std::vector<CollectiveBenchRow> runCollectiveBench(DeviceCommunicator &comm, const CollectiveBenchOptions &options,
                                                   std::FILE *out);

} // namespace trellis::trainer
