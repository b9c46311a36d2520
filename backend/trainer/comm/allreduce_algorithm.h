// parallel.allreduce on Open MPI: ring and recursive doubling are forced in Open MPI's own
// collective components through their MCA parameters, set in this process's environment before
// MPI_Init reads them — coll/tuned for blocking all-reduces (coll_tuned_use_dynamic_rules,
// coll_tuned_allreduce_algorithm) and coll/libnbc for the non-blocking ones the gradient buckets
// use (coll_libnbc_iallreduce_algorithm); NCCL_ALGO=Ring too, for a GPU library reading it. What
// MPI ended up with is read back through the MPI tool interface (MPI_T), so the log shows the
// engine's own settings rather than the plan's wish. hierarchical is composed by ProcessGroups.
#pragma once

#include "backend/plan/plan.h"

#include <string>

namespace trellis::trainer {

// Before MPI_Init. auto and hierarchical set nothing (the library's own rules run).
void forceAllReduceAlgorithm(plan::AllReduceAlgorithm algorithm);
// After MPI_Init: "coll_tuned_allreduce_algorithm=ring coll_libnbc_iallreduce_algorithm=ring" as
// MPI reads them now. Only MPI_INT control variables are read; coll_tuned_use_dynamic_rules (a
// bool) did not read as one on Open MPI 4.1, so it is left out, like any parameter MPI does not
// have. Empty when it has none of them.
std::string allReduceParametersInEffect();
// "ring" and the like, from the command line; nullopt-like: false when the name is unknown.
bool parseAllReduceAlgorithm(const std::string &name, plan::AllReduceAlgorithm &out);

} // namespace trellis::trainer
