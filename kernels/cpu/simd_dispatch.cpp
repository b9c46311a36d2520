// Picks the vectorised kernel table (simd.h) at run time: AVX-512 where the CPU has it and the OS
// saves its registers, else AVX2+FMA, else the SSE2 baseline every x86-64 CPU has.
// TRELLIS_KERNELS_ISA=sse2|avx2|avx512 asks for a narrower one (tests, benchmarks).
#include "kernels/cpu/simd.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace trellis::kernels::cpu::simd {
namespace {

const Kernels *byName(const char *name)
{
    if (!name || !supported(name))
        return nullptr;
#if defined(__x86_64__)
    if (std::strcmp(name, "avx512") == 0)
        return &avx512();
    if (std::strcmp(name, "avx2") == 0)
        return &avx2();
#endif
    return &sse2();
}

const Kernels *widest()
{
    if (const char *env = std::getenv("TRELLIS_KERNELS_ISA"); env && *env)
        if (const Kernels *k = byName(env))
            return k;
    for (const char *name : {"avx512", "avx2"})
        if (const Kernels *k = byName(name))
            return k;
    return &sse2();
}

std::atomic<const Kernels *> &current()
{
    static std::atomic<const Kernels *> k{widest()};
    return k;
}

} // namespace

bool supported(const char *name)
{
    if (std::strcmp(name, "sse2") == 0)
        return true;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (std::strcmp(name, "avx2") == 0)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    if (std::strcmp(name, "avx512") == 0)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
               __builtin_cpu_supports("f16c");
#endif
    return false;
}

const Kernels &active()
{
    return *current().load(std::memory_order_relaxed);
}

bool selectIsa(const char *name)
{
    const Kernels *k = byName(name);
    if (k)
        current().store(k, std::memory_order_relaxed);
    return k != nullptr;
}

} // namespace trellis::kernels::cpu::simd

namespace trellis::kernels::cpu {

const char *kernelIsa()
{
    return simd::active().name;
}

bool setKernelIsa(const char *name)
{
    return simd::selectIsa(name);
}

} // namespace trellis::kernels::cpu
