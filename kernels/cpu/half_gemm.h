// GEMMs on 16-bit operands with fp32 accumulation (the mixed-precision linear layers). Two
// backends, chosen once at run time:
//   onednn — oneDNN's matmul primitive on bf16 inputs (fp32 or bf16 output, bias and accumulation
//            as post-ops), primitives cached by shape; used where the CPU has AVX512-BF16 or AMX,
//            the instructions oneDNN's fast bf16 kernels need;
//   fp32   — the operands converted to fp32 and multiplied by the float GEMM of ops.h (OpenBLAS):
//            the same products (bf16·bf16 is exact in fp32), slower than native bf16 and run on
//            every CPU, fp16 included.
// TRELLIS_CPU_GEMM16=onednn|fp32 asks for one (onednn only where oneDNN has a bf16 matmul for
// the CPU at all: oneDNN 2.6 needs AVX-512, emulating bf16 there without AVX512-BF16).
// Threading: as ops.h (the calling thread, split over the kernel threads). oneDNN runs on OpenMP
// with exactly kernelThreads() threads, set before each primitive is made (a primitive keeps the
// team size it was made with, so primitives are cached per thread count too).
#pragma once

#include "kernels/dtype.h"

namespace trellis::kernels::cpu {

// C[M,N] = op(A)·op(B) + bias (per column; null for none), or C += op(A)·op(B) when accumulate
// (bias then null). Row-major with leading dimensions; op(A) is [M,K] (A is [K,M] when transA),
// op(B) is [K,N] (B is [N,K] when transB). Out is float or T; a T output is rounded once.
template <typename T, typename Out>
void gemm16(bool transA, bool transB, int M, int N, int K, const T *A, int lda, const T *B, int ldb, Out *C, int ldc,
            bool accumulate, const T *bias);

// The backend gemm16 uses for `type` (bf16 or f16): "onednn (native bf16)", "onednn (bf16
// emulated on AVX-512)", "fp32 (converted operands)". Hello and the benchmarks print it.
const char *gemm16Backend(DType type);
// Whether this build has oneDNN and this CPU runs its native bf16 kernels.
bool nativeBf16Gemm();
// Forces a backend ("onednn" or "fp32"); false when this build or CPU cannot run it. Tests and
// benchmarks.
bool setGemm16Backend(const char *name);
// C = op(A)·op(B) in fp32 through the same oneDNN path and threading as the bf16 GEMMs (oneDNN has
// an fp32 matmul on every x86-64 CPU): what the threading test runs where there is no native bf16.
// False in a build without oneDNN.
bool oneDnnGemmF32(bool transA, bool transB, int M, int N, int K, const float *A, int lda, const float *B, int ldb,
                   float *C, int ldc);

} // namespace trellis::kernels::cpu
