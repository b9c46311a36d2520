// Checks for the MPI test programs (one process per rank, no test framework): the worst rank's
// error (a maximum over the world) against the bound, so every rank holds to it and all ranks
// agree on each verdict; rank 0 prints the failures and the closing "N passed, M failed" line.
#pragma once

#include "backend/trainer/comm/communicator.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace trellis::test {

inline int g_passed = 0, g_failed = 0;

inline void check(trainer::HostCommunicator &world, const std::string &what, double error, double bound)
{
    // NaN anywhere fails: max() would drop it, so it travels as infinity.
    const double worst = world.allReduce(std::isnan(error) ? INFINITY : error, trainer::ReduceOp::Max);
    if (worst <= bound) {
        ++g_passed;
    } else {
        ++g_failed;
        if (world.rank() == 0)
            std::printf("FAIL %s: relative error %.3g on the worst rank (bound %.1g)\n", what.c_str(), worst, bound);
    }
}

// Relative L2 distance of a from b (absolute when b is zero).
inline double relative(const std::vector<double> &a, const std::vector<double> &b)
{
    double diff = 0, ref = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff += (a[i] - b[i]) * (a[i] - b[i]);
        ref += b[i] * b[i];
    }
    return ref > 0 ? std::sqrt(diff / ref) : std::sqrt(diff);
}

} // namespace trellis::test
