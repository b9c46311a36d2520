// The device communicator of ranks on distinct GPUs: NCCL (docs/gpu.md; built where CMake finds
// NCCL ≥ 2.18, TRELLIS_HAVE_NCCL). Never run on a machine without a GPU; scripts/gpu/verify.sh
// runs its conformance suite on one.
//   * Set-up never hangs the host: the world's communicator is made non-blocking
//     (ncclConfig_t.blocking = 0) from a unique id rank 0 makes and MPI broadcasts, and every
//     group is split from it with ncclCommSplit (every rank of the parent calling, in the same
//     order), each polled through ncclCommGetAsyncError until it is ready or a deadline passes.
//   * Operations run on the communicator's own stream, ordered after the work already queued on
//     the device's compute stream by an event; the compute stream waits for an operation only
//     when its handle is waited for (again by an event), so bucket reductions overlap backward.
//   * The host never waits inside NCCL: a handle's wait() polls its completion event and the
//     communicator's asynchronous error, inside the collective tracker (the heartbeat names the
//     call a rank's stream is stuck in: group, op, call number, bytes, since). A request to abort
//     (abortAll(), from the trainer's SIGTERM path once the supervisor decided a hang) makes the
//     waits call ncclCommAbort and throw a DeviceError naming the call.
//   * Point-to-point has no tags in NCCL: transfers between two ranks match in the order they
//     are posted (the pipeline's schedules are validated for that, backend/plan/schedule.h); each
//     send or receive is its own group call, and a pair's sends and receives in one group call
//     (allToAll) cannot deadlock on each other.
// Threading: a communicator and its handles are used from the training thread; abortAll() may be
// called from any thread (a signal handler's flag).
#pragma once

#include "backend/trainer/comm/communicator.h"
#include "backend/trainer/comm/mpi_communicator.h"
#include "backend/trainer/device/device.h"

#include <chrono>
#include <functional>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace trellis::trainer {

class NcclCommunicator final : public DeviceCommunicator {
public:
    // Collective over `group` (every rank of it calls): the NCCL communicator of the same ranks on
    // `device` (a CUDA device). Throws DeviceError naming the rank, device and NCCL's reason, or
    // saying the set-up did not finish within `timeout`.
    static std::unique_ptr<NcclCommunicator> create(MpiCommunicator &group, Device &device,
                                                    std::chrono::milliseconds timeout = std::chrono::seconds(120));
    // Collective over this communicator: ranks with the same color form a new one, ordered by key;
    // a negative color joins none (nullptr). ncclCommSplit, non-blocking, polled as create().
    std::unique_ptr<NcclCommunicator> split(int color, int key, const std::string &name,
                                            std::chrono::milliseconds timeout = std::chrono::seconds(120));
    ~NcclCommunicator() override;

    // Every NCCL communicator of the process: waits in them abort (ncclCommAbort) and throw.
    // Async-signal-safe (an atomic flag).
    static void abortAll();
    // SIGTERM (the supervisor ending a job it judged hung) calls abortAll(): a rank waiting in NCCL
    // aborts its communicators and exits with the device error naming the call; one that is not
    // waiting ends 5 s later (SIGALRM), as SIGTERM would have ended it.
    static void abortOnTerminate();

    int rank() const override { return m_rank; }
    int size() const override { return m_size; }
    std::string name() const override { return m_name; }

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

    std::vector<CollectiveRecord> takeRecords() override;
    double totalMs() const override { return m_totalMs; }

    struct State; // NCCL's and CUDA's handles (nccl_communicator.cpp)
    // Used by the handles: wait for `op` (its completion event), polling NCCL's error and the
    // abort request, inside the collective tracker; then the compute stream waits for it.
    void waitFor(void *event, const char *op, std::uint64_t call, std::uint64_t bytes);
    void record(const char *op, std::uint64_t bytes, double ms);

private:
    NcclCommunicator(std::unique_ptr<State> state, Device &device, int rank, int size, std::string name);
    // Starts `enqueue` on this communicator's stream after the compute stream's work; returns the
    // event that marks its end. op, bytes: for the tracker and the records.
    void *launch(const char *op, std::uint64_t bytes, const std::function<void()> &enqueue);
    std::unique_ptr<CommHandle> handleFor(const char *op, std::uint64_t bytes, const std::function<void()> &enqueue);

    std::unique_ptr<State> m_state;
    Device &m_device;
    int m_rank, m_size;
    std::string m_name;
    std::uint64_t m_calls = 0;
    double m_totalMs = 0;
    std::vector<std::pair<const char *, CollectiveRecord>> m_records;
};

} // namespace trellis::trainer
