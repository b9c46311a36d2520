// The vectorised float kernels (simd_impl.h) at 8 floats a vector, compiled with -mavx2 -mfma
// (kernels/CMakeLists.txt). Only called after simd_dispatch.cpp has checked the CPU.
#define TRELLIS_SIMD_WIDTH 8
#include "kernels/cpu/simd_impl.h"

namespace trellis::kernels::cpu::simd {

const Kernels &avx2()
{
    static const Kernels table = makeTable("avx2");
    return table;
}

} // namespace trellis::kernels::cpu::simd
