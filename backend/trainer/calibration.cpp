// See calibration.h.
#include "trainer/calibration.h"

#include "trainer/gpt_model.h"
#include "trainer/rng.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace trellis::trainer {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double allReduceSeconds(Communicator &world, std::size_t floats, int iterations)
{
    std::vector<float> data(floats, 1.0f);
    world.allReduce(data.data(), floats, ReduceOp::Sum); // warm-up
    world.barrier();
    const auto start = Clock::now();
    for (int i = 0; i < iterations; ++i)
        world.allReduce(data.data(), floats, ReduceOp::Sum);
    return secondsSince(start) / iterations;
}

} // namespace

Calibration runCalibration(Communicator &world)
{
    Calibration c;
    c.ranks = world.size();
    // The "tiny" preset at 4 sequences a micro-batch: what the CPU plans in resources/plans run.
    const GptConfig config{256, 128, 2, 128, 4, 512};
    const int batch = 4, seq = 128, bt = batch * seq;
    GptModel<float> model(config);
    model.initialize(1);
    Rng rng(world.rank() + 1);
    std::vector<std::int32_t> tokens(bt), targets(bt);
    for (int i = 0; i < bt; ++i) {
        tokens[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(rng.below(256));
        targets[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(rng.below(256));
    }
    auto iteration = [&] {
        model.zeroGradients();
        model.forward(tokens.data(), targets.data(), batch, seq);
        model.backward(1.0f);
    };
    iteration();
    iteration();
    world.barrier();
    const int iterations = 10;
    const auto start = Clock::now();
    for (int i = 0; i < iterations; ++i)
        iteration();
    const double seconds = secondsSince(start);
    // FLOPs as plan/cost_model.cpp counts them: forward GEMMs and attention, backward twice that.
    const double C = config.hidden, F = config.ffn, V = config.vocab;
    const double forward = config.layers * (2.0 * bt * (4 * C * C + 2 * C * F) + 4.0 * bt * seq * C) + 2.0 * bt * C * V;
    // The slowest rank's rate: in training every step waits for the slowest rank at its
    // collectives, so that is the rate a step runs at.
    const double rate = 3 * forward * iterations / seconds / 1e9;
    std::vector<double> rates(static_cast<std::size_t>(world.size()));
    world.allGather(&rate, rates.data(), 1, DataType::F64);
    c.gflopsPerRank = *std::min_element(rates.begin(), rates.end());

    if (world.size() > 1) {
        // t = latency + bytes · 2(n−1)/n / bandwidth, fitted through a small and a large message.
        const std::size_t small = 1024, large = 1u << 20; // floats: 4 KiB and 4 MiB
        double ts = allReduceSeconds(world, small, 200), tl = allReduceSeconds(world, large, 20);
        world.allReduce(&ts, 1, ReduceOp::Avg);
        world.allReduce(&tl, 1, ReduceOp::Avg);
        const double factor = 2.0 * (world.size() - 1) / world.size();
        const double perByte = std::max(1e-15, (tl - ts) / ((large - small) * 4.0 * factor));
        c.bandwidthGBps = 1.0 / perByte / 1e9;
        c.latencyUs = std::max(0.0, ts - small * 4.0 * factor * perByte) * 1e6;
    }
    return c;
}

} // namespace trellis::trainer
