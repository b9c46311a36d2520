// See non_finite.h.
#include "backend/trainer/non_finite.h"

#include <cmath>
#include <limits>
#include <vector>

namespace trellis::trainer {
namespace {

// The index of the first tensor (model order) with a non-finite value among this rank's owned
// ranges, in parameters or gradients; -1 when all are finite.
int firstNonFinite(ParallelStack &stack, bool gradients)
{
    const auto &tensors = stack.tensors();
    int first = -1;
    for (const OwnedRange &o : stack.owned()) {
        for (std::size_t t = 0; t < tensors.size(); ++t) {
            if (first >= 0 && static_cast<int>(t) >= first)
                break;
            const std::size_t begin = std::max(o.range.begin, tensors[t].offset);
            const std::size_t end = std::min(o.range.end, tensors[t].offset + tensors[t].size);
            if (begin >= end)
                continue;
            const float *data = (gradients ? o.grads : o.params) + (begin - o.range.begin);
            if (!std::isfinite(kernels::sumSquares(stack.device().stream(), data, static_cast<std::int64_t>(end - begin))))
                first = static_cast<int>(t);
        }
    }
    return first;
}

} // namespace

std::string diagnoseNonFinite(ParallelStack &stack, HostCommunicator &world, std::uint64_t step, double loss,
                              double gradNorm, bool localLossFinite)
{
    const std::int32_t mine[3] = {localLossFinite ? 0 : 1, firstNonFinite(stack, false), firstNonFinite(stack, true)};
    const std::vector<std::int32_t> all = world.allGather(std::span<const std::int32_t>(mine, 3));
    const auto &tensors = stack.tensors();
    auto name = [&](int t) { return t >= 0 && static_cast<std::size_t>(t) < tensors.size() ? tensors[t].name : "?"; };
    std::string what = std::isfinite(loss) ? "non-finite gradients (norm " + std::to_string(gradNorm) + ")"
                                           : "non-finite loss (" + std::string(std::isnan(loss) ? "nan" : "inf") + ")";
    std::string message = what + " at step " + std::to_string(step) + ": ";
    // Parameters first (the cause), then a rank's own loss, then the reduced gradients.
    for (int r = 0; r < world.size(); ++r)
        if (all[3 * r + 1] >= 0)
            return message + "parameter " + name(all[3 * r + 1]) + " on rank " + std::to_string(r) +
                   " is the first non-finite tensor";
    for (int r = 0; r < world.size(); ++r)
        if (all[3 * r])
            return message + "the loss of rank " + std::to_string(r) +
                   "'s micro-batches is the first non-finite value (its parameters are finite)";
    for (int r = 0; r < world.size(); ++r)
        if (all[3 * r + 2] >= 0)
            return message + "gradient " + name(all[3 * r + 2]) + " on rank " + std::to_string(r) +
                   " is the first non-finite tensor";
    return message + "no parameter or gradient this rank owns is non-finite";
}

} // namespace trellis::trainer
