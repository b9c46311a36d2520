// MPI communicator: blocking collectives with timing. Large buffers are reduced in chunks of at
// most INT_MAX elements because MPI counts are ints.
#include "trainer/mpi_communicator.h"

#include "protocol/exit_codes.h"

#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>

namespace trellis::trainer {
namespace {

double msSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

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

MpiCommunicator::MpiCommunicator(MPI_Comm comm, std::string name) : m_comm(comm), m_name(std::move(name))
{
    MPI_Comm_set_errhandler(m_comm, MPI_ERRORS_RETURN);
    TRELLIS_MPI_CHECK(MPI_Comm_rank(m_comm, &m_rank));
    TRELLIS_MPI_CHECK(MPI_Comm_size(m_comm, &m_size));
}

MpiCommunicator::~MpiCommunicator() = default;

template <typename T>
void MpiCommunicator::allReduceImpl(T *data, std::size_t count, ReduceOp op, MPI_Datatype type)
{
    const auto start = std::chrono::steady_clock::now();
    std::size_t done = 0;
    while (done < count) {
        const int chunk = static_cast<int>(std::min<std::size_t>(count - done, INT_MAX));
        TRELLIS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data + done, chunk, type, MPI_SUM, m_comm));
        done += static_cast<std::size_t>(chunk);
    }
    if (op == ReduceOp::Avg && m_size > 1) {
        const T scale = T(1) / static_cast<T>(m_size);
        for (std::size_t i = 0; i < count; ++i)
            data[i] *= scale;
    }
    record("all_reduce", count * sizeof(T), msSince(start));
}

void MpiCommunicator::allReduce(float *data, std::size_t count, ReduceOp op)
{
    allReduceImpl(data, count, op, MPI_FLOAT);
}

void MpiCommunicator::allReduce(double *data, std::size_t count, ReduceOp op)
{
    allReduceImpl(data, count, op, MPI_DOUBLE);
}

void MpiCommunicator::broadcast(void *data, std::size_t bytes, int root)
{
    const auto start = std::chrono::steady_clock::now();
    std::size_t done = 0;
    while (done < bytes) {
        const int chunk = static_cast<int>(std::min<std::size_t>(bytes - done, INT_MAX));
        TRELLIS_MPI_CHECK(MPI_Bcast(static_cast<char *>(data) + done, chunk, MPI_BYTE, root, m_comm));
        done += static_cast<std::size_t>(chunk);
    }
    record("broadcast", bytes, msSince(start));
}

void MpiCommunicator::barrier()
{
    const auto start = std::chrono::steady_clock::now();
    TRELLIS_MPI_CHECK(MPI_Barrier(m_comm));
    record("barrier", 0, msSince(start));
}

void MpiCommunicator::record(const char *op, std::uint64_t bytes, double ms)
{
    auto &r = m_records[op];
    r.op = op;
    r.bytes += bytes;
    r.ms += ms;
    r.count += 1;
    m_totalMs += ms;
}

std::vector<CollectiveRecord> MpiCommunicator::takeRecords()
{
    std::vector<CollectiveRecord> out;
    for (auto &[op, r] : m_records)
        out.push_back(r);
    m_records.clear();
    return out;
}

} // namespace trellis::trainer
