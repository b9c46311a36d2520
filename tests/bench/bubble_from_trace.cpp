// Measured against predicted pipeline bubble. Reads a Chrome trace written by `trellis-cli trace`
// (one track per rank, one span per executed schedule action), and for each traced step after the
// first: the measured bubble fraction of the schedule's execution (1 − Σ compute time /
// (ranks · wall time from the first action to the last)), and the simulator's prediction for the
// same schedule from the mean measured F / backward (B, W) time of every chunk.
// Usage: bench_bubble_from_trace TRACE.json SCHEDULE STAGES MICRO_BATCHES [VIRTUAL_STAGES]
#include "backend/plan/schedule.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>

using namespace trellis::plan;

int main(int argc, char **argv)
{
    if (argc < 5) {
        std::fprintf(stderr, "usage: %s TRACE.json SCHEDULE STAGES MICRO_BATCHES [VIRTUAL_STAGES]\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1]);
    nlohmann::json trace;
    try {
        in >> trace;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s: %s\n", argv[1], e.what());
        return 1;
    }
    const int p = std::stoi(argv[3]), m = std::stoi(argv[4]), v = argc > 5 ? std::stoi(argv[5]) : 1;
    auto generated = generateSchedule(argv[2], p, m, v);
    if (!generated) {
        std::fprintf(stderr, "%s\n", generated.errorText().c_str());
        return 1;
    }
    const Schedule schedule = std::move(generated).value();

    struct Window {
        double first = 1e300, last = 0, busy = 0;
    };
    std::map<long, Window> steps;                         // per step
    std::map<std::pair<std::string, int>, double> sum;    // (kind, chunk) -> total µs
    std::map<std::pair<std::string, int>, int> count;
    long firstStep = -1;
    for (const auto &e : trace["traceEvents"]) {
        if (e.value("ph", "") != "X")
            continue;
        const long step = e["args"].value("step", 0L);
        if (firstStep < 0 || step < firstStep)
            firstStep = step;
    }
    for (const auto &e : trace["traceEvents"]) {
        if (e.value("ph", "") != "X")
            continue;
        const long step = e["args"].value("step", 0L);
        if (step == firstStep)
            continue; // warm-up: first-touch allocations
        const std::string kind = e.value("cat", "");
        if (kind.starts_with("dp_") || kind.starts_with("embedding_"))
            continue; // gradient collectives after the schedule: not part of its makespan
        const double ts = e.value("ts", 0.0), dur = e.value("dur", 0.0);
        Window &w = steps[step];
        w.first = std::min(w.first, ts);
        w.last = std::max(w.last, ts + dur);
        if (kind == "F" || kind == "BW" || kind == "B" || kind == "W") {
            w.busy += dur;
            const int chunk = e["args"].value("chunk", 0);
            sum[{kind, chunk}] += dur;
            ++count[{kind, chunk}];
        }
    }
    if (steps.empty()) {
        std::fprintf(stderr, "%s: needs at least two traced steps\n", argv[1]);
        return 1;
    }
    double measured = 0;
    for (const auto &[step, w] : steps)
        measured += 1.0 - w.busy / (p * (w.last - w.first));
    measured /= static_cast<double>(steps.size());

    ScheduleCosts costs = ScheduleCosts::uniform(schedule);
    auto mean = [&](const std::string &kind, int chunk) {
        const auto n = count[{kind, chunk}];
        return n ? sum[{kind, chunk}] / n : 0.0;
    };
    for (int c = 0; c < schedule.chunks(); ++c) {
        costs.forward[static_cast<std::size_t>(c)] = mean("F", c);
        if (schedule.name == "zb-h1") {
            costs.backwardInput[static_cast<std::size_t>(c)] = mean("B", c);
            costs.backwardWeight[static_cast<std::size_t>(c)] = mean("W", c);
        } else {
            costs.backwardInput[static_cast<std::size_t>(c)] = mean("BW", c);
            costs.backwardWeight[static_cast<std::size_t>(c)] = 0;
        }
    }
    const Simulation sim = simulateSchedule(schedule, costs);
    const double closed = double(p - 1) / (v * m + p - 1);
    std::printf("%-18s %6d %6d %3d %12.3f %12.3f %12.3f\n", schedule.name.c_str(), p, m, v, closed, sim.bubbleFraction,
                measured);
    return 0;
}
