// Schedule generation, validation and simulation; see schedule.h.
#include "backend/plan/schedule.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

namespace trellis::plan {
namespace {

std::string str(int v) { return std::to_string(v); }

std::string describe(const Action &a)
{
    std::string s = toString(a.kind);
    if (a.microBatch >= 0)
        s += " micro-batch " + str(a.microBatch);
    if (a.chunk >= 0)
        s += " chunk " + str(a.chunk);
    if (a.peer >= 0)
        s += " peer " + str(a.peer);
    return s;
}

// Wraps the compute order of one rank with the receives before and the sends after each action.
std::vector<Action> withCommunication(const std::vector<Action> &compute, int rank, int stages, int chunks)
{
    auto rankOf = [stages](int chunk) { return chunk % stages; };
    std::vector<Action> out;
    for (const Action &a : compute) {
        const int c = a.chunk;
        if (a.kind == ActionKind::Forward) {
            if (c > 0 && rankOf(c - 1) != rank)
                out.push_back({ActionKind::RecvActivation, a.microBatch, c, rankOf(c - 1)});
            out.push_back(a);
            if (c < chunks - 1 && rankOf(c + 1) != rank)
                out.push_back({ActionKind::SendActivation, a.microBatch, c, rankOf(c + 1)});
        } else if (a.kind == ActionKind::Backward || a.kind == ActionKind::BackwardInput) {
            if (c < chunks - 1 && rankOf(c + 1) != rank)
                out.push_back({ActionKind::RecvGradient, a.microBatch, c, rankOf(c + 1)});
            out.push_back(a);
            if (c > 0 && rankOf(c - 1) != rank)
                out.push_back({ActionKind::SendGradient, a.microBatch, c, rankOf(c - 1)});
        } else {
            out.push_back(a);
        }
    }
    out.push_back({ActionKind::OptimizerStep, -1, -1, -1});
    return out;
}

std::vector<Action> gpipe(int rank, int m)
{
    std::vector<Action> order;
    for (int mb = 0; mb < m; ++mb)
        order.push_back({ActionKind::Forward, mb, rank});
    for (int mb = 0; mb < m; ++mb)
        order.push_back({ActionKind::Backward, mb, rank});
    return order;
}

std::vector<Action> oneFOneB(int rank, int p, int m)
{
    const int warmup = std::min(p - rank - 1, m);
    std::vector<Action> order;
    for (int mb = 0; mb < warmup; ++mb)
        order.push_back({ActionKind::Forward, mb, rank});
    for (int i = 0; i < m - warmup; ++i) {
        order.push_back({ActionKind::Forward, warmup + i, rank});
        order.push_back({ActionKind::Backward, i, rank});
    }
    for (int mb = m - warmup; mb < m; ++mb)
        order.push_back({ActionKind::Backward, mb, rank});
    return order;
}

std::vector<Action> interleaved(int rank, int p, int m, int v)
{
    const int total = m * v;
    auto forwardAt = [&](int k) {
        const int inGroup = k % (p * v);
        return Action{ActionKind::Forward, (k / (p * v)) * p + inGroup % p, (inGroup / p) * p + rank};
    };
    auto backwardAt = [&](int k) {
        const int inGroup = k % (p * v);
        return Action{ActionKind::Backward, (k / (p * v)) * p + inGroup % p, (v - 1 - inGroup / p) * p + rank};
    };
    const int warmup = interleavedWarmup(rank, p, m, v);
    std::vector<Action> order;
    for (int k = 0; k < warmup; ++k)
        order.push_back(forwardAt(k));
    for (int k = 0; k < total - warmup; ++k) {
        order.push_back(forwardAt(warmup + k));
        order.push_back(backwardAt(k));
    }
    for (int k = total - warmup; k < total; ++k)
        order.push_back(backwardAt(k));
    return order;
}

// Zero-bubble H1 as the greedy schedule for unit F, B and W times: backward first, then a forward
// within 1F1B's in-flight limit, then a deferred weight-gradient pass.
std::vector<std::vector<Action>> zeroBubbleH1(int p, int m)
{
    constexpr int never = std::numeric_limits<int>::max();
    std::vector<std::vector<int>> fEnd(static_cast<std::size_t>(p), std::vector<int>(static_cast<std::size_t>(m), never));
    auto bEnd = fEnd;
    std::vector<int> fNext(static_cast<std::size_t>(p), 0), bNext(static_cast<std::size_t>(p), 0), busy(static_cast<std::size_t>(p), 0);
    std::vector<std::deque<int>> wPending(static_cast<std::size_t>(p));
    std::vector<int> wDone(static_cast<std::size_t>(p), 0);
    std::vector<std::vector<Action>> order(static_cast<std::size_t>(p));
    for (int t = 0;; ++t) {
        bool all = true;
        for (int r = 0; r < p; ++r)
            all = all && wDone[static_cast<std::size_t>(r)] == m;
        if (all)
            break;
        for (int r = 0; r < p; ++r) {
            const auto R = static_cast<std::size_t>(r);
            if (busy[R] > t)
                continue;
            const int b = bNext[R], f = fNext[R];
            if (b < m && fEnd[R][static_cast<std::size_t>(b)] <= t &&
                (r == p - 1 || bEnd[R + 1][static_cast<std::size_t>(b)] <= t)) {
                order[R].push_back({ActionKind::BackwardInput, b, r});
                bEnd[R][static_cast<std::size_t>(b)] = t + 1;
                wPending[R].push_back(b);
                ++bNext[R];
                busy[R] = t + 1;
            } else if (f < m && f - b < p - r && (r == 0 || fEnd[R - 1][static_cast<std::size_t>(f)] <= t)) {
                order[R].push_back({ActionKind::Forward, f, r});
                fEnd[R][static_cast<std::size_t>(f)] = t + 1;
                ++fNext[R];
                busy[R] = t + 1;
            } else if (!wPending[R].empty()) {
                order[R].push_back({ActionKind::BackwardWeight, wPending[R].front(), r});
                wPending[R].pop_front();
                ++wDone[R];
                busy[R] = t + 1;
            }
        }
    }
    return order;
}

double computeCost(const Action &a, const ScheduleCosts &costs)
{
    const auto c = static_cast<std::size_t>(a.chunk);
    switch (a.kind) {
    case ActionKind::Forward: return costs.forward[c];
    case ActionKind::Backward: return costs.backwardInput[c] + costs.backwardWeight[c];
    case ActionKind::BackwardInput: return costs.backwardInput[c];
    case ActionKind::BackwardWeight: return costs.backwardWeight[c];
    default: return 0;
    }
}

} // namespace

int interleavedWarmup(int rank, int p, int m, int v)
{
    const int total = m * v;
    if (m == p)
        return total; // every forward first, as Megatron-LM does when m equals p
    return std::min((p - rank - 1) * 2 + (v - 1) * p, total);
}


const char *toString(ActionKind kind)
{
    switch (kind) {
    case ActionKind::Forward: return "F";
    case ActionKind::Backward: return "BW";
    case ActionKind::BackwardInput: return "B";
    case ActionKind::BackwardWeight: return "W";
    case ActionKind::SendActivation: return "send_act";
    case ActionKind::RecvActivation: return "recv_act";
    case ActionKind::SendGradient: return "send_grad";
    case ActionKind::RecvGradient: return "recv_grad";
    case ActionKind::OptimizerStep: return "optim";
    }
    return "?";
}

bool isCompute(ActionKind kind)
{
    return kind == ActionKind::Forward || kind == ActionKind::Backward || kind == ActionKind::BackwardInput ||
           kind == ActionKind::BackwardWeight;
}

Result<Schedule> generateSchedule(const std::string &name, int stages, int microBatches, int virtualStages)
{
    Diagnostics errors;
    auto error = [&](const std::string &path, const std::string &message) {
        errors.push_back({Severity::Error, path, message});
    };
    const bool known = std::find(std::begin(kScheduleNames), std::end(kScheduleNames), name) != std::end(kScheduleNames);
    if (!known)
        error("parallel.schedule", "unknown schedule '" + name + "' (expected gpipe, 1f1b, interleaved-1f1b or zb-h1)");
    if (stages < 1)
        error("parallel.pp", "must be at least 1, got " + str(stages));
    if (microBatches < 1)
        error("parallel.micro_batches", "must be at least 1, got " + str(microBatches));
    if (virtualStages < 1)
        error("parallel.virtual_stages", "must be at least 1, got " + str(virtualStages));
    if (!errors.empty())
        return errors;
    if (virtualStages > 1 && name != "interleaved-1f1b")
        error("parallel.virtual_stages", "only the interleaved-1f1b schedule uses virtual stages");
    if (name == "interleaved-1f1b" && virtualStages > 1 && microBatches % stages != 0)
        error("parallel.micro_batches", str(microBatches) + " is not a multiple of parallel.pp (" + str(stages) +
                                            "), which interleaved-1f1b needs");
    if (!errors.empty())
        return errors;

    Schedule s;
    s.name = name;
    s.stages = stages;
    s.microBatches = microBatches;
    s.virtualStages = virtualStages;
    std::vector<std::vector<Action>> compute(static_cast<std::size_t>(stages));
    if (name == "zb-h1") {
        compute = zeroBubbleH1(stages, microBatches);
    } else {
        for (int r = 0; r < stages; ++r) {
            auto &order = compute[static_cast<std::size_t>(r)];
            if (name == "gpipe")
                order = gpipe(r, microBatches);
            else if (name == "1f1b" || virtualStages == 1)
                order = oneFOneB(r, stages, microBatches);
            else
                order = interleaved(r, stages, microBatches, virtualStages);
        }
    }
    for (int r = 0; r < stages; ++r)
        s.ranks.push_back(withCommunication(compute[static_cast<std::size_t>(r)], r, stages, s.chunks()));
    return s;
}

ScheduleCosts ScheduleCosts::uniform(const Schedule &schedule, double f, double b, double w)
{
    ScheduleCosts c;
    const auto n = static_cast<std::size_t>(schedule.chunks());
    const double v = schedule.virtualStages;
    c.forward.assign(n, f / v);
    c.backwardInput.assign(n, b / v);
    c.backwardWeight.assign(n, w / v);
    return c;
}

namespace {

using ActionKey = std::tuple<int, int>; // micro-batch, chunk

// One pass of the simulation: every rank runs its list in order, each action as soon as what it
// depends on has happened (on its own rank, or arrived from another).
class ScheduleRun {
public:
    ScheduleRun(const Schedule &schedule, const ScheduleCosts &costs, Simulation &sim)
        : m_schedule(schedule), m_costs(costs), m_sim(sim), m_p(schedule.stages), m_chunks(schedule.chunks()),
          m_pos(static_cast<std::size_t>(m_p), 0), m_free(static_cast<std::size_t>(m_p), 0.0),
          m_inFlight(static_cast<std::size_t>(m_p), 0), m_awaitingW(static_cast<std::size_t>(m_p), 0)
    {
    }
    // Runs every rank as far as it can; false when none could move.
    bool advance()
    {
        bool progress = false;
        for (int r = 0; r < m_p; ++r)
            progress = runRank(r) || progress;
        return progress;
    }
    // Makespan, bubbles and, for ranks that could not finish, where they stuck.
    void finish();

private:
    bool runRank(int r);
    // When the action's inputs are there (`t`); false while it waits for another rank.
    bool inputsReady(const Action &a, int r, double &t) const;
    void complete(const Action &a, std::size_t R, double end);
    int rankOf(int chunk) const { return chunk % m_p; }
    static bool find(const std::map<ActionKey, double> &m, int mb, int c, double &t)
    {
        const auto it = m.find({mb, c});
        if (it == m.end())
            return false;
        t = it->second;
        return true;
    }

    const Schedule &m_schedule;
    const ScheduleCosts &m_costs;
    Simulation &m_sim;
    const int m_p, m_chunks;
    std::map<ActionKey, double> m_fDone, m_bDone, m_actArrives, m_gradArrives, m_actReceived, m_gradReceived;
    std::vector<std::size_t> m_pos;
    std::vector<double> m_free;
    std::vector<int> m_inFlight, m_awaitingW;
};

bool ScheduleRun::inputsReady(const Action &a, int r, double &t) const
{
    const int mb = a.microBatch, c = a.chunk;
    bool ok = true;
    switch (a.kind) {
    case ActionKind::Forward:
        if (c > 0)
            ok = rankOf(c - 1) == r ? find(m_fDone, mb, c - 1, t) : find(m_actReceived, mb, c, t);
        break;
    case ActionKind::Backward:
    case ActionKind::BackwardInput:
        ok = find(m_fDone, mb, c, t);
        if (ok && c < m_chunks - 1) {
            double g = 0;
            ok = rankOf(c + 1) == r ? find(m_bDone, mb, c + 1, g) : find(m_gradReceived, mb, c, g);
            t = std::max(t, g);
        }
        break;
    case ActionKind::BackwardWeight: ok = find(m_bDone, mb, c, t); break;
    case ActionKind::SendActivation: ok = find(m_fDone, mb, c, t); break;
    case ActionKind::SendGradient: ok = find(m_bDone, mb, c, t); break;
    case ActionKind::RecvActivation: ok = find(m_actArrives, mb, c, t); break;
    case ActionKind::RecvGradient: ok = find(m_gradArrives, mb, c, t); break;
    case ActionKind::OptimizerStep: break;
    }
    return ok;
}

void ScheduleRun::complete(const Action &a, std::size_t R, double end)
{
    const int mb = a.microBatch, c = a.chunk;
    switch (a.kind) {
    case ActionKind::Forward:
        m_fDone[{mb, c}] = end;
        m_sim.peakInFlight[R] = std::max(m_sim.peakInFlight[R], ++m_inFlight[R]);
        break;
    case ActionKind::Backward:
        m_bDone[{mb, c}] = end;
        --m_inFlight[R];
        break;
    case ActionKind::BackwardInput:
        m_bDone[{mb, c}] = end;
        --m_inFlight[R];
        m_sim.peakAwaitingW[R] = std::max(m_sim.peakAwaitingW[R], ++m_awaitingW[R]);
        break;
    case ActionKind::BackwardWeight: --m_awaitingW[R]; break;
    case ActionKind::SendActivation: m_actArrives[{mb, c + 1}] = end + m_costs.transfer; break;
    case ActionKind::SendGradient: m_gradArrives[{mb, c - 1}] = end + m_costs.transfer; break;
    case ActionKind::RecvActivation: m_actReceived[{mb, c}] = end; break;
    case ActionKind::RecvGradient: m_gradReceived[{mb, c}] = end; break;
    case ActionKind::OptimizerStep: break;
    }
}

bool ScheduleRun::runRank(int r)
{
    const auto R = static_cast<std::size_t>(r);
    const auto &list = m_schedule.ranks[R];
    bool progress = false;
    while (m_pos[R] < list.size()) {
        const Action &a = list[m_pos[R]];
        double ready = m_free[R], t = 0;
        if (!inputsReady(a, r, t))
            break; // waits for another rank (or for something that never comes)
        const double start = std::max(ready, t);
        const double end = start + computeCost(a, m_costs);
        complete(a, R, end);
        if (isCompute(a.kind))
            m_sim.busy[R] += end - start;
        m_sim.timeline[R].push_back({a, start, end});
        m_free[R] = end;
        ++m_pos[R];
        progress = true;
    }
    return progress;
}

void ScheduleRun::finish()
{
    m_sim.completed = true;
    for (int r = 0; r < m_p; ++r) {
        const auto R = static_cast<std::size_t>(r);
        if (m_pos[R] < m_schedule.ranks[R].size()) {
            m_sim.completed = false;
            m_sim.stuck.push_back("rank " + str(r) + " at action " + str(static_cast<int>(m_pos[R])) + " (" +
                                  describe(m_schedule.ranks[R][m_pos[R]]) + ")");
        }
        m_sim.makespan = std::max(m_sim.makespan, m_free[R]);
    }
    double idle = 0;
    for (int r = 0; r < m_p; ++r) {
        m_sim.bubble[static_cast<std::size_t>(r)] = m_sim.makespan - m_sim.busy[static_cast<std::size_t>(r)];
        idle += m_sim.bubble[static_cast<std::size_t>(r)];
    }
    m_sim.bubbleFraction = m_sim.makespan > 0 ? idle / (m_p * m_sim.makespan) : 0.0;
}

// validateSchedule's tallies: compute actions per (kind, micro-batch, chunk); sends and receives
// per (kind, micro-batch, target chunk, from, to).
struct ActionCounts {
    std::map<std::tuple<ActionKind, int, int>, int> compute;
    std::map<std::tuple<ActionKind, int, int, int, int>, int> sends, recvs;
};

// Each action of each rank's list: in range, on its chunk's rank, the backward kind the schedule
// uses, a peer that holds the chunk on the other side; the optimizer step last. Counts them.
void checkRankLists(const Schedule &s, ActionCounts &counts, std::vector<std::string> &problems)
{
    const int p = s.stages, m = s.microBatches, chunks = s.chunks();
    const bool split = s.name == "zb-h1";
    for (int r = 0; r < p; ++r) {
        const auto &list = s.ranks[static_cast<std::size_t>(r)];
        for (std::size_t i = 0; i < list.size(); ++i) {
            const Action &a = list[i];
            const std::string where = "rank " + str(r) + " action " + str(static_cast<int>(i)) + " (" + describe(a) + ")";
            if (a.kind == ActionKind::OptimizerStep) {
                if (i + 1 != list.size())
                    problems.push_back(where + ": the optimizer step must be the last action");
                continue;
            }
            if (a.microBatch < 0 || a.microBatch >= m || a.chunk < 0 || a.chunk >= chunks) {
                problems.push_back(where + ": micro-batch or chunk out of range");
                continue;
            }
            if (a.chunk % p != r) {
                problems.push_back(where + ": chunk " + str(a.chunk) + " belongs to rank " + str(a.chunk % p));
                continue;
            }
            if (isCompute(a.kind)) {
                if (split && a.kind == ActionKind::Backward)
                    problems.push_back(where + ": zb-h1 splits every backward into B and W");
                if (!split && (a.kind == ActionKind::BackwardInput || a.kind == ActionKind::BackwardWeight))
                    problems.push_back(where + ": " + s.name + " uses combined backwards");
                ++counts.compute[{a.kind, a.microBatch, a.chunk}];
                continue;
            }
            const bool activation = a.kind == ActionKind::SendActivation || a.kind == ActionKind::RecvActivation;
            const bool isSend = a.kind == ActionKind::SendActivation || a.kind == ActionKind::SendGradient;
            // The chunk on the other side and the rank that should hold it.
            const int other = (activation == isSend) ? a.chunk + 1 : a.chunk - 1;
            if (other < 0 || other >= chunks || a.peer != other % p) {
                problems.push_back(where + ": the peer must be rank " + (other >= 0 && other < chunks ? str(other % p) : std::string("(none)")));
                continue;
            }
            const ActionKind kind = activation ? ActionKind::SendActivation : ActionKind::SendGradient;
            const int target = isSend ? other : a.chunk;
            (isSend ? counts.sends : counts.recvs)[{kind, a.microBatch, target, isSend ? r : a.peer, isSend ? a.peer : r}]++;
        }
        if (list.empty() || list.back().kind != ActionKind::OptimizerStep)
            problems.push_back("rank " + str(r) + ": the list must end with the optimizer step");
    }
}

// Each compute action once per micro-batch and chunk, on the chunk's rank.
void checkComputeOnce(const Schedule &s, ActionCounts &counts, std::vector<std::string> &problems)
{
    const int p = s.stages, m = s.microBatches, chunks = s.chunks();
    const bool split = s.name == "zb-h1";
    const std::vector<ActionKind> needed = split ? std::vector<ActionKind>{ActionKind::Forward, ActionKind::BackwardInput,
                                                                           ActionKind::BackwardWeight}
                                                 : std::vector<ActionKind>{ActionKind::Forward, ActionKind::Backward};
    for (int c = 0; c < chunks; ++c)
        for (int mb = 0; mb < m; ++mb)
            for (ActionKind k : needed) {
                const int n = counts.compute[{k, mb, c}];
                if (n != 1)
                    problems.push_back(std::string(toString(k)) + " of micro-batch " + str(mb) + " on chunk " + str(c) +
                                       " runs " + str(n) + " times on rank " + str(c % p) + " (expected once)");
            }
}

// Every send matched by one receive, and no receive of what is never sent.
void checkSendsMatched(const ActionCounts &counts, std::vector<std::string> &problems)
{
    for (const auto &[key, n] : counts.sends) {
        const auto &[kind, mb, chunk, from, to] = key;
        const int got = counts.recvs.count(key) ? counts.recvs.at(key) : 0;
        if (got != n)
            problems.push_back(std::string(kind == ActionKind::SendActivation ? "activation" : "gradient") +
                               " of micro-batch " + str(mb) + " for chunk " + str(chunk) + " from rank " + str(from) +
                               " to rank " + str(to) + ": sent " + str(n) + " times, received " + str(got));
    }
    for (const auto &[key, n] : counts.recvs)
        if (!counts.sends.count(key)) {
            const auto &[kind, mb, chunk, from, to] = key;
            problems.push_back(std::string(kind == ActionKind::SendActivation ? "activation" : "gradient") +
                               " of micro-batch " + str(mb) + " for chunk " + str(chunk) + " is received by rank " +
                               str(to) + " but never sent by rank " + str(from));
        }
}

// Without tags (NCCL's send and receive have none; a transfer is matched by the order of the
// calls between two ranks), the k-th receive rank b posts from rank a gets rank a's k-th send to
// b, activations and gradients alike. Every pair's receives must come in the order of its sends,
// else the data lands in another micro-batch's buffer (or, for equal sizes, silently trains on
// it). With the orders equal, tag matching and FIFO matching are the same matching, so the
// deadlock-free run the simulation found holds for NCCL too.
void checkPeerOrder(const Schedule &s, std::vector<std::string> &problems)
{
    using Transfer = std::tuple<ActionKind, int, int>; // kind (as sent), micro-batch, receiving chunk
    std::map<std::pair<int, int>, std::vector<Transfer>> sent, received; // (from, to) -> in list order
    for (int r = 0; r < s.stages; ++r)
        for (const Action &a : s.ranks[static_cast<std::size_t>(r)]) {
            const bool activation = a.kind == ActionKind::SendActivation || a.kind == ActionKind::RecvActivation;
            const ActionKind kind = activation ? ActionKind::SendActivation : ActionKind::SendGradient;
            if (a.kind == ActionKind::SendActivation || a.kind == ActionKind::SendGradient)
                sent[{r, a.peer}].push_back({kind, a.microBatch, activation ? a.chunk + 1 : a.chunk - 1});
            else if (a.kind == ActionKind::RecvActivation || a.kind == ActionKind::RecvGradient)
                received[{a.peer, r}].push_back({kind, a.microBatch, a.chunk});
        }
    auto what = [](const Transfer &t) {
        return std::string(std::get<0>(t) == ActionKind::SendActivation ? "the activation" : "the gradient") +
               " of micro-batch " + str(std::get<1>(t)) + " for chunk " + str(std::get<2>(t));
    };
    for (const auto &[pair, receives] : received) {
        const std::vector<Transfer> &sends = sent[pair];
        for (std::size_t k = 0; k < std::min(sends.size(), receives.size()); ++k)
            if (sends[k] != receives[k]) {
                problems.push_back("rank " + str(pair.second) + "'s receive " + str(static_cast<int>(k) + 1) + " from rank " +
                                   str(pair.first) + " waits for " + what(receives[k]) + ", but rank " + str(pair.first) +
                                   "'s send " + str(static_cast<int>(k) + 1) + " to it is " + what(sends[k]) +
                                   ": transfers between two ranks match in the order they are posted (NCCL has no tags)");
                break; // the first mismatch of a pair says it; the rest follow from it
            }
    }
}

// Warm-up: forwards before the first backward, as the schedule defines them.
void checkWarmup(const Schedule &s, std::vector<std::string> &problems)
{
    const int p = s.stages, m = s.microBatches;
    for (int r = 0; r < p; ++r) {
        int forwards = 0;
        for (const Action &a : s.ranks[static_cast<std::size_t>(r)]) {
            if (a.kind == ActionKind::Backward || a.kind == ActionKind::BackwardInput)
                break;
            forwards += a.kind == ActionKind::Forward;
        }
        int expected = 0;
        if (s.name == "gpipe")
            expected = m;
        else if (s.name == "interleaved-1f1b" && s.virtualStages > 1)
            expected = std::min(interleavedWarmup(r, p, m, s.virtualStages) + 1, m * s.virtualStages);
        else
            expected = std::min(p - r, m);
        if (forwards != expected)
            problems.push_back("rank " + str(r) + ": " + str(forwards) + " forwards before the first backward, " + s.name +
                               " runs " + str(expected));
    }
}

} // namespace

Simulation simulateSchedule(const Schedule &schedule, const ScheduleCosts &costs)
{
    const int p = schedule.stages;
    Simulation sim;
    sim.busy.assign(static_cast<std::size_t>(p), 0.0);
    sim.bubble.assign(static_cast<std::size_t>(p), 0.0);
    sim.peakInFlight.assign(static_cast<std::size_t>(p), 0);
    sim.peakAwaitingW.assign(static_cast<std::size_t>(p), 0);
    sim.timeline.assign(static_cast<std::size_t>(p), {});
    ScheduleRun run(schedule, costs, sim);
    while (run.advance()) {
    }
    run.finish();
    return sim;
}

std::vector<std::string> validateSchedule(const Schedule &s)
{
    std::vector<std::string> problems;
    const int p = s.stages;
    if (static_cast<int>(s.ranks.size()) != p) {
        problems.push_back("the schedule has " + str(static_cast<int>(s.ranks.size())) + " rank lists for " + str(p) + " stages");
        return problems;
    }
    ActionCounts counts;
    checkRankLists(s, counts, problems);
    checkComputeOnce(s, counts, problems);
    checkSendsMatched(counts, problems);
    if (problems.empty())
        checkPeerOrder(s, problems);
    // Run it (when every action is there once): dependencies hold and nothing deadlocks.
    if (problems.empty()) {
        const Simulation sim = simulateSchedule(s, ScheduleCosts::uniform(s));
        if (!sim.completed)
            for (const auto &stuck : sim.stuck)
                problems.push_back("deadlock: " + stuck + " waits for what never comes");
    }
    checkWarmup(s, problems);
    return problems;
}

std::string formatSchedule(const Schedule &s)
{
    std::ostringstream out;
    for (int r = 0; r < s.stages; ++r) {
        out << "rank " << r << ":";
        for (const Action &a : s.ranks[static_cast<std::size_t>(r)])
            if (isCompute(a.kind))
                out << ' ' << toString(a.kind) << a.microBatch << '.' << a.chunk;
        out << '\n';
    }
    return out.str();
}

} // namespace trellis::plan
