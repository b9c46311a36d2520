// Causal load balance of ring attention (context parallelism): the attention compute each cp rank
// does in a layer's forward and backward, with the contiguous layout (rank r holds chunk r of cp:
// the last rank attends to every earlier block, rank 0 only to its own) against zigzag (chunks r
// and 2·cp − 1 − r of 2·cp). Runs the trainer's own ring kernels in one process, block by block,
// exactly as rank r meets them (its queries against owner (r − s) mod cp at step s), so the
// figures are compute only, free of the ring's transfers and of core sharing. The ring's makespan
// is Σ over steps of the slowest rank's block (every step waits for the exchange).
//   build/bin/bench_ring_balance [seq_len] [heads] [head_size]
#include "kernels/cpu/cpu_ops.h"
#include "backend/trainer/model/gpt_model.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
namespace cpu = trellis::kernels::cpu;

struct Result {
    std::vector<double> rankMs;  // per rank, the whole ring
    double makespanMs = 0;       // Σ over steps of the slowest rank's block
};

Result measure(int cp, bool zigzag, int seq, int heads, int hs)
{
    const int local = seq / cp, C = heads * hs, ldq = C + 2 * C, width = 2 * C;
    std::mt19937 gen(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<std::vector<std::int32_t>> positions(static_cast<std::size_t>(cp));
    for (int r = 0; r < cp; ++r)
        positions[static_cast<std::size_t>(r)] = trellis::trainer::contextPositions(cp, r, local, zigzag);
    auto random = [&](std::size_t n) {
        std::vector<float> v(n);
        for (float &x : v)
            x = normal(gen) * 0.5f;
        return v;
    };
    const std::vector<float> q = random(static_cast<std::size_t>(local) * ldq), kv = random(static_cast<std::size_t>(local) * width),
                             dOut = random(static_cast<std::size_t>(local) * C);
    std::vector<float> out(static_cast<std::size_t>(local) * C), rowMax(static_cast<std::size_t>(heads) * local),
        rowSum(rowMax.size()), lse(rowMax.size(), 0.0f), delta(rowMax.size(), 0.0f), dq(q.size()), dkv(kv.size());
    Result result;
    result.rankMs.assign(static_cast<std::size_t>(cp), 0.0);
    std::vector<double> slowest(static_cast<std::size_t>(2 * cp), 0.0); // forward steps, then backward steps
    for (int r = 0; r < cp; ++r) {
        std::fill(rowMax.begin(), rowMax.end(), -1e30f);
        std::fill(rowSum.begin(), rowSum.end(), 0.0f);
        std::fill(out.begin(), out.end(), 0.0f);
        // lse from a real forward so the backward's exponentials are those of training.
        for (int step = 0; step < cp; ++step) {
            const int owner = (r - step + cp) % cp;
            const auto t0 = Clock::now();
            cpu::ringAttentionBlockForward(out.data(), rowMax.data(), rowSum.data(), q.data(), ldq, kv.data(),
                                           positions[static_cast<std::size_t>(r)].data(),
                                           positions[static_cast<std::size_t>(owner)].data(), 1, local, local, heads, heads, hs);
            const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
            result.rankMs[static_cast<std::size_t>(r)] += ms;
            slowest[static_cast<std::size_t>(step)] = std::max(slowest[static_cast<std::size_t>(step)], ms);
        }
        cpu::ringAttentionFinish(out.data(), lse.data(), out.data(), rowMax.data(), rowSum.data(), 1, local, heads, hs);
        cpu::ringAttentionDelta(delta.data(), dOut.data(), out.data(), 1, local, heads, hs);
        for (int step = 0; step < cp; ++step) {
            const int owner = (r - step + cp) % cp;
            const auto t0 = Clock::now();
            cpu::ringAttentionBlockBackward(dq.data(), ldq, dkv.data(), dOut.data(), q.data(), kv.data(), lse.data(), delta.data(),
                                            positions[static_cast<std::size_t>(r)].data(),
                                            positions[static_cast<std::size_t>(owner)].data(), 1, local, local, heads, heads, hs);
            const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
            result.rankMs[static_cast<std::size_t>(r)] += ms;
            double &slot = slowest[static_cast<std::size_t>(cp + step)];
            slot = std::max(slot, ms);
        }
    }
    for (double s : slowest)
        result.makespanMs += s;
    return result;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc > 1 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
        std::printf("usage: bench_ring_balance [seq_len] [heads] [head_size]\n"
                    "Attention compute per context-parallel rank, contiguous against zigzag layout (cp 2, 4, 8).\n");
        return 0;
    }
    const int seq = argc > 1 ? std::atoi(argv[1]) : 2048;
    const int heads = argc > 2 ? std::atoi(argv[2]) : 4;
    const int hs = argc > 3 ? std::atoi(argv[3]) : 64;
    cpu::setKernelThreads(1);
    std::printf("ring attention compute per rank, one sequence of %d tokens, %d heads of %d (forward + backward, ms)\n", seq,
                heads, hs);
    for (int cp : {2, 4, 8}) {
        if (seq % (2 * cp) != 0)
            continue;
        const Result contiguous = measure(cp, false, seq, heads, hs), zigzag = measure(cp, true, seq, heads, hs);
        std::printf("\ncp %d\n  rank   contiguous      zigzag\n", cp);
        for (int r = 0; r < cp; ++r)
            std::printf("  %4d  %10.1f  %10.1f\n", r, contiguous.rankMs[static_cast<std::size_t>(r)],
                        zigzag.rankMs[static_cast<std::size_t>(r)]);
        auto spread = [](const Result &x) {
            const auto [lo, hi] = std::minmax_element(x.rankMs.begin(), x.rankMs.end());
            return *hi / std::max(*lo, 1e-9);
        };
        std::printf("  slowest/fastest rank  %6.2fx   %6.2fx\n", spread(contiguous), spread(zigzag));
        std::printf("  ring makespan (ms)    %8.1f   %8.1f   zigzag/contiguous %.2f\n", contiguous.makespanMs,
                    zigzag.makespanMs, zigzag.makespanMs / contiguous.makespanMs);
    }
    return 0;
}
