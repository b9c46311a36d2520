// Planner search; see planner.h.
#include "backend/plan/cost/planner.h"

#include "backend/plan/plan_validate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <thread>

namespace trellis::plan {
namespace {

std::vector<int> divisors(int n)
{
    std::vector<int> out;
    for (int d = 1; d <= n; ++d)
        if (n % d == 0)
            out.push_back(d);
    return out;
}

std::string reasonFor(const Plan &plan, const Estimate &e, const DeviceSpec &device)
{
    const ParallelSpec &p = plan.parallel;
    const int perNode = plan.cluster.nodes.empty() ? 1 : plan.cluster.nodes.front().slotCount;
    std::vector<std::string> parts;
    char buf[160];
    if (p.tp > 1)
        parts.push_back("tp=" + std::to_string(p.tp) +
                        (p.tp <= perNode ? " keeps the all-reduce on " + std::string(plan.cluster.nodes.front().device == DeviceKind::Cuda ? "NVLink" : "the node")
                                         : " spans nodes"));
    if (p.pp > 1) {
        std::snprintf(buf, sizeof buf, "pp=%d with %s%s: %.0f%% bubble", p.pp, p.schedule.c_str(),
                      p.virtualStages > 1 ? (" v=" + std::to_string(p.virtualStages)).c_str() : "", 100 * e.bubbleFraction);
        parts.emplace_back(buf);
    }
    if (p.zero > 0)
        parts.push_back("ZeRO-" + std::to_string(p.zero) + " over dp=" + std::to_string(p.dp));
    if (p.cp > 1)
        parts.push_back("cp=" + std::to_string(p.cp) + " splits the " + std::to_string(plan.model.seqLen) + "-token sequence");
    if (p.ep > 1)
        parts.push_back("ep=" + std::to_string(p.ep) + " spreads the experts");
    if (p.recompute == Recompute::Full)
        parts.emplace_back("full recompute");
    else if (p.recompute == Recompute::Selective)
        parts.emplace_back("selective recompute");
    const std::uint64_t peak = e.peakMemory();
    if (device.memoryGB > 0)
        std::snprintf(buf, sizeof buf, "%.0f of %.0f GB", static_cast<double>(peak) / 1e9, device.memoryGB);
    else
        std::snprintf(buf, sizeof buf, "%.0f MB a rank", static_cast<double>(peak) / 1e6);
    parts.emplace_back(buf);
    if (e.mfu > 0) {
        std::snprintf(buf, sizeof buf, "MFU %.0f%%", 100 * e.mfu);
        parts.emplace_back(buf);
    }
    std::string out;
    for (const auto &s : parts)
        out += (out.empty() ? "" : "; ") + s;
    return out;
}

// The part of a plan the search's outer loops choose: the degrees that fill the world, the
// micro-batch size and count for the global batch, and the model (the vocabulary padded as
// Megatron-LM pads it where tp does not divide it).
struct Shape {
    ModelSpec model;
    int tp = 1, cp = 1, pp = 1, dp = 1, ep = 1, microBatchSize = 1, microBatches = 1;
};

// Every shape, in the search's order: tp, then cp, pp, ep, micro-batch size.
std::vector<Shape> shapesFor(const ModelSpec &m, int world, int globalBatch, bool cuda)
{
    std::vector<Shape> shapes;
    for (int tp : divisors(world)) {
        if (m.heads % tp || (m.kvHeads > 0 && m.kvHeads % tp) || m.ffn % tp)
            continue;
        ModelSpec model = m;
        if (model.vocab % tp) {
            if (!cuda)
                continue; // trellis-trainer splits the vocabulary as it is
            // Megatron-LM pads the vocabulary to a multiple of 128 × tp.
            const int multiple = 128 * tp;
            model.vocab = (model.vocab + multiple - 1) / multiple * multiple;
        }
        for (int cp : divisors(world / tp)) {
            // Context parallelism splits long sequences: at least 1024 tokens a rank.
            if (cp > 1 && (m.seqLen % cp || m.seqLen / cp < 1024))
                continue;
            for (int pp : divisors(world / tp / cp)) {
                if (pp > m.layers)
                    continue;
                const int dp = world / tp / cp / pp;
                for (int ep : divisors(dp)) {
                    if (ep > 1 && (m.moe.experts == 0 || m.moe.experts % ep))
                        continue;
                    for (int mbs : {1, 2, 4, 8}) {
                        if (globalBatch % (mbs * dp))
                            continue;
                        shapes.push_back({model, tp, cp, pp, dp, ep, mbs, globalBatch / (mbs * dp)});
                    }
                }
            }
        }
    }
    return shapes;
}

// The order of the result: fastest first; plans within 0.1% of each other are a tie, which the one
// needing less memory a rank wins (more headroom for the same speed); then the order found.
// (Speeds fall into 0.1%-wide bands, so the order is a strict weak one.)
double speedBand(const Estimate &e) { return std::floor(std::log(std::max(e.tokensPerS, 1e-9)) / std::log(1.001)); }
bool ranksBefore(const Estimate &a, const Estimate &b)
{
    const double x = speedBand(a), y = speedBand(b);
    if (x != y)
        return x > y;
    return a.peakMemory() < b.peakMemory();
}

void rankCandidates(std::vector<Candidate> &all, int top)
{
    std::stable_sort(all.begin(), all.end(), [](const Candidate &a, const Candidate &b) { return ranksBefore(a.estimate, b.estimate); });
    if (static_cast<int>(all.size()) > top)
        all.resize(static_cast<std::size_t>(std::max(0, top)));
}

// The best `top` plans seen so far, in the final order. A plan that cannot enter (not before the
// last of a full list: a tie goes after, as found later) is neither copied nor kept; the list is
// cut back to `top` whenever it doubles. Stable sorting keeps ties in the order found, so the
// result is exactly that of ranking every fitting plan at the end — with a list of `top` plans in
// memory instead of all of them (each holds the cluster: 2048 nodes at 16,384 GPUs). `keepAll`:
// the exhaustive reference, every plan kept until take().
class TopPlans {
public:
    TopPlans(int top, bool keepAll) : m_top(std::max(0, top)), m_keepAll(keepAll) {}
    bool wouldEnter(const Estimate &e) const
    {
        return m_keepAll || (m_top > 0 && (static_cast<int>(m_best.size()) < m_top || !m_full || ranksBefore(e, m_last)));
    }
    void add(Candidate c)
    {
        m_best.push_back(std::move(c));
        if (!m_keepAll && static_cast<int>(m_best.size()) >= 2 * m_top + 16)
            cut();
    }
    std::vector<Candidate> take()
    {
        cut();
        return std::move(m_best);
    }

private:
    void cut()
    {
        rankCandidates(m_best, m_top);
        m_full = static_cast<int>(m_best.size()) == m_top && m_top > 0;
        if (m_full)
            m_last = m_best.back().estimate;
    }
    int m_top;
    bool m_keepAll;
    std::vector<Candidate> m_best;
    bool m_full = false;
    Estimate m_last; // the last of the list at the latest cut (a bound: the list only gets better)
};

// A shape's plans — pipeline schedule and virtual stages, ZeRO stage, recompute — estimated with
// the fast path; those valid and fitting in memory are offered to `best`, the counts go to
// `result`. `plan` is the shape's working copy of the base plan (the cluster copied once).
void searchShape(const Shape &shape, Plan &plan, const DeviceSpec &device, bool cuda, bool exhaustive, SearchResult &result,
                 TopPlans &best)
{
    const ModelSpec m = plan.model; // the request's model (the shape's may pad the vocabulary)
    const int tp = shape.tp, cp = shape.cp, pp = shape.pp, dp = shape.dp, micro = shape.microBatches;
    struct Pipe {
        const char *schedule;
        int v;
    };
    const std::vector<Pipe> pipes = pp > 1 ? std::vector<Pipe>{{"1f1b", 1}, {"interleaved-1f1b", 2}, {"interleaved-1f1b", 4}, {"zb-h1", 1}, {"gpipe", 1}}
                                           : std::vector<Pipe>{{"1f1b", 1}};
    for (const Pipe &pipe : pipes) {
        const int v = pipe.v;
        if (v > 1 && (micro % pp || pp * v > m.layers))
            continue;
        for (int zero : {0, 1, 2, 3}) {
            if (pp > 1 && zero > 1)
                continue; // stage-held units are reduced after the flush: ZeRO 0 or 1
            if (zero > 0 && dp * cp == 1)
                continue; // nothing to shard over
            for (Recompute recompute : {Recompute::None, Recompute::Selective, Recompute::Full}) {
                ++result.considered;
                plan.model = shape.model;
                ParallelSpec &p = plan.parallel;
                p.dp = dp;
                p.tp = tp;
                p.pp = pp;
                p.cp = cp;
                p.ep = shape.ep;
                p.zero = zero;
                p.schedule = pipe.schedule;
                p.virtualStages = v;
                p.microBatchSize = shape.microBatchSize;
                p.microBatches = micro;
                p.recompute = recompute;
                p.sequenceParallel = tp > 1 && m.seqLen % tp == 0;
                p.precision = cuda ? Precision::Bf16 : Precision::Fp32;
                // The fixed sections were validated once (searchPlans); here the model and parallelism.
                if (hasErrors(exhaustive ? validatePlan(plan) : validatePlan(plan, {true, true, false, false})))
                    continue;
                ++result.valid;
                Estimate e = estimatePlan(plan, device, false);
                if (!e.warnings.empty())
                    continue; // does not fit
                ++result.fitting;
                if (best.wouldEnter(e))
                    best.add({plan, std::move(e), {}, {}});
            }
        }
    }
}

// Why each is where it is, and whether trellis-trainer launches it as it stands (precision is no
// reason any more; a GPU plan of several ranks is, until the NCCL communicator lands).
void explainCandidates(std::vector<Candidate> &best, const DeviceSpec &device)
{
    for (auto &c : best) {
        c.reason = reasonFor(c.plan, c.estimate, device);
        for (const Diagnostic &d : checkTrainerSupport(c.plan))
            if (d.severity == Severity::Error) {
                c.notLaunchable = d.toString();
                break;
            }
    }
}

} // namespace

SearchResult searchPlans(const SearchRequest &request)
{
    SearchResult result;
    const int world = request.cluster.totalSlots();
    const DeviceSpec device = deviceFor(request.cluster);
    const bool cuda = !request.cluster.nodes.empty() && request.cluster.nodes.front().device == DeviceKind::Cuda;
    const int globalBatch = request.globalBatch > 0 ? request.globalBatch : 4 * world;

    Plan base;
    base.name = "search";
    base.model = request.model;
    base.cluster = request.cluster;
    base.training = request.training;
    if (base.training.data.source != "synthetic" && base.training.data.path.empty())
        base.training.data.source = "synthetic";

    // The sections no candidate changes: one check for all (with errors there, none is valid).
    const bool fixedValid = request.exhaustive || !hasErrors(validatePlan(base, {false, false, true, false}));
    const std::vector<Shape> shapes = shapesFor(request.model, world, globalBatch, cuda);
    // The shapes in contiguous blocks, one per thread, each with its own best list (the exhaustive
    // search: one thread, every plan kept). Block by block, each list in the order found: ranking
    // their union stably gives what one thread walking every shape in order would have found.
    const int threads = request.exhaustive ? 1
                                           : static_cast<int>(std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1,
                                                                                      std::min<std::size_t>(8, shapes.size() / 8 + 1)));
    struct Block {
        SearchResult counts;
        std::vector<Candidate> found;
    };
    std::vector<Block> blocks(static_cast<std::size_t>(threads));
    auto walk = [&](int t) {
        Block &block = blocks[static_cast<std::size_t>(t)];
        TopPlans best(request.top, request.exhaustive);
        Plan working = base;
        const std::size_t from = shapes.size() * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads);
        const std::size_t to = shapes.size() * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(threads);
        for (std::size_t i = from; i < to; ++i) {
            working.model = request.model;
            searchShape(shapes[i], working, device, cuda, request.exhaustive, block.counts, best);
        }
        block.found = best.take();
    };
    std::vector<std::thread> workers;
    for (int t = 1; t < threads; ++t)
        workers.emplace_back(walk, t);
    walk(0);
    for (auto &w : workers)
        w.join();
    std::vector<Candidate> all;
    for (Block &block : blocks) {
        result.considered += block.counts.considered;
        if (fixedValid) {
            result.valid += block.counts.valid;
            result.fitting += block.counts.fitting;
        }
        std::move(block.found.begin(), block.found.end(), std::back_inserter(all));
    }
    if (!fixedValid)
        return result;
    rankCandidates(all, request.top);
    explainCandidates(all, device);
    result.best = std::move(all);
    return result;
}

} // namespace trellis::plan
