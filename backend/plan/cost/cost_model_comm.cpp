// The cost model's communication (cost_model_parts.h): which link each group crosses, the
// transfer between pipeline stages, and the collectives each stage's ranks issue in a step as
// trellis-trainer records them (communicator groups of one rank record nothing) — tensor,
// context, expert and data parallelism, the tied embedding's two copies, the pipeline's sends
// and the world's scalars — with the data-parallel time the step pays for.
#include "backend/plan/cost/cost_model_parts.h"

#include "backend/plan/cost/collective_model.h"
#include "backend/plan/mesh.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

namespace trellis::plan::detail {
namespace {

constexpr double kScalarBytes = 8; // a double: the loss, a squared norm

// fp16 in trellis-trainer: every step the ranks agree on the overflow verdict (an int over the world).
bool overflowVote(const CostInputs &in) { return in.trainerLayout && in.p.precision == Precision::Fp16; }
// Without tp and pp the world is the DP group: the loss (and the sharded norm) go there.
bool worldIsDp(const CostInputs &in) { return in.tp == 1 && in.pp == 1 && in.cp == 1; }

// Appends a stage's collectives of one kind to e.collectives; returns their time in a step.
class CollectiveLog {
public:
    CollectiveLog(Estimate &e, int pp) : m_e(e), m_pp(pp) {}
    double record(int stage, const std::string &group, const std::string &op, const Calls &c, int n, const LinkSpec &link,
                  bool interNode)
    {
        if (n <= 1 || c.calls <= 0)
            return 0.0;
        return recordMs(stage, group, op, c, callsMs(op == "send" || op == "recv" ? "send_recv" : op, c, n, link), interNode);
    }
    // The same with the time already known (the gradient all-reduce's algorithm).
    double recordMs(int stage, const std::string &group, const std::string &op, const Calls &c, double ms, bool interNode)
    {
        m_e.collectives.push_back({group, op, static_cast<std::uint64_t>(c.bytes), static_cast<int>(c.calls),
                                   op == "recv" ? 0.0 : ms, interNode, m_pp > 1 ? stage : -1});
        return ms;
    }
    Estimate &estimate() { return m_e; }

private:
    Estimate &m_e;
    int m_pp;
};

// Tensor parallelism: every pass over the stage's chunks, each micro-batch; returns their time.
double tensorParallel(const CostInputs &in, const Links &links, CollectiveLog &log, int stage)
{
    const int tp = in.tp, pp = in.pp, chunks = in.chunksTotal;
    const int m_ = in.p.microBatches;
    const int st = pp > 1 ? stage : -1;
    TpPass total;
    if (in.moe && in.trainerLayout) // each mixture-of-experts layer's gate gradients, summed over the group
        for (int c = stage; c < chunks; c += pp)
            total.allReduce.add(m_ * in.layersOf(c), static_cast<double>(in.bt * in.choices) * 4.0);
    for (int c = stage; c < chunks; c += pp) {
        const double layers = in.layersOf(c);
        for (Pass pass : {Pass::Forward, Pass::Backward, Pass::Weights}) {
            const TpPass t = tpPass(pass, layers, c == 0, c == chunks - 1, in.sp, in.split, in.recompute, in.rowBytes, in.B, tp,
                                    in.sh.norm());
            total.allReduce.add(t.allReduce, m_);
            total.allGather.add(t.allGather, m_);
            total.reduceScatter.add(t.reduceScatter, m_);
        }
    }
    total.allReduce.add(1, kScalarBytes); // the gradient norm's sum over the group
    if (in.scatterGather) // every activation and gradient received, gathered over the group
        for (int c = stage; c < chunks; c += pp)
            total.allGather.add(m_ * ((c != chunks - 1 ? 1 : 0) + (c != 0 ? 1 : 0)), in.rowBytes);
    double ms = log.record(st, "tp", "all_gather", total.allGather, tp, links.tp(), links.tpInter);
    ms += log.record(st, "tp", "reduce_scatter", total.reduceScatter, tp, links.tp(), links.tpInter);
    ms += log.record(st, "tp", "all_reduce", total.allReduce, tp, links.tp(), links.tpInter);
    return ms;
}

double layersOfStage(const CostInputs &in, int stage)
{
    double layersHere = 0;
    for (int c = stage; c < in.chunksTotal; c += in.pp)
        layersHere += in.layersOf(c);
    return layersHere;
}

// Context parallelism: trellis-trainer's ring, or a gather of k and v and a reduce-scatter of
// their gradients per layer.
void contextParallel(const CostInputs &in, const Links &links, CollectiveLog &log, int stage)
{
    const int cp = in.cp, pp = in.pp;
    const int m_ = in.p.microBatches;
    const int st = pp > 1 ? stage : -1;
    if (in.trainerLayout) {
        // trellis-trainer's ring (model/ring_attention.cpp): a layer's forward sends its k/v
        // block on cp − 1 times; its backward sends the blocks on cp − 1 times and their dK/dV
        // partial sums cp times (the last back to the owner); full recompute runs the forward
        // ring again. Every message is one rank's block, bt · 2 · kv width floats.
        const double layersHere = layersOfStage(in, stage);
        // The k/v blocks travel in the activations' type, the dK/dV partial sums in fp32.
        const double kvSends = (in.recompute ? 2.0 : 1.0) * (cp - 1) + (cp - 1), dkvSends = cp;
        const double block = static_cast<double>(in.bt) * 2.0 * static_cast<double>(in.sh.Kq);
        Calls ring;
        ring.add(m_ * layersHere * kvSends, block * static_cast<double>(in.tBytes));
        ring.add(m_ * layersHere * dkvSends, block * 4.0);
        log.record(st, "cp", "send", ring, cp, links.cp(), links.cpInter);
        log.record(st, "cp", "recv", ring, cp, links.cp(), links.cpInter);
        return;
    }
    Calls gather, scatter;
    gather.add(m_ * (in.bounds.back() - in.bounds.front()) / pp, in.kvBytes);
    scatter.add(m_ * (in.bounds.back() - in.bounds.front()) / pp, in.kvBytes);
    log.record(st, "cp", "all_gather", gather, cp, links.cp(), links.cpInter);
    log.record(st, "cp", "reduce_scatter", scatter, cp, links.cp(), links.cpInter);
}

// Expert parallelism: tokens to their experts and back.
void expertParallel(const CostInputs &in, const Links &links, CollectiveLog &log, int stage)
{
    const int ep = in.ep, pp = in.pp;
    const int m_ = in.p.microBatches;
    const int st = pp > 1 ? stage : -1;
    if (in.trainerLayout) {
        // trellis-trainer (model/moe.cpp): per layer and micro-batch, dispatch and combine in
        // forward (again with full recompute), the output gradients out and the input
        // gradients home in backward, each moeRows rows of this rank; dropless routing first
        // exchanges the row counts (one int per expert) in each forward. The norm's sum.
        const double layersHere = layersOfStage(in, stage);
        const double forwards = in.recompute ? 2.0 : 1.0;
        Calls a2a, norm;
        a2a.add(m_ * layersHere * 2.0 * (forwards + 1.0), static_cast<double>(in.moeRows * in.sh.C * in.tBytes));
        if (!in.m.moe.capacityFactor)
            a2a.add(m_ * layersHere * forwards, static_cast<double>(in.sh.E) * 4.0);
        norm.add(1, kScalarBytes);
        log.record(st, "ep", "all_to_all", a2a, ep, links.ep(), links.epInter);
        log.record(st, "ep", "all_reduce", norm, ep, links.ep(), links.epInter);
        return;
    }
    Calls a2a;
    a2a.add(4.0 * m_ * (in.bounds.back() - in.bounds.front()) / pp, in.a2aBytes);
    log.record(st, "ep", "all_to_all", a2a, ep, links.ep(), links.epInter);
}

// Gradients on the wire (fp32, or bf16 with grad_reduce bf16).
double gradientWireBytes(const CostInputs &in)
{
    return in.trainerLayout ? (in.p.gradReduce == GradReduce::Bf16 ? 2.0 : 4.0) : in.gradBytes;
}
// The parameters ZeRO gathers (the compute copy: the activations' type).
double parameterWireBytes(const CostInputs &in) { return in.trainerLayout ? static_cast<double>(in.tBytes) : in.gradBytes; }
// The gradient replicas: dp × cp ranks.
std::string dpGroupName(const CostInputs &in) { return in.cp > 1 ? "dp_cp" : "dp"; }

// Expert parallelism: each layer unit is [the rest | its experts] (the experts last); the
// experts' ranges in the layer segment (the last), for the reducer's cuts.
std::vector<std::pair<std::uint64_t, std::uint64_t>> expertRanges(const CostInputs &in, int stage)
{
    const Shapes &sh = in.sh;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> experts;
    if (in.ep > 1 && in.trainerLayout) {
        const std::uint64_t first = in.pp == 1 ? sh.embedding() : 0, expertPart = sh.El * sh.mlp();
        std::uint64_t layersHere = 0;
        for (int c = stage; c < in.chunksTotal; c += in.pp)
            layersHere += static_cast<std::uint64_t>(in.layersOf(c));
        for (std::uint64_t i = 0; i < layersHere; ++i)
            experts.emplace_back(first + (i + 1) * sh.layer() - expertPart, first + (i + 1) * sh.layer());
    }
    return experts;
}

// The gradient replicas' group of the stage's first rank over the cluster's nodes.
Tiers tiersOf(const CostInputs &in, const Links &links, int stage)
{
    Tiers t;
    t.intra = links.intra;
    t.inter = links.inter;
    const Mesh mesh(in.p);
    const auto byNode = membersByNode(mesh.groupOf(mesh.rankOf({0, 0, 0, stage}), GroupKind::DpCp), in.plan.cluster);
    t.perNode = static_cast<int>(byNode.front().size());
    t.uniform = byNode.size() > 1 && whyFlat(byNode).empty();
    // The tier a flat algorithm pays is the one the rest of the model uses for the group
    // (links.dp()); a cluster without listed nodes has no node groups to compose over.
    t.nodes = links.dpInter ? std::max<int>(2, static_cast<int>(byNode.size())) : 1;
    if (!links.dpInter)
        t.uniform = true;
    t.flatBecause = !links.dpInter ? "its ranks are on one node" : byNode.size() <= 1 ? "the cluster lists no nodes" : whyFlat(byNode);
    return t;
}

const char *algorithmLine(AllReduceAlgorithm a)
{
    switch (a) {
    case AllReduceAlgorithm::Ring: return "ring";
    case AllReduceAlgorithm::RecursiveDoubling: return "recursive doubling";
    case AllReduceAlgorithm::Hierarchical: return "hierarchical";
    case AllReduceAlgorithm::Auto: break;
    }
    return "auto (the library's rules)";
}

// The data-parallel gradient all-reduce of a stage: its time by the plan's algorithm; every
// algorithm's time kept in e.allReduce (the slowest stage's), with what runs and why.
double gradientAllReduce(const CostInputs &in, const Links &links, const Calls &all, int stage, Estimate &e)
{
    const Tiers t = tiersOf(in, links, stage);
    const double each = all.bytes / all.calls;
    AllReduceChoice &c = e.allReduce;
    c.group = dpGroupName(in);
    c.ranks = in.dp;
    c.nodes = t.nodes;
    c.perNode = t.uniform ? t.perNode : 0;
    c.callsPerStep = all.calls;
    c.bytesPerCall = std::max(c.bytesPerCall, each);
    c.chosen = in.p.allReduce;
    if (c.options.empty())
        for (AllReduceAlgorithm a : {AllReduceAlgorithm::Auto, AllReduceAlgorithm::Ring, AllReduceAlgorithm::RecursiveDoubling,
                                     AllReduceAlgorithm::Hierarchical})
            c.options.push_back({a, 0.0});
    for (AllReduceOption &o : c.options)
        o.msPerStep = std::max(o.msPerStep, all.calls * allReduceMs(o.algorithm, each, in.dp, t));
    const AllReduceOption *best = &c.options.front();
    for (const AllReduceOption &o : c.options)
        if (o.msPerStep < best->msPerStep * 0.999)
            best = &o;
    c.fastest = best->algorithm;
    char line[320];
    const double mine = c.msOf(c.chosen);
    if (c.chosen == c.fastest || best->msPerStep >= mine * 0.999)
        std::snprintf(line, sizeof line, "%s: %.2f ms a step, the fastest predicted", algorithmLine(c.chosen), mine);
    else
        std::snprintf(line, sizeof line, "%s: %.2f ms a step; %s is predicted faster (%.2f ms, set parallel.allreduce to %s)",
                      algorithmLine(c.chosen), mine, algorithmLine(c.fastest), best->msPerStep, toString(c.fastest));
    c.why = line;
    if (c.chosen == AllReduceAlgorithm::Hierarchical && !t.flatBecause.empty())
        c.why += "; hierarchical is the flat all-reduce here: " + t.flatBecause;
    return all.calls * allReduceMs(c.chosen, each, in.dp, t);
}

} // namespace

// The matrices of a stage as gpt_model.cpp lays them out for this tp rank: wte and (gpt) wpe on
// the first stage, a layer's qkv, proj, fc (llama: gate and up together) and proj, a mixture's
// router (its experts are 3-D: whole), and llama's lm_head on the last; r = min(rank, rows, cols).
PowerSgdShapes powerSgdShapes(const CostInputs &in, int stage)
{
    const Shapes &sh = in.sh;
    const auto rank = static_cast<std::uint64_t>(std::max(1, in.p.gradCompression.rank));
    PowerSgdShapes out;
    auto matrix = [&](std::uint64_t rows, std::uint64_t cols, std::uint64_t count) {
        const std::uint64_t r = std::min({rank, rows, cols});
        out.factors += count * (rows + cols) * r;
        out.matrixElements += count * rows * cols;
        if (count > 0)
            out.largest = std::max(out.largest, rows * cols);
    };
    const bool first = stage == 0, last = stage == in.pp - 1;
    if (first) {
        matrix(sh.Vl, sh.C, 1);
        if (!sh.llama)
            matrix(sh.S, sh.C, 1);
    }
    const auto layers = static_cast<std::uint64_t>(in.pp == 1 ? static_cast<double>(sh.L) : layersOfStage(in, stage));
    matrix(sh.Cq + 2 * sh.Kq, sh.C, layers);
    matrix(sh.C, sh.Cq, layers);
    if (in.moe) {
        matrix(sh.E, sh.C, layers);
    } else {
        matrix(sh.llama ? 2 * sh.Fl : sh.Fl, sh.C, layers);
        matrix(sh.C, sh.Fl, layers);
    }
    if (last && sh.llama)
        matrix(sh.Vl, sh.C, 1);
    return out;
}

namespace {

// parallel.grad_compression powersgd: a step all-reduces the vectors whole, every matrix's P
// (rows × r) and every matrix's Q (cols × r) — three calls, fp32 — instead of the gradients.
Calls powerSgdCalls(const CostInputs &in, int stage, std::uint64_t stageElements)
{
    const PowerSgdShapes shapes = powerSgdShapes(in, stage);
    Calls c;
    c.add(1, static_cast<double>(stageElements - std::min(stageElements, shapes.matrixElements)) * 4.0);
    c.add(2, static_cast<double>(shapes.factors) * 2.0); // P and Q: half the factor elements each, on average
    return c;
}

// Data parallelism at ZeRO 0/1: buckets over the stage's segments all-reduced (ZeRO 0), or
// reduce-scattered and the parameters all-gathered (ZeRO 1); with local updates (parallel.dp_sync)
// the fp32 parameters all-reduced once every inner_steps steps, counted per step; without a pipeline the loss (and the
// norm) share the dp group when it is the world. A bucket's expert parts are averaged over
// expert_dp, one call per part. Returns the reductions' time.
double dataParallelBuckets(const CostInputs &in, const Links &links, CollectiveLog &log, int stage)
{
    const ParallelSpec &p = in.p;
    const int dp = in.dp, ep = in.ep;
    const int st = in.pp > 1 ? stage : -1;
    const double g = gradientWireBytes(in), gp = parameterWireBytes(in);
    const std::string dpName = dpGroupName(in);
    const bool worldDp = worldIsDp(in);
    double dpMs = 0;
    const auto segments = stageSegments(in, stage);
    const auto held = trainerBuckets(segments, dp, p);
    const std::vector<TrainerBucket> &buckets = *held;
    Calls reduce, scalars, expertReduce;
    const auto experts = expertRanges(in, stage);
    if (p.dpSync.local()) // local SGD, DiLoCo: no gradients; the fp32 parameters every inner_steps steps
        for (const TrainerBucket &b : buckets)
            reduce.add(1.0 / p.dpSync.innerSteps, static_cast<double>(b.size) * 4.0);
    else if (p.gradCompression.kind == GradCompression::PowerSgd && p.zero == 0) {
        std::uint64_t elements = 0;
        for (std::uint64_t size : segments)
            elements += size;
        reduce = powerSgdCalls(in, stage, elements);
    }
    else if (experts.empty()) // no expert cuts: a part per bucket (bucketParts' result, without building it)
        for (const TrainerBucket &b : buckets)
            reduce.add(1, static_cast<double>(b.size) * g);
    else
        for (const BucketPart &part : bucketParts(buckets, segments.size() - 1, experts)) {
            if (!part.expert)
                reduce.add(1, static_cast<double>(part.elements) * g);
            else if (p.dp / ep > 1) // a group of one makes no call
                expertReduce.add(1, static_cast<double>(part.elements) * g);
        }
    dpMs += log.record(st, "expert_dp", "all_reduce", expertReduce, p.dp / ep, links.dp(), links.dpInter);
    if (worldDp)
        scalars.add(1, kScalarBytes); // the loss
    if (p.zero == 1)
        scalars.add(1, kScalarBytes); // the norm of the owned gradients
    if (worldDp && overflowVote(in))
        scalars.add(1, 4);
    if (p.zero == 0) {
        Calls all = reduce; // the buckets and the scalars share the dp group's all-reduce
        all.calls += scalars.calls;
        all.bytes += scalars.bytes;
        if (dp > 1 && all.calls > 0)
            dpMs += log.recordMs(st, dpName, "all_reduce", all, gradientAllReduce(in, links, all, stage, log.estimate()), links.dpInter);
    } else {
        Calls gatherParams; // the same buckets, the parameters' element size
        if (experts.empty())
            for (const TrainerBucket &b : buckets)
                gatherParams.add(1, static_cast<double>(b.size) * gp);
        else
            for (const BucketPart &part : bucketParts(buckets, segments.size() - 1, experts))
                if (!part.expert)
                    gatherParams.add(1, static_cast<double>(part.elements) * gp);
        dpMs += log.record(st, dpName, "reduce_scatter", reduce, dp, links.dp(), links.dpInter);
        dpMs += log.record(st, dpName, "all_gather", gatherParams, dp, links.dp(), links.dpInter);
        dpMs += log.record(st, dpName, "all_reduce", scalars, dp, links.dp(), links.dpInter);
    }
    return dpMs;
}

// Data parallelism at ZeRO 2/3: every unit reduce-scattered once per micro-batch (its weight
// gradients); stage 2 all-gathers each unit after the step; stage 3 gathers the roots once a
// step and every other unit each time a pass uses it (forward, backward, and with a split
// backward its input half too). Returns the reductions' time; `overlapMs` what of it runs under
// later micro-batches' compute.
double dataParallelSharded(const CostInputs &in, const Links &links, CollectiveLog &log, int stage, double &overlapMs)
{
    const ParallelSpec &p = in.p;
    const Shapes &sh = in.sh;
    const int dp = in.dp, pp = in.pp;
    const int m_ = p.microBatches;
    const int st = pp > 1 ? stage : -1;
    const double g = gradientWireBytes(in), gp = parameterWireBytes(in);
    const std::string dpName = dpGroupName(in);
    const bool worldDp = worldIsDp(in);
    double dpMs = 0;
    const std::vector<std::uint64_t> units = stageUnits(in, stage);
    const bool holdsEmbedding = pp == 1 || stage == 0 || (stage == pp - 1 && !sh.llama);
    const bool holdsFinal = pp == 1 || stage == pp - 1;
    std::uint64_t layerUnits = 0;
    for (int c = stage; c < in.chunksTotal; c += pp)
        layerUnits += static_cast<std::uint64_t>(in.bounds.empty() ? sh.L : in.layersOf(c));
    if (pp == 1)
        layerUnits = sh.L;
    Calls reduce, gather, scalars;
    for (std::uint64_t size : units)
        reduce.add(m_, static_cast<double>(in.padded(size)) * g); // every micro-batch
    if (p.zero == 2) {
        for (std::uint64_t size : units)
            gather.add(1, static_cast<double>(in.padded(size)) * gp);
    } else {
        if (holdsEmbedding)
            gather.add(1, static_cast<double>(in.padded(sh.embedding())) * gp);
        if (holdsFinal)
            gather.add(1, static_cast<double>(in.padded(sh.final())) * gp);
        const double passes = in.split ? 3.0 : 2.0;
        gather.add(passes * m_ * static_cast<double>(layerUnits), static_cast<double>(in.padded(sh.layer())) * gp);
    }
    scalars.add(worldDp ? 2 : 1, kScalarBytes);
    if (worldDp && overflowVote(in))
        scalars.add(1, 4);
    const double reduceMs = log.record(st, dpName, "reduce_scatter", reduce, dp, links.dp(), links.dpInter);
    dpMs += reduceMs;
    // Outside trellis-trainer (GPU streams progress on their own) the reduce-scatters of
    // every micro-batch but the last run while later micro-batches compute.
    if (!in.trainerLayout && m_ > 1)
        overlapMs = reduceMs * (m_ - 1) / m_;
    dpMs += log.record(st, dpName, "all_gather", gather, dp, links.dp(), links.dpInter);
    dpMs += log.record(st, dpName, "all_reduce", scalars, dp, links.dp(), links.dpInter);
    return dpMs;
}

// The tied embedding's two copies on a pipeline's end stages.
bool holdsTiedEmbedding(const CostInputs &in, int stage) { return in.pp > 1 && !in.sh.llama && (stage == 0 || stage == in.pp - 1); }

// The tied embedding's reduced gradients summed between the end stages; returns the time.
double tiedEmbedding(const CostInputs &in, const Links &links, CollectiveLog &log, int stage)
{
    const ParallelSpec &p = in.p;
    const Shapes &sh = in.sh;
    const int dp = in.dp;
    Calls sum; // the reduced gradients: fp32 in trellis-trainer whatever went over the wire
    const double ge = in.trainerLayout ? 4.0 : in.gradBytes;
    if (p.zero == 0)
        sum.add(1, static_cast<double>(in.padded(sh.embedding())) * ge);
    else if (p.zero == 1)
        for (const auto &b : *trainerBuckets({sh.embedding()}, dp, p)) // its own segment, cut alike
            sum.add(1, static_cast<double>(b.size / static_cast<std::uint64_t>(dp)) * ge);
    else
        sum.add(1, static_cast<double>(in.padded(sh.embedding()) / static_cast<std::uint64_t>(dp)) * ge);
    return log.record(stage, "embedding", "all_reduce", sum, 2, links.pp(), links.ppInter);
}

// Pipeline: activations forward and gradients back between neighbouring chunks, the norm's sum.
void pipelineSends(const CostInputs &in, const Links &links, CollectiveLog &log, int stage)
{
    const int pp = in.pp, chunks = in.chunksTotal;
    const int m_ = in.p.microBatches;
    const double sendBytes = in.rowBytes / (in.sp || in.scatterGather ? in.tp : 1);
    Calls sends;
    for (int c = stage; c < chunks; c += pp)
        sends.add(m_ * ((c != chunks - 1 ? 1 : 0) + (c != 0 ? 1 : 0)), sendBytes);
    Calls norm;
    norm.add(1, kScalarBytes);
    log.record(stage, "pp", "send", sends, pp, links.pp(), links.ppInter);
    log.record(stage, "pp", "recv", sends, pp, links.pp(), links.ppInter);
    log.record(stage, "pp", "all_reduce", norm, pp, links.pp(), links.ppInter);
}

// The loss (and fp16's overflow verdict) over the world, when it is not the DP group.
void worldScalars(const CostInputs &in, const Links &links, CollectiveLog &log, int stage)
{
    const int st = in.pp > 1 ? stage : -1;
    const int world = in.p.worldSize();
    Calls loss;
    loss.add(1, kScalarBytes);
    if (overflowVote(in))
        loss.add(1, 4);
    log.record(st, "world", "all_reduce", loss, world, world > links.perNode ? links.inter : links.intra, world > links.perNode);
}

} // namespace

Links linksOf(const CostInputs &in)
{
    const Plan &plan = in.plan;
    const int tp = in.tp, cp = in.cp, ep = in.ep, dpRanks = in.p.dp;
    Links links;
    links.perNode = plan.cluster.nodes.empty() ? 1 : std::max(1, plan.cluster.nodes.front().slotCount);
    const int perNode = links.perNode;
    links.tpInter = tp > perNode;
    links.cpInter = tp * cp > perNode;
    links.dpInter = tp * cp * dpRanks > perNode;
    links.ppInter = tp * cp * dpRanks >= perNode;
    links.epInter = tp * cp * ep > perNode; // expert groups are strided dp ranks
    // A plan that names no links gets this machine's shared memory and a 10 Gb/s-class network.
    links.intra = plan.cluster.intraNode.bandwidthGBps > 0 ? plan.cluster.intraNode : LinkSpec{10.0, 1.0};
    links.inter = plan.cluster.interNode.bandwidthGBps > 0 ? plan.cluster.interNode : LinkSpec{1.0, 50.0};
    return links;
}

// A transfer between stages: this rank's rows with sequence parallelism, its 1/tp of them and
// the tp group's all-gather with Megatron-LM's scatter/gather, else all of them.
double stageTransferMs(const CostInputs &in, const Links &links)
{
    const double sendBytes = in.rowBytes / (in.sp || in.scatterGather ? in.tp : 1);
    return collectiveMs("send_recv", sendBytes, 2, links.pp()) +
           (in.scatterGather ? collectiveMs("all_gather", in.rowBytes, in.tp, links.tp()) : 0.0);
}

CommTime estimateCollectives(const CostInputs &in, const Links &links, Estimate &e)
{
    CommTime time;
    time.dpMsOfStage.assign(static_cast<std::size_t>(in.pp), 0.0);
    time.dpOverlapOfStage.assign(static_cast<std::size_t>(in.pp), 0.0);
    CollectiveLog log(e, in.pp);
    for (int stage = 0; stage < in.pp; ++stage) {
        if (in.tp > 1)
            time.tpMs = std::max(time.tpMs, tensorParallel(in, links, log, stage));
        if (in.cp > 1)
            contextParallel(in, links, log, stage);
        if (in.ep > 1)
            expertParallel(in, links, log, stage);
        // Data parallelism: gradient reduction (ZeRO: reduce-scatter and the parameters'
        // all-gather), and the scalars.
        double dpMs = in.p.zero <= 1 ? dataParallelBuckets(in, links, log, stage)
                                     : dataParallelSharded(in, links, log, stage, time.dpOverlapOfStage[static_cast<std::size_t>(stage)]);
        if (holdsTiedEmbedding(in, stage))
            dpMs += tiedEmbedding(in, links, log, stage);
        time.dpMsOfStage[static_cast<std::size_t>(stage)] = dpMs;
        if (in.pp > 1)
            pipelineSends(in, links, log, stage);
        if (!worldIsDp(in))
            worldScalars(in, links, log, stage);
    }
    return time;
}

} // namespace trellis::plan::detail
