// Pipeline schedules as data (docs/architecture.md §5): for p stages, m micro-batches and v virtual stages
// per rank, one list of actions per pipeline rank. The trainer executes these lists, the cost
// model simulates them and the GUI draws them, so a predicted timeline and a measured one come
// from the same schedule.
//
// The model is cut into p·v chunks; chunk c runs on pipeline rank c mod p (rank r holds chunks
// r, r+p, ...). Actions: F (forward of a micro-batch on a chunk), Backward (input and weight
// gradients together), B and W (the two halves, for zero-bubble schedules), the activation and
// gradient sends and receives between ranks, and the optimizer step that ends every list. Sends
// do not block; a receive waits for its send. A receive is named by the chunk that receives,
// a send by the chunk that sends.
//
// Schedules:
// - gpipe: all forwards, then all backwards (Huang et al. 2019).
// - 1f1b: PipeDream-flush as in Megatron-LM: rank r runs min(p−r−1, m) warm-up forwards, then
//   alternates one forward and one backward, then drains the remaining backwards.
// - interleaved-1f1b: Megatron-LM's interleaved schedule (Narayanan et al. 2021) over v chunks
//   per rank; forwards walk micro-batches in groups of p per chunk; warm-up (p−r−1)·2 + (v−1)·p
//   forwards. Needs m to be a multiple of p.
// - zb-h1: zero-bubble H1 (Qi et al. 2023): backward split into B and W; a rank runs a backward
//   as soon as its gradient is there, otherwise a forward while fewer than p−r micro-batches are
//   between their F and B (1F1B's limit), otherwise a deferred W. The lists are the greedy
//   schedule for equal F, B and W costs; the bubble is about a third of 1F1B's.
#pragma once

#include "backend/plan/result.h"

#include <string>
#include <vector>

namespace trellis::plan {

enum class ActionKind {
    Forward,
    Backward,       // input and weight gradients together
    BackwardInput,  // B: input gradients only
    BackwardWeight, // W: weight gradients, deferred
    SendActivation,
    RecvActivation,
    SendGradient,
    RecvGradient,
    OptimizerStep,
};
// Short names for timelines and traces: "F", "BW", "B", "W", "send_act", "recv_act",
// "send_grad", "recv_grad", "optim".
const char *toString(ActionKind kind);
bool isCompute(ActionKind kind);

struct Action {
    ActionKind kind = ActionKind::Forward;
    int microBatch = -1;
    int chunk = -1; // global chunk index 0 .. p·v−1
    int peer = -1;  // pipeline rank of the other side of a send or receive
    bool operator==(const Action &) const = default;
};

struct Schedule {
    std::string name;
    int stages = 1;
    int microBatches = 1;
    int virtualStages = 1;
    std::vector<std::vector<Action>> ranks; // one list per pipeline rank
    int chunks() const { return stages * virtualStages; }
};

// Megatron-LM's warm-up of interleaved-1f1b on pipeline rank `rank`: (p − rank − 1)·2 + (v − 1)·p
// chunk forwards before the first backward (every forward when m = p), at most m·v.
int interleavedWarmup(int rank, int p, int m, int v);

inline const char *const kScheduleNames[] = {"gpipe", "1f1b", "interleaved-1f1b", "zb-h1"};

// The schedule's lists, or an error naming the parameter (unknown name, p/m/v < 1, v > 1 for a
// schedule without virtual stages, m not a multiple of p for interleaved-1f1b).
Result<Schedule> generateSchedule(const std::string &name, int stages, int microBatches, int virtualStages);

// Problems found (empty: valid): every chunk runs F and Backward (or B and W) for every
// micro-batch exactly once on its own rank; W after B; F after the previous chunk's F and B after
// the next chunk's B (through a receive placed before it, or in list order on the same rank);
// every send matched by one receive, and between any two ranks the receives in the order of the
// sends (transfers are matched in posting order, as NCCL's untagged send and receive are); the
// lists run to the end without deadlock; warm-up forward counts as the schedule defines them; the
// optimizer step last.
std::vector<std::string> validateSchedule(const Schedule &schedule);

// Per-chunk action times (index: global chunk) and the time a send takes to arrive.
struct ScheduleCosts {
    std::vector<double> forward, backwardInput, backwardWeight;
    double transfer = 0;
    // F = f, B = b, W = w per chunk, divided by v so a rank's work does not depend on v.
    static ScheduleCosts uniform(const Schedule &schedule, double f = 1, double b = 1, double w = 1);
};

struct TimedAction {
    Action action;
    double start = 0, end = 0;
};

// Makespan: from 0 (every rank may start) to the last action's end. A rank's busy time is the sum
// of its compute actions; its bubble is makespan − busy; bubbleFraction = Σ bubble / (p·makespan),
// which for equal costs is (p−1)/(m+p−1) for gpipe and 1f1b and (p−1)/(v·m+p−1) interleaved.
// Peak in flight: micro-batch-chunks whose F ran and whose Backward / B has not (the activations
// held); peakAwaitingW: those whose B ran and W has not.
struct Simulation {
    bool completed = false;          // false: deadlock (see stuck)
    std::vector<std::string> stuck;  // "rank R at action I (...)" for every rank that cannot go on
    double makespan = 0;
    std::vector<double> busy, bubble;
    double bubbleFraction = 0;
    std::vector<int> peakInFlight, peakAwaitingW;
    std::vector<std::vector<TimedAction>> timeline; // per rank, compute and communication actions
};
Simulation simulateSchedule(const Schedule &schedule, const ScheduleCosts &costs);

// One line per rank, e.g. "rank 0: F0.0 F1.0 B0.0 W0.0 ..." (compute actions, micro-batch.chunk).
std::string formatSchedule(const Schedule &schedule);

} // namespace trellis::plan
