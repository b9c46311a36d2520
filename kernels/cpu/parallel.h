// The kernel threads: a small persistent pool that runs the float kernels, the parts of split
// GEMMs included, on as many threads as OPENBLAS_NUM_THREADS asks for (or setKernelThreads).
// The element-wise, normalisation, loss and attention kernels cut their work into chunks whose
// bounds do not depend on the thread count, so their results are the same for any count.
#pragma once

#include "kernels/cpu/cpu_ops.h"

#include <cstdint>
#include <type_traits>

namespace trellis::kernels::cpu {

namespace detail {
void parallelRun(int threads, int chunks, void (*fn)(void *, int), void *ctx);
}

// Calls f(chunk) for every chunk in [0, chunks), spread over `threads` threads (the caller and
// pool workers); returns when all have run. Runs inline with one thread or one chunk, and when
// called from inside a chunk.
template <typename F>
void parallelFor(int threads, int chunks, F &&f)
{
    if (chunks <= 0)
        return;
    if (chunks == 1 || threads <= 1) {
        for (int c = 0; c < chunks; ++c)
            f(c);
        return;
    }
    detail::parallelRun(
        threads, chunks, [](void *ctx, int c) { (*static_cast<std::remove_reference_t<F> *>(ctx))(c); }, &f);
}

// The same over kernelThreads() threads.
template <typename F>
void parallelFor(int chunks, F &&f)
{
    parallelFor(chunks > 1 ? kernelThreads() : 1, chunks, static_cast<F &&>(f));
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
