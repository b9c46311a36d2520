// The communicator interface every parallel strategy talks to (DESIGN.md §5). The MPI
// implementation works on host buffers; an NCCL one will work on device buffers with the same
// semantics. Every call is timed and its bytes counted so the trainer can report comm_ms and
// per-collective statistics. Threading: one communicator is used from one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trellis::trainer {

enum class ReduceOp { Sum, Avg };

struct CollectiveRecord {
    std::string op;       // "all_reduce", "broadcast", "barrier"
    std::uint64_t bytes = 0;
    double ms = 0;
    std::uint32_t count = 0;
};

class Communicator {
public:
    virtual ~Communicator() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    virtual std::string name() const = 0; // group name for telemetry: "world", "dp", ...

    virtual void allReduce(float *data, std::size_t count, ReduceOp op) = 0;
    virtual void allReduce(double *data, std::size_t count, ReduceOp op) = 0;
    virtual void broadcast(void *data, std::size_t bytes, int root) = 0;
    virtual void barrier() = 0;

    // Statistics since the last takeRecords() call, one record per operation kind.
    virtual std::vector<CollectiveRecord> takeRecords() = 0;
    virtual double totalMs() const = 0; // communication time since construction
};

} // namespace trellis::trainer
