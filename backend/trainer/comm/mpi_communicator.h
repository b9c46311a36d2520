// Both communicator interfaces over one MPI communicator on host memory: the device one for the
// tensors of CPU ranks and the host one for scalars of every rank. Blocking calls map to MPI
// collectives; asynchronous ones to their non-blocking forms (MPI_Iallreduce, ...), progressed by
// test() and completed by wait(). Counts above INT_MAX are split into chunks for blocking calls.
// bf16 and fp16 travel as 16-bit words and are reduced by user-defined MPI operations that add
// (or compare) in fp32 and round to nearest even, the same in blocking and non-blocking calls.
#pragma once

#include "backend/trainer/comm/communicator.h"

#include <mpi.h>

#include <utility>
#include <vector>

namespace trellis::trainer {

class MpiCommunicator final : public DeviceCommunicator, public HostCommunicator {
public:
    // Wraps `comm`; frees it on destruction when `owned`.
    MpiCommunicator(MPI_Comm comm, std::string name, bool owned = false);
    ~MpiCommunicator() override;

    int rank() const override { return m_rank; }
    int size() const override { return m_size; }
    std::string name() const override { return m_name; }
    MPI_Comm handle() const { return m_comm; }

    void allReduce(const void *send, void *recv, std::size_t count, DataType type, ReduceOp op) override;
    void reduceScatter(const void *send, void *recv, std::size_t recvCount, DataType type, ReduceOp op) override;
    void allGather(const void *send, void *recv, std::size_t sendCount, DataType type) override;
    void broadcast(void *data, std::size_t count, DataType type, int root) override;
    void allToAll(const void *send, void *recv, std::size_t countPerRank, DataType type) override;
    void allToAllV(const void *send, const std::vector<std::size_t> &sendCounts, void *recv,
                   const std::vector<std::size_t> &recvCounts, DataType type) override;
    void send(const void *data, std::size_t count, DataType type, int peer, int tag) override;
    void recv(void *data, std::size_t count, DataType type, int peer, int tag) override;
    void barrier() override;

    std::unique_ptr<CommHandle> allReduceAsync(const void *send, void *recv, std::size_t count, DataType type,
                                               ReduceOp op) override;
    std::unique_ptr<CommHandle> reduceScatterAsync(const void *send, void *recv, std::size_t recvCount, DataType type,
                                                   ReduceOp op) override;
    std::unique_ptr<CommHandle> allGatherAsync(const void *send, void *recv, std::size_t sendCount, DataType type) override;
    std::unique_ptr<CommHandle> sendAsync(const void *data, std::size_t count, DataType type, int peer, int tag) override;
    std::unique_ptr<CommHandle> recvAsync(void *data, std::size_t count, DataType type, int peer, int tag) override;

    // Ranks with the same color form a new group, ordered by key (then by old rank). Collective
    // over this communicator; a rank passing a negative color joins no group and gets nullptr.
    std::unique_ptr<MpiCommunicator> split(int color, int key, const std::string &name);

    void hostAllReduce(void *data, std::size_t count, DataType type, ReduceOp op) override;
    void hostAllGather(const void *send, void *recv, std::size_t sendCount, DataType type) override;
    void hostBroadcast(void *data, std::size_t count, DataType type, int root) override;
    void hostAllToAll(const void *send, void *recv, std::size_t countPerRank, DataType type) override;
    void hostBarrier() override { barrier(); }
    // The interfaces' typed forms (each interface's own; these make them reachable here too).
    DeviceCommunicator &device() { return *this; }
    HostCommunicator &host() { return *this; }

    std::vector<CollectiveRecord> takeRecords() override;
    double totalMs() const override { return m_totalMs; }

    // Used by handles to report their completion.
    void record(const char *op, std::uint64_t bytes, double ms);
    void addWaitMs(double ms) { m_totalMs += ms; }
    // The number of the next call issued on this group (every rank of the group counts alike).
    std::uint64_t nextCall() { return ++m_calls; }

private:
    MPI_Comm m_comm;
    std::string m_name;
    bool m_owned;
    int m_rank = 0;
    int m_size = 1;
    double m_totalMs = 0;
    std::uint64_t m_calls = 0;
    // Few operation kinds: a flat list searched by the literal's address, no allocation per call.
    std::vector<std::pair<const char *, CollectiveRecord>> m_records;
};

// Aborts the whole job with a message naming host, rank, file and line (nccl-tests style).
[[noreturn]] void mpiFail(int code, const char *call, const char *file, int line);

#define TRELLIS_MPI_CHECK(call)                                                                    \
    do {                                                                                           \
        int trellisMpiError = (call);                                                              \
        if (trellisMpiError != MPI_SUCCESS)                                                        \
            ::trellis::trainer::mpiFail(trellisMpiError, #call, __FILE__, __LINE__);               \
    } while (0)

} // namespace trellis::trainer
