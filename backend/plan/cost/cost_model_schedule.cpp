// The cost model's pipeline schedule (cost_model_parts.h): the step's compute and bubble from the
// schedule simulator over the chunks' costs, or, without a pipeline or with too many actions to
// simulate quickly, the busiest stage's work plus its schedule's closed-form fill and drain.
#include "backend/plan/cost/cost_model_parts.h"

#include <algorithm>

namespace trellis::plan::detail {
namespace {

PipelineTime simulated(const CostInputs &in, const ScheduleCosts &costs, Estimate &e)
{
    PipelineTime time;
    const Simulation sim = simulateSchedule(*in.schedule, costs);
    time.makespan = sim.makespan;
    time.busy = *std::max_element(sim.busy.begin(), sim.busy.end());
    e.bubbleFraction = sim.bubbleFraction;
    if (in.exact && sim.completed) {
        e.timeline = sim.timeline;
        for (double b : sim.bubble)
            e.stageBubbleFraction.push_back(time.makespan > 0 ? b / time.makespan : 0.0);
    }
    return time;
}

// One stage (or too many actions to simulate quickly): the busiest stage's work plus the
// closed-form fill and drain of its schedule.
PipelineTime closedForm(const CostInputs &in, const ScheduleCosts &costs, Estimate &e)
{
    const int pp = in.pp, v = in.v, chunks = in.chunksTotal;
    const int m_ = in.p.microBatches;
    PipelineTime time;
    for (int s = 0; s < pp; ++s) {
        double work = 0;
        for (int c = s; c < chunks; c += pp)
            work += m_ * (costs.forward[static_cast<std::size_t>(c)] + costs.backwardInput[static_cast<std::size_t>(c)] +
                          costs.backwardWeight[static_cast<std::size_t>(c)]);
        time.busy = std::max(time.busy, work);
    }
    const double perMicro = time.busy / std::max(1, m_ * v);
    double fill = (pp - 1) * perMicro / v;
    if (in.p.schedule == "zb-h1")
        fill = (pp - 1) * perMicro / 3.0; // (p−1)(F+B−W) with F ≈ B ≈ W
    time.makespan = time.busy + (pp > 1 ? fill : 0.0);
    e.bubbleFraction = time.makespan > 0 ? (time.makespan - time.busy) / time.makespan : 0.0;
    return time;
}

} // namespace

PipelineTime pipelineTime(const CostInputs &in, const ScheduleCosts &costs, Estimate &e)
{
    const bool simulate = in.pp > 1 && in.schedule && static_cast<long>(in.pp) * in.p.microBatches * in.v <= 20000;
    const PipelineTime time = simulate ? simulated(in, costs, e) : closedForm(in, costs, e);
    e.bubbleMs = time.makespan - time.busy;
    return time;
}

} // namespace trellis::plan::detail
