// What went non-finite, when the loss or the gradient norm did (training.on_non_finite): every
// rank checks, per tensor of its model in model order, the parameters it owns and their reduced
// gradients, and whether its own micro-batches' loss was finite; the world shares the findings
// and every rank composes the same message — the step, the rank, the first tensor:
//   "non-finite loss (nan) at step 7: parameter lnf.weight on rank 2 is the first non-finite tensor"
// Collective over the world; only ever called when the (global) loss or norm is non-finite, so
// every rank calls it together.
#pragma once

#include "backend/trainer/comm/communicator.h"
#include "backend/trainer/parallel/parallel_stack.h"

#include <cstdint>
#include <string>

namespace trellis::trainer {

std::string diagnoseNonFinite(ParallelStack &stack, HostCommunicator &world, std::uint64_t step, double loss,
                              double gradNorm, bool localLossFinite);

} // namespace trellis::trainer
