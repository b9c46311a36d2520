// The vectorised float kernels behind ops.h, one table of functions per instruction set
// (simd_sse2.cpp, simd_avx2.cpp, simd_avx512.cpp compile the same simd_impl.h at three vector
// widths); simd_dispatch.cpp picks the widest one this CPU and OS support at run time, so
// shipped builds stay plain x86-64. Every function works on a slice of rows given by its caller,
// so the callers can spread the rows over the kernel threads (parallel.h).
#pragma once

#include <cstdint>

namespace trellis::kernels::cpu::simd {

struct Kernels {
    const char *name; // "sse2", "avx2" or "avx512"
    int width;        // floats per vector

    // out[i] = GELU(in[i]) and dIn[i] += GELU'(in[i])·dOut[i], i < n (tanh approximation).
    void (*geluForward)(float *out, const float *in, std::int64_t n);
    void (*geluBackward)(float *dIn, const float *in, const float *dOut, std::int64_t n);
    // out[i] = a[i] + b[i].
    void (*add)(float *out, const float *a, const float *b, std::int64_t n);
    // dst[c] += Σ_r src[r·ld + c] for c < n, rows summed in order.
    void (*columnSum)(float *dst, const float *src, int rows, std::int64_t ld, int n);
    // LayerNorm of rows [0, rows) of width C (see ops.h); mean and rstd per row.
    void (*layerNormForward)(float *out, float *mean, float *rstd, const float *in, const float *gamma,
                             const float *beta, int rows, int C, float eps);
    // dIn rows accumulate (dIn may be null); dGamma/dBeta (may be null) get this slice's sums
    // added, rows in order.
    void (*layerNormBackward)(float *dIn, float *dGamma, float *dBeta, const float *dOut, const float *in,
                              const float *gamma, const float *mean, const float *rstd, int rows, int C);
    // Softmax and loss of rows [0, rows) of V logits (see crossEntropyForward in ops.h).
    void (*crossEntropyForward)(float *losses, float *probs, const float *logits, const std::int32_t *targets,
                                int rows, int V);
    // One (batch, head) pair of causal attention. q, k, v rows have leading dimension ld; out has
    // ldo; att is this pair's [T,T]. work needs hs·T floats.
    void (*attentionForward)(float *out, std::int64_t ldo, float *att, const float *q, const float *k,
                             const float *v, std::int64_t ld, int T, int hs, float scale, float *work);
    // Its backward: dq, dk, dv (leading dimension ld) accumulate; dOut has ldo. work needs
    // hs·T + T·T floats.
    void (*attentionBackward)(float *dq, float *dk, float *dv, const float *dOut, std::int64_t ldo,
                              const float *att, const float *q, const float *k, const float *v, std::int64_t ld,
                              int T, int hs, float scale, float *work);
    // 16-bit storage (kernels/dtype.h): dst[i] = src[i] widened to float, or rounded to nearest
    // even (NaN kept, overflow to inf) from float; n elements of raw 16-bit words.
    void (*bf16ToFloat)(float *dst, const std::uint16_t *src, std::int64_t n);
    void (*floatToBf16)(std::uint16_t *dst, const float *src, std::int64_t n);
    void (*f16ToFloat)(float *dst, const std::uint16_t *src, std::int64_t n);
    void (*floatToF16)(std::uint16_t *dst, const float *src, std::int64_t n);
};

const Kernels &sse2();
const Kernels &avx2();   // call only where supported("avx2")
const Kernels &avx512(); // call only where supported("avx512")

// The table in use: the widest the CPU supports, or the one set by TRELLIS_KERNELS_ISA
// (sse2|avx2|avx512) or selectIsa.
const Kernels &active();
// Switches to the named table if this CPU supports it; returns whether it did.
bool selectIsa(const char *name);
// Whether this CPU (and OS) can run the named table.
bool supported(const char *name);

} // namespace trellis::kernels::cpu::simd
