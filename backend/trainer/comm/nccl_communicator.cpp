// See nccl_communicator.h. Compiled only where CMake found NCCL (TRELLIS_HAVE_NCCL); checked on a
// GPU by scripts/gpu/verify.sh (the conformance suite, the parity plans), never on a CPU.
#include "backend/trainer/comm/nccl_communicator.h"

#include "backend/trainer/comm/collective_tracker.h"
#include "kernels/stream.h"

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <atomic>
#include <csignal>
#include <chrono>
#include <cstring>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>

#include <unistd.h>

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 18, 0)
#error "Trellis needs NCCL 2.18 or newer (ncclCommSplit, non-blocking communicators)"
#endif

namespace trellis::trainer {

struct NcclCommunicator::State {
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;  // this communicator's own
    cudaStream_t compute = nullptr; // the device's
    int device = 0;
};

namespace {

std::atomic<bool> g_abort{false};
std::mutex g_liveMutex;
std::set<ncclComm_t> g_live;

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string &where, const std::string &what)
{
    throw kernels::DeviceError("NCCL " + where + ": " + what);
}

void checkCuda(cudaError_t e, const char *call)
{
    if (e != cudaSuccess)
        fail(call, cudaGetErrorString(e));
}

ncclDataType_t ncclType(DataType t)
{
    switch (t) {
    case DataType::F32: return ncclFloat32;
    case DataType::F64: return ncclFloat64;
    case DataType::BF16: return ncclBfloat16;
    case DataType::F16: return ncclFloat16;
    case DataType::I32: return ncclInt32;
    case DataType::I64: return ncclInt64;
    default: break;
    }
    fail("type", std::string("no NCCL type for ") + toString(t));
}

ncclRedOp_t ncclOp(ReduceOp op)
{
    switch (op) {
    case ReduceOp::Sum: return ncclSum;
    case ReduceOp::Avg: return ncclAvg;
    case ReduceOp::Max: return ncclMax;
    case ReduceOp::Min: return ncclMin;
    }
    return ncclSum;
}

// A non-blocking communicator answers ncclInProgress while it sets itself up or enqueues: polled
// until it is ready, it fails, an abort is asked for, or the deadline passes (then aborted).
void settle(ncclComm_t comm, ncclResult_t first, const std::string &what, Clock::time_point deadline)
{
    ncclResult_t state = first;
    while (state == ncclInProgress) {
        if (g_abort || Clock::now() > deadline) {
            ncclCommAbort(comm);
            fail(what, g_abort ? "aborted (the run's supervisor ended the job)" : "did not finish in time (aborted)");
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        if (ncclCommGetAsyncError(comm, &state) != ncclSuccess)
            break;
    }
    if (state != ncclSuccess)
        fail(what, std::string(ncclGetErrorString(state)) + (comm ? std::string(" (") + ncclGetLastError(comm) + ")" : std::string()));
}

// The end of an operation queued on the communicator's stream.
class NcclHandle final : public CommHandle {
public:
    NcclHandle(NcclCommunicator &owner, cudaEvent_t start, cudaEvent_t end, const char *op, std::uint64_t call, std::uint64_t bytes)
        : m_owner(owner), m_start(start), m_end(end), m_op(op), m_call(call), m_bytes(bytes)
    {
    }
    ~NcclHandle() override
    {
        try {
            wait();
        } catch (...) { // a destructor never throws: the error reaches the next wait or sync
        }
        cudaEventDestroy(m_start);
        cudaEventDestroy(m_end);
    }
    bool test() override
    {
        if (!m_done && cudaEventQuery(m_end) == cudaSuccess)
            finish();
        return m_done;
    }
    void wait() override
    {
        if (m_done)
            return;
        m_owner.waitFor(m_end, m_op, m_call, m_bytes);
        finish();
    }

private:
    void finish()
    {
        m_done = true;
        float ms = 0;
        cudaEventElapsedTime(&ms, m_start, m_end);
        m_owner.record(m_op, m_bytes, ms);
    }
    NcclCommunicator &m_owner;
    cudaEvent_t m_start, m_end;
    const char *m_op;
    std::uint64_t m_call, m_bytes;
    bool m_done = false;
};

} // namespace

NcclCommunicator::NcclCommunicator(std::unique_ptr<State> state, Device &device, int rank, int size, std::string name)
    : m_state(std::move(state)), m_device(device), m_rank(rank), m_size(size), m_name(std::move(name))
{
    std::lock_guard lock(g_liveMutex);
    g_live.insert(m_state->comm);
}

NcclCommunicator::~NcclCommunicator()
{
    {
        std::lock_guard lock(g_liveMutex);
        g_live.erase(m_state->comm);
    }
    if (m_state->comm)
        g_abort ? ncclCommAbort(m_state->comm) : ncclCommDestroy(m_state->comm);
    if (m_state->stream)
        cudaStreamDestroy(m_state->stream);
}

void NcclCommunicator::abortAll() { g_abort = true; }

void NcclCommunicator::abortOnTerminate()
{
    static_assert(std::atomic<bool>::is_always_lock_free, "abortAll() must be async-signal-safe");
    struct sigaction action {};
    action.sa_handler = [](int) {
        g_abort = true;
        std::signal(SIGTERM, SIG_DFL); // a second SIGTERM ends the process at once
        alarm(5);
    };
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, nullptr);
}

std::unique_ptr<NcclCommunicator> NcclCommunicator::create(MpiCommunicator &group, Device &device,
                                                           std::chrono::milliseconds timeout)
{
    auto state = std::make_unique<State>();
    state->device = device.stream().index;
    state->compute = static_cast<cudaStream_t>(device.stream().handle);
    checkCuda(cudaSetDevice(state->device), "cudaSetDevice");
    ncclUniqueId id{};
    if (group.rank() == 0 && ncclGetUniqueId(&id) != ncclSuccess)
        fail("ncclGetUniqueId", "no unique id (is the network usable?)");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, group.handle());
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    const std::string what = "ncclCommInitRankConfig (" + group.name() + ", rank " + std::to_string(group.rank()) + " of " +
                             std::to_string(group.size()) + ", cuda:" + std::to_string(state->device) + ")";
    const ncclResult_t r = ncclCommInitRankConfig(&state->comm, group.size(), id, group.rank(), &config);
    settle(state->comm, r, what, Clock::now() + timeout);
    checkCuda(cudaStreamCreateWithFlags(&state->stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    return std::unique_ptr<NcclCommunicator>(new NcclCommunicator(std::move(state), device, group.rank(), group.size(), group.name()));
}

std::unique_ptr<NcclCommunicator> NcclCommunicator::split(int color, int key, const std::string &name,
                                                          std::chrono::milliseconds timeout)
{
    auto state = std::make_unique<State>();
    state->device = m_state->device;
    state->compute = m_state->compute;
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    const std::string what = "ncclCommSplit (" + m_name + " into " + name + ", rank " + std::to_string(m_rank) + ")";
    const ncclResult_t r = ncclCommSplit(m_state->comm, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &state->comm, &config);
    settle(m_state->comm, r, what, Clock::now() + timeout); // the parent reports the split's progress
    if (color < 0 || !state->comm)
        return nullptr;
    settle(state->comm, ncclInProgress, what, Clock::now() + timeout);
    int rank = 0, size = 0;
    ncclCommUserRank(state->comm, &rank);
    ncclCommCount(state->comm, &size);
    checkCuda(cudaStreamCreateWithFlags(&state->stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    return std::unique_ptr<NcclCommunicator>(new NcclCommunicator(std::move(state), m_device, rank, size, name));
}

void *NcclCommunicator::launch(const char *op, std::uint64_t bytes, const std::function<void()> &enqueue)
{
    (void)bytes;
    cudaEvent_t ready = nullptr;
    checkCuda(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), "cudaEventCreate");
    checkCuda(cudaEventRecord(ready, m_state->compute), "cudaEventRecord"); // after the compute stream's work so far
    checkCuda(cudaStreamWaitEvent(m_state->stream, ready, 0), "cudaStreamWaitEvent");
    cudaEventDestroy(ready);
    enqueue();
    (void)op;
    return nullptr;
}

std::unique_ptr<CommHandle> NcclCommunicator::handleFor(const char *op, std::uint64_t bytes, const std::function<void()> &enqueue)
{
    cudaEvent_t start = nullptr, end = nullptr;
    checkCuda(cudaEventCreate(&start), "cudaEventCreate");
    checkCuda(cudaEventCreate(&end), "cudaEventCreate");
    const std::uint64_t call = ++m_calls;
    launch(op, bytes, [&] {
        checkCuda(cudaEventRecord(start, m_state->stream), "cudaEventRecord");
        enqueue();
        checkCuda(cudaEventRecord(end, m_state->stream), "cudaEventRecord");
    });
    return std::make_unique<NcclHandle>(*this, start, end, op, call, bytes);
}

void NcclCommunicator::waitFor(void *event, const char *op, std::uint64_t call, std::uint64_t bytes)
{
    const auto begun = Clock::now();
    InsideCollective inside(m_name, op, call, bytes);
    for (;;) {
        const cudaError_t q = cudaEventQuery(static_cast<cudaEvent_t>(event));
        if (q == cudaSuccess)
            break;
        if (q != cudaErrorNotReady)
            fail(m_name + " " + op + " #" + std::to_string(call), cudaGetErrorString(q));
        ncclResult_t state = ncclSuccess;
        ncclCommGetAsyncError(m_state->comm, &state);
        if (state != ncclSuccess && state != ncclInProgress) {
            ncclCommAbort(m_state->comm);
            m_state->comm = nullptr;
            fail(m_name + " " + op + " #" + std::to_string(call) + ", rank " + std::to_string(m_rank), ncclGetErrorString(state));
        }
        if (g_abort) {
            ncclCommAbort(m_state->comm);
            m_state->comm = nullptr;
            fail(m_name + " " + op + " #" + std::to_string(call) + ", rank " + std::to_string(m_rank),
                 "aborted while waiting (the run's supervisor decided a hang)");
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    m_totalMs += std::chrono::duration<double, std::milli>(Clock::now() - begun).count();
    checkCuda(cudaStreamWaitEvent(m_state->compute, static_cast<cudaEvent_t>(event), 0), "cudaStreamWaitEvent");
}

void NcclCommunicator::record(const char *op, std::uint64_t bytes, double ms)
{
    for (auto &[name, r] : m_records)
        if (name == op) {
            r.bytes += bytes;
            r.ms += ms;
            ++r.count;
            return;
        }
    m_records.push_back({op, CollectiveRecord{op, bytes, ms, 1}});
}

std::vector<CollectiveRecord> NcclCommunicator::takeRecords()
{
    std::vector<CollectiveRecord> out;
    for (auto &[name, r] : m_records)
        out.push_back(r);
    m_records.clear();
    return out;
}

#define TRELLIS_NCCL(call, what)                                                                                   \
    do {                                                                                                           \
        const ncclResult_t trellisResult = (call);                                                                 \
        if (trellisResult != ncclSuccess && trellisResult != ncclInProgress)                                       \
            fail(m_name + " " + (what), ncclGetErrorString(trellisResult));                                        \
        settle(m_state->comm, trellisResult, m_name + " " + (what), Clock::now() + std::chrono::seconds(120));    \
    } while (0)

std::unique_ptr<CommHandle> NcclCommunicator::allReduceAsync(const void *send, void *recv, std::size_t count, DataType type,
                                                             ReduceOp op)
{
    return handleFor("all_reduce", count * sizeOf(type), [&] {
        TRELLIS_NCCL(ncclAllReduce(send, recv, count, ncclType(type), ncclOp(op), m_state->comm, m_state->stream), "all_reduce");
    });
}

std::unique_ptr<CommHandle> NcclCommunicator::reduceScatterAsync(const void *send, void *recv, std::size_t recvCount,
                                                                 DataType type, ReduceOp op)
{
    return handleFor("reduce_scatter", recvCount * sizeOf(type) * static_cast<std::size_t>(m_size), [&] {
        TRELLIS_NCCL(ncclReduceScatter(send, recv, recvCount, ncclType(type), ncclOp(op), m_state->comm, m_state->stream),
                     "reduce_scatter");
    });
}

std::unique_ptr<CommHandle> NcclCommunicator::allGatherAsync(const void *send, void *recv, std::size_t sendCount, DataType type)
{
    return handleFor("all_gather", sendCount * sizeOf(type) * static_cast<std::size_t>(m_size), [&] {
        TRELLIS_NCCL(ncclAllGather(send, recv, sendCount, ncclType(type), m_state->comm, m_state->stream), "all_gather");
    });
}

std::unique_ptr<CommHandle> NcclCommunicator::sendAsync(const void *data, std::size_t count, DataType type, int peer, int)
{
    return handleFor("send", count * sizeOf(type), [&] {
        TRELLIS_NCCL(ncclSend(data, count, ncclType(type), peer, m_state->comm, m_state->stream), "send");
    });
}

std::unique_ptr<CommHandle> NcclCommunicator::recvAsync(void *data, std::size_t count, DataType type, int peer, int)
{
    return handleFor("recv", count * sizeOf(type), [&] {
        TRELLIS_NCCL(ncclRecv(data, count, ncclType(type), peer, m_state->comm, m_state->stream), "recv");
    });
}

void NcclCommunicator::allReduce(const void *send, void *recv, std::size_t count, DataType type, ReduceOp op)
{
    allReduceAsync(send, recv, count, type, op)->wait();
}

void NcclCommunicator::reduceScatter(const void *send, void *recv, std::size_t recvCount, DataType type, ReduceOp op)
{
    reduceScatterAsync(send, recv, recvCount, type, op)->wait();
}

void NcclCommunicator::allGather(const void *send, void *recv, std::size_t sendCount, DataType type)
{
    allGatherAsync(send, recv, sendCount, type)->wait();
}

void NcclCommunicator::broadcast(void *data, std::size_t count, DataType type, int root)
{
    handleFor("broadcast", count * sizeOf(type), [&] {
        TRELLIS_NCCL(ncclBroadcast(data, data, count, ncclType(type), root, m_state->comm, m_state->stream), "broadcast");
    })->wait();
}

void NcclCommunicator::allToAll(const void *send, void *recv, std::size_t countPerRank, DataType type)
{
    const std::vector<std::size_t> counts(static_cast<std::size_t>(m_size), countPerRank);
    allToAllV(send, counts, recv, counts, type);
}

void NcclCommunicator::allToAllV(const void *send, const std::vector<std::size_t> &sendCounts, void *recv,
                                 const std::vector<std::size_t> &recvCounts, DataType type)
{
    const std::size_t element = sizeOf(type);
    const std::size_t total = std::accumulate(sendCounts.begin(), sendCounts.end(), std::size_t(0));
    handleFor("all_to_all", total * element, [&] {
        TRELLIS_NCCL(ncclGroupStart(), "all_to_all");
        std::size_t sendAt = 0, recvAt = 0;
        for (int peer = 0; peer < m_size; ++peer) {
            const auto p = static_cast<std::size_t>(peer);
            TRELLIS_NCCL(ncclSend(static_cast<const char *>(send) + sendAt * element, sendCounts[p], ncclType(type), peer,
                                  m_state->comm, m_state->stream),
                         "all_to_all send");
            TRELLIS_NCCL(ncclRecv(static_cast<char *>(recv) + recvAt * element, recvCounts[p], ncclType(type), peer, m_state->comm,
                                  m_state->stream),
                         "all_to_all recv");
            sendAt += sendCounts[p];
            recvAt += recvCounts[p];
        }
        TRELLIS_NCCL(ncclGroupEnd(), "all_to_all");
    })->wait();
}

void NcclCommunicator::send(const void *data, std::size_t count, DataType type, int peer, int tag)
{
    sendAsync(data, count, type, peer, tag)->wait();
}

void NcclCommunicator::recv(void *data, std::size_t count, DataType type, int peer, int tag)
{
    recvAsync(data, count, type, peer, tag)->wait();
}

void NcclCommunicator::barrier()
{
    // NCCL has no barrier: an all-reduce of one element does the same on the devices' streams.
    void *one = m_device.allocate(sizeof(float));
    allReduce(one, one, 1, DataType::F32, ReduceOp::Sum);
    m_device.release(one, sizeof(float));
}

} // namespace trellis::trainer
