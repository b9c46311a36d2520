// The vectorised float kernels (simd_impl.h) at 4 floats a vector: the baseline x86-64 build
// (SSE2), used where the CPU has no AVX2 and FMA.
#define TRELLIS_SIMD_WIDTH 4
#include "kernels/cpu/simd_impl.h"

namespace trellis::kernels::cpu::simd {

const Kernels &sse2()
{
    static const Kernels table = makeTable("sse2");
    return table;
}

} // namespace trellis::kernels::cpu::simd
