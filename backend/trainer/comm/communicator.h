// The communicator interface every parallel strategy talks to (DESIGN.md §5). The MPI
// implementation works on host buffers; an NCCL one will work on device buffers with the same
// semantics, so every strategy is tested on the CPU under mpirun. Every call is timed and its
// bytes counted (per operation kind) so the trainer can report comm_ms and CollectiveStats.
// In-place operations pass the same pointer as send and receive buffer.
// Threading: a communicator and its handles are used from one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace trellis::trainer {

enum class ReduceOp { Sum, Avg };
enum class DataType { F32, F64, I32, I64 };

std::size_t sizeOf(DataType type);
const char *toString(DataType type);

struct CollectiveRecord {
    std::string op;          // "all_reduce", "reduce_scatter", "all_gather", "broadcast", "all_to_all", ...
    std::uint64_t bytes = 0; // payload bytes per rank, as nccl-tests counts them
    double ms = 0;
    std::uint32_t count = 0;
};

// Bus-bandwidth factor of an operation for n ranks (nccl-tests): busbw = algbw · factor.
double busBandwidthFactor(const std::string &op, int ranks);

// An operation in flight. wait() blocks until it completes; test() reports without blocking
// (and drives progress). Destroying an unfinished handle waits for it.
class CommHandle {
public:
    virtual ~CommHandle() = default;
    virtual bool test() = 0;
    virtual void wait() = 0;
};

class Communicator {
public:
    virtual ~Communicator() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    virtual std::string name() const = 0; // group name for telemetry: "world", "dp", ...

    // recv[i] = op over ranks of send[i], count elements.
    virtual void allReduce(const void *send, void *recv, std::size_t count, DataType type, ReduceOp op) = 0;
    // send holds size()·recvCount elements; rank r receives block r of the reduction.
    virtual void reduceScatter(const void *send, void *recv, std::size_t recvCount, DataType type, ReduceOp op) = 0;
    // recv holds size()·sendCount elements: block r comes from rank r.
    virtual void allGather(const void *send, void *recv, std::size_t sendCount, DataType type) = 0;
    virtual void broadcast(void *data, std::size_t count, DataType type, int root) = 0;
    // send and recv hold size()·countPerRank elements; block j of send goes to rank j.
    virtual void allToAll(const void *send, void *recv, std::size_t countPerRank, DataType type) = 0;
    // Blocks of different sizes: sendCounts[j] elements (consecutive in send) go to rank j,
    // recvCounts[j] arrive from rank j (consecutive in recv). Recorded as "all_to_all" with the
    // elements this rank sends.
    virtual void allToAllV(const void *send, const std::vector<std::size_t> &sendCounts, void *recv,
                           const std::vector<std::size_t> &recvCounts, DataType type) = 0;
    virtual void send(const void *data, std::size_t count, DataType type, int peer, int tag) = 0;
    virtual void recv(void *data, std::size_t count, DataType type, int peer, int tag) = 0;
    virtual void barrier() = 0;

    virtual std::unique_ptr<CommHandle> allReduceAsync(const void *send, void *recv, std::size_t count, DataType type,
                                                       ReduceOp op) = 0;
    virtual std::unique_ptr<CommHandle> reduceScatterAsync(const void *send, void *recv, std::size_t recvCount,
                                                           DataType type, ReduceOp op) = 0;
    virtual std::unique_ptr<CommHandle> allGatherAsync(const void *send, void *recv, std::size_t sendCount,
                                                       DataType type) = 0;
    virtual std::unique_ptr<CommHandle> sendAsync(const void *data, std::size_t count, DataType type, int peer, int tag) = 0;
    virtual std::unique_ptr<CommHandle> recvAsync(void *data, std::size_t count, DataType type, int peer, int tag) = 0;

    // Ranks with the same color form a new group, ordered by key (then by old rank). Collective
    // over this communicator; a rank passing a negative color joins no group and gets nullptr.
    virtual std::unique_ptr<Communicator> split(int color, int key, const std::string &name) = 0;

    // Statistics since the last takeRecords() call, one record per operation kind.
    virtual std::vector<CollectiveRecord> takeRecords() = 0;
    virtual double totalMs() const = 0; // time spent in blocking calls and waits since construction

    // Convenience overloads for the common float/double all-reduce.
    void allReduce(float *data, std::size_t count, ReduceOp op) { allReduce(data, data, count, DataType::F32, op); }
    void allReduce(double *data, std::size_t count, ReduceOp op) { allReduce(data, data, count, DataType::F64, op); }
};

} // namespace trellis::trainer
