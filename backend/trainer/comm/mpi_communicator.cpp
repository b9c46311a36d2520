// MPI communicator; see mpi_communicator.h.
#include "backend/trainer/comm/mpi_communicator.h"

#include "backend/protocol/exit_codes.h"
#include "backend/trainer/comm/collective_tracker.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <stdexcept>
#include <type_traits>

namespace trellis::trainer {
namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

MPI_Datatype mpiType(DataType t)
{
    switch (t) {
    case DataType::F32: return MPI_FLOAT;
    case DataType::F64: return MPI_DOUBLE;
    case DataType::I32: return MPI_INT32_T;
    case DataType::I64: return MPI_INT64_T;
    case DataType::BF16:
    case DataType::F16: return MPI_UINT16_T; // reduced by the user operations below
    }
    return MPI_BYTE;
}

// The 16-bit floating-point reductions: every element added (or compared) in fp32 and rounded back.
template <typename H, int Kind> // Kind: 0 sum, 1 max, 2 min
void reduce16(void *in, void *inout, int *len, MPI_Datatype *)
{
    const auto *a = static_cast<const H *>(in);
    auto *b = static_cast<H *>(inout);
    for (int i = 0; i < *len; ++i) {
        const float x = static_cast<float>(a[i]), y = static_cast<float>(b[i]);
        const float r = Kind == 0 ? x + y : Kind == 1 ? (x > y || x != x ? x : y) : (x < y || x != x ? x : y);
        b[i] = H(r);
    }
}

MPI_Op makeOp(MPI_User_function *f)
{
    MPI_Op op;
    TRELLIS_MPI_CHECK(MPI_Op_create(f, 1, &op));
    return op; // lives until MPI_Finalize frees it
}

MPI_Op mpiOp(DataType t, ReduceOp op)
{
    const int kind = op == ReduceOp::Max ? 1 : op == ReduceOp::Min ? 2 : 0;
    if (t == DataType::BF16) {
        static const MPI_Op ops[3] = {makeOp(reduce16<kernels::bf16, 0>), makeOp(reduce16<kernels::bf16, 1>),
                                      makeOp(reduce16<kernels::bf16, 2>)};
        return ops[kind];
    }
    if (t == DataType::F16) {
        static const MPI_Op ops[3] = {makeOp(reduce16<kernels::f16, 0>), makeOp(reduce16<kernels::f16, 1>),
                                      makeOp(reduce16<kernels::f16, 2>)};
        return ops[kind];
    }
    return kind == 1 ? MPI_MAX : kind == 2 ? MPI_MIN : MPI_SUM;
}

template <typename T>
void divideAs(void *data, std::size_t count, int n)
{
    auto *p = static_cast<T *>(data);
    if constexpr (std::is_integral_v<T>) {
        for (std::size_t i = 0; i < count; ++i)
            p[i] /= n;
    } else {
        using A = kernels::acc_t<T>;
        const A s = A(1) / static_cast<A>(n);
        for (std::size_t i = 0; i < count; ++i)
            p[i] = kernels::convertTo<T>(kernels::convertTo<A>(p[i]) * s);
    }
}

// Divides count elements by n in place (ReduceOp::Avg; MPI only sums).
void divide(void *data, std::size_t count, DataType t, int n)
{
    if (n <= 1)
        return;
    switch (t) {
    case DataType::F32: divideAs<float>(data, count, n); break;
    case DataType::F64: divideAs<double>(data, count, n); break;
    case DataType::I32: divideAs<std::int32_t>(data, count, n); break;
    case DataType::I64: divideAs<std::int64_t>(data, count, n); break;
    case DataType::BF16: divideAs<kernels::bf16>(data, count, n); break;
    case DataType::F16: divideAs<kernels::f16>(data, count, n); break;
    }
}

int checkedCount(std::size_t count)
{
    if (count > static_cast<std::size_t>(INT_MAX))
        throw std::length_error("MPI operation on more than INT_MAX elements in one call");
    return static_cast<int>(count);
}

// Waits for the requests without keeping a core busy once a peer is late. For the first
// kSpinFor, test as fast as MPI allows (a collective whose members are all there completes within
// it, at full speed); past that a peer is late — a slow or stalled rank, a straggler — and the wait
// polls with a sleep that grows to kMaxNap, leaving the cores to whoever computes (the late rank
// itself, on an oversubscribed node; other jobs). Open MPI's own blocking wait spins (yielding at
// best) for as long as it waits: a rank held up for a stalled peer burns a core doing nothing. The
// cost: a request that completes during a nap is seen up to kMaxNap later.
void politeWaitAll(std::vector<MPI_Request> &requests)
{
    constexpr auto kSpinFor = std::chrono::milliseconds(20);
    constexpr auto kMaxNap = std::chrono::microseconds(100);
    const auto start = Clock::now();
    auto nap = std::chrono::microseconds(10);
    for (;;) {
        int done = 0;
        TRELLIS_MPI_CHECK(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE));
        if (done)
            return;
        if (Clock::now() - start < kSpinFor)
            continue;
        const timespec ts{0, static_cast<long>(std::chrono::nanoseconds(nap).count())};
        nanosleep(&ts, nullptr);
        nap = std::min(nap * 2, kMaxNap);
    }
}

class MpiHandle final : public CommHandle {
public:
    MpiHandle(MpiCommunicator &comm, const char *op, std::uint64_t bytes, std::vector<MPI_Request> requests)
        : m_comm(comm), m_op(op), m_bytes(bytes), m_call(comm.nextCall()), m_requests(std::move(requests)),
          m_start(Clock::now())
    {
    }
    ~MpiHandle() override
    {
        if (!m_done)
            wait();
    }
    // Work to do once the requests complete (averaging, copying out of a staging buffer).
    void setCompletion(std::function<void()> f) { m_completion = std::move(f); }
    void keep(std::vector<char> staging) { m_staging = std::move(staging); }

    bool test() override
    {
        if (m_done)
            return true;
        int flag = 0;
        TRELLIS_MPI_CHECK(MPI_Testall(static_cast<int>(m_requests.size()), m_requests.data(), &flag, MPI_STATUSES_IGNORE));
        if (flag)
            finish();
        return m_done;
    }
    void wait() override
    {
        if (m_done)
            return;
        const auto start = Clock::now();
        {
            const InsideCollective inside(m_comm.name(), m_op, m_call, m_bytes);
            politeWaitAll(m_requests);
        }
        m_comm.addWaitMs(msSince(start));
        finish();
    }

private:
    void finish()
    {
        m_done = true;
        if (m_completion)
            m_completion();
        m_comm.record(m_op, m_bytes, msSince(m_start));
    }

    MpiCommunicator &m_comm;
    const char *m_op;
    std::uint64_t m_bytes;
    std::uint64_t m_call;
    std::vector<MPI_Request> m_requests;
    Clock::time_point m_start;
    std::function<void()> m_completion;
    std::vector<char> m_staging;
    bool m_done = false;
};

} // namespace

double busBandwidthFactor(const std::string &op, int n)
{
    if (n <= 1)
        return 1.0;
    if (op == "all_reduce")
        return 2.0 * (n - 1) / n;
    if (op == "reduce_scatter" || op == "all_gather" || op == "all_to_all")
        return static_cast<double>(n - 1) / n;
    return 1.0; // broadcast, send/recv
}

void mpiFail(int code, const char *call, const char *file, int line)
{
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(code, text, &length);
    std::fprintf(stderr, "%s rank %d %s:%d %s -> %s\n", host, rank, file, line, call, text);
    MPI_Abort(MPI_COMM_WORLD, proto::kExitMpiError);
    std::_Exit(proto::kExitMpiError);
}

MpiCommunicator::MpiCommunicator(MPI_Comm comm, std::string name, bool owned)
    : m_comm(comm), m_name(std::move(name)), m_owned(owned)
{
    MPI_Comm_set_errhandler(m_comm, MPI_ERRORS_RETURN);
    TRELLIS_MPI_CHECK(MPI_Comm_rank(m_comm, &m_rank));
    TRELLIS_MPI_CHECK(MPI_Comm_size(m_comm, &m_size));
}

MpiCommunicator::~MpiCommunicator()
{
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (m_owned && !finalized)
        MPI_Comm_free(&m_comm);
}

void MpiCommunicator::allReduce(const void *send, void *recv, std::size_t count, DataType type, ReduceOp op)
{
    const auto start = Clock::now();
    const InsideCollective inside(m_name, "all_reduce", nextCall(), count * sizeOf(type));
    const std::size_t elem = sizeOf(type);
    std::size_t done = 0;
    if (send != recv && count > 0)
        std::memcpy(recv, send, count * elem);
    while (done < count) {
        const int chunk = static_cast<int>(std::min<std::size_t>(count - done, INT_MAX));
        TRELLIS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, static_cast<char *>(recv) + done * elem, chunk, mpiType(type),
                                        mpiOp(type, op), m_comm));
        done += static_cast<std::size_t>(chunk);
    }
    if (op == ReduceOp::Avg)
        divide(recv, count, type, m_size);
    const double ms = msSince(start);
    m_totalMs += ms;
    record("all_reduce", count * elem, ms);
}

void MpiCommunicator::reduceScatter(const void *send, void *recv, std::size_t recvCount, DataType type, ReduceOp op)
{
    const auto start = Clock::now();
    const InsideCollective inside(m_name, "reduce_scatter", nextCall(), recvCount * sizeOf(type) * static_cast<std::size_t>(m_size));
    const std::size_t elem = sizeOf(type);
    const int n = checkedCount(recvCount);
    if (send == recv) {
        // In place: the full input is in the buffer; rank r's block ends up at offset r.
        std::vector<char> staging(recvCount * elem);
        TRELLIS_MPI_CHECK(MPI_Reduce_scatter_block(send, staging.data(), n, mpiType(type), mpiOp(type, op), m_comm));
        std::memcpy(static_cast<char *>(recv) + static_cast<std::size_t>(m_rank) * recvCount * elem, staging.data(),
                    staging.size());
        if (op == ReduceOp::Avg)
            divide(static_cast<char *>(recv) + static_cast<std::size_t>(m_rank) * recvCount * elem, recvCount, type, m_size);
    } else {
        TRELLIS_MPI_CHECK(MPI_Reduce_scatter_block(send, recv, n, mpiType(type), mpiOp(type, op), m_comm));
        if (op == ReduceOp::Avg)
            divide(recv, recvCount, type, m_size);
    }
    const double ms = msSince(start);
    m_totalMs += ms;
    record("reduce_scatter", recvCount * elem * static_cast<std::size_t>(m_size), ms);
}

void MpiCommunicator::allGather(const void *send, void *recv, std::size_t sendCount, DataType type)
{
    const auto start = Clock::now();
    const InsideCollective inside(m_name, "all_gather", nextCall(), sendCount * sizeOf(type) * static_cast<std::size_t>(m_size));
    const std::size_t elem = sizeOf(type);
    const int n = checkedCount(sendCount);
    // In place when send already sits at this rank's block of recv (NCCL's convention).
    const bool inPlace = send == static_cast<const char *>(recv) + static_cast<std::size_t>(m_rank) * sendCount * elem;
    TRELLIS_MPI_CHECK(MPI_Allgather(inPlace ? MPI_IN_PLACE : send, n, mpiType(type), recv, n, mpiType(type), m_comm));
    const double ms = msSince(start);
    m_totalMs += ms;
    record("all_gather", sendCount * elem * static_cast<std::size_t>(m_size), ms);
}

void MpiCommunicator::broadcast(void *data, std::size_t count, DataType type, int root)
{
    const auto start = Clock::now();
    const InsideCollective inside(m_name, "broadcast", nextCall(), count * sizeOf(type));
    const std::size_t elem = sizeOf(type);
    std::size_t done = 0;
    while (done < count) {
        const int chunk = static_cast<int>(std::min<std::size_t>(count - done, INT_MAX));
        TRELLIS_MPI_CHECK(MPI_Bcast(static_cast<char *>(data) + done * elem, chunk, mpiType(type), root, m_comm));
        done += static_cast<std::size_t>(chunk);
    }
    const double ms = msSince(start);
    m_totalMs += ms;
    record("broadcast", count * elem, ms);
}

void MpiCommunicator::allToAll(const void *send, void *recv, std::size_t countPerRank, DataType type)
{
    const auto start = Clock::now();
    const InsideCollective inside(m_name, "all_to_all", nextCall(), countPerRank * sizeOf(type) * static_cast<std::size_t>(m_size));
    const std::size_t elem = sizeOf(type);
    const int n = checkedCount(countPerRank);
    if (send == recv)
        TRELLIS_MPI_CHECK(MPI_Alltoall(MPI_IN_PLACE, n, mpiType(type), recv, n, mpiType(type), m_comm));
    else
        TRELLIS_MPI_CHECK(MPI_Alltoall(send, n, mpiType(type), recv, n, mpiType(type), m_comm));
    const double ms = msSince(start);
    m_totalMs += ms;
    record("all_to_all", countPerRank * elem * static_cast<std::size_t>(m_size), ms);
}

void MpiCommunicator::allToAllV(const void *send, const std::vector<std::size_t> &sendCounts, void *recv,
                                const std::vector<std::size_t> &recvCounts, DataType type)
{
    const auto n = static_cast<std::size_t>(m_size);
    if (sendCounts.size() != n || recvCounts.size() != n)
        throw std::invalid_argument("all_to_all_v: one count per rank expected");
    std::vector<int> sc(n), sd(n), rc(n), rd(n);
    std::size_t sent = 0, received = 0;
    for (std::size_t j = 0; j < n; ++j) {
        sc[j] = checkedCount(sendCounts[j]);
        sd[j] = checkedCount(sent);
        rc[j] = checkedCount(recvCounts[j]);
        rd[j] = checkedCount(received);
        sent += sendCounts[j];
        received += recvCounts[j];
    }
    const auto start = Clock::now();
    const InsideCollective inside(m_name, "all_to_all", nextCall(), sent * sizeOf(type));
    TRELLIS_MPI_CHECK(MPI_Alltoallv(send, sc.data(), sd.data(), mpiType(type), recv, rc.data(), rd.data(), mpiType(type), m_comm));
    const double ms = msSince(start);
    m_totalMs += ms;
    record("all_to_all", sent * sizeOf(type), ms);
}

void MpiCommunicator::send(const void *data, std::size_t count, DataType type, int peer, int tag)
{
    const auto start = Clock::now();
    const InsideCollective inside(m_name, "send", nextCall(), count * sizeOf(type));
    TRELLIS_MPI_CHECK(MPI_Send(data, checkedCount(count), mpiType(type), peer, tag, m_comm));
    const double ms = msSince(start);
    m_totalMs += ms;
    record("send", count * sizeOf(type), ms);
}

void MpiCommunicator::recv(void *data, std::size_t count, DataType type, int peer, int tag)
{
    const auto start = Clock::now();
    const InsideCollective inside(m_name, "recv", nextCall(), count * sizeOf(type));
    TRELLIS_MPI_CHECK(MPI_Recv(data, checkedCount(count), mpiType(type), peer, tag, m_comm, MPI_STATUS_IGNORE));
    const double ms = msSince(start);
    m_totalMs += ms;
    record("recv", count * sizeOf(type), ms);
}

void MpiCommunicator::barrier()
{
    const auto start = Clock::now();
    const InsideCollective inside(m_name, "barrier", nextCall(), 0);
    TRELLIS_MPI_CHECK(MPI_Barrier(m_comm));
    const double ms = msSince(start);
    m_totalMs += ms;
    record("barrier", 0, ms);
}

std::unique_ptr<CommHandle> MpiCommunicator::allReduceAsync(const void *send, void *recv, std::size_t count,
                                                            DataType type, ReduceOp op)
{
    MPI_Request request;
    TRELLIS_MPI_CHECK(MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send, recv, checkedCount(count), mpiType(type),
                                     mpiOp(type, op), m_comm, &request));
    auto handle = std::make_unique<MpiHandle>(*this, "all_reduce", count * sizeOf(type), std::vector<MPI_Request>{request});
    if (op == ReduceOp::Avg)
        handle->setCompletion([recv, count, type, n = m_size] { divide(recv, count, type, n); });
    return handle;
}

std::unique_ptr<CommHandle> MpiCommunicator::reduceScatterAsync(const void *send, void *recv, std::size_t recvCount,
                                                                DataType type, ReduceOp op)
{
    const std::size_t elem = sizeOf(type);
    MPI_Request request;
    std::vector<char> staging;
    void *target = recv;
    if (send == recv) {
        staging.resize(recvCount * elem);
        target = staging.data();
    }
    TRELLIS_MPI_CHECK(MPI_Ireduce_scatter_block(send, target, checkedCount(recvCount), mpiType(type), mpiOp(type, op), m_comm,
                                                &request));
    auto handle = std::make_unique<MpiHandle>(*this, "reduce_scatter", recvCount * elem * static_cast<std::size_t>(m_size),
                                              std::vector<MPI_Request>{request});
    char *out = send == recv ? static_cast<char *>(recv) + static_cast<std::size_t>(m_rank) * recvCount * elem
                             : static_cast<char *>(recv);
    const char *staged = staging.empty() ? nullptr : staging.data();
    handle->setCompletion([out, staged, recvCount, elem, type, op, n = m_size] {
        if (staged)
            std::memcpy(out, staged, recvCount * elem);
        if (op == ReduceOp::Avg)
            divide(out, recvCount, type, n);
    });
    handle->keep(std::move(staging)); // the vector's buffer (and `staged`) stays valid
    return handle;
}

std::unique_ptr<CommHandle> MpiCommunicator::allGatherAsync(const void *send, void *recv, std::size_t sendCount,
                                                            DataType type)
{
    const std::size_t elem = sizeOf(type);
    const bool inPlace = send == static_cast<const char *>(recv) + static_cast<std::size_t>(m_rank) * sendCount * elem;
    MPI_Request request;
    TRELLIS_MPI_CHECK(MPI_Iallgather(inPlace ? MPI_IN_PLACE : send, checkedCount(sendCount), mpiType(type), recv,
                                     checkedCount(sendCount), mpiType(type), m_comm, &request));
    return std::make_unique<MpiHandle>(*this, "all_gather", sendCount * elem * static_cast<std::size_t>(m_size),
                                       std::vector<MPI_Request>{request});
}

std::unique_ptr<CommHandle> MpiCommunicator::sendAsync(const void *data, std::size_t count, DataType type, int peer, int tag)
{
    MPI_Request request;
    TRELLIS_MPI_CHECK(MPI_Isend(data, checkedCount(count), mpiType(type), peer, tag, m_comm, &request));
    return std::make_unique<MpiHandle>(*this, "send", count * sizeOf(type), std::vector<MPI_Request>{request});
}

std::unique_ptr<CommHandle> MpiCommunicator::recvAsync(void *data, std::size_t count, DataType type, int peer, int tag)
{
    MPI_Request request;
    TRELLIS_MPI_CHECK(MPI_Irecv(data, checkedCount(count), mpiType(type), peer, tag, m_comm, &request));
    return std::make_unique<MpiHandle>(*this, "recv", count * sizeOf(type), std::vector<MPI_Request>{request});
}

std::unique_ptr<MpiCommunicator> MpiCommunicator::split(int color, int key, const std::string &name)
{
    MPI_Comm sub = MPI_COMM_NULL;
    TRELLIS_MPI_CHECK(MPI_Comm_split(m_comm, color < 0 ? MPI_UNDEFINED : color, key, &sub));
    if (sub == MPI_COMM_NULL)
        return nullptr;
    return std::make_unique<MpiCommunicator>(sub, name, true);
}

void MpiCommunicator::hostAllReduce(void *data, std::size_t count, DataType type, ReduceOp op)
{
    allReduce(data, data, count, type, op);
}

void MpiCommunicator::hostAllGather(const void *send, void *recv, std::size_t sendCount, DataType type)
{
    allGather(send, recv, sendCount, type);
}

void MpiCommunicator::hostBroadcast(void *data, std::size_t count, DataType type, int root)
{
    broadcast(data, count, type, root);
}

void MpiCommunicator::hostAllToAll(const void *send, void *recv, std::size_t countPerRank, DataType type)
{
    allToAll(send, recv, countPerRank, type);
}

void MpiCommunicator::record(const char *op, std::uint64_t bytes, double ms)
{
    if (m_size <= 1)
        return; // a group of one rank communicates nothing
    for (auto &[key, r] : m_records) {
        if (key == op || std::strcmp(key, op) == 0) {
            r.bytes += bytes;
            r.ms += ms;
            r.count += 1;
            return;
        }
    }
    m_records.push_back({op, CollectiveRecord{op, bytes, ms, 1}});
}

std::vector<CollectiveRecord> MpiCommunicator::takeRecords()
{
    std::vector<CollectiveRecord> out;
    for (auto &[key, r] : m_records)
        if (r.count > 0)
            out.push_back(r);
    // Keep the entries (and their strings) allocated; only reset the counters.
    for (auto &[key, r] : m_records)
        r.bytes = 0, r.ms = 0, r.count = 0;
    return out;
}

} // namespace trellis::trainer
