// See collective_bench.h. The iteration count of each row is agreed by all ranks (rank 0's
// estimate, broadcast), so every rank runs the same number of collectives.
#include "backend/trainer/measure/collective_bench.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace trellis::trainer {
namespace {

using Clock = std::chrono::steady_clock;

void runOnce(DeviceCommunicator &c, const std::string &op, std::vector<float> &a, std::vector<float> &b, std::size_t count)
{
    const int n = c.size();
    const std::size_t per = std::max<std::size_t>(1, count / static_cast<std::size_t>(n));
    if (op == "all_reduce")
        c.allReduce(a.data(), a.data(), count, DataType::F32, ReduceOp::Sum);
    else if (op == "reduce_scatter")
        c.reduceScatter(a.data(), b.data(), per, DataType::F32, ReduceOp::Sum);
    else if (op == "all_gather")
        c.allGather(a.data(), b.data(), per, DataType::F32);
    else if (op == "all_to_all")
        c.allToAll(a.data(), b.data(), per, DataType::F32);
    else if (op == "broadcast")
        c.broadcast(a.data(), count, DataType::F32, 0);
    else if (op == "send_recv") {
        // Pairs (0,1), (2,3), ...; an odd last rank idles.
        const int me = c.rank(), peer = me ^ 1;
        if (peer < n) {
            if (me % 2 == 0) {
                c.send(a.data(), count, DataType::F32, peer, 1);
                c.recv(b.data(), count, DataType::F32, peer, 2);
            } else {
                c.recv(b.data(), count, DataType::F32, peer, 1);
                c.send(a.data(), count, DataType::F32, peer, 2);
            }
        }
    }
}

} // namespace

std::vector<CollectiveBenchRow> runCollectiveBench(DeviceCommunicator &c, const CollectiveBenchOptions &o, std::FILE *out)
{
    std::vector<CollectiveBenchRow> rows;
    const int n = c.size();
    if (out && c.rank() == 0) {
        std::fprintf(out, "# trellis-trainer --bench-collectives: %d ranks, fp32, times are the slowest rank's mean\n", n);
        std::fprintf(out, "%-15s %12s %8s %12s %12s %12s\n", "op", "size(B)", "iters", "time(us)", "algbw(GB/s)",
                     "busbw(GB/s)");
    }
    for (const auto &op : o.ops) {
        for (std::size_t bytes = o.minBytes; bytes <= o.maxBytes; bytes *= static_cast<std::size_t>(o.factor)) {
            const std::size_t count = std::max<std::size_t>(static_cast<std::size_t>(n), bytes / sizeof(float));
            std::vector<float> a(count, 1.0f), b(count, 0.0f);
            for (int i = 0; i < o.warmup; ++i)
                runOnce(c, op, a, b, count);
            // Estimate iterations from one timed run, agreed on by all ranks.
            c.barrier();
            auto start = Clock::now();
            runOnce(c, op, a, b, count);
            double oneMs = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
            c.allReduce(&oneMs, 1, ReduceOp::Avg);
            int iterations = std::clamp(static_cast<int>(o.targetMs / std::max(oneMs, 1e-3)), 1, 1000);
            c.broadcast(&iterations, 1, DataType::I32, 0);
            c.barrier();
            start = Clock::now();
            for (int i = 0; i < iterations; ++i)
                runOnce(c, op, a, b, count);
            double totalMs = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
            std::vector<double> all(static_cast<std::size_t>(n));
            c.allGather(&totalMs, all.data(), 1, DataType::F64);
            const double worst = *std::max_element(all.begin(), all.end());
            CollectiveBenchRow row;
            row.op = op;
            row.bytes = count * sizeof(float);
            row.iterations = iterations;
            row.timeUs = worst * 1000.0 / iterations;
            row.algGBps = row.timeUs > 0 ? static_cast<double>(row.bytes) / (row.timeUs * 1e3) : 0;
            row.busGBps = row.algGBps * busBandwidthFactor(op == "send_recv" ? "send" : op, n);
            rows.push_back(row);
            if (out && c.rank() == 0)
                std::fprintf(out, "%-15s %12zu %8d %12.2f %12.3f %12.3f\n", op.c_str(), row.bytes, iterations, row.timeUs,
                             row.algGBps, row.busGBps);
        }
    }
    c.takeRecords();
    return rows;
}

} // namespace trellis::trainer
