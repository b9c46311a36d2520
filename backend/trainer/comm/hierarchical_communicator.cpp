// See hierarchical_communicator.h.
#include "backend/trainer/comm/hierarchical_communicator.h"

#include <cstring>
#include <stdexcept>

namespace trellis::trainer {

// One all-reduce in its three steps. The send buffer is copied into a staging buffer padded to
// k equal shares (zeros past count: they reduce to values nobody reads); the result is copied out
// of the gathered one.
struct HierarchicalCommunicator::Op {
    const void *send;
    void *recv;
    std::size_t count, share = 0;
    DataType type;
    ReduceOp op;
    std::vector<std::byte> staged, part;
    std::unique_ptr<CommHandle> inFlight;
    int step = -1; // -1: queued; 0, 1, 2: that step in flight; 3: done
};

namespace {

class OpHandle final : public CommHandle {
public:
    OpHandle(HierarchicalCommunicator &comm, std::unique_ptr<HierarchicalCommunicator::Op> op)
        : m_comm(comm), m_op(std::move(op))
    {
    }
    ~OpHandle() override
    {
        try {
            wait();
        } catch (...) {
        }
    }
    bool test() override
    {
        while (m_op->step < 3 && m_comm.advance(false)) {
        }
        return m_op->step >= 3;
    }
    void wait() override
    {
        while (m_op->step < 3)
            m_comm.advance(true);
    }

private:
    HierarchicalCommunicator &m_comm;
    std::unique_ptr<HierarchicalCommunicator::Op> m_op;
};

} // namespace

HierarchicalCommunicator::HierarchicalCommunicator(DeviceCommunicator &flat, std::unique_ptr<MpiCommunicator> node,
                                                   std::unique_ptr<MpiCommunicator> across)
    : m_flat(flat), m_node(std::move(node)), m_across(std::move(across))
{
    if (!m_node || !m_across || m_node->size() * m_across->size() != flat.size())
        throw std::invalid_argument("HierarchicalCommunicator: the node and inter-node groups do not tile the " + flat.name() +
                                    " group");
}

HierarchicalCommunicator::~HierarchicalCommunicator() = default;

void HierarchicalCommunicator::allReduce(const void *send, void *recv, std::size_t count, DataType type, ReduceOp op)
{
    allReduceAsync(send, recv, count, type, op)->wait();
}

std::unique_ptr<CommHandle> HierarchicalCommunicator::allReduceAsync(const void *send, void *recv, std::size_t count,
                                                                     DataType type, ReduceOp op)
{
    auto o = std::make_unique<Op>();
    o->send = send;
    o->recv = recv;
    o->count = count;
    o->type = type;
    o->op = op;
    const std::size_t k = static_cast<std::size_t>(m_node->size()), elem = sizeOf(type);
    o->share = (count + k - 1) / k;
    o->staged.assign(o->share * k * elem, std::byte{0});
    o->part.assign(o->share * elem, std::byte{0});
    std::memcpy(o->staged.data(), send, count * elem); // now: the caller may reuse send once we return
    m_queue.push_back(o.get());
    if (m_queue.size() == 1)
        launch(*o);
    return std::make_unique<OpHandle>(*this, std::move(o));
}

// Every rank starts the operations' steps in one order — the order the all-reduces were issued,
// one operation at a time — so the node and inter-node groups see their collectives alike on
// all their ranks (MPI's rule for non-blocking collectives).
void HierarchicalCommunicator::launch(Op &o)
{
    ++o.step;
    switch (o.step) {
    case 0: o.inFlight = m_node->reduceScatterAsync(o.staged.data(), o.part.data(), o.share, o.type, o.op); break;
    case 1: o.inFlight = m_across->allReduceAsync(o.part.data(), o.part.data(), o.share, o.type, o.op); break;
    case 2: o.inFlight = m_node->allGatherAsync(o.part.data(), o.staged.data(), o.share, o.type); break;
    default:
        std::memcpy(o.recv, o.staged.data(), o.count * sizeOf(o.type));
        o.inFlight.reset();
        break;
    }
}

bool HierarchicalCommunicator::advance(bool block)
{
    if (m_queue.empty())
        return false;
    Op &head = *m_queue.front();
    if (block)
        head.inFlight->wait();
    else if (!head.inFlight->test())
        return false;
    launch(head);
    if (head.step == 3) {
        m_queue.pop_front();
        if (!m_queue.empty())
            launch(*m_queue.front());
    }
    return true;
}

} // namespace trellis::trainer
