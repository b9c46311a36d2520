// Fused causal (grouped-query) attention through cuDNN's scaled-dot-product attention, built with
// cuDNN's C++ front end (header-only; scripts/install-deps.sh fetches a pinned release). q, k and
// v are read in place from the qkv rows and the output is written in place into [B,T,C] rows:
// strided tensor views, no head-major copies. The forward keeps each row's log-sum-exp (fp32) for
// the backward, which uses cuDNN's deterministic algorithm (bitwise the same every run, so resumed
// runs and parity checks hold). Graphs are built once per shape and cached; each has its
// workspace in a buffer of the stream it runs on, which grows (scratchBytes counts it). A graph is
// keyed on everything it was built for: the shape, the device and direction, and the alignment of
// the tensors' addresses (an engine chosen for 16-byte aligned rows may not run on others).
// The views of q, k, v, o in the packed rows are descriptors.h's (checked on the CPU).
// Host code only (compiled by the C++ compiler); the kernels are cuDNN's.
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/descriptors.h"
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

#include <algorithm>
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
    int alignment; // bytes: what every tensor's address is a multiple of
    auto tie() const { return std::tie(backward, device, B, T, NH, KVH, hs, alignment); }
    bool operator<(const Key &o) const { return tie() < o.tie(); }
};

struct Workspace {
    void *memory = nullptr;
    std::size_t bytes = 0;
};

struct State {
    std::mutex mutex;
    std::map<int, cudnnHandle_t> handles; // per device
    std::map<Key, std::shared_ptr<fe::graph::Graph>> graphs;
    std::map<cudaStream_t, Workspace> workspaces; // per stream: streams never share one
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
           " head size " + std::to_string(k.hs) + ", tensors " + std::to_string(k.alignment) + "-byte aligned";
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

std::vector<std::int64_t> dims(const TensorView &v) { return {v.dim[0], v.dim[1], v.dim[2], v.dim[3]}; }
std::vector<std::int64_t> strides(const TensorView &v) { return {v.stride[0], v.stride[1], v.stride[2], v.stride[3]}; }

// A view of the packed rows (descriptors.h) as a graph input.
std::shared_ptr<fe::graph::Tensor_attributes> view(fe::graph::Graph &g, const char *name, std::int64_t uid, const TensorView &v)
{
    return g.tensor(fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(dims(v)).set_stride(strides(v)));
}

std::shared_ptr<fe::graph::Graph> build(const Key &k, cudnnHandle_t handle)
{
    auto g = std::make_shared<fe::graph::Graph>();
    g->set_io_data_type(fe::DataType_t::BFLOAT16)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    const AttentionLayout l = attentionLayout(k.B, k.T, k.NH * k.hs, k.NH, k.KVH);
    const float scale = 1.0f / std::sqrt(static_cast<float>(k.hs));
    auto q = view(*g, "Q", kQ, l.q);
    auto kk = view(*g, "K", kK, l.k);
    auto v = view(*g, "V", kV, l.v);
    const std::vector<std::int64_t> statsDim = dims(l.stats), statsStride = strides(l.stats);
    if (!k.backward) {
        auto options = fe::graph::SDPA_attributes()
                           .set_name("attention")
                           .set_generate_stats(true)
                           .set_causal_mask(true)
                           .set_attn_scale(scale);
        auto [o, stats] = g->sdpa(q, kk, v, options);
        o->set_output(true).set_uid(kO).set_dim(dims(l.o)).set_stride(strides(l.o));
        stats->set_output(true).set_uid(kStats).set_data_type(fe::DataType_t::FLOAT).set_dim(statsDim).set_stride(
            statsStride);
    } else {
        auto o = view(*g, "O", kO, l.o);
        auto dO = view(*g, "dO", kDO, l.o);
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
        auto rows = [&](std::shared_ptr<fe::graph::Tensor_attributes> &t, std::int64_t uid, const TensorView &like) {
            t->set_output(true).set_uid(uid).set_dim(dims(like)).set_stride(strides(like)); // dqkv: the rows of qkv
        };
        rows(dq, kDQ, l.q);
        rows(dk, kDK, l.k);
        rows(dv, kDV, l.v);
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
    const cudaStream_t stream = static_cast<cudaStream_t>(s.handle);
    Workspace &w = st.workspaces[stream];
    if (static_cast<std::size_t>(bytes) > w.bytes) { // stream-ordered: after this stream's work that uses it
        if (w.memory && cudaFreeAsync(w.memory, stream) != cudaSuccess)
            fail(__FILE__, __LINE__, "cudaFreeAsync", cudaGetErrorString(cudaGetLastError()));
        w.memory = nullptr;
        w.bytes = 0;
        if (const cudaError_t e = cudaMallocAsync(&w.memory, static_cast<std::size_t>(bytes), stream); e != cudaSuccess) {
            cudaGetLastError();
            if (e == cudaErrorMemoryAllocation)
                throw std::bad_alloc();
            fail(__FILE__, __LINE__, "cudaMallocAsync (cuDNN workspace)", cudaGetErrorString(e));
        }
        w.bytes = static_cast<std::size_t>(bytes);
    }
    check(graph->execute(handle, pointers, w.memory), "execute", k);
}

Key keyOf(const Stream &s, bool backward, int B, int T, int C, int NH, int KVH,
          const std::unordered_map<std::int64_t, void *> &pointers)
{
    int alignment = 256;
    for (const auto &[uid, p] : pointers)
        alignment = std::min(alignment, alignmentOf(reinterpret_cast<std::uintptr_t>(p), uid == kStats ? 4 : 2));
    return Key{backward, s.index, B, T, NH, KVH, C / NH, alignment};
}

} // namespace

bool fusedAttentionBuilt() { return true; }

std::size_t fusedAttentionWorkspaceBytes()
{
    State &st = state();
    std::lock_guard lock(st.mutex);
    std::size_t total = 0;
    for (const auto &[stream, w] : st.workspaces)
        total += w.bytes;
    return total;
}

void flashAttentionForward(const Stream &s, bf16 *out, float *lse, const bf16 *qkv, int B, int T, int C, int NH,
                           int KVH)
{
    if (B <= 0 || T <= 0)
        return;
    const AttentionLayout l = attentionLayout(B, T, C, NH, KVH);
    bf16 *base = const_cast<bf16 *>(qkv);
    std::unordered_map<std::int64_t, void *> pointers{
        {kQ, base + l.q.offset}, {kK, base + l.k.offset}, {kV, base + l.v.offset}, {kO, out}, {kStats, lse}};
    run(s, keyOf(s, false, B, T, C, NH, KVH, pointers), pointers);
}

void flashAttentionBackward(const Stream &s, bf16 *dqkv, const bf16 *dOut, const bf16 *out, const bf16 *qkv,
                            const float *lse, int B, int T, int C, int NH, int KVH)
{
    if (B <= 0 || T <= 0)
        return;
    const AttentionLayout l = attentionLayout(B, T, C, NH, KVH);
    bf16 *base = const_cast<bf16 *>(qkv);
    std::unordered_map<std::int64_t, void *> pointers{
        {kQ, base + l.q.offset},         {kK, base + l.k.offset},           {kV, base + l.v.offset},
        {kO, const_cast<bf16 *>(out)},   {kDO, const_cast<bf16 *>(dOut)},   {kStats, const_cast<float *>(lse)},
        {kDQ, dqkv + l.q.offset},        {kDK, dqkv + l.k.offset},          {kDV, dqkv + l.v.offset}};
    run(s, keyOf(s, true, B, T, C, NH, KVH, pointers), pointers);
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
