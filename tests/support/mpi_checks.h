// Checks for the MPI test programs (one process per rank, no test framework): every rank's error
// summed over the world, so all ranks agree on each verdict; rank 0 prints the failures and the
// closing "N passed, M failed" line.
#pragma once

#include "trainer/comm/communicator.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace trellis::testing {

inline int g_passed = 0, g_failed = 0;

inline void check(trainer::DeviceCommunicator &world, const std::string &what, double error, double bound)
{
    double worst = error;
    world.allReduce(&worst, 1, trainer::ReduceOp::Sum);
    if (worst <= bound * world.size()) {
        ++g_passed;
    } else {
        ++g_failed;
        if (world.rank() == 0)
            std::printf("FAIL %s: relative error %.3g (bound %.1g)\n", what.c_str(), worst / world.size(), bound);
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

} // namespace trellis::testing
