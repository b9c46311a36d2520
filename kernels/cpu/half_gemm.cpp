// 16-bit GEMMs; see half_gemm.h. The fp32 backend converts op(A) and op(B) into per-thread fp32
// scratch (rows spread over the kernel threads) and calls the float GEMM of ops.h; a 16-bit output
// is formed in fp32 and rounded once. The oneDNN backend (built when oneDNN is found) describes
// each call as a matmul on strided views of our buffers — no copies — and keeps one primitive per
// shape, since creating one costs far more than running a small one.
#include "kernels/cpu/half_gemm.h"

#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/simd.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#if defined(TRELLIS_HAVE_DNNL)
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <map>
#include <tuple>
#include <unordered_map>
#endif

namespace trellis::kernels::cpu {
namespace {

using i64 = std::int64_t;

enum class Backend { Fp32, OneDnn };

template <typename T>
void rowsToFloat(float *dst, const T *src, i64 n)
{
    if constexpr (std::is_same_v<T, bf16>)
        simd::active().bf16ToFloat(dst, reinterpret_cast<const std::uint16_t *>(src), n);
    else
        simd::active().f16ToFloat(dst, reinterpret_cast<const std::uint16_t *>(src), n);
}

template <typename T>
void rowsFromFloat(T *dst, const float *src, i64 n)
{
    if constexpr (std::is_same_v<T, bf16>)
        simd::active().floatToBf16(reinterpret_cast<std::uint16_t *>(dst), src, n);
    else
        simd::active().floatToF16(reinterpret_cast<std::uint16_t *>(dst), src, n);
}

// A [rows, cols] block of leading dimension ld into contiguous fp32 (ld = cols).
template <typename T>
float *widen(std::vector<float> &buffer, const T *src, int rows, int cols, int ld)
{
    buffer.resize(static_cast<std::size_t>(rows) * cols);
    float *dst = buffer.data();
    parallelRange(rows, std::max(1, 16384 / std::max(1, cols)), [&](i64 r0, i64 r1) {
        for (i64 r = r0; r < r1; ++r)
            rowsToFloat(dst + r * cols, src + r * ld, cols);
    });
    return dst;
}

template <typename T, typename Out>
void gemmFp32(bool transA, bool transB, int M, int N, int K, const T *A, int lda, const T *B, int ldb, Out *C, int ldc,
              bool accumulate, const T *bias)
{
    thread_local std::vector<float> a, b, c, biasF;
    // op(A) is [M,K]: A itself is [K,M] (rows K) when transposed, [M,K] otherwise; likewise B.
    const float *af = widen(a, A, transA ? K : M, transA ? M : K, lda);
    const float *bf = widen(b, B, transB ? N : K, transB ? K : N, ldb);
    float *out = nullptr;
    int ldo = ldc;
    if constexpr (std::is_same_v<Out, float>) {
        out = C;
    } else {
        c.resize(static_cast<std::size_t>(M) * N);
        out = c.data();
        ldo = N;
    }
    float beta = 0.0f;
    if (accumulate) {
        if constexpr (std::is_same_v<Out, float>)
            beta = 1.0f; // straight into the fp32 output
    } else if (bias) {
        biasF.resize(static_cast<std::size_t>(N));
        rowsToFloat(biasF.data(), bias, N);
        // The calling thread's converted bias (inside a chunk, `biasF` would name the worker's own).
        const float *biasRow = biasF.data();
        parallelRange(M, std::max(1, 16384 / std::max(1, N)), [&](i64 r0, i64 r1) {
            for (i64 r = r0; r < r1; ++r)
                std::memcpy(out + r * ldo, biasRow, sizeof(float) * static_cast<std::size_t>(N));
        });
        beta = 1.0f;
    }
    gemm<float>(transA, transB, M, N, K, 1.0f, af, transA ? M : K, bf, transB ? K : N, beta, out, ldo);
    if constexpr (!std::is_same_v<Out, float>) {
        parallelRange(M, std::max(1, 16384 / std::max(1, N)), [&](i64 r0, i64 r1) {
            thread_local std::vector<float> row;
            row.resize(static_cast<std::size_t>(N));
            for (i64 r = r0; r < r1; ++r) {
                const float *src = out + r * N;
                if (accumulate) {
                    rowsToFloat(row.data(), C + r * ldc, N);
                    for (int j = 0; j < N; ++j)
                        row[static_cast<std::size_t>(j)] += src[j];
                    src = row.data();
                }
                rowsFromFloat(C + r * ldc, src, N);
            }
        });
    }
}

#if defined(TRELLIS_HAVE_DNNL)
// oneDNN matmul on bf16 operands (fp32 ones too: the threading test on any CPU). One engine for
// the process; primitives by shape and thread count.
// Threading: Debian's oneDNN runs on OpenMP (libgomp), whose team size a primitive takes when it is
// *created* (a matmul fixes its partition then) from the calling thread's OpenMP setting. So the
// kernel thread count (kernelThreads(): the trainer's per-rank count, what the fp32 kernels use)
// is set as that thread's OpenMP count before a primitive is looked up or created, and is part of
// the cache key: a primitive made for 1 thread is never run where 2 are asked for, nor the
// reverse (oversubscribing cores shared with the other ranks of the node).
class OneDnn {
public:
    static OneDnn &instance()
    {
        static OneDnn d;
        return d;
    }

    // Whether oneDNN has a bf16 matmul for this CPU at all (2.6 needs AVX-512), and a native one.
    bool available() const { return m_available; }
    bool native() const { return m_native; }
    const char *describe() const { return m_native ? "onednn (native bf16)" : "onednn (bf16 emulated on AVX-512)"; }

    template <typename T, typename Out>
    void run(bool transA, bool transB, int M, int N, int K, const T *A, int lda, const T *B, int ldb, Out *C, int ldc,
             bool accumulate, const T *bias)
    {
        using dt = dnnl::memory::data_type;
        const dt inType = std::is_same_v<T, float> ? dt::f32 : dt::bf16;
        const dt outType = std::is_same_v<Out, float> ? dt::f32 : dt::bf16;
        const int threads = std::max(1, kernelThreads());
        omp_set_num_threads(threads); // before the primitive: it takes its team size when created
        const Key key{M,   N,   K,   transA, transB, lda, ldb, ldc, std::is_same_v<Out, float>, accumulate, bias != nullptr,
                      threads, std::is_same_v<T, float>};
        const dnnl::memory::desc src({M, K}, inType, transA ? dnnl::memory::dims{1, lda} : dnnl::memory::dims{lda, 1});
        const dnnl::memory::desc wei({K, N}, inType, transB ? dnnl::memory::dims{1, ldb} : dnnl::memory::dims{ldb, 1});
        const dnnl::memory::desc dst({M, N}, outType, dnnl::memory::dims{ldc, 1});
        const dnnl::memory::desc bmd({1, N}, inType, dnnl::memory::dims{N, 1});
        std::unique_lock lock(m_mutex);
        auto it = m_cache.find(key);
        if (it == m_cache.end()) {
            dnnl::primitive_attr attr;
            if (accumulate) {
                dnnl::post_ops ops;
                ops.append_sum(1.0f);
                attr.set_post_ops(ops);
            }
            const auto desc = bias ? dnnl::matmul::desc(src, wei, bmd, dst) : dnnl::matmul::desc(src, wei, dst);
            const dnnl::matmul::primitive_desc pd(desc, attr, m_engine);
            it = m_cache.emplace(key, dnnl::matmul(pd)).first;
        }
        const dnnl::matmul prim = it->second;
        lock.unlock();
        dnnl::stream stream(m_engine);
        std::unordered_map<int, dnnl::memory> mem{
            {DNNL_ARG_SRC, dnnl::memory(src, m_engine, const_cast<T *>(A))},
            {DNNL_ARG_WEIGHTS, dnnl::memory(wei, m_engine, const_cast<T *>(B))},
            {DNNL_ARG_DST, dnnl::memory(dst, m_engine, C)}};
        if (bias)
            mem.emplace(DNNL_ARG_BIAS, dnnl::memory(bmd, m_engine, const_cast<T *>(bias)));
        prim.execute(stream, mem);
        stream.wait();
    }

private:
    using Key = std::tuple<int, int, int, bool, bool, int, int, int, bool, bool, bool, int, bool>;
    OneDnn() : m_engine(dnnl::engine::kind::cpu, 0)
    {
        const unsigned isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
        const unsigned bf16Isa = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
        try { // a primitive for a small bf16 matmul: what oneDNN can do here
            using dt = dnnl::memory::data_type;
            const dnnl::memory::desc a({4, 4}, dt::bf16, dnnl::memory::dims{4, 1}), c({4, 4}, dt::f32, dnnl::memory::dims{4, 1});
            dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, a, c), m_engine);
            m_available = true;
        } catch (const dnnl::error &) {
            m_available = false;
        }
        m_native = m_available && (isa & bf16Isa) == bf16Isa;
    }
    dnnl::engine m_engine;
    bool m_available = false;
    bool m_native = false;
    std::mutex m_mutex;
    std::map<Key, dnnl::matmul> m_cache;
};
#endif

Backend initialBackend()
{
    const char *env = std::getenv("TRELLIS_CPU_GEMM16");
#if defined(TRELLIS_HAVE_DNNL)
    if (env && std::strcmp(env, "onednn") == 0 && OneDnn::instance().available())
        return Backend::OneDnn;
    if (env && std::strcmp(env, "fp32") == 0)
        return Backend::Fp32;
    return OneDnn::instance().native() ? Backend::OneDnn : Backend::Fp32;
#else
    (void)env;
    return Backend::Fp32;
#endif
}

std::atomic<Backend> &backend()
{
    static std::atomic<Backend> b{initialBackend()};
    return b;
}

} // namespace

template <typename T, typename Out>
void gemm16(bool transA, bool transB, int M, int N, int K, const T *A, int lda, const T *B, int ldb, Out *C, int ldc,
            bool accumulate, const T *bias)
{
    if (M == 0 || N == 0)
        return;
#if defined(TRELLIS_HAVE_DNNL)
    if constexpr (std::is_same_v<T, bf16>) {
        if (backend().load(std::memory_order_relaxed) == Backend::OneDnn && K > 0) {
            OneDnn::instance().run(transA, transB, M, N, K, A, lda, B, ldb, C, ldc, accumulate, bias);
            return;
        }
    }
#endif
    gemmFp32(transA, transB, M, N, K, A, lda, B, ldb, C, ldc, accumulate, bias);
}

bool oneDnnGemmF32(bool transA, bool transB, int M, int N, int K, const float *A, int lda, const float *B, int ldb,
                   float *C, int ldc)
{
#if defined(TRELLIS_HAVE_DNNL)
    if (M == 0 || N == 0 || K == 0)
        return true;
    OneDnn::instance().run(transA, transB, M, N, K, A, lda, B, ldb, C, ldc, false, static_cast<const float *>(nullptr));
    return true;
#else
    (void)transA, (void)transB, (void)M, (void)N, (void)K, (void)A, (void)lda, (void)B, (void)ldb, (void)C, (void)ldc;
    return false;
#endif
}

const char *gemm16Backend(DType type)
{
#if defined(TRELLIS_HAVE_DNNL)
    if (type == DType::BF16 && backend().load() == Backend::OneDnn)
        return OneDnn::instance().describe();
#else
    (void)type;
#endif
    return "fp32 (converted operands)";
}

bool nativeBf16Gemm()
{
#if defined(TRELLIS_HAVE_DNNL)
    return OneDnn::instance().native();
#else
    return false;
#endif
}

bool setGemm16Backend(const char *name)
{
    if (std::strcmp(name, "fp32") == 0) {
        backend().store(Backend::Fp32);
        return true;
    }
#if defined(TRELLIS_HAVE_DNNL)
    if (std::strcmp(name, "onednn") == 0 && OneDnn::instance().available()) {
        backend().store(Backend::OneDnn);
        return true;
    }
#endif
    return false;
}

#define TRELLIS_GEMM16(T)                                                                                             \
    template void gemm16<T, T>(bool, bool, int, int, int, const T *, int, const T *, int, T *, int, bool, const T *);  \
    template void gemm16<T, float>(bool, bool, int, int, int, const T *, int, const T *, int, float *, int, bool,      \
                                   const T *);
TRELLIS_GEMM16(bf16)
TRELLIS_GEMM16(f16)
#undef TRELLIS_GEMM16

} // namespace trellis::kernels::cpu
