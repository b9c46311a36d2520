// The cost model; see cost_model.h. Formulas: parameter and activation counts mirror
// backend/trainer/gpt_model.cpp; FLOPs per token 6N + 12·L·C·T (Narayanan et al. 2021, eq. 3
// without the vocabulary term, which 6N already holds with a tied head); ZeRO shares as
// Rajbhandari et al. 2020 (fp32: 4 + 4 + 8 bytes a parameter; mixed precision: 2 + 2 + 12).
#include "plan/cost_model.h"

#include "plan/mesh.h"
#include "plan/schedule.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

namespace trellis::plan {
namespace {

std::uint64_t roundUp(std::uint64_t x, std::uint64_t m) { return (x + m - 1) / m * m; }
std::string str(double v, int decimals = 1)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

struct Shapes {
    std::uint64_t C, S, L, Vl, Cq, Fl, NHl;
    std::uint64_t embedding() const { return Vl * C + S * C; }
    std::uint64_t layer() const { return 6 * C + 4 * C * Cq + 3 * Cq + 2 * C * Fl + Fl; }
    std::uint64_t final() const { return 2 * C; }
};

Shapes shapesOf(const ModelSpec &m, int tp)
{
    const auto t = static_cast<std::uint64_t>(tp);
    return {static_cast<std::uint64_t>(m.hidden), static_cast<std::uint64_t>(m.seqLen), static_cast<std::uint64_t>(m.layers),
            static_cast<std::uint64_t>(m.vocab) / t, static_cast<std::uint64_t>(m.hidden) / t,
            static_cast<std::uint64_t>(m.ffn) / t, static_cast<std::uint64_t>(m.heads) / t};
}

// Elements of [begin, begin+size) that rank r owns when the range is split in dp equal chunks
// (the last padded).
std::uint64_t ownedOfUnit(std::uint64_t size, int dp, int r)
{
    const std::uint64_t chunk = (size + dp - 1) / dp;
    const std::uint64_t from = std::min(size, chunk * r), to = std::min(size, chunk * (r + 1));
    return to - from;
}

// The trainer's gradient buckets over the padded flat buffer (gradient_reducer.cpp makeBuckets).
std::uint64_t bucketCount(std::uint64_t n, int dp, const ParallelSpec &p)
{
    const std::uint64_t padded = roundUp(n, static_cast<std::uint64_t>(dp));
    auto elements = [](double mb) { return static_cast<std::uint64_t>(mb * 1024.0 * 1024.0 / 4.0); };
    const double bucketMb = p.bucketMb.value_or(25.0);
    const std::uint64_t bucket = roundUp(std::max<std::uint64_t>(1, elements(bucketMb)), dp);
    const std::uint64_t first = roundUp(std::max<std::uint64_t>(1, elements(p.firstBucketMb.value_or(bucketMb))), dp);
    if (padded <= first)
        return 1;
    return 1 + (padded - first + bucket - 1) / bucket;
}

// ZeRO-1 without a pipeline: the trainer's buckets (gradient_reducer.cpp makeBuckets) over the
// padded flat buffer, rank r's chunk of each, without the padding.
std::uint64_t zeroOneOwned(std::uint64_t n, int dp, int r, const ParallelSpec &p)
{
    const std::uint64_t padded = roundUp(n, static_cast<std::uint64_t>(dp));
    auto elements = [](double mb) { return static_cast<std::uint64_t>(mb * 1024.0 * 1024.0 / 4.0); };
    const double bucketMb = p.bucketMb.value_or(25.0);
    const std::uint64_t bucket = roundUp(std::max<std::uint64_t>(1, elements(bucketMb)), dp);
    const std::uint64_t first = roundUp(std::max<std::uint64_t>(1, elements(p.firstBucketMb.value_or(bucketMb))), dp);
    std::uint64_t end = padded, owned = 0;
    bool isFirst = true;
    while (end > 0) {
        const std::uint64_t size = std::min(end, isFirst ? first : bucket);
        const std::uint64_t begin = end - size, chunk = size / dp;
        const std::uint64_t from = begin + chunk * r, to = std::min(n, from + chunk);
        if (to > from)
            owned += to - from;
        end = begin;
        isFirst = false;
    }
    return owned;
}

double collectiveMs(const std::string &op, double bytes, int n, const LinkSpec &link)
{
    if (n <= 1 || bytes <= 0)
        return 0;
    const double factor = op == "all_reduce" ? 2.0 * (n - 1) / n : op == "send_recv" ? 1.0 : double(n - 1) / n;
    const double bandwidth = std::max(link.bandwidthGBps, 1e-6) * 1e9; // bytes/s
    return link.latencyUs / 1000.0 + bytes * factor / bandwidth * 1000.0;
}

// Micro-batch-chunks alive at once per chunk of `rank`, in list order: +1 at F, −1 when its last
// backward part runs (Backward, or W when split), as the trainer keeps a model instance.
std::map<int, int> instancesPerChunk(const Schedule &s, int rank)
{
    std::map<int, int> live, peak;
    for (const Action &a : s.ranks[static_cast<std::size_t>(rank)]) {
        if (a.kind == ActionKind::Forward)
            peak[a.chunk] = std::max(peak[a.chunk], ++live[a.chunk]);
        else if (a.kind == ActionKind::Backward || a.kind == ActionKind::BackwardWeight)
            --live[a.chunk];
    }
    return peak;
}

} // namespace

DeviceSpec deviceFor(const ClusterSpec &cluster)
{
    // Datasheet dense figures: H100 SXM 989 TFLOP/s bf16, 67 fp32, 80 GB; H200 SXM the same
    // compute with 141 GB; A100 SXM and PCIe 312 bf16, 19.5 fp32, 80 GB.
    const std::string model = cluster.nodes.empty() ? std::string() : cluster.nodes.front().gpuModel;
    const bool cuda = !cluster.nodes.empty() && cluster.nodes.front().device == DeviceKind::Cuda;
    if (model == "H100-SXM")
        return {"H100-SXM", 67, 989, 80, 0.5};
    if (model == "H200-SXM")
        return {"H200-SXM", 67, 989, 141, 0.5};
    if (model == "A100-SXM")
        return {"A100-SXM", 19.5, 312, 80, 0.5};
    if (model == "A100-PCIe")
        return {"A100-PCIe", 19.5, 312, 80, 0.45};
    if (cuda)
        return {model.empty() ? "GPU" : model, 19.5, 312, 40, 0.5};
    // A CPU core with OpenBLAS: tens of GFLOP/s in fp32; `trellis-cli calibrate` measures it.
    return {"cpu", 0.02, 0.02, 0, 1.0};
}

std::uint64_t localParameterCount(const ModelSpec &model, int tp)
{
    const Shapes s = shapesOf(model, tp);
    return s.embedding() + s.L * s.layer() + s.final();
}

Estimate estimatePlan(const Plan &plan, const DeviceSpec &device, bool exact)
{
    const ModelSpec &m = plan.model;
    const ParallelSpec &p = plan.parallel;
    Estimate e;
    const int tp = p.tp, pp = p.pp, dp = p.dp, v = p.pp > 1 ? p.virtualStages : 1;
    const Shapes sh = shapesOf(m, tp);
    const bool mixed = p.precision != Precision::Fp32;
    const double paramBytes = mixed ? 2 : 4, gradBytes = mixed ? 2 : 4, optBytes = mixed ? 12 : 8;
    e.parametersTotal = parameterCount(m);
    const std::uint64_t local = localParameterCount(m, tp);

    // Activations of one model instance running `layers` layers (+ head), as gpt_model.cpp
    // allocates them (fp32 floats).
    const std::uint64_t bt = static_cast<std::uint64_t>(p.microBatchSize) * sh.S;
    const std::uint64_t rows = p.sequenceParallel && tp > 1 ? bt / tp : bt;
    auto instanceFloats = [&](std::uint64_t layers, bool head) {
        const std::uint64_t C = sh.C, att = sh.NHl * bt * sh.S;
        const std::uint64_t inner = rows * C + 2 * rows + 3 * bt * sh.Cq + bt * sh.Cq + att + 2 * rows * C + rows * C +
                                    2 * rows + 2 * bt * sh.Fl + rows * C;
        const std::uint64_t layersInner = p.recompute == Recompute::Full ? (layers > 0 ? inner : 0) : inner * layers;
        const std::uint64_t headFloats = head ? bt * C + 2 * rows + 2 * bt * sh.Vl + bt : 0;
        return rows * C + layersInner + rows * C * layers + headFloats;
    };

    // Memory per stage (DP rank 0, TP rank 0).
    std::vector<int> bounds{0, static_cast<int>(m.layers)};
    std::optional<Schedule> schedule;
    if (pp > 1) {
        bounds = stageLayerBounds(m, pp * v);
        if (exact)
            if (auto s = generateSchedule(p.schedule, pp, p.microBatches, v))
                schedule = std::move(s).value();
    }
    for (int stage = 0; stage < pp; ++stage) {
        StageMemory mem;
        mem.stage = stage;
        if (pp == 1) {
            if (p.zero <= 1) {
                mem.parameters = local * 4;
                mem.gradients = local * 4;
                mem.optimizer = (p.zero == 1 ? zeroOneOwned(local, dp, 0, p) : local) * 8;
            } else {
                std::uint64_t chunks = 0, owned = 0;
                for (std::uint64_t size : std::vector<std::uint64_t>{sh.embedding()}) {
                    chunks += (size + dp - 1) / dp;
                    owned += ownedOfUnit(size, dp, 0);
                }
                for (std::uint64_t l = 0; l < sh.L; ++l) {
                    chunks += (sh.layer() + dp - 1) / dp;
                    owned += ownedOfUnit(sh.layer(), dp, 0);
                }
                chunks += (sh.final() + dp - 1) / dp;
                owned += ownedOfUnit(sh.final(), dp, 0);
                mem.parameters = (p.zero == 3 ? chunks : local) * 4;
                mem.gradients = chunks * 4;
                mem.optimizer = owned * 8;
            }
            mem.activations = instanceFloats(sh.L, true) * 4;
        } else {
            // Units this stage holds, each padded to a multiple of dp.
            std::vector<std::uint64_t> units;
            bool embedding = false;
            const int chunksTotal = pp * v;
            for (int c = stage; c < chunksTotal; c += pp) {
                for (int l = bounds[static_cast<std::size_t>(c)]; l < bounds[static_cast<std::size_t>(c) + 1]; ++l)
                    units.push_back(sh.layer());
                embedding = embedding || c == 0 || c == chunksTotal - 1;
                if (c == chunksTotal - 1)
                    units.push_back(sh.final());
            }
            if (embedding)
                units.push_back(sh.embedding());
            for (std::uint64_t size : units) {
                const std::uint64_t padded = roundUp(size, static_cast<std::uint64_t>(dp));
                mem.parameters += padded * 4;
                mem.gradients += padded * 4;
                mem.optimizer += (p.zero == 1 ? ownedOfUnit(size, dp, 0) : size) * 8;
            }
            std::map<int, int> instances;
            if (schedule) {
                instances = instancesPerChunk(*schedule, stage);
            } else {
                // Closed forms: 1f1b and zb-h1 keep p − s micro-batches in flight on stage s, gpipe
                // all m, interleaved its warm-up plus one, spread over its v chunks.
                const int mb = p.microBatches;
                int alive = p.schedule == "gpipe" ? mb : std::min(pp - stage, mb);
                if (p.schedule == "interleaved-1f1b" && v > 1)
                    alive = (std::min((pp - stage - 1) * 2 + (v - 1) * pp + 1, mb * v) + v - 1) / v;
                for (int c = stage; c < chunksTotal; c += pp)
                    instances[c] = alive;
            }
            for (const auto &[chunk, count] : instances) {
                const auto layers = static_cast<std::uint64_t>(bounds[static_cast<std::size_t>(chunk) + 1] -
                                                               bounds[static_cast<std::size_t>(chunk)]);
                mem.activations += static_cast<std::uint64_t>(count) * instanceFloats(layers, chunk == chunksTotal - 1) * 4;
            }
        }
        if (mixed) { // bf16/fp16 weights and gradients, fp32 master weights with the moments
            mem.parameters = mem.parameters / 4 * static_cast<std::uint64_t>(paramBytes);
            mem.gradients = mem.gradients / 4 * static_cast<std::uint64_t>(gradBytes);
            mem.optimizer = mem.optimizer / 8 * static_cast<std::uint64_t>(optBytes);
        }
        e.memory.push_back(mem);
        if (device.memoryGB > 0 && static_cast<double>(mem.total()) > device.memoryGB * 1e9)
            e.warnings.push_back({Severity::Warning, "parallel",
                                  "stage " + std::to_string(stage) + " ranks need " + str(mem.total() / 1e9) +
                                      " GB (parameters " + str(mem.parameters / 1e9) + ", gradients " +
                                      str(mem.gradients / 1e9) + ", optimizer " + str(mem.optimizer / 1e9) +
                                      ", activations " + str(mem.activations / 1e9) + ") but a " + device.name +
                                      " has " + str(device.memoryGB, 0) + " GB"});
    }

    // FLOPs.
    const double tokensPerStep = static_cast<double>(p.globalBatch()) * static_cast<double>(m.seqLen);
    const double N = static_cast<double>(e.parametersTotal);
    const double attention = 12.0 * m.layers * m.hidden * static_cast<double>(m.seqLen);
    e.tokensPerStep = tokensPerStep;
    e.modelFlopsPerStep = tokensPerStep * (6 * N + attention);
    e.hardwareFlopsPerStep = p.recompute == Recompute::Full ? tokensPerStep * (8 * N + attention * 4 / 3) : e.modelFlopsPerStep;

    // Links: tp groups are consecutive ranks; dp groups stride tp; pipeline neighbours stride tp·dp.
    const int perNode = plan.cluster.nodes.empty() ? 1 : std::max(1, plan.cluster.nodes.front().slotCount);
    const bool tpInter = tp > perNode, dpInter = tp * dp > perNode, ppInter = tp * dp >= perNode;
    // A plan that names no links gets this machine's shared memory and a 10 Gb/s-class network.
    const LinkSpec intra = plan.cluster.intraNode.bandwidthGBps > 0 ? plan.cluster.intraNode : LinkSpec{10.0, 1.0};
    const LinkSpec inter = plan.cluster.interNode.bandwidthGBps > 0 ? plan.cluster.interNode : LinkSpec{1.0, 50.0};
    const LinkSpec &tpLink = tpInter ? inter : intra;
    const LinkSpec &dpLink = dpInter ? inter : intra;
    const LinkSpec &ppLink = ppInter ? inter : intra;

    // Per micro-batch costs of each chunk, ms: GEMM FLOPs at the device's efficiency, plus the
    // tensor-parallel collectives that sit on the critical path (2 in forward, 2 in backward a layer).
    const double peak = (mixed ? device.peakTflopsBf16 : device.peakTflopsFp32) * 1e12 * std::max(device.efficiency, 1e-3);
    const double activationBytes = static_cast<double>(bt) * sh.C * (mixed ? 2 : 4);
    const double tpCollective = collectiveMs("all_reduce", activationBytes, tp, tpLink);
    const double layerFlops = 2.0 * bt * (4.0 * sh.C * sh.Cq + 2.0 * sh.C * sh.Fl) + 4.0 * bt * sh.S * sh.Cq;
    const double headFlops = 2.0 * bt * sh.C * sh.Vl;
    const int chunks = pp * v;
    ScheduleCosts costs;
    costs.forward.resize(static_cast<std::size_t>(chunks));
    costs.backwardInput.resize(static_cast<std::size_t>(chunks));
    costs.backwardWeight.resize(static_cast<std::size_t>(chunks));
    for (int c = 0; c < chunks; ++c) {
        const double layers = bounds[static_cast<std::size_t>(c) + 1] - bounds[static_cast<std::size_t>(c)];
        const double flops = layers * layerFlops + (c == chunks - 1 ? headFlops : 0.0);
        const double f = flops / peak * 1000.0 + layers * 2 * tpCollective;
        const double recompute = p.recompute == Recompute::Full ? layers * layerFlops / peak * 1000.0 : 0.0;
        costs.forward[static_cast<std::size_t>(c)] = f;
        costs.backwardInput[static_cast<std::size_t>(c)] = f + recompute / 2;
        costs.backwardWeight[static_cast<std::size_t>(c)] = flops / peak * 1000.0 + recompute / 2;
    }
    costs.transfer = collectiveMs("send_recv", activationBytes / std::max(1, p.sequenceParallel ? tp : 1), 2, ppLink);
    const int m_ = p.microBatches;
    double makespan = 0, busy = 0;
    if (pp > 1 && schedule && static_cast<long>(pp) * m_ * v <= 20000) {
        const Simulation sim = simulateSchedule(*schedule, costs);
        makespan = sim.makespan;
        busy = *std::max_element(sim.busy.begin(), sim.busy.end());
        e.bubbleFraction = sim.bubbleFraction;
    } else {
        // One stage (or too many actions to simulate quickly): the busiest stage's work plus the
        // closed-form fill and drain of its schedule.
        for (int s = 0; s < pp; ++s) {
            double work = 0;
            for (int c = s; c < chunks; c += pp)
                work += m_ * (costs.forward[static_cast<std::size_t>(c)] + costs.backwardInput[static_cast<std::size_t>(c)] +
                              costs.backwardWeight[static_cast<std::size_t>(c)]);
            busy = std::max(busy, work);
        }
        const double perMicro = busy / std::max(1, m_ * v);
        double fill = (pp - 1) * perMicro / v;
        if (p.schedule == "zb-h1")
            fill = (pp - 1) * perMicro / 3.0; // (p−1)(F+B−W) with F ≈ B ≈ W
        makespan = busy + (pp > 1 ? fill : 0.0);
        e.bubbleFraction = makespan > 0 ? (makespan - busy) / makespan : 0.0;
    }
    e.bubbleMs = makespan - busy;

    // Collectives per step.
    const double tpCalls = tp > 1 ? 4.0 * (bounds.back() - bounds.front()) / pp * m_ + 2.0 * m_ : 0.0;
    if (tp > 1)
        e.collectives.push_back({"tp", p.sequenceParallel ? "all_gather+reduce_scatter" : "all_reduce",
                                 static_cast<std::uint64_t>(activationBytes * tpCalls), static_cast<int>(tpCalls),
                                 tpCalls * tpCollective, tpInter});
    // DP collectives per step as the trainer issues and records them (total bytes a rank sends
    // in, nccl-tests convention, and calls): exact without tp and pp; per unit of a stage
    // otherwise. The loss (and with a sharded optimizer the gradient norm) is one 8-byte
    // all-reduce each.
    double dpMs = 0;
    if (dp > 1) {
        const double elem = mixed ? 2 : 4;
        auto add = [&](const std::string &op, double bytes, int calls) {
            const double factor = op == "all_reduce" ? 2.0 * (dp - 1) / dp : double(dp - 1) / dp;
            const LinkSpec &l = dpLink;
            const double ms = bytes > 0 ? calls * l.latencyUs / 1000.0 + bytes * factor / (l.bandwidthGBps * 1e9) * 1000.0 : 0.0;
            e.collectives.push_back({"dp", op, static_cast<std::uint64_t>(bytes), calls, ms, dpInter});
            dpMs += ms;
        };
        const double scalars = p.zero >= 1 ? 16 : 8;
        const int scalarCalls = p.zero >= 1 ? 2 : 1;
        if (pp == 1 && p.zero <= 1) {
            const double padded = static_cast<double>(roundUp(local, static_cast<std::uint64_t>(dp)));
            const int buckets = static_cast<int>(bucketCount(local, dp, p));
            if (p.zero == 0) {
                add("all_reduce", padded * elem + scalars, buckets + scalarCalls);
            } else {
                add("reduce_scatter", padded * elem, buckets);
                add("all_gather", padded * elem, buckets);
                add("all_reduce", scalars, scalarCalls);
            }
        } else if (pp == 1) {
            const auto unit = [&](std::uint64_t size) { return static_cast<double>(roundUp(size, static_cast<std::uint64_t>(dp))); };
            const double units = unit(sh.embedding()) + static_cast<double>(sh.L) * unit(sh.layer()) + unit(sh.final());
            const int count = static_cast<int>(sh.L) + 2;
            add("reduce_scatter", units * elem * m_, count * m_); // every micro-batch
            if (p.zero == 2)
                add("all_gather", units * elem, count);
            else // roots once a step, every layer for each forward and each backward
                add("all_gather", (unit(sh.embedding()) + unit(sh.final()) + 2.0 * m_ * sh.L * unit(sh.layer())) * elem,
                    2 + 2 * m_ * static_cast<int>(sh.L));
            add("all_reduce", scalars, scalarCalls);
        } else {
            const double gradientBytes = static_cast<double>(e.memory.front().gradients);
            if (p.zero == 0) {
                add("all_reduce", gradientBytes, 1);
            } else {
                add("reduce_scatter", gradientBytes, 1);
                add("all_gather", gradientBytes, 1);
            }
        }
    }
    if (pp > 1)
        e.collectives.push_back({"pp", "send_recv", static_cast<std::uint64_t>(activationBytes * 2 * m_ * v), 2 * m_ * v,
                                 2.0 * m_ * v * costs.transfer, ppInter});
    // DP reduction overlaps the last backward without a pipeline (bucketed); after the flush with one.
    const double lastBackward = costs.backwardInput.back() + costs.backwardWeight.back();
    const double hidden = pp == 1 && p.overlapGradReduce ? std::min(dpMs, 0.8 * lastBackward * (bounds.back() > 0 ? 1 : 0)) : 0.0;
    // Breakdown: compute + exposed communication (TP on the critical path, DP not hidden) + bubble.
    const double tpMs = tp > 1 ? tpCalls * tpCollective : 0.0;
    e.computeMs = std::max(0.0, busy - tpMs);
    e.exposedCommMs = std::min(tpMs, busy) + dpMs - hidden;
    e.stepMs = makespan + dpMs - hidden;
    if (!(e.stepMs > 0))
        e.stepMs = 1e-6;
    e.tokensPerS = tokensPerStep / (e.stepMs / 1000.0);
    const double world = static_cast<double>(p.worldSize());
    const double peakAll = (mixed ? device.peakTflopsBf16 : device.peakTflopsFp32) * 1e12 * world;
    e.mfu = peakAll > 0 ? e.modelFlopsPerStep / (e.stepMs / 1000.0) / peakAll : 0.0;
    e.costPerRun = e.stepMs / 1000.0 * plan.training.steps / 3600.0 * world * plan.cluster.pricePerDeviceHour;
    return e;
}

Result<std::vector<CalibrationEntry>> parseCalibration(const std::string &text)
{
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const std::exception &e) {
        return Result<std::vector<CalibrationEntry>>::failure("calibration", std::string("not valid JSON: ") + e.what());
    }
    if (!j.is_object() || j.value("format", "") != kCalibrationFormat)
        return Result<std::vector<CalibrationEntry>>::failure("calibration.format", std::string("expected '") + kCalibrationFormat + "'");
    if (!j.contains("entries") || !j["entries"].is_array() || j["entries"].empty())
        return Result<std::vector<CalibrationEntry>>::failure("calibration.entries", "expected a non-empty array");
    std::vector<CalibrationEntry> out;
    for (std::size_t i = 0; i < j["entries"].size(); ++i) {
        const auto &e = j["entries"][i];
        const std::string path = "calibration.entries[" + std::to_string(i) + "]";
        if (!e.is_object() || !e.contains("ranks") || !e["ranks"].is_number_integer() || !e.contains("gflops_per_rank") ||
            !e["gflops_per_rank"].is_number())
            return Result<std::vector<CalibrationEntry>>::failure(path, "expected ranks (integer) and gflops_per_rank (number)");
        CalibrationEntry c;
        c.ranks = e["ranks"].get<int>();
        c.gflopsPerRank = e["gflops_per_rank"].get<double>();
        c.latencyUs = e.value("latency_us", 0.0);
        c.bandwidthGBps = e.value("bandwidth_gbps", 0.0);
        if (c.ranks < 1 || !(c.gflopsPerRank > 0) || !std::isfinite(c.gflopsPerRank) || c.latencyUs < 0 || c.bandwidthGBps < 0)
            return Result<std::vector<CalibrationEntry>>::failure(path, "ranks and gflops_per_rank must be positive, latency and bandwidth not negative");
        out.push_back(c);
    }
    return out;
}

std::string calibrationJson(const std::vector<CalibrationEntry> &entries)
{
    nlohmann::ordered_json j;
    j["format"] = kCalibrationFormat;
    j["entries"] = nlohmann::ordered_json::array();
    for (const auto &e : entries)
        j["entries"].push_back({{"ranks", e.ranks}, {"gflops_per_rank", e.gflopsPerRank}, {"latency_us", e.latencyUs},
                                {"bandwidth_gbps", e.bandwidthGBps}});
    return j.dump(2) + "\n";
}

void applyCalibration(const std::vector<CalibrationEntry> &entries, Plan &plan, DeviceSpec &device)
{
    if (entries.empty() || plan.cluster.nodes.empty() || plan.cluster.nodes.front().device != DeviceKind::Cpu)
        return;
    const int world = plan.parallel.worldSize();
    const CalibrationEntry *best = &entries.front();
    for (const auto &e : entries)
        if (std::abs(e.ranks - world) < std::abs(best->ranks - world))
            best = &e;
    device.peakTflopsFp32 = device.peakTflopsBf16 = best->gflopsPerRank / 1000.0;
    device.efficiency = 1.0;
    if (best->bandwidthGBps > 0)
        plan.cluster.intraNode = {best->bandwidthGBps, best->latencyUs};
}

} // namespace trellis::plan
