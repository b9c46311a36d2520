// See calibration.h.
#include "backend/trainer/measure/calibration.h"

#include "backend/trainer/optimizer/adamw.h"
#include "backend/trainer/model/gpt_model.h"
#include "backend/trainer/common/rng.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace trellis::trainer {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double allReduceSeconds(DeviceCommunicator &world, std::size_t floats, int iterations)
{
    std::vector<float> data(floats, 1.0f);
    world.allReduce(data.data(), floats, ReduceOp::Sum); // warm-up
    world.barrier();
    const auto start = Clock::now();
    for (int i = 0; i < iterations; ++i)
        world.allReduce(data.data(), floats, ReduceOp::Sum);
    return secondsSince(start) / iterations;
}

// The median of five timed windows, every rank starting each together: a burst of load from
// outside the job (a shared machine) does not set the figure, while contention between the job's
// own ranks, present in every window, does.
template <typename Window>
double medianWindow(DeviceCommunicator &world, Window &&window)
{
    std::vector<double> windows;
    for (int i = 0; i < 5; ++i) {
        world.barrier();
        windows.push_back(window());
    }
    std::sort(windows.begin(), windows.end());
    return windows[windows.size() / 2];
}

// The "tiny" preset at 4 sequences a micro-batch (what the CPU plans in resources/plans run):
// forward and backward timed, as GFLOP/s of the FLOPs backend/plan/cost/cost_model.cpp counts
// (forward GEMMs and attention, backward twice that). The slowest rank's rate: in training every
// step waits for the slowest rank at its collectives.
double measureComputeRate(DeviceCommunicator &world, HostCommunicator &host, GptModel<float> &model, const GptConfig &config)
{
    const int batch = 4, seq = 128, bt = batch * seq;
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
    const int iterations = 4; // a window
    const double seconds = medianWindow(world, [&] {
        const auto start = Clock::now();
        for (int i = 0; i < iterations; ++i)
            iteration();
        return secondsSince(start);
    });
    const double C = config.hidden, F = config.ffn, V = config.vocab;
    const double forward = config.layers * (2.0 * bt * (4 * C * C + 2 * C * F) + 4.0 * bt * seq * C) + 2.0 * bt * C * V;
    const double rate = 3 * forward * iterations / seconds / 1e9;
    const std::vector<double> rates = host.allGather(rate);
    return *std::min_element(rates.begin(), rates.end());
}

// The update, per parameter: zero the gradients and sum their squares (all parameters), then
// AdamW (all owned; here every parameter), timed apart; the slowest rank's figures.
void measureUpdateCost(DeviceCommunicator &world, HostCommunicator &host, GptModel<float> &model, Calibration &c)
{
    const std::size_t n = model.parameterCount();
    AdamW adam({{0, n}}, AdamWConfig{});
    float *params = model.parameters().data();
    float *grads = model.gradients().data();
    const int rounds = 5;
    const double perRound = 1e9 / (rounds * static_cast<double>(n));
    volatile double sink = 0; // keeps the sums from being optimised away
    const double zeroAndNorm = medianWindow(world, [&] {
        const auto t0 = Clock::now();
        for (int i = 0; i < rounds; ++i) {
            model.zeroGradients();
            double sumSquares = 0;
            for (std::size_t j = 0; j < n; ++j)
                sumSquares += static_cast<double>(grads[j]) * grads[j];
            sink = sink + sumSquares;
        }
        return secondsSince(t0) * perRound;
    });
    const double update = medianWindow(world, [&] {
        const auto t0 = Clock::now();
        for (int i = 0; i < rounds; ++i)
            adam.step(params, grads, 1e-3);
        return secondsSince(t0) * perRound;
    });
    const double perParameter[2] = {zeroAndNorm, update};
    const std::vector<double> all = host.allGather(std::span<const double>(perParameter, 2));
    for (int r = 0; r < world.size(); ++r) {
        c.gradientNsPerParameter = std::max(c.gradientNsPerParameter, all[2 * static_cast<std::size_t>(r)]);
        c.optimizerNsPerParameter = std::max(c.optimizerNsPerParameter, all[2 * static_cast<std::size_t>(r) + 1]);
    }
}

// t = latency + bytes · 2(n−1)/n / bandwidth, fitted through a small and a large message.
void measureLinks(DeviceCommunicator &world, HostCommunicator &host, Calibration &c)
{
    const std::size_t small = 1024, large = 1u << 20; // floats: 4 KiB and 4 MiB
    double ts = allReduceSeconds(world, small, 200), tl = allReduceSeconds(world, large, 20);
    ts = host.allReduce(ts, ReduceOp::Avg);
    tl = host.allReduce(tl, ReduceOp::Avg);
    const double factor = 2.0 * (world.size() - 1) / world.size();
    const double perByte = std::max(1e-15, (tl - ts) / ((large - small) * 4.0 * factor));
    c.bandwidthGBps = 1.0 / perByte / 1e9;
    c.latencyUs = std::max(0.0, ts - small * 4.0 * factor * perByte) * 1e6;
}

// What a checkpoint costs here: every rank at once copies 64 MB into a buffer it copied into before
// (its staging buffer, kept between saves) and then writes 64 MB durably (fsync) into a file under
// TMPDIR (or /tmp): the slowest rank's copy rate, and the machine's write rate (all the ranks'
// bytes over the slowest write) — the ranks of a node share its disk. Medians of three.
void measureCheckpointRates(DeviceCommunicator &world, HostCommunicator &host, Calibration &c)
{
    constexpr std::size_t kBytes = 64u << 20;
    std::vector<char> source(kBytes, 1), staging(kBytes, 0);
    std::memcpy(staging.data(), source.data(), kBytes); // the buffer's pages exist, as between saves
    const double copy = medianWindow(world, [&] {
        const auto t = Clock::now();
        std::memcpy(staging.data(), source.data(), kBytes);
        return secondsSince(t);
    });
    c.hostCopyGBps = kBytes / host.allReduce(copy, ReduceOp::Max) / 1e9;
    const char *tmp = std::getenv("TMPDIR");
    const std::filesystem::path file = std::filesystem::path(tmp && *tmp ? tmp : "/tmp") /
                                       ("trellis-calibrate-" + std::to_string(::getpid()) + "-" + std::to_string(world.rank()));
    std::vector<double> writes;
    for (int i = 0; i < 3; ++i) {
        world.barrier();
        const auto t = Clock::now();
        const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        bool ok = fd >= 0;
        for (std::size_t at = 0; ok && at < kBytes;) {
            const ssize_t n = ::write(fd, staging.data() + at, kBytes - at);
            ok = n > 0;
            at += ok ? static_cast<std::size_t>(n) : 0;
        }
        ok = ok && ::fsync(fd) == 0;
        if (fd >= 0)
            ::close(fd);
        writes.push_back(ok ? secondsSince(t) : -1.0);
    }
    std::error_code ec;
    std::filesystem::remove(file, ec);
    std::sort(writes.begin(), writes.end());
    const double mine = writes.front() < 0 ? -1.0 : writes[1];
    const double slowest = host.allReduce(mine, ReduceOp::Max), failed = host.allReduce(mine, ReduceOp::Min);
    c.diskWriteGBps = failed < 0 || slowest <= 0 ? 0 : static_cast<double>(kBytes) * world.size() / slowest / 1e9;
}

} // namespace

Calibration runCalibration(MpiCommunicator &comm)
{
    DeviceCommunicator &world = comm;
    HostCommunicator &host = comm;
    Calibration c;
    c.ranks = world.size();
    const GptConfig config{256, 128, 2, 128, 4, 512}; // the "tiny" preset
    GptModel<float> model(config);
    model.initialize(1);
    c.gflopsPerRank = measureComputeRate(world, host, model, config);
    measureUpdateCost(world, host, model, c);
    if (world.size() > 1)
        measureLinks(world, host, c);
    measureCheckpointRates(world, host, c);
    return c;
}

} // namespace trellis::trainer
