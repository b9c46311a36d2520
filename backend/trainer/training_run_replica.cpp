// See training_run.h: a job that is one replica group of a run with fault_tolerance (issue #71).
// Each step: the quorum first (the lighthouse answers when every live group asks); after the
// group's own reduction, the gradients this rank updates and the step's loss averaged with the
// same rank of every other group of the quorum (backend/trainer/comm/replica_link.h); then the
// vote. A dropped step applies nothing and is trained again with the same data (the data's
// position is a function of the step: data_loader.h).
#include "backend/trainer/training_run.h"

#include "backend/trainer/common/trainer_error.h"
#include "backend/protocol/exit_codes.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace trellis::trainer {
namespace {

// The loss through a float all-reduce without losing a double's worth of it: q = loss·2^40 as an
// integer (a loss below 2^24), in four parts of 16 bits, each summed exactly in float over up to
// 256 groups; then a count of the groups whose loss was not finite (or out of that range).
constexpr std::size_t kLossParts = 4;
constexpr double kLossScale = 1099511627776.0; // 2^40

void encodeLoss(double loss, float *out)
{
    const bool representable = std::isfinite(loss) && loss >= 0 && loss < 16777216.0;
    const std::uint64_t q = representable ? static_cast<std::uint64_t>(std::llround(loss * kLossScale)) : 0;
    for (std::size_t i = 0; i < kLossParts; ++i)
        out[i] = static_cast<float>((q >> (16 * (kLossParts - 1 - i))) & 0xffff);
    out[kLossParts] = representable ? 0.0f : 1.0f;
}

double decodeLoss(const float *sums, std::size_t groups)
{
    if (sums[kLossParts] != 0.0f)
        return std::nan("");
    long double q = 0;
    for (std::size_t i = 0; i < kLossParts; ++i)
        q = q * 65536.0L + static_cast<long double>(sums[i]);
    return static_cast<double>(q / kLossScale / static_cast<long double>(groups));
}

} // namespace

void TrainingRun::joinReplicaGroups()
{
    if (!m_options.replica.given())
        return;
    ReplicaLinkOptions o;
    o.endpoint = m_options.replica.lighthouse;
    o.group = m_options.replica.group;
    o.rank = m_rank;
    o.address = m_options.replica.address;
    m_replica = std::make_unique<ReplicaLink>(o);
    if (const std::string e = m_replica->start(); !e.empty())
        throw TrainerError(proto::kExitUsage, "replica group " + std::to_string(o.group) + ": " + e);
    if (m_rank == 0 && !m_options.quiet)
        std::printf("replica group %d of %d: dp %d of the plan's %d, the lighthouse at %s\n", o.group, m_options.replica.groups,
                    m_plan.parallel.dp, m_plan.parallel.dp * m_options.replica.groups, o.endpoint.c_str());
}

void TrainingRun::beginReplicaStep(int step)
{
    m_quorum = m_replica->beginStep(static_cast<std::uint64_t>(step));
    // A group back from an older step than the quorum's cannot train with it (healing from a
    // live peer is issue #72): said, and the job ends.
    if (!m_quorum.refused.empty())
        throw TrainerError(proto::kExitCheckpointError, "replica group " + std::to_string(m_options.replica.group) + ": " + m_quorum.refused);
    // m_quorum.error (the lighthouse unreachable, the communicator not connected): the step's vote fails.
}

bool TrainingRun::commitReplicaStep(std::uint64_t stepNumber, StepPass &pass)
{
    // One buffer: every owned range's reduced gradients, then the loss in fixed point as four
    // 16-bit parts (sums of up to 256 groups stay exact in float), and a count of non-finite losses.
    const std::vector<OwnedRange> owned = m_stack.owned();
    std::size_t n = kLossParts + 1;
    for (const OwnedRange &o : owned)
        n += o.range.end - o.range.begin;
    std::vector<float> buffer(n);
    std::size_t at = 0;
    for (const OwnedRange &o : owned) {
        const std::size_t length = o.range.end - o.range.begin;
        std::memcpy(buffer.data() + at, o.grads, length * sizeof(float));
        at += length;
    }
    encodeLoss(pass.loss, buffer.data() + at);
    std::string why = m_quorum.error;
    const bool ok = why.empty() && m_replica->allreduceSum(buffer.data(), buffer.size(), why);
    const ReplicaVerdict verdict = m_replica->endStep(stepNumber - 1, ok, why);
    if (!verdict.answered)
        throw TrainerError(proto::kExitInternalError, "replica group " + std::to_string(m_options.replica.group) +
                                                          ": the lighthouse did not decide step " + std::to_string(stepNumber) + ": " + verdict.why);
    if (!verdict.commit) {
        ++m_droppedSteps;
        if (m_rank == 0) {
            const std::string text = "step " + std::to_string(stepNumber) + " dropped by the replica groups (quorum " +
                                     std::to_string(m_quorum.id) + "): " + verdict.why + "; trained again (" + std::to_string(m_droppedSteps) +
                                     " dropped so far)";
            if (!m_options.quiet)
                std::fprintf(stderr, "trellis-trainer: %s\n", text.c_str());
            publishEvent(proto::Event::INFO, stepNumber, text);
        }
        return false;
    }
    const float scale = 1.0f / static_cast<float>(m_quorum.groups.size());
    at = 0;
    for (const OwnedRange &o : owned) {
        const std::size_t length = o.range.end - o.range.begin;
        for (std::size_t i = 0; i < length; ++i)
            o.grads[i] = buffer[at + i] * scale;
        at += length;
    }
    pass.loss = decodeLoss(buffer.data() + at, m_quorum.groups.size());
    if (static_cast<int>(stepNumber - 1) == m_firstStep && !m_options.dumpGradsPath.empty())
        m_stack.captureGradients(); // the gradients every group applies
    return true;
}

} // namespace trellis::trainer
