// parallel.allreduce hierarchical: a group whose ranks sit on several nodes, the same number on
// each, all-reduces in three steps over two communicators split from it — a reduce-scatter among
// the group's ranks on this node, an all-reduce of this rank's share among the ranks holding the
// same share on the other nodes, an all-gather on this node again. Only the inter-node step
// crosses the network, with 1/k of the bytes (k: the group's ranks on a node). Every other
// operation is the flat group's. Asynchronous all-reduces run one after another in the order
// they were issued (each progressed by any handle's test or wait), not side by side. Sums come out as the flat all-reduce's within float rounding
// (another order of additions); Avg divides on each level.
// Threading: the training thread, like the communicators it wraps.
#pragma once

#include "backend/trainer/comm/mpi_communicator.h"

#include <deque>
#include <memory>

namespace trellis::trainer {

class HierarchicalCommunicator final : public DeviceCommunicator {
public:
    // `node`: the group's ranks on this node; `across`: the ranks of the same position in `node`
    // on every node. Both split from `flat`, which stays the group for everything but all-reduce.
    HierarchicalCommunicator(DeviceCommunicator &flat, std::unique_ptr<MpiCommunicator> node,
                             std::unique_ptr<MpiCommunicator> across);
    ~HierarchicalCommunicator() override;

    int rank() const override { return m_flat.rank(); }
    int size() const override { return m_flat.size(); }
    std::string name() const override { return m_flat.name(); }
    MpiCommunicator &node() { return *m_node; }
    MpiCommunicator &across() { return *m_across; }

    void allReduce(const void *send, void *recv, std::size_t count, DataType type, ReduceOp op) override;
    std::unique_ptr<CommHandle> allReduceAsync(const void *send, void *recv, std::size_t count, DataType type,
                                               ReduceOp op) override;

    void reduceScatter(const void *send, void *recv, std::size_t recvCount, DataType type, ReduceOp op) override
    {
        m_flat.reduceScatter(send, recv, recvCount, type, op);
    }
    void allGather(const void *send, void *recv, std::size_t sendCount, DataType type) override
    {
        m_flat.allGather(send, recv, sendCount, type);
    }
    void broadcast(void *data, std::size_t count, DataType type, int root) override { m_flat.broadcast(data, count, type, root); }
    void allToAll(const void *send, void *recv, std::size_t countPerRank, DataType type) override
    {
        m_flat.allToAll(send, recv, countPerRank, type);
    }
    void allToAllV(const void *send, const std::vector<std::size_t> &sendCounts, void *recv,
                   const std::vector<std::size_t> &recvCounts, DataType type) override
    {
        m_flat.allToAllV(send, sendCounts, recv, recvCounts, type);
    }
    void send(const void *data, std::size_t count, DataType type, int peer, int tag) override
    {
        m_flat.send(data, count, type, peer, tag);
    }
    void recv(void *data, std::size_t count, DataType type, int peer, int tag) override
    {
        m_flat.recv(data, count, type, peer, tag);
    }
    void barrier() override { m_flat.barrier(); }
    std::unique_ptr<CommHandle> reduceScatterAsync(const void *send, void *recv, std::size_t recvCount, DataType type,
                                                   ReduceOp op) override
    {
        return m_flat.reduceScatterAsync(send, recv, recvCount, type, op);
    }
    std::unique_ptr<CommHandle> allGatherAsync(const void *send, void *recv, std::size_t sendCount, DataType type) override
    {
        return m_flat.allGatherAsync(send, recv, sendCount, type);
    }
    std::unique_ptr<CommHandle> sendAsync(const void *data, std::size_t count, DataType type, int peer, int tag) override
    {
        return m_flat.sendAsync(data, count, type, peer, tag);
    }
    std::unique_ptr<CommHandle> recvAsync(void *data, std::size_t count, DataType type, int peer, int tag) override
    {
        return m_flat.recvAsync(data, count, type, peer, tag);
    }

    // The records and blocking time live in the three communicators (ProcessGroups::all() lists
    // them): the node's reduce-scatters and all-gathers, the inter-node all-reduces.
    std::vector<CollectiveRecord> takeRecords() override { return {}; }
    double totalMs() const override { return 0; }

    // The all-reduces in flight, in the order they were issued: only the first one runs its steps
    // (advance), so every rank starts them in the same order. advance(block) completes the first
    // one's current step (waiting for it when `block`) and starts its next; false when nothing moved.
    struct Op;
    bool advance(bool block);

private:
    void launch(Op &op);

    DeviceCommunicator &m_flat;
    std::unique_ptr<MpiCommunicator> m_node, m_across;
    std::deque<Op *> m_queue;
};

} // namespace trellis::trainer
