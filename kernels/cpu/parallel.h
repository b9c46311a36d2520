// The kernel threads: a small persistent pool that runs the element-wise, normalisation, loss
// and attention kernels on as many threads as OpenBLAS uses for its GEMMs (or the count set with
// setKernelThreads). Work is cut into chunks whose bounds do not depend on the thread count, so
// results are the same for any number of threads.
#pragma once

#include "kernels/cpu/ops.h"

#include <cstdint>
#include <type_traits>

namespace trellis::kernels::cpu {

namespace detail {
void parallelRun(int chunks, void (*fn)(void *, int), void *ctx);
}

// Calls f(chunk) for every chunk in [0, chunks), spread over the kernel threads; returns when all
// have run. Runs inline with one thread, one chunk, or when called from inside a chunk.
template <typename F>
void parallelFor(int chunks, F &&f)
{
    if (chunks <= 0)
        return;
    if (chunks == 1 || kernelThreads() == 1) {
        for (int c = 0; c < chunks; ++c)
            f(c);
        return;
    }
    detail::parallelRun(
        chunks, [](void *ctx, int c) { (*static_cast<std::remove_reference_t<F> *>(ctx))(c); }, &f);
}

// Splits [0, n) into pieces of `grain` (the last may be shorter) and calls f(begin, end) for each.
template <typename F>
void parallelRange(std::int64_t n, std::int64_t grain, F &&f)
{
    if (n <= 0)
        return;
    const std::int64_t chunks = (n + grain - 1) / grain;
    parallelFor(static_cast<int>(chunks), [&](int c) {
        const std::int64_t begin = c * grain;
        f(begin, begin + grain < n ? begin + grain : n);
    });
}

} // namespace trellis::kernels::cpu
