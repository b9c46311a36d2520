// Per-process CUDA state: error context, scratch memory, the cuBLASLt handle with its workspace and
// the cache of chosen GEMM algorithms, device memory and streams.
#include "kernels/cuda/common.cuh"

#include <algorithm>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace trellis::kernels::cuda {
namespace {

std::mutex g_mutex;
std::string g_context = "host ? rank ?";
bool g_tf32 = false;
void *g_scratch = nullptr;
std::size_t g_scratchBytes = 0;
cublasLtHandle_t g_lt = nullptr;
void *g_workspace = nullptr;
constexpr std::size_t kWorkspaceBytes = 32u << 20;

struct GemmKey {
    bool transA, transB;
    int M, N, K, lda, ldb, ldc, batch;
    long long sA, sB, sC;
    bool bias, tf32;
    int alignment;
    bool beta;
    int ab, c; // cudaDataType_t of A and B, of C
    auto tie() const
    {
        return std::tie(transA, transB, M, N, K, lda, ldb, ldc, batch, sA, sB, sC, bias, tf32, alignment, beta, ab, c);
    }
    bool operator<(const GemmKey &o) const { return tie() < o.tie(); }
};
struct GemmPlan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
};
std::map<GemmKey, GemmPlan> g_plans;

// The largest power of two (4..256) dividing an address or a byte offset.
int alignmentOf(std::uintptr_t v)
{
    int a = 256;
    while (a > 4 && v % static_cast<std::uintptr_t>(a) != 0)
        a /= 2;
    return a;
}
int alignmentOf(const void *p) { return alignmentOf(reinterpret_cast<std::uintptr_t>(p)); }

cublasLtMatrixLayout_t layout(cudaDataType_t type, int rows, int cols, int ld, int batch, long long stride)
{
    cublasLtMatrixLayout_t l = nullptr;
    TRELLIS_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, type, static_cast<std::uint64_t>(rows),
                                                    static_cast<std::uint64_t>(cols), ld));
    if (batch > 1) {
        TRELLIS_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)));
        const std::int64_t s = stride;
        TRELLIS_CUBLAS_CHECK(
            cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &s, sizeof(s)));
    }
    return l;
}

} // namespace

void fail(const char *file, int line, const char *call, const char *error)
{
    std::string where = file;
    const auto slash = where.rfind("kernels/");
    if (slash != std::string::npos)
        where = where.substr(slash);
    std::string context;
    {
        std::lock_guard lock(g_mutex);
        context = g_context;
    }
    throw DeviceError(context + " " + where + ":" + std::to_string(line) + " " + call + " \u2192 " + error);
}

const char *statusName(cublasStatus_t status)
{
    switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED (out of device memory)";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    }
    return "unknown cuBLAS status";
}

void setErrorContext(const std::string &context)
{
    std::lock_guard lock(g_mutex);
    g_context = context;
}

void setTf32(bool enabled) { g_tf32 = enabled; }
bool tf32() { return g_tf32; }

int deviceCount()
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); // clear: no driver or no device is an answer, not an error
        return 0;
    }
    return n;
}

std::string deviceDescription(int index)
{
    cudaDeviceProp p{};
    TRELLIS_CUDA_CHECK(cudaGetDeviceProperties(&p, index));
    int driver = 0;
    TRELLIS_CUDA_CHECK(cudaDriverGetVersion(&driver));
    return std::string(p.name) + ", " + std::to_string(p.multiProcessorCount) + " SMs, sm_" + std::to_string(p.major) +
           std::to_string(p.minor) + ", " + std::to_string(p.totalGlobalMem >> 20) + " MiB, driver " +
           std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10);
}

std::size_t scratchBytes()
{
    std::lock_guard lock(g_mutex);
    return g_scratchBytes + (g_workspace ? kWorkspaceBytes : 0) + fusedAttentionWorkspaceBytes();
}

void *scratch(std::size_t bytes)
{
    std::lock_guard lock(g_mutex);
    if (bytes > g_scratchBytes) {
        if (g_scratch)
            TRELLIS_CUDA_CHECK(cudaFree(g_scratch)); // waits for the work that may still use it
        g_scratch = nullptr;
        g_scratchBytes = 0;
        const std::size_t rounded = (bytes + (1u << 20) - 1) / (1u << 20) * (1u << 20);
        if (cudaMalloc(&g_scratch, rounded) != cudaSuccess) {
            cudaGetLastError();
            throw std::bad_alloc();
        }
        g_scratchBytes = rounded;
    }
    return g_scratch;
}

__global__ void columnFinishKernel(float *out, const float *partial, int chunks, int C, long long ld)
{
    __shared__ float tile[32][33];
    const int c = blockIdx.x * 32 + threadIdx.x;
    float s = 0.0f;
    if (c < C)
        for (int k = threadIdx.y; k < chunks; k += 32)
            s += partial[k * ld + c];
    tile[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
        float total = tile[0][threadIdx.x];
        for (int y = 1; y < 32; ++y)
            total += tile[y][threadIdx.x];
        out[c] += total;
    }
}

void columnFinish(cudaStream_t stream, float *out, const float *partial, int chunks, int C, long long ld)
{
    if (!out || C <= 0)
        return;
    columnFinishKernel<<<(C + 31) / 32, dim3(32, 32), 0, stream>>>(out, partial, chunks, C, ld);
    TRELLIS_CUDA_LAUNCHED(columnFinishKernel);
}

void gemm(cudaStream_t stream, bool transA, bool transB, int M, int N, int K, float alpha, const void *A, int lda,
          long long sA, const void *B, int ldb, long long sB, float beta, void *C, int ldc, long long sC, int batch,
          const void *bias, cudaDataType_t ab, cudaDataType_t c)
{
    if (M <= 0 || N <= 0 || batch <= 0)
        return;
    // Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: cuBLASLt's "A" is our B.
    // What the algorithm may assume of every column's (and every batch matrix's) start: the
    // pointers, the leading dimensions and the batch strides in bytes (an odd leading dimension,
    // a vocabulary of 97 say, leaves 4 bytes).
    const std::uintptr_t abSize = ab == CUDA_R_16BF ? 2 : 4, cSize = c == CUDA_R_16BF ? 2 : 4;
    auto bytes = [](long long elements, std::uintptr_t size) {
        return alignmentOf(static_cast<std::uintptr_t>(elements) * size);
    };
    int alignment = std::min({alignmentOf(A), alignmentOf(B), alignmentOf(C), bias ? alignmentOf(bias) : 256,
                              bytes(lda, abSize), bytes(ldb, abSize), bytes(ldc, cSize)});
    if (batch > 1)
        alignment = std::min({alignment, bytes(sA, abSize), bytes(sB, abSize), bytes(sC, cSize)});
    const bool tf32 = g_tf32 && ab == CUDA_R_32F;
    const GemmKey key{transA, transB, M, N, K, lda, ldb, ldc, batch, sA, sB, sC, bias != nullptr, tf32, alignment,
                      beta != 0.0f, static_cast<int>(ab), static_cast<int>(c)};
    std::lock_guard lock(g_mutex);
    if (!g_lt) {
        TRELLIS_CUBLAS_CHECK(cublasLtCreate(&g_lt));
        TRELLIS_CUDA_CHECK(cudaMalloc(&g_workspace, kWorkspaceBytes));
    }
    auto found = g_plans.find(key);
    if (found == g_plans.end()) {
        GemmPlan plan;
        TRELLIS_CUBLAS_CHECK(cublasLtMatmulDescCreate(
            &plan.desc, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F));
        const cublasOperation_t opA = transB ? CUBLAS_OP_T : CUBLAS_OP_N; // cuBLASLt's A = our B
        const cublasOperation_t opB = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
        TRELLIS_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA)));
        TRELLIS_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB)));
        if (bias) {
            const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
            TRELLIS_CUBLAS_CHECK(
                cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
        }
        // Column-major shapes: ours B (N×K as op) stored [ldb]: rows = transB ? K : N.
        if (bias) { // the bias is of C's type
            const cudaDataType_t biasType = c;
            TRELLIS_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                                                &biasType, sizeof(biasType)));
        }
        plan.a = layout(ab, transB ? K : N, transB ? N : K, ldb, batch, sB);
        plan.b = layout(ab, transA ? M : K, transA ? K : M, lda, batch, sA);
        plan.c = layout(c, N, M, ldc, batch, sC);
        cublasLtMatmulPreference_t pref = nullptr;
        TRELLIS_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
        const std::uint64_t ws = kWorkspaceBytes;
        TRELLIS_CUBLAS_CHECK(
            cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
        const std::uint32_t al = static_cast<std::uint32_t>(alignment);
        for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                          CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
            TRELLIS_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &al, sizeof(al)));
        cublasLtMatmulHeuristicResult_t result{};
        int count = 0;
        TRELLIS_CUBLAS_CHECK(
            cublasLtMatmulAlgoGetHeuristic(g_lt, plan.desc, plan.a, plan.b, plan.c, plan.c, pref, 1, &result, &count));
        cublasLtMatmulPreferenceDestroy(pref);
        if (count == 0)
            fail(__FILE__, __LINE__, "cublasLtMatmulAlgoGetHeuristic", "no algorithm for this GEMM");
        plan.algo = result.algo;
        found = g_plans.emplace(key, plan).first;
    }
    GemmPlan &plan = found->second;
    if (bias)
        TRELLIS_CUBLAS_CHECK(
            cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
    TRELLIS_CUBLAS_CHECK(cublasLtMatmul(g_lt, plan.desc, &alpha, B, plan.a, A, plan.b, &beta, C, plan.c, C, plan.c,
                                        &plan.algo, g_workspace, kWorkspaceBytes, stream));
}

namespace {

// Op timing: a pool of CUDA events reused every take, and the ops recorded since the last one.
struct OpRecord {
    const char *name;
    int start; // events[start], events[start + 1]
};
struct OpTiming {
    std::mutex mutex;
    bool enabled = false;
    std::vector<cudaEvent_t> events;
    std::vector<OpRecord> records;
};
OpTiming &timingState()
{
    static OpTiming t;
    return t;
}

} // namespace

void setOpTiming(bool enabled)
{
    OpTiming &t = timingState();
    std::lock_guard lock(t.mutex);
    t.enabled = enabled;
    t.records.clear();
}

bool opTiming() { return timingState().enabled; }

OpTimer::OpTimer(const Stream &s, const char *name)
{
    OpTiming &t = timingState();
    if (!t.enabled)
        return;
    std::lock_guard lock(t.mutex);
    const int start = static_cast<int>(t.records.size()) * 2;
    while (static_cast<int>(t.events.size()) < start + 2) {
        cudaEvent_t e = nullptr;
        TRELLIS_CUDA_CHECK(cudaEventCreate(&e));
        t.events.push_back(e);
    }
    t.records.push_back({name, start});
    m_slot = start;
    m_stream = s.handle;
    TRELLIS_CUDA_CHECK(cudaEventRecord(t.events[static_cast<std::size_t>(start)], native(s)));
}

OpTimer::~OpTimer()
{
    if (m_slot < 0)
        return;
    OpTiming &t = timingState();
    std::lock_guard lock(t.mutex);
    cudaEventRecord(t.events[static_cast<std::size_t>(m_slot) + 1], static_cast<cudaStream_t>(m_stream));
}

std::vector<OpTime> takeOpTimes()
{
    OpTiming &t = timingState();
    std::lock_guard lock(t.mutex);
    std::vector<OpTime> table;
    for (const OpRecord &r : t.records) {
        TRELLIS_CUDA_CHECK(cudaEventSynchronize(t.events[static_cast<std::size_t>(r.start) + 1]));
        float ms = 0.0f;
        TRELLIS_CUDA_CHECK(cudaEventElapsedTime(&ms, t.events[static_cast<std::size_t>(r.start)],
                                                t.events[static_cast<std::size_t>(r.start) + 1]));
        auto found = std::find_if(table.begin(), table.end(), [&](const OpTime &o) { return o.name == r.name; });
        if (found == table.end())
            found = table.insert(table.end(), OpTime{r.name, 0.0, 0});
        found->ms += ms;
        ++found->calls;
    }
    t.records.clear();
    return table;
}

void *deviceAllocate(int device, std::size_t bytes)
{
    TRELLIS_CUDA_CHECK(cudaSetDevice(device));
    void *p = nullptr;
    const std::size_t rounded = (bytes + 255) / 256 * 256;
    if (cudaMalloc(&p, rounded) != cudaSuccess) {
        cudaGetLastError();
        throw std::bad_alloc();
    }
    TRELLIS_CUDA_CHECK(cudaMemset(p, 0, rounded));
    TRELLIS_CUDA_CHECK(cudaDeviceSynchronize()); // the memset is on the legacy stream, ours is non-blocking
    return p;
}

void deviceRelease(void *memory)
{
    if (memory)
        TRELLIS_CUDA_CHECK(cudaFree(memory));
}

void toHost(const Stream &s, void *host, const void *device, std::size_t bytes)
{
    if (!bytes)
        return;
    TRELLIS_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, native(s)));
    TRELLIS_CUDA_CHECK(cudaStreamSynchronize(native(s)));
}

void fromHost(const Stream &s, void *device, const void *host, std::size_t bytes)
{
    if (!bytes)
        return;
    TRELLIS_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, native(s)));
    TRELLIS_CUDA_CHECK(cudaStreamSynchronize(native(s)));
}

void *createStream(int device)
{
    TRELLIS_CUDA_CHECK(cudaSetDevice(device));
    cudaStream_t stream = nullptr;
    TRELLIS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    return stream;
}

void synchronize(const Stream &s) { TRELLIS_CUDA_CHECK(cudaStreamSynchronize(native(s))); }

void memoryInfo(std::size_t &freeBytes, std::size_t &totalBytes)
{
    TRELLIS_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
}

} // namespace trellis::kernels::cuda
