// A device communicator over an MPI communicator for tensors in a device's memory that the host
// cannot touch: every operation copies its inputs from the device into pinned host buffers, runs
// the MPI operation on them, and copies its outputs back (docs/gpu.md). For ranks that share one
// GPU, where NCCL refuses two ranks of a communicator on one device ("Duplicate GPU detected"),
// and for any device without NCCL. Asynchronous operations stage in at once, run MPI's
// non-blocking form, and stage out when their handle completes (test() that finds it done, or
// wait()), so handles may complete in any order. Staging buffers come from a pool kept for the
// communicator's life: no allocation per message once warm.
// Only the device's copies touch its memory (tests/support/trap_device.h holds it to that).
// Threading: a communicator and its handles are used from one thread.
#pragma once

#include "backend/trainer/comm/communicator.h"
#include "backend/trainer/device/device.h"

#include <cstddef>
#include <memory>
#include <vector>

namespace trellis::trainer {

class StagedCommunicator final : public DeviceCommunicator {
public:
    // `host` runs the operations on host memory (MpiCommunicator); neither is owned.
    StagedCommunicator(DeviceCommunicator &host, Device &device);
    ~StagedCommunicator() override;

    int rank() const override { return m_host.rank(); }
    int size() const override { return m_host.size(); }
    std::string name() const override { return m_host.name(); }

    void allReduce(const void *send, void *recv, std::size_t count, DataType type, ReduceOp op) override;
    void reduceScatter(const void *send, void *recv, std::size_t recvCount, DataType type, ReduceOp op) override;
    void allGather(const void *send, void *recv, std::size_t sendCount, DataType type) override;
    void broadcast(void *data, std::size_t count, DataType type, int root) override;
    void allToAll(const void *send, void *recv, std::size_t countPerRank, DataType type) override;
    void allToAllV(const void *send, const std::vector<std::size_t> &sendCounts, void *recv,
                   const std::vector<std::size_t> &recvCounts, DataType type) override;
    void send(const void *data, std::size_t count, DataType type, int peer, int tag) override;
    void recv(void *data, std::size_t count, DataType type, int peer, int tag) override;
    void barrier() override { m_host.barrier(); }

    std::unique_ptr<CommHandle> allReduceAsync(const void *send, void *recv, std::size_t count, DataType type,
                                               ReduceOp op) override;
    std::unique_ptr<CommHandle> reduceScatterAsync(const void *send, void *recv, std::size_t recvCount, DataType type,
                                                   ReduceOp op) override;
    std::unique_ptr<CommHandle> allGatherAsync(const void *send, void *recv, std::size_t sendCount, DataType type) override;
    std::unique_ptr<CommHandle> sendAsync(const void *data, std::size_t count, DataType type, int peer, int tag) override;
    std::unique_ptr<CommHandle> recvAsync(void *data, std::size_t count, DataType type, int peer, int tag) override;

    std::vector<CollectiveRecord> takeRecords() override { return m_host.takeRecords(); }
    double totalMs() const override { return m_host.totalMs(); }

    // A pinned host buffer of at least `bytes`, from the pool; back to it with giveBack.
    struct Buffer {
        void *data = nullptr;
        std::size_t bytes = 0;
    };
    Buffer take(std::size_t bytes);
    void giveBack(Buffer buffer);
    Device &device() { return m_device; }

private:
    // Device → a pooled host buffer: `bytes` from `device`.
    Buffer stageIn(const void *device, std::size_t bytes);
    // The host buffer's first `bytes` → the device, and the buffer back to the pool.
    void stageOut(Buffer host, void *device, std::size_t bytes);

    DeviceCommunicator &m_host;
    Device &m_device;
    std::vector<Buffer> m_free; // pinned, kept for reuse
    std::vector<Buffer> m_all;  // every buffer made, freed with the communicator
};

} // namespace trellis::trainer
