// What the CUDA kernels tell the libraries about our tensors, as plain host code: the cuBLASLt
// layout of a row-major GEMM (which operand is cuBLASLt's A, the transposes, rows, columns,
// leading dimensions, batch strides, and the alignment every pointer, leading dimension and
// stride really has) and the cuDNN views of fused attention's q, k, v, o and their gradients in
// the packed qkv rows. Header-only and free of CUDA's headers, so the CPU tests check them against
// naive references on machines without a GPU (tests/kernels/cuda/tst_cuda_descriptors.cpp).
// Threading: pure functions.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace trellis::kernels::cuda {

// The largest power of two, at most 256, dividing `v` (an address or a byte count), and never
// less than `elementBytes` — the honest alignment of a matrix of that element size: a bf16 matrix
// whose leading dimension is odd (GPT-2's vocabulary, 50,257) is 2-byte aligned, and cuBLASLt is
// told so (it then picks an algorithm that allows it, or says it has none).
inline int alignmentOf(std::uintptr_t v, int elementBytes)
{
    int a = 256;
    while (a > elementBytes && v % static_cast<std::uintptr_t>(a) != 0)
        a /= 2;
    return a;
}

// A column-major matrix as cuBLASLt's layout descriptor holds it.
struct MatrixLayout {
    std::int64_t rows = 0, cols = 0, ld = 0;
    int batch = 1;
    std::int64_t stride = 0; // elements between batch matrices
};

// Row-major C[M×N] (leading dimension ldc) = op(A)[M×K] · op(B)[K×N], batch matrices `batch`
// with strides sA, sB, sC (elements), as cuBLASLt computes it: column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, so
// cuBLASLt's A is our B and its B is our A.
struct GemmLayout {
    bool opA = false, opB = false; // cuBLASLt's transposes of its A (our B) and its B (our A)
    MatrixLayout a, b, c;          // cuBLASLt's A, B and C/D
    int alignment = 256;           // bytes: what every pointer, ld and batch stride is a multiple of
};

inline GemmLayout gemmLayout(bool transA, bool transB, int M, int N, int K, int lda, int ldb, int ldc, int batch,
                             long long sA, long long sB, long long sC, int abBytes, int cBytes, const void *A,
                             const void *B, const void *C, const void *bias)
{
    GemmLayout g;
    g.opA = transB;
    g.opB = transA;
    g.a = {transB ? K : N, transB ? N : K, ldb, batch, sB};
    g.b = {transA ? M : K, transA ? K : M, lda, batch, sA};
    g.c = {N, M, ldc, batch, sC};
    auto address = [](const void *p) { return reinterpret_cast<std::uintptr_t>(p); };
    auto bytes = [](long long elements, int size) {
        return static_cast<std::uintptr_t>(elements) * static_cast<std::uintptr_t>(size);
    };
    const int element = std::min(abBytes, cBytes);
    g.alignment = std::min({alignmentOf(address(A), abBytes), alignmentOf(address(B), abBytes), alignmentOf(address(C), cBytes),
                            bias ? alignmentOf(address(bias), cBytes) : 256, alignmentOf(bytes(lda, abBytes), abBytes),
                            alignmentOf(bytes(ldb, abBytes), abBytes), alignmentOf(bytes(ldc, cBytes), cBytes)});
    if (batch > 1)
        g.alignment = std::min({g.alignment, alignmentOf(bytes(sA, abBytes), abBytes), alignmentOf(bytes(sB, abBytes), abBytes),
                                alignmentOf(bytes(sC, cBytes), cBytes)});
    g.alignment = std::max(g.alignment, element);
    return g;
}

// A [B, heads, T, hs] view of rows: dimensions, strides (elements) and where it starts (elements
// from the rows' base).
struct TensorView {
    std::int64_t dim[4] = {};
    std::int64_t stride[4] = {};
    std::int64_t offset = 0;
};

// Fused attention's operands in place: q, k, v (and dq, dk, dv) are the column blocks of the qkv
// rows [B·T, C + 2·KVH·hs] (q head h at column h·hs, k head g at C + g·hs, v head g at
// C + KVH·hs + g·hs), o and do the [B·T, C] rows of the output; the log-sum-exp [B, NH, T].
struct AttentionLayout {
    TensorView q, k, v, o, stats;
    std::int64_t qkvRow = 0; // elements a qkv row holds
};

inline TensorView rowsView(int B, int heads, int T, int hs, std::int64_t row, std::int64_t offset)
{
    TensorView t;
    const std::int64_t dims[4] = {B, heads, T, hs}, strides[4] = {static_cast<std::int64_t>(T) * row, hs, row, 1};
    std::copy(dims, dims + 4, t.dim);
    std::copy(strides, strides + 4, t.stride);
    t.offset = offset;
    return t;
}

inline AttentionLayout attentionLayout(int B, int T, int C, int NH, int KVH)
{
    const int hs = C / NH;
    AttentionLayout l;
    l.qkvRow = C + 2LL * KVH * hs;
    l.q = rowsView(B, NH, T, hs, l.qkvRow, 0);
    l.k = rowsView(B, KVH, T, hs, l.qkvRow, C);
    l.v = rowsView(B, KVH, T, hs, l.qkvRow, C + static_cast<std::int64_t>(KVH) * hs);
    l.o = rowsView(B, NH, T, hs, C, 0);
    l.stats = TensorView{{B, NH, T, 1}, {static_cast<std::int64_t>(NH) * T, T, 1, 1}, 0};
    return l;
}

// Where element (b, h, t, i) of a view lies, in elements from the rows' base.
inline std::int64_t at(const TensorView &v, std::int64_t b, std::int64_t h, std::int64_t t, std::int64_t i)
{
    return v.offset + b * v.stride[0] + h * v.stride[1] + t * v.stride[2] + i * v.stride[3];
}

} // namespace trellis::kernels::cuda
