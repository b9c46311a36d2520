// The communicator interfaces every parallel strategy talks to (docs/architecture.md §12), typed by
// memory space:
//   DeviceCommunicator — tensors in the memory of the rank's device (parameters, gradients,
//     activations): MPI on CPUs today, NCCL on GPUs next. Element types are kernels::DType
//     (fp32, bf16, fp16, …); the typed templates deduce it from the pointer, so no strategy names
//     a DataType by hand.
//   HostCommunicator — values in host memory (the loss, squared norms, flags, counts, checkpoint
//     agreement, bootstrap): always MPI. A host scalar therefore never reaches a device
//     communicator: the code that reduces one only holds host communicators.
// Every call is timed and its bytes counted (per operation kind) so the trainer can report comm_ms
// and CollectiveStats. In-place operations pass the same pointer as send and receive buffer.
// Sums of bf16/fp16 are formed in fp32 and rounded once per addition step of the algorithm.
// Threading: a communicator and its handles are used from one thread.
#pragma once

#include "kernels/dtype.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace trellis::trainer {

enum class ReduceOp { Sum, Avg, Max, Min };
using DataType = kernels::DType;
using kernels::sizeOf;
using kernels::toString;

template <typename T>
constexpr DataType dataTypeOf()
{
    return kernels::dtypeOf<T>();
}

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

class DeviceCommunicator {
public:
    virtual ~DeviceCommunicator() = default;
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

    // Statistics since the last takeRecords() call, one record per operation kind.
    virtual std::vector<CollectiveRecord> takeRecords() = 0;
    virtual double totalMs() const = 0; // time spent in blocking calls and waits since construction

    // Typed forms: the element type comes from the pointer.
    template <typename T>
    void allReduce(T *data, std::size_t count, ReduceOp op) // in place
    {
        allReduce(data, data, count, dataTypeOf<T>(), op);
    }
    template <typename T>
    void allReduce(const T *send, T *recv, std::size_t count, ReduceOp op)
    {
        allReduce(send, recv, count, dataTypeOf<T>(), op);
    }
    template <typename T>
    void reduceScatter(const T *send, T *recv, std::size_t recvCount, ReduceOp op)
    {
        reduceScatter(send, recv, recvCount, dataTypeOf<T>(), op);
    }
    template <typename T>
    void allGather(const T *send, T *recv, std::size_t sendCount)
    {
        allGather(send, recv, sendCount, dataTypeOf<T>());
    }
    template <typename T>
    void allToAll(const T *send, T *recv, std::size_t countPerRank)
    {
        allToAll(send, recv, countPerRank, dataTypeOf<T>());
    }
    template <typename T>
    void allToAllV(const T *send, const std::vector<std::size_t> &sendCounts, T *recv, const std::vector<std::size_t> &recvCounts)
    {
        allToAllV(send, sendCounts, recv, recvCounts, dataTypeOf<T>());
    }
    template <typename T>
    void send(const T *data, std::size_t count, int peer, int tag)
    {
        send(data, count, dataTypeOf<T>(), peer, tag);
    }
    template <typename T>
    void recv(T *data, std::size_t count, int peer, int tag)
    {
        recv(data, count, dataTypeOf<T>(), peer, tag);
    }
    template <typename T>
    std::unique_ptr<CommHandle> allReduceAsync(const T *send, T *recv, std::size_t count, ReduceOp op)
    {
        return allReduceAsync(send, recv, count, dataTypeOf<T>(), op);
    }
    template <typename T>
    std::unique_ptr<CommHandle> reduceScatterAsync(const T *send, T *recv, std::size_t recvCount, ReduceOp op)
    {
        return reduceScatterAsync(send, recv, recvCount, dataTypeOf<T>(), op);
    }
    template <typename T>
    std::unique_ptr<CommHandle> allGatherAsync(const T *send, T *recv, std::size_t sendCount)
    {
        return allGatherAsync(send, recv, sendCount, dataTypeOf<T>());
    }
    template <typename T>
    std::unique_ptr<CommHandle> sendAsync(const T *data, std::size_t count, int peer, int tag)
    {
        return sendAsync(data, count, dataTypeOf<T>(), peer, tag);
    }
    template <typename T>
    std::unique_ptr<CommHandle> recvAsync(T *data, std::size_t count, int peer, int tag)
    {
        return recvAsync(data, count, dataTypeOf<T>(), peer, tag);
    }
};

// Host values over the same group of ranks. Blocking; recorded like the device calls.
class HostCommunicator {
public:
    virtual ~HostCommunicator() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    virtual std::string name() const = 0;

    virtual void hostAllReduce(void *data, std::size_t count, DataType type, ReduceOp op) = 0;
    virtual void hostAllGather(const void *send, void *recv, std::size_t sendCount, DataType type) = 0;
    virtual void hostBroadcast(void *data, std::size_t count, DataType type, int root) = 0;
    virtual void hostAllToAll(const void *send, void *recv, std::size_t countPerRank, DataType type) = 0;
    virtual void hostBarrier() = 0;

    // In place over the span.
    template <typename T>
    void allReduce(std::span<T> values, ReduceOp op)
    {
        hostAllReduce(values.data(), values.size(), dataTypeOf<T>(), op);
    }
    // One value, returned reduced.
    template <typename T>
    T allReduce(T value, ReduceOp op)
    {
        hostAllReduce(&value, 1, dataTypeOf<T>(), op);
        return value;
    }
    // Every rank's `mine`, in rank order.
    template <typename T>
    std::vector<T> allGather(std::span<const T> mine)
    {
        std::vector<T> all(mine.size() * static_cast<std::size_t>(size()));
        hostAllGather(mine.data(), all.data(), mine.size(), dataTypeOf<T>());
        return all;
    }
    template <typename T>
    std::vector<T> allGather(const T &mine)
    {
        return allGather(std::span<const T>(&mine, 1));
    }
    template <typename T>
    void broadcast(std::span<T> values, int root)
    {
        hostBroadcast(values.data(), values.size(), dataTypeOf<T>(), root);
    }
    // block j of send (countPerRank values) to rank j.
    template <typename T>
    std::vector<T> allToAll(std::span<const T> send)
    {
        std::vector<T> recv(send.size());
        hostAllToAll(send.data(), recv.data(), send.size() / static_cast<std::size_t>(size()), dataTypeOf<T>());
        return recv;
    }
};

} // namespace trellis::trainer
