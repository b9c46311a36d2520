// The vectorised float kernels (simd_impl.h) at 16 floats a vector, compiled with -mavx512f
// (and the AVX2/FMA it implies; kernels/CMakeLists.txt). Only called after simd_dispatch.cpp has
// checked the CPU and that the OS saves the AVX-512 state.
#define TRELLIS_SIMD_WIDTH 16
#include "kernels/cpu/simd_impl.h"

namespace trellis::kernels::cpu::simd {

const Kernels &avx512()
{
    static const Kernels table = makeTable("avx512");
    return table;
}

} // namespace trellis::kernels::cpu::simd
