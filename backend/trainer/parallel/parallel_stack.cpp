// See parallel_stack.h.
#include "backend/trainer/parallel/parallel_stack.h"

#include <algorithm>
#include <cstdio>

#include "backend/plan/mesh.h"
#include "backend/protocol/exit_codes.h"
#include "backend/trainer/parallel/context_parallel.h"
#include "backend/trainer/parallel/data_parallel.h"
#include "backend/trainer/parallel/expert.h"
#include "backend/trainer/parallel/pipeline.h"
#include "backend/trainer/parallel/sequential.h"
#include "backend/trainer/parallel/sharded.h"
#include "backend/trainer/parallel/zero1.h"
#include "backend/trainer/common/trainer_error.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace trellis::trainer {
namespace {

DType computeTypeOf(plan::Precision precision)
{
    switch (precision) {
    case plan::Precision::Bf16: return DType::BF16;
    case plan::Precision::Fp16: return DType::F16;
    case plan::Precision::Fp32: break;
    }
    return DType::F32;
}


// This rank's place among the ranks of its host (Open MPI's, else Slurm's variables).
int localRank()
{
    for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"})
        if (const char *v = std::getenv(name))
            return std::atoi(v);
    return 0;
}

// Whether ranks share GPUs here: more ranks on this host than it has GPUs, which only
// TRELLIS_SHARE_GPUS=1 allows (a one-GPU machine running a multi-rank plan's parity check, docs/gpu.md).
bool sharingGpus()
{
    const char *share = std::getenv("TRELLIS_SHARE_GPUS");
    return share && std::string(share) == "1";
}

// The rank's device: the CPU, or for a plan of CUDA nodes the GPU of its local rank (one GPU per
// rank; with TRELLIS_SHARE_GPUS=1 ranks beyond the GPUs share them, local rank modulo the count).
Device &deviceFor(const plan::Plan &plan, int rank)
{
    if (plan.cluster.nodes.empty() || plan.cluster.nodes.front().device != plan::DeviceKind::Cuda)
        return Device::cpu();
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    int local = localRank();
    Device::setErrorContext("host " + std::string(host) + " rank " + std::to_string(rank));
    const int count = Device::cudaCount();
    if (count < 0)
        throw TrainerError(proto::kExitDeviceError, "the plan runs on CUDA devices (cluster.nodes[0].device) but "
                                                     "this is the CPU trellis-trainer: run trellis-trainer-cuda (built beside it when CMake finds "
                                                     "a CUDA compiler, -DTRELLIS_ENABLE_CUDA=AUTO or ON)");
    if (count > 0 && local >= count && sharingGpus())
        local %= count;
    if (local >= count)
        throw TrainerError(proto::kExitDeviceError,
                           "the plan runs on CUDA devices (cluster.nodes[0].device) but host " + std::string(host) + " has " +
                               std::to_string(count) + " GPU" + (count == 1 ? "" : "s") + " for local rank " +
                               std::to_string(local) +
                               (count == 0 ? " (no CUDA device or driver found)"
                                           : " (give each rank a GPU, or set TRELLIS_SHARE_GPUS=1 to share them through "
                                             "staged MPI, docs/gpu.md)"));
    try {
        return Device::cuda(local);
    } catch (const std::exception &e) {
        throw TrainerError(proto::kExitDeviceError, "cuda:" + std::to_string(local) + ": " + e.what());
    }
}

} // namespace

GptConfig modelConfigOf(const plan::ModelSpec &ms)
{
    GptConfig c;
    c.vocab = ms.vocab;
    c.maxSeqLen = ms.seqLen;
    c.layers = ms.layers;
    c.hidden = ms.hidden;
    c.heads = ms.heads;
    c.kvHeads = ms.kvHeads;
    c.llama = ms.arch == plan::kArchLlama;
    c.ffn = ms.ffn;
    c.initStd = ms.initStd;
    return c;
}

GptConfig configOf(const plan::Plan &plan, int tpRank, int cpRank, int epRank)
{
    const plan::ModelSpec &ms = plan.model;
    GptConfig c = modelConfigOf(ms);
    c.tp = plan.parallel.tp;
    c.tpRank = tpRank;
    c.sequenceParallel = plan.parallel.sequenceParallel;
    c.cp = plan.parallel.cp;
    c.cpRank = cpRank;
    c.cpZigzag = plan.parallel.cpLayout == plan::CpLayout::Zigzag;
    if (ms.moe.experts > 0) {
        c.experts = ms.moe.experts;
        c.topK = ms.moe.topK;
        c.capacity = ms.moe.capacityFactor ? plan::expertCapacity(ms.moe, ms.seqLen) : 0;
        c.auxLossCoef = ms.moe.auxLossCoef;
        c.ep = plan.parallel.ep;
        c.epRank = epRank;
    }
    return c;
}

ParallelStack::ParallelStack(const plan::Plan &plan, ProcessGroups &groups, const StackOptions &options)
    : m_groups(groups), m_device(&deviceFor(plan, groups.world().rank())), m_config(configOf(plan, groups.tp().rank(), groups.cp().rank(), groups.ep().rank())), m_whole(m_config)
{
    const plan::ParallelSpec &ps = plan.parallel;
    // Device tensors, device collectives: NCCL, or MPI staged through the device's pinned memory.
    m_placement = groups.placeOn(*m_device, m_device->kind() == kernels::Device::Cuda && localRank() >= Device::cudaCount());
    // The model every layout starts from: this tp rank's slice of the seed's initialisation (fp32:
    // the master weights of mixed precision, from which the compute copies are made).
    GptModel<float> reference(m_config, true, *m_device);
    reference.initialize(plan.training.seed);
    m_localCount = reference.parameterCount();
    m_tensors = reference.tensors();
    m_decay = weightDecayMask(m_tensors, m_localCount);

    std::vector<int> held(reference.units().size());
    std::iota(held.begin(), held.end(), 0);
    if (ps.pp > 1) {
        auto generated = plan::generateSchedule(ps.schedule, ps.pp, ps.microBatches, ps.virtualStages);
        if (!generated)
            throw TrainerError(proto::kExitPlanInvalid, generated.errorText());
        m_schedule = std::move(generated).value();
        if (const auto problems = plan::validateSchedule(*m_schedule); !problems.empty())
            throw TrainerError(proto::kExitPlanInvalid, "schedule " + ps.schedule + " failed validation: " + problems.front());
        held = pipelineHeldUnits(plan.model, *m_schedule, groups.pp().rank());
    }

    // Data parallelism: where the parameters live and how gradients are reduced over dp. With a
    // pipeline the reduction waits for the schedule to end (every micro-batch's backward).
    const DType compute = computeTypeOf(ps.precision);
    const DType wire = ps.gradReduce == plan::GradReduce::Bf16 ? DType::BF16 : DType::F32;
    const double bucketMb = ps.bucketMb.value_or(25.0);
    const BucketOptions buckets{bucketMb, ps.firstBucketMb.value_or(bucketMb), options.overlap && ps.pp == 1, wire};
    const bool separateEmbedding = ps.pp > 1;
    if (ps.zero == 0) {
        auto dp = std::make_unique<DataParallel>(groups.dpCp(), reference, held, separateEmbedding, buckets, compute);
        if (ps.dpSync.local()) // validation: zero 0, cp 1 (dpCp is dp), no experts
            dp->setLocalUpdates(ps.dpSync);
        if (ps.gradCompression.kind == plan::GradCompression::PowerSgd) // validation: zero 0, every-step sync, dp only
            dp->setGradCompression(ps.gradCompression, m_tensors, plan.training.seed);
        m_storage = std::move(dp);
    } else if (ps.zero == 1)
        m_storage = std::make_unique<Zero1>(groups.dpCp(), reference, held, separateEmbedding, buckets, compute);
    else
        m_storage = std::make_unique<Sharded>(groups.dpCp(), reference, held, ps.zero, options.overlap, compute, wire);
    m_strategies.push_back(m_storage.get());

    const Recompute recompute = ps.recompute == plan::Recompute::Full        ? Recompute::Full
                                : ps.recompute == plan::Recompute::Selective ? Recompute::Selective
                                                                             : Recompute::None;
    if (ps.ep > 1) {
        // The experts' gradients reduce over expert_dp (ZeRO with ep is refused before launch).
        auto experts = std::make_unique<ExpertParallel>(groups.ep(), m_config);
        auto *dataParallel = dynamic_cast<DataParallel *>(m_storage.get());
        if (!dataParallel || ps.zero != 0)
            throw TrainerError(proto::kExitPlanInvalid, "parallel.zero: expert parallelism runs with ZeRO 0 only");
        dataParallel->setExpertParallel(groups.expertDp(), ps.ep, experts->expertRanges(), m_device->stream());
        m_strategies.push_back(experts.get());
        m_owned.push_back(std::move(experts));
    }
    const ModelGroups modelGroups{&groups.tp(), &groups.cp(), &groups.ep(), groups.host(plan::GroupKind::Tp),
                                  groups.host(plan::GroupKind::Ep)};
    auto build = [&]<typename T>(T *) {
        if (ps.pp > 1) {
            auto pipeline = std::make_unique<Pipeline<T>>(m_config, plan.model, *m_schedule, groups.pp(), *m_storage,
                                                          groups.embedding(), recompute, modelGroups, *m_device);
            m_strategies.push_back(pipeline.get());
            m_executor = std::move(pipeline);
        } else {
            m_executor = std::make_unique<Sequential<T>>(m_config, *m_storage, recompute, modelGroups, *m_device);
        }
    };
    if (compute == DType::BF16)
        build(static_cast<kernels::bf16 *>(nullptr));
    else if (compute == DType::F16)
        build(static_cast<kernels::f16 *>(nullptr));
    else
        build(static_cast<float *>(nullptr));
    if (ps.tp > 1) {
        m_owned.push_back(std::make_unique<TensorParallel>(groups.tp(), m_config));
        m_strategies.push_back(m_owned.back().get());
    }
    if (ps.cp > 1) {
        auto context = std::make_unique<ContextParallel>(m_config);
        m_context = context.get();
        m_owned.push_back(std::move(context));
        m_strategies.push_back(m_context);
    }
    m_lossRanks = groups.world().size() / ps.pp;
}

ParallelStack::~ParallelStack() = default;

std::vector<bool> ParallelStack::decayMask() const { return m_decay; }

bool ParallelStack::poison(const std::string &tensor)
{
    for (const ParamTensor &t : m_tensors) {
        if (t.name != tensor)
            continue;
        for (const OwnedRange &o : owned()) {
            const std::size_t begin = std::max(o.range.begin, t.offset);
            if (begin < std::min(o.range.end, t.offset + t.size)) {
                kernels::fill(m_device->stream(), o.params + (begin - o.range.begin), 1,
                              std::numeric_limits<float>::quiet_NaN());
                return true;
            }
        }
    }
    return false;
}

void ParallelStack::beginStep()
{
    for (Strategy *s : m_strategies)
        s->beginStep();
}

StepOutput ParallelStack::run(const std::vector<MicroBatch> &batches, const Executor::Phase &phase, double lossScale)
{
    return m_executor->run(m_context ? m_context->localBatches(batches) : batches, phase, lossScale);
}

void ParallelStack::reduceGradients()
{
    for (Strategy *s : m_strategies)
        s->reduceGradients();
}

double ParallelStack::globalLoss(double local)
{
    // Ranks without the head add 0; every tp rank of a head holds the same loss.
    return m_groups.hostWorld().allReduce(local, ReduceOp::Sum) / m_lossRanks;
}

double ParallelStack::gradientNorm()
{
    double sumSquares = 0;
    for (const OwnedRange &o : owned()) {
        std::vector<ParamRange> counted{o.range};
        for (const Strategy *s : m_strategies)
            s->removeCopies(counted);
        for (const ParamRange &r : counted)
            sumSquares += kernels::sumSquares(m_device->stream(), o.grads + (r.begin - o.range.begin),
                                              static_cast<std::int64_t>(r.end - r.begin));
    }
    std::vector<plan::GroupKind> groups;
    for (Strategy *s : m_strategies)
        s->normGroups(groups);
    for (plan::GroupKind g : groups)
        sumSquares = m_groups.host(g)->allReduce(sumSquares, ReduceOp::Sum);
    return std::sqrt(sumSquares);
}

void ParallelStack::scaleGradients(double factor)
{
    for (const OwnedRange &o : owned())
        kernels::scale(m_device->stream(), o.grads, static_cast<std::int64_t>(o.range.end - o.range.begin),
                       static_cast<float>(factor));
}

DataParallel *ParallelStack::dataParallel() const { return dynamic_cast<DataParallel *>(m_storage.get()); }

const OuterSync *ParallelStack::outerSync() const { return dataParallel() ? dataParallel()->outerSync() : nullptr; }

OuterSync *ParallelStack::outerSync() { return dataParallel() ? dataParallel()->outerSync() : nullptr; }

void ParallelStack::afterOptimizerStep()
{
    for (Strategy *s : m_strategies)
        s->afterOptimizerStep();
}

template <typename Visit>
void ParallelStack::forEachWritten(Visit visit, bool everyReplica)
{
    // Without ZeRO the dp replicas hold copies: the first writes. Copies other strategies know of
    // (tp replicas, the last stage's tied embedding) are left out too.
    if (!everyReplica && !m_storage->shardsOverDp() && (m_config.ep > 1 ? m_groups.expertDp() : m_groups.dpCp()).rank() != 0)
        return; // (with ep the first ep group writes: each rank its experts, ep rank 0 the rest)
    std::size_t moment = 0;
    for (const OwnedRange &o : owned()) {
        std::vector<ParamRange> kept{o.range};
        for (const Strategy *s : m_strategies)
            s->removeCopies(kept);
        for (const ParamRange &r : kept)
            for (const auto &[whole, offset] : m_whole.runs(r))
                visit(whole, o, r.begin - o.range.begin + offset, moment);
        moment += o.range.end - o.range.begin;
    }
}

std::vector<CheckpointPiece> ParallelStack::checkpointPieces()
{
    std::vector<CheckpointPiece> pieces;
    forEachWritten([&](const ParamRange &whole, const OwnedRange &o, std::size_t at,
                       std::size_t moment) { pieces.push_back({whole, o.params + at, moment + at}); },
                   outerSync() != nullptr);
    return pieces;
}

int ParallelStack::replica() { return outerSync() ? m_groups.dpCp().rank() : -1; }

ReplicaState ParallelStack::replicaState()
{
    ReplicaState s;
    if (const OuterSync *outer = outerSync()) {
        s.replica = replica();
        s.replicas = m_groups.dpCp().size();
        s.dpSync = plan::toString(outer->spec().mode);
        s.innerSteps = outer->innerSteps();
        s.outerSteps = outer->outerSteps();
    }
    return s;
}

std::uint64_t ParallelStack::strategyOptimizerBytes() const { return outerSync() ? outerSync()->stateBytes() : 0; }

std::string ParallelStack::takeStepNote()
{
    const OuterSync *outer = outerSync();
    if (!outer || outer->outerSteps() == m_outerStepsNoted)
        return {};
    m_outerStepsNoted = outer->outerSteps();
    char mb[32];
    std::snprintf(mb, sizeof mb, "%.1f", static_cast<double>(outer->bytesPerSync()) / (1 << 20));
    return std::string(plan::toString(outer->spec().mode)) + " outer step " + std::to_string(m_outerStepsNoted) +
           ": the replicas' parameters averaged over dp (" + mb + " MB a rank, after " +
           std::to_string(outer->spec().innerSteps) + " steps without gradient reduction)";
}

void ParallelStack::outerStateOf(const CheckpointPiece &piece, std::vector<float> &anchor, std::vector<float> &momentum) const
{
    if (const OuterSync *outer = outerSync()) // host memory (local updates run on CPUs)
        outer->saveState(piece.params, piece.whole.end - piece.whole.begin, anchor, momentum);
}

void ParallelStack::restoreOuterState(const ReplicaState &saved, const std::vector<float> &anchor,
                                      const std::vector<float> &momentum)
{
    OuterSync *outer = outerSync();
    if (!outer || saved.replica < 0)
        return;
    std::size_t at = 0; // in ownedWhole()'s order: each owned range's whole runs, one after another
    for (const OwnedRange &o : owned()) {
        const std::size_t n = o.range.end - o.range.begin;
        if (at + n > anchor.size() || (!momentum.empty() && at + n > momentum.size()))
            throw std::logic_error("restoreOuterState: the checkpoint's outer state is shorter than the ranges owned");
        outer->restoreState(o.params, n, anchor.data() + at, momentum.empty() ? nullptr : momentum.data() + at);
        at += n;
    }
    outer->restoreCounters(saved.innerSteps, saved.outerSteps);
    m_outerStepsNoted = saved.outerSteps; // told of before the restart
}

std::vector<ParamRange> ParallelStack::ownedWhole()
{
    std::vector<ParamRange> out;
    for (const OwnedRange &o : owned())
        for (const auto &[whole, offset] : m_whole.runs(o.range))
            out.push_back(whole);
    return out;
}

void ParallelStack::setParameters(const std::vector<float> &whole)
{
    const GptModel<float> layout(m_config, false);
    const std::vector<float> local = layout.sliceOfWhole(whole.data());
    DeviceBuffer<float> onDevice(*m_device);
    onDevice.assignFromHost(local.data(), local.size());
    m_storage->setParameters(onDevice.data());
}

std::vector<std::pair<ParamRange, float *>> ParallelStack::canonical(bool gradients)
{
    std::vector<std::pair<ParamRange, float *>> out;
    forEachWritten([&](const ParamRange &whole, const OwnedRange &o, std::size_t at, std::size_t) {
        out.emplace_back(whole, (gradients ? o.grads : o.params) + at);
    });
    return out;
}

std::vector<float> ParallelStack::assemble(const std::vector<std::pair<ParamRange, const float *>> &pieces)
{
    // Every whole element has exactly one writer, so the sum over the world is its value; the
    // holder count proves the pieces partition the model.
    const std::size_t n = m_whole.wholeCount();
    std::vector<float> values(n, 0.0f);
    std::vector<std::int32_t> holders(n, 0);
    for (const auto &[r, data] : pieces) {
        m_device->toHost(values.data() + r.begin, data, (r.end - r.begin) * sizeof(float));
        for (std::size_t i = r.begin; i < r.end; ++i)
            ++holders[i];
    }
    m_groups.hostWorld().allReduce(std::span<float>(values), ReduceOp::Sum);
    m_groups.hostWorld().allReduce(std::span<std::int32_t>(holders), ReduceOp::Sum);
    for (std::size_t i = 0; i < n; ++i)
        if (holders[i] != 1)
            throw std::logic_error("parallel stack: whole-model element " + std::to_string(i) + " has " +
                                   std::to_string(holders[i]) + " writers instead of one");
    return values;
}

std::vector<float> ParallelStack::gatherParameters()
{
    std::vector<std::pair<ParamRange, const float *>> pieces;
    for (const auto &[r, p] : canonical(false))
        pieces.emplace_back(r, p);
    return assemble(pieces);
}

void ParallelStack::captureGradients()
{
    m_captured.clear();
    for (const auto &[r, g] : canonical(true)) {
        DeviceBuffer<float> copy(*m_device);
        copy.assignFromDevice(g, r.end - r.begin);
        m_captured.emplace_back(r, std::move(copy));
    }
}

std::vector<float> ParallelStack::gatherCapturedGradients()
{
    std::vector<std::pair<ParamRange, const float *>> pieces;
    for (const auto &[r, values] : m_captured)
        pieces.emplace_back(r, values.data());
    return assemble(pieces);
}

std::string ParallelStack::ownState() const
{
    const DataParallel *dp = dataParallel();
    return dp && dp->powerSgd() ? dp->powerSgd()->saveState() : std::string();
}

std::string ParallelStack::restoreOwnState(const std::string &saved)
{
    DataParallel *dp = dataParallel();
    PowerSgd *p = dp ? dp->powerSgd() : nullptr;
    if (!p)
        return {};
    if (saved.empty())
        return "the checkpoint holds no PowerSGD state for this rank (written without compression, or at another dp)";
    const std::string why = p->restoreState(saved);
    return why.empty() ? why : "the checkpoint's PowerSGD state does not fit (" + why + ")";
}

DpTraffic ParallelStack::dpTraffic() const { return dataParallel() ? dataParallel()->traffic() : DpTraffic{}; }

std::string ParallelStack::compressionNote() const
{
    const DataParallel *dp = dataParallel();
    const PowerSgd *p = dp ? dp->powerSgd() : nullptr;
    if (!p)
        return {};
    char line[200];
    const double mine = static_cast<double>(p->bytesPerStep()), whole = static_cast<double>(p->wholeBytesPerStep());
    std::snprintf(line, sizeof line, "grad compression powersgd: %zu matrices compressed, %.3f MB a step all-reduced instead of %.3f MB (%.1fx %s; %llu bytes)",
                  p->compressedMatrices(), mine / 1e6, whole / 1e6, mine >= whole ? mine / std::max(whole, 1.0) : whole / std::max(mine, 1.0),
                  mine >= whole ? "more" : "fewer", static_cast<unsigned long long>(p->bytesPerStep()));
    return line;
}

} // namespace trellis::trainer
