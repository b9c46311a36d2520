// Per-process CUDA state: the error context; per stream, its scratch memory and cuBLASLt
// workspace (a communication stream or a second compute stream never races an op on another
// stream for them); the cuBLASLt handle and the cache of chosen GEMM algorithms; device memory and
// streams. Each piece has its own lock, and no lock is held while an error is raised: fail() may
// be called from anywhere, a failing cuBLASLt call under the GEMM cache's lock included.
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/descriptors.h"

#include <algorithm>
#include <atomic>
#include <utility>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace trellis::kernels::cuda {
namespace {

std::mutex g_contextMutex; // the error context only: fail() takes it and nothing else
std::string g_context = "host ? rank ?";
std::atomic<bool> g_tf32{false};
constexpr std::size_t kWorkspaceBytes = 32u << 20;

// What a stream owns for the ops queued on it. Grown stream-ordered (cudaFreeAsync and
// cudaMallocAsync on that stream): no device-wide synchronisation, nothing another stream waits for.
struct StreamResources {
    void *scratch = nullptr;
    std::size_t scratchBytes = 0;
    void *workspace = nullptr; // cuBLASLt's
};
std::mutex g_streamsMutex;
std::map<cudaStream_t, StreamResources> g_streams;

// A device error seen where nothing may throw (a destructor freeing memory): kept, and raised by
// the next call that may (takeDeferredError()).
std::mutex g_deferredMutex;
std::string g_deferred;

// Plans are per stream: the bias pointer is set on a plan's descriptor before each call, and a
// stream's ops are queued from one thread, one after another.
struct GemmKey {
    std::uintptr_t stream;
    bool transA, transB;
    int M, N, K, lda, ldb, ldc, batch;
    long long sA, sB, sC;
    bool bias, tf32;
    int alignment;
    bool beta;
    int ab, c; // cudaDataType_t of A and B, of C
    auto tie() const
    {
        return std::tie(stream, transA, transB, M, N, K, lda, ldb, ldc, batch, sA, sB, sC, bias, tf32, alignment, beta, ab, c);
    }
    bool operator<(const GemmKey &o) const { return tie() < o.tie(); }
};
struct GemmPlan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
};
// The plans chosen so far, the handle they were chosen with. The lock is held for the lookup and
// the choice, never while an error is raised (fail() takes no lock of it).
struct GemmCache {
    std::mutex mutex;
    cublasLtHandle_t handle = nullptr;
    std::map<GemmKey, GemmPlan> plans;
};
GemmCache &gemmCache()
{
    static GemmCache cache;
    return cache;
}

cublasLtMatrixLayout_t layout(cudaDataType_t type, const MatrixLayout &m)
{
    cublasLtMatrixLayout_t l = nullptr;
    TRELLIS_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, type, static_cast<std::uint64_t>(m.rows),
                                                    static_cast<std::uint64_t>(m.cols), m.ld));
    if (m.batch > 1) {
        TRELLIS_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &m.batch, sizeof(m.batch)));
        const std::int64_t s = m.stride;
        TRELLIS_CUBLAS_CHECK(
            cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &s, sizeof(s)));
    }
    return l;
}

// An allocation that failed: out of memory is std::bad_alloc (the trainer's exit code 11); anything
// else (no device, no driver, a sticky fault) is the device error it is.
[[noreturn]] void allocationFailed(cudaError_t error, const char *call)
{
    cudaGetLastError();
    if (error == cudaErrorMemoryAllocation)
        throw std::bad_alloc();
    fail(__FILE__, __LINE__, call, cudaGetErrorString(error));
}

StreamResources &resourcesOf(cudaStream_t stream)
{
    std::lock_guard lock(g_streamsMutex);
    return g_streams[stream]; // node-based: the reference stays valid while other streams are added
}

// A plan for the key: cuBLASLt's descriptors and the algorithm its heuristic picks for them.
GemmPlan choosePlan(cublasLtHandle_t handle, const GemmKey &key, const GemmLayout &g, cudaDataType_t ab, cudaDataType_t c,
                    bool bias)
{
    GemmPlan plan;
    TRELLIS_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan.desc, key.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                                                  CUDA_R_32F));
    const cublasOperation_t opA = g.opA ? CUBLAS_OP_T : CUBLAS_OP_N, opB = g.opB ? CUBLAS_OP_T : CUBLAS_OP_N;
    TRELLIS_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA)));
    TRELLIS_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB)));
    if (bias) { // the bias is of C's type
        const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
        TRELLIS_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
        TRELLIS_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &c, sizeof(c)));
    }
    plan.a = layout(ab, g.a);
    plan.b = layout(ab, g.b);
    plan.c = layout(c, g.c);
    cublasLtMatmulPreference_t pref = nullptr;
    TRELLIS_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const std::uint64_t ws = kWorkspaceBytes;
    TRELLIS_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
    const std::uint32_t al = static_cast<std::uint32_t>(g.alignment);
    for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
        TRELLIS_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attr, &al, sizeof(al)));
    cublasLtMatmulHeuristicResult_t result{};
    int count = 0;
    const cublasStatus_t status =
        cublasLtMatmulAlgoGetHeuristic(handle, plan.desc, plan.a, plan.b, plan.c, plan.c, pref, 1, &result, &count);
    cublasLtMatmulPreferenceDestroy(pref);
    TRELLIS_CUBLAS_CHECK(status);
    if (count == 0) {
        const std::string why = "no algorithm for this GEMM (" + std::to_string(key.M) + "x" + std::to_string(key.N) + "x" +
                                std::to_string(key.K) + ", operands " + std::to_string(g.alignment) + "-byte aligned)";
        fail(__FILE__, __LINE__, "cublasLtMatmulAlgoGetHeuristic", why.c_str());
    }
    plan.algo = result.algo;
    return plan;
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
        std::lock_guard lock(g_contextMutex);
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
    std::lock_guard lock(g_contextMutex);
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
    std::size_t total = 0;
    {
        std::lock_guard lock(g_streamsMutex);
        for (const auto &[stream, r] : g_streams)
            total += r.scratchBytes + (r.workspace ? kWorkspaceBytes : 0);
    }
    return total + fusedAttentionWorkspaceBytes();
}

void *scratch(cudaStream_t stream, std::size_t bytes)
{
    StreamResources &r = resourcesOf(stream);
    if (bytes > r.scratchBytes) {
        if (r.scratch)
            TRELLIS_CUDA_CHECK(cudaFreeAsync(r.scratch, stream)); // after the work queued on this stream that uses it
        r.scratch = nullptr;
        r.scratchBytes = 0;
        const std::size_t rounded = (bytes + (1u << 20) - 1) / (1u << 20) * (1u << 20);
        if (const cudaError_t e = cudaMallocAsync(&r.scratch, rounded, stream); e != cudaSuccess)
            allocationFailed(e, "cudaMallocAsync (scratch)");
        r.scratchBytes = rounded;
    }
    return r.scratch;
}

void *workspace(cudaStream_t stream)
{
    StreamResources &r = resourcesOf(stream);
    if (!r.workspace)
        if (const cudaError_t e = cudaMallocAsync(&r.workspace, kWorkspaceBytes, stream); e != cudaSuccess)
            allocationFailed(e, "cudaMallocAsync (cuBLASLt workspace)");
    return r.workspace;
}

std::size_t workspaceBytes() { return kWorkspaceBytes; }

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
    // Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: cuBLASLt's "A" is our B
    // (descriptors.h, checked against a naive product in tst_cuda_descriptors). What the algorithm
    // may assume of every column's (and every batch matrix's) start is the alignment the pointers,
    // the leading dimensions and the batch strides really have, down to one element.
    const int abSize = ab == CUDA_R_16BF ? 2 : 4, cSize = c == CUDA_R_16BF ? 2 : 4;
    const GemmLayout g = gemmLayout(transA, transB, M, N, K, lda, ldb, ldc, batch, sA, sB, sC, abSize, cSize, A, B, C, bias);
    const bool tf32 = g_tf32 && ab == CUDA_R_32F;
    const GemmKey key{reinterpret_cast<std::uintptr_t>(stream), transA, transB, M, N, K, lda, ldb, ldc, batch, sA, sB, sC, bias != nullptr, tf32, g.alignment,
                      beta != 0.0f, static_cast<int>(ab), static_cast<int>(c)};
    void *ws = workspace(stream);
    GemmCache &cache = gemmCache();
    cublasLtHandle_t handle = nullptr;
    GemmPlan plan;
    {
        std::unique_lock lock(cache.mutex);
        if (!cache.handle) {
            cublasLtHandle_t created = nullptr;
            const cublasStatus_t status = cublasLtCreate(&created);
            if (status != CUBLAS_STATUS_SUCCESS) {
                lock.unlock();
                TRELLIS_CUBLAS_CHECK(status);
            }
            cache.handle = created;
        }
        handle = cache.handle;
        auto found = cache.plans.find(key);
        if (found == cache.plans.end()) {
            lock.unlock(); // choosing may fail, and fail() must not find the lock held
            GemmPlan chosen = choosePlan(handle, key, g, ab, c, bias != nullptr);
            lock.lock();
            found = cache.plans.emplace(key, chosen).first;
        }
        plan = found->second; // this stream's: only this thread sets its bias pointer
    }
    if (bias)
        TRELLIS_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
    const cublasStatus_t status = cublasLtMatmul(handle, plan.desc, &alpha, B, plan.a, A, plan.b, &beta, C, plan.c, C, plan.c,
                                                 &plan.algo, ws, kWorkspaceBytes, stream);
    TRELLIS_CUBLAS_CHECK(status);
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
    if (const cudaError_t e = cudaMalloc(&p, rounded); e != cudaSuccess)
        allocationFailed(e, "cudaMalloc");
    TRELLIS_CUDA_CHECK(cudaMemset(p, 0, rounded));
    TRELLIS_CUDA_CHECK(cudaDeviceSynchronize()); // the memset is on the legacy stream, ours is non-blocking
    return p;
}

namespace {

// The device's default memory pool, told once to keep what is freed (release threshold: all of
// it), so that freeing and allocating again never goes back to the driver.
cudaMemPool_t poolOf(int device)
{
    static std::mutex mutex;
    static std::map<int, cudaMemPool_t> pools;
    std::lock_guard lock(mutex);
    const auto it = pools.find(device);
    if (it != pools.end())
        return it->second;
    cudaMemPool_t pool = nullptr;
    TRELLIS_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
    std::uint64_t keep = UINT64_MAX;
    TRELLIS_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    pools[device] = pool;
    return pool;
}

void keepDeferred(const char *call, void *memory, cudaError_t error)
{
    std::lock_guard lock(g_deferredMutex);
    if (g_deferred.empty())
        g_deferred = std::string(call) + "(" + std::to_string(reinterpret_cast<std::uintptr_t>(memory)) + ") \u2192 " +
                     cudaGetErrorString(error);
}

} // namespace

void *poolAllocate(const Stream &s, std::size_t bytes)
{
    TRELLIS_CUDA_CHECK(cudaSetDevice(s.index));
    cudaMemPool_t pool = poolOf(s.index);
    void *p = nullptr;
    const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + 255) / 256 * 256;
    if (const cudaError_t e = cudaMallocFromPoolAsync(&p, rounded, pool, native(s)); e != cudaSuccess)
        allocationFailed(e, "cudaMallocFromPoolAsync");
    TRELLIS_CUDA_CHECK(cudaMemsetAsync(p, 0, rounded, native(s)));
    return p;
}

void poolRelease(const Stream &s, void *memory) noexcept
{
    if (!memory)
        return;
    if (const cudaError_t error = cudaFreeAsync(memory, native(s)); error != cudaSuccess)
        keepDeferred("cudaFreeAsync", memory, error);
}

PoolUse poolUse(int device)
{
    cudaMemPool_t pool = poolOf(device);
    PoolUse use;
    TRELLIS_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &use.reserved));
    TRELLIS_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &use.reservedPeak));
    TRELLIS_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &use.used));
    TRELLIS_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &use.usedPeak));
    return use;
}

void deviceRelease(void *memory) noexcept
{
    if (!memory)
        return;
    if (const cudaError_t error = cudaFree(memory); error != cudaSuccess) // after a sticky fault every free fails: the first is kept
        keepDeferred("cudaFree", memory, error);
}

void *hostAllocate(std::size_t bytes)
{
    void *p = nullptr;
    if (const cudaError_t e = cudaHostAlloc(&p, std::max<std::size_t>(bytes, 1), cudaHostAllocDefault); e != cudaSuccess)
        allocationFailed(e, "cudaHostAlloc");
    return p;
}

void hostRelease(void *memory) noexcept
{
    if (memory && cudaFreeHost(memory) != cudaSuccess) {
        std::lock_guard lock(g_deferredMutex);
        if (g_deferred.empty())
            g_deferred = std::string("cudaFreeHost \u2192 ") + cudaGetErrorString(cudaGetLastError());
    }
}

std::string takeDeferredError()
{
    std::lock_guard lock(g_deferredMutex);
    return std::exchange(g_deferred, std::string());
}

// Raises what a call that could not throw kept (deviceRelease in a destructor).
void raiseDeferred()
{
    if (const std::string deferred = takeDeferredError(); !deferred.empty())
        fail(__FILE__, __LINE__, "(an earlier cudaFree)", deferred.c_str());
}

void toHost(const Stream &s, void *host, const void *device, std::size_t bytes)
{
    raiseDeferred();
    if (!bytes)
        return;
    TRELLIS_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, native(s)));
    TRELLIS_CUDA_CHECK(cudaStreamSynchronize(native(s)));
    checkBadTokens();
}

void fromHost(const Stream &s, void *device, const void *host, std::size_t bytes)
{
    raiseDeferred();
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

void synchronize(const Stream &s)
{
    raiseDeferred();
    TRELLIS_CUDA_CHECK(cudaStreamSynchronize(native(s)));
    checkBadTokens();
}

void memoryInfo(std::size_t &freeBytes, std::size_t &totalBytes)
{
    TRELLIS_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
}

} // namespace trellis::kernels::cuda
