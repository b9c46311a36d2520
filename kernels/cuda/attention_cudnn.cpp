// Fused causal (grouped-query) attention through cuDNN's scaled-dot-product attention, built with
// cuDNN's C++ front end (header-only; scripts/install-deps.sh fetches a pinned release). q, k and
// v are read in place from the qkv rows and the output is written in place into [B,T,C] rows:
// strided tensor views, no head-major copies. The forward keeps each row's log-sum-exp (fp32) for
// the backward, which uses cuDNN's deterministic algorithm (bitwise the same every run, so resumed
// runs and parity checks hold). Graphs are built once per shape and cached; each has its
// workspace in one buffer that grows (scratchBytes counts it).
// Host code only (compiled by the C++ compiler); the kernels are cuDNN's.
#include "kernels/cuda/cuda_ops.h"
#include "kernels/stream.h"

#include <cuda_runtime.h>

#if defined(TRELLIS_HAVE_CUDNN)
#include <cudnn_frontend.h>
#include <dlfcn.h>

// The front end's dynamic loading calls cuDNN through this handle (loadCudnn opens it).
namespace cudnn_frontend {
void *cudnn_dlhandle = nullptr;
}
#endif

#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>

namespace trellis::kernels::cuda {

[[noreturn]] void fail(const char *file, int line, const char *call, const char *error); // device_state.cu

#if defined(TRELLIS_HAVE_CUDNN)

namespace {

namespace fe = cudnn_frontend;

enum Uid : std::int64_t { kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV };

struct Key {
    bool backward;
    int device, B, T, NH, KVH, hs;
    auto tie() const { return std::tie(backward, device, B, T, NH, KVH, hs); }
    bool operator<(const Key &o) const { return tie() < o.tie(); }
};

struct State {
    std::mutex mutex;
    std::map<int, cudnnHandle_t> handles; // per device
    std::map<Key, std::shared_ptr<fe::graph::Graph>> graphs;
    void *workspace = nullptr;
    std::size_t workspaceBytes = 0;
};
State &state()
{
    static State s;
    return s;
}

std::string shapeOf(const Key &k)
{
    return std::string(k.backward ? "backward" : "forward") + " B " + std::to_string(k.B) + " T " +
           std::to_string(k.T) + " heads " + std::to_string(k.NH) + " kv heads " + std::to_string(k.KVH) +
           " head size " + std::to_string(k.hs);
}

// Opens libcudnn.so.9 once (the loader's search path: LD_LIBRARY_PATH, the system's).
void loadCudnn()
{
    if (fe::cudnn_dlhandle)
        return;
    fe::cudnn_dlhandle = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_GLOBAL);
    if (!fe::cudnn_dlhandle) {
        const char *why = dlerror();
        const std::string what = std::string("cuDNN 9 is needed for bf16 attention on GPUs: ") + (why ? why : "not found");
        fail(__FILE__, __LINE__, "dlopen(libcudnn.so.9)", what.c_str());
    }
}

void check(fe::error_t status, const char *call, const Key &k)
{
    if (status.is_bad()) {
        const std::string why = status.get_message() + " (cuDNN SDPA " + shapeOf(k) + ", cuDNN " +
                                std::to_string(fe::detail::get_backend_version()) + ")";
        fail(__FILE__, __LINE__, call, why.c_str());
    }
}

void checkCudnn(cudnnStatus_t status, const char *call)
{
    if (status != CUDNN_STATUS_SUCCESS)
        fail(__FILE__, __LINE__, call, fe::detail::get_error_string(status));
}

cudnnHandle_t handleFor(State &s, int device)
{
    auto &h = s.handles[device];
    if (!h)
        checkCudnn(fe::detail::create_handle(&h), "cudnnCreate");
    return h;
}

// A [B, heads, T, hs] view of rows of `rowStride` elements (head h at column h·hs).
std::shared_ptr<fe::graph::Tensor_attributes> view(fe::graph::Graph &g, const char *name, std::int64_t uid,
                                                   const Key &k, int heads, std::int64_t rowStride)
{
    return g.tensor(fe::graph::Tensor_attributes()
                        .set_name(name)
                        .set_uid(uid)
                        .set_dim({k.B, heads, k.T, k.hs})
                        .set_stride({static_cast<std::int64_t>(k.T) * rowStride, k.hs, rowStride, 1}));
}

std::shared_ptr<fe::graph::Graph> build(const Key &k, cudnnHandle_t handle)
{
    auto g = std::make_shared<fe::graph::Graph>();
    g->set_io_data_type(fe::DataType_t::BFLOAT16)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    const std::int64_t C = static_cast<std::int64_t>(k.NH) * k.hs, ld = C + 2LL * k.KVH * k.hs;
    const float scale = 1.0f / std::sqrt(static_cast<float>(k.hs));
    auto q = view(*g, "Q", kQ, k, k.NH, ld);
    auto kk = view(*g, "K", kK, k, k.KVH, ld);
    auto v = view(*g, "V", kV, k, k.KVH, ld);
    const std::vector<std::int64_t> statsDim{k.B, k.NH, k.T, 1};
    const std::vector<std::int64_t> statsStride{static_cast<std::int64_t>(k.NH) * k.T, k.T, 1, 1};
    if (!k.backward) {
        auto options = fe::graph::SDPA_attributes()
                           .set_name("attention")
                           .set_generate_stats(true)
                           .set_causal_mask(true)
                           .set_attn_scale(scale);
        auto [o, stats] = g->sdpa(q, kk, v, options);
        o->set_output(true)
            .set_uid(kO)
            .set_dim({k.B, k.NH, k.T, k.hs})
            .set_stride({static_cast<std::int64_t>(k.T) * C, k.hs, C, 1});
        stats->set_output(true).set_uid(kStats).set_data_type(fe::DataType_t::FLOAT).set_dim(statsDim).set_stride(
            statsStride);
    } else {
        auto o = view(*g, "O", kO, k, k.NH, C);
        auto dO = view(*g, "dO", kDO, k, k.NH, C);
        auto stats = g->tensor(fe::graph::Tensor_attributes()
                                   .set_name("Stats")
                                   .set_uid(kStats)
                                   .set_dim(statsDim)
                                   .set_stride(statsStride)
                                   .set_data_type(fe::DataType_t::FLOAT));
        auto options = fe::graph::SDPA_backward_attributes()
                           .set_name("attention_backward")
                           .set_causal_mask(true)
                           .set_attn_scale(scale)
                           .set_deterministic_algorithm(true);
        auto [dq, dk, dv] = g->sdpa_backward(q, kk, v, o, dO, stats, options);
        auto rows = [&](std::shared_ptr<fe::graph::Tensor_attributes> &t, std::int64_t uid, int heads) {
            t->set_output(true)
                .set_uid(uid)
                .set_dim({k.B, heads, k.T, k.hs})
                .set_stride({static_cast<std::int64_t>(k.T) * ld, k.hs, ld, 1});
        };
        rows(dq, kDQ, k.NH);
        rows(dk, kDK, k.KVH);
        rows(dv, kDV, k.KVH);
    }
    check(g->validate(), "validate", k);
    check(g->build_operation_graph(handle), "build_operation_graph", k);
    check(g->create_execution_plans({fe::HeurMode_t::A}), "create_execution_plans", k);
    check(g->check_support(handle), "check_support", k);
    check(g->build_plans(handle), "build_plans", k);
    return g;
}

void run(const Stream &s, const Key &k, std::unordered_map<std::int64_t, void *> &pointers)
{
    if (k.hs % 8 != 0 || k.NH % k.KVH != 0) {
        const std::string why = "head size must be a multiple of 8 and the heads a multiple of the kv heads (" +
                                shapeOf(k) + ")";
        fail(__FILE__, __LINE__, "cuDNN SDPA", why.c_str());
    }
    State &st = state();
    std::lock_guard lock(st.mutex);
    loadCudnn();
    cudnnHandle_t handle = handleFor(st, k.device);
    checkCudnn(fe::detail::set_stream(handle, static_cast<cudaStream_t>(s.handle)), "cudnnSetStream");
    auto &graph = st.graphs[k];
    if (!graph)
        graph = build(k, handle);
    std::int64_t bytes = 0;
    check(graph->get_workspace_size(bytes), "get_workspace_size", k);
    if (static_cast<std::size_t>(bytes) > st.workspaceBytes) {
        if (st.workspace && cudaFree(st.workspace) != cudaSuccess) // waits for work that may still use it
            fail(__FILE__, __LINE__, "cudaFree", cudaGetErrorString(cudaGetLastError()));
        st.workspace = nullptr;
        st.workspaceBytes = 0;
        if (cudaMalloc(&st.workspace, static_cast<std::size_t>(bytes)) != cudaSuccess) {
            cudaGetLastError();
            throw std::bad_alloc();
        }
        st.workspaceBytes = static_cast<std::size_t>(bytes);
    }
    check(graph->execute(handle, pointers, st.workspace), "execute", k);
}

Key keyOf(const Stream &s, bool backward, int B, int T, int C, int NH, int KVH)
{
    return Key{backward, s.index, B, T, NH, KVH, C / NH};
}

} // namespace

bool fusedAttentionBuilt() { return true; }

std::size_t fusedAttentionWorkspaceBytes()
{
    State &st = state();
    std::lock_guard lock(st.mutex);
    return st.workspaceBytes;
}

void flashAttentionForward(const Stream &s, bf16 *out, float *lse, const bf16 *qkv, int B, int T, int C, int NH,
                           int KVH)
{
    if (B <= 0 || T <= 0)
        return;
    const Key k = keyOf(s, false, B, T, C, NH, KVH);
    bf16 *base = const_cast<bf16 *>(qkv);
    std::unordered_map<std::int64_t, void *> pointers{{kQ, base},
                                                      {kK, base + C},
                                                      {kV, base + C + static_cast<std::int64_t>(KVH) * (C / NH)},
                                                      {kO, out},
                                                      {kStats, lse}};
    run(s, k, pointers);
}

void flashAttentionBackward(const Stream &s, bf16 *dqkv, const bf16 *dOut, const bf16 *out, const bf16 *qkv,
                            const float *lse, int B, int T, int C, int NH, int KVH)
{
    if (B <= 0 || T <= 0)
        return;
    const Key k = keyOf(s, true, B, T, C, NH, KVH);
    const std::int64_t kvAt = C + static_cast<std::int64_t>(KVH) * (C / NH);
    bf16 *base = const_cast<bf16 *>(qkv);
    std::unordered_map<std::int64_t, void *> pointers{
        {kQ, base},          {kK, base + C},        {kV, base + kvAt},           {kO, const_cast<bf16 *>(out)},
        {kDO, const_cast<bf16 *>(dOut)}, {kStats, const_cast<float *>(lse)}, {kDQ, dqkv}, {kDK, dqkv + C},
        {kDV, dqkv + kvAt}};
    run(s, k, pointers);
}

#else // no cuDNN front end in this build

bool fusedAttentionBuilt() { return false; }
std::size_t fusedAttentionWorkspaceBytes() { return 0; }

void flashAttentionForward(const Stream &, bf16 *, float *, const bf16 *, int, int, int, int, int)
{
    fail(__FILE__, __LINE__, "flashAttentionForward",
         "this build has no cuDNN front end (scripts/install-deps.sh fetches it; reconfigure)");
}

void flashAttentionBackward(const Stream &, bf16 *, const bf16 *, const bf16 *, const bf16 *, const float *, int, int,
                            int, int, int)
{
    fail(__FILE__, __LINE__, "flashAttentionBackward",
         "this build has no cuDNN front end (scripts/install-deps.sh fetches it; reconfigure)");
}

#endif

} // namespace trellis::kernels::cuda
