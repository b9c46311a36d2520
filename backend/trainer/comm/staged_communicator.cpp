// See staged_communicator.h.
#include "backend/trainer/comm/staged_communicator.h"

#include <algorithm>
#include <numeric>

namespace trellis::trainer {
namespace {

// An operation in flight: MPI's handle on the staged buffers, and what to copy back (and to which
// device address) once it is done.
class StagedHandle final : public CommHandle {
public:
    StagedHandle(StagedCommunicator &owner, std::unique_ptr<CommHandle> inner, StagedCommunicator::Buffer in,
                 StagedCommunicator::Buffer out, void *target, std::size_t outBytes)
        : m_owner(owner), m_inner(std::move(inner)), m_in(in), m_out(out), m_target(target), m_outBytes(outBytes)
    {
    }
    ~StagedHandle() override
    {
        if (!m_done)
            wait();
    }
    bool test() override
    {
        if (!m_done && m_inner->test())
            finish();
        return m_done;
    }
    void wait() override
    {
        if (m_done)
            return;
        m_inner->wait();
        finish();
    }

private:
    void finish()
    {
        m_done = true;
        if (m_target && m_outBytes)
            m_owner.device().fromHost(m_target, m_out.data, m_outBytes);
        if (m_out.data && m_out.data != m_in.data)
            m_owner.giveBack(m_out);
        if (m_in.data)
            m_owner.giveBack(m_in);
    }

    StagedCommunicator &m_owner;
    std::unique_ptr<CommHandle> m_inner;
    StagedCommunicator::Buffer m_in, m_out;
    void *m_target;
    std::size_t m_outBytes;
    bool m_done = false;
};

} // namespace

StagedCommunicator::StagedCommunicator(DeviceCommunicator &host, Device &device) : m_host(host), m_device(device) {}

StagedCommunicator::~StagedCommunicator()
{
    for (const Buffer &b : m_all)
        m_device.releasePinned(b.data, b.bytes);
}

StagedCommunicator::Buffer StagedCommunicator::take(std::size_t bytes)
{
    bytes = std::max<std::size_t>(bytes, 1);
    // The smallest free buffer that holds it; else a new one (rounded up, so sizes that vary a
    // little reuse one another).
    auto best = m_free.end();
    for (auto it = m_free.begin(); it != m_free.end(); ++it)
        if (it->bytes >= bytes && (best == m_free.end() || it->bytes < best->bytes))
            best = it;
    if (best != m_free.end()) {
        const Buffer b = *best;
        m_free.erase(best);
        return b;
    }
    const std::size_t rounded = (bytes + 4095) / 4096 * 4096;
    Buffer b{m_device.allocatePinned(rounded), rounded};
    m_all.push_back(b);
    return b;
}

void StagedCommunicator::giveBack(Buffer buffer) { m_free.push_back(buffer); }

StagedCommunicator::Buffer StagedCommunicator::stageIn(const void *device, std::size_t bytes)
{
    Buffer b = take(bytes);
    if (device && bytes)
        m_device.toHost(b.data, device, bytes);
    return b;
}

void StagedCommunicator::stageOut(Buffer host, void *device, std::size_t bytes)
{
    if (device && bytes)
        m_device.fromHost(device, host.data, bytes);
    giveBack(host);
}

void StagedCommunicator::allReduce(const void *send, void *recv, std::size_t count, DataType type, ReduceOp op)
{
    const std::size_t bytes = count * sizeOf(type);
    Buffer b = stageIn(send, bytes);
    m_host.allReduce(b.data, b.data, count, type, op);
    stageOut(b, recv, bytes);
}

void StagedCommunicator::reduceScatter(const void *send, void *recv, std::size_t recvCount, DataType type, ReduceOp op)
{
    const std::size_t bytes = recvCount * sizeOf(type);
    Buffer in = stageIn(send, bytes * static_cast<std::size_t>(size()));
    Buffer out = take(bytes);
    m_host.reduceScatter(in.data, out.data, recvCount, type, op);
    giveBack(in);
    stageOut(out, recv, bytes);
}

void StagedCommunicator::allGather(const void *send, void *recv, std::size_t sendCount, DataType type)
{
    const std::size_t bytes = sendCount * sizeOf(type);
    Buffer in = stageIn(send, bytes);
    Buffer out = take(bytes * static_cast<std::size_t>(size()));
    m_host.allGather(in.data, out.data, sendCount, type);
    giveBack(in);
    stageOut(out, recv, bytes * static_cast<std::size_t>(size()));
}

void StagedCommunicator::broadcast(void *data, std::size_t count, DataType type, int root)
{
    const std::size_t bytes = count * sizeOf(type);
    Buffer b = rank() == root ? stageIn(data, bytes) : take(bytes);
    m_host.broadcast(b.data, count, type, root);
    if (rank() == root)
        giveBack(b);
    else
        stageOut(b, data, bytes);
}

void StagedCommunicator::allToAll(const void *send, void *recv, std::size_t countPerRank, DataType type)
{
    const std::size_t bytes = countPerRank * sizeOf(type) * static_cast<std::size_t>(size());
    Buffer in = stageIn(send, bytes);
    Buffer out = take(bytes);
    m_host.allToAll(in.data, out.data, countPerRank, type);
    giveBack(in);
    stageOut(out, recv, bytes);
}

void StagedCommunicator::allToAllV(const void *send, const std::vector<std::size_t> &sendCounts, void *recv,
                                   const std::vector<std::size_t> &recvCounts, DataType type)
{
    const std::size_t sendBytes = std::accumulate(sendCounts.begin(), sendCounts.end(), std::size_t(0)) * sizeOf(type);
    const std::size_t recvBytes = std::accumulate(recvCounts.begin(), recvCounts.end(), std::size_t(0)) * sizeOf(type);
    Buffer in = stageIn(send, sendBytes);
    Buffer out = take(recvBytes);
    m_host.allToAllV(in.data, sendCounts, out.data, recvCounts, type);
    giveBack(in);
    stageOut(out, recv, recvBytes);
}

void StagedCommunicator::send(const void *data, std::size_t count, DataType type, int peer, int tag)
{
    Buffer b = stageIn(data, count * sizeOf(type));
    m_host.send(b.data, count, type, peer, tag);
    giveBack(b);
}

void StagedCommunicator::recv(void *data, std::size_t count, DataType type, int peer, int tag)
{
    const std::size_t bytes = count * sizeOf(type);
    Buffer b = take(bytes);
    m_host.recv(b.data, count, type, peer, tag);
    stageOut(b, data, bytes);
}

std::unique_ptr<CommHandle> StagedCommunicator::allReduceAsync(const void *send, void *recv, std::size_t count, DataType type,
                                                               ReduceOp op)
{
    const std::size_t bytes = count * sizeOf(type);
    Buffer b = stageIn(send, bytes);
    auto inner = m_host.allReduceAsync(b.data, b.data, count, type, op);
    return std::make_unique<StagedHandle>(*this, std::move(inner), b, b, recv, bytes);
}

std::unique_ptr<CommHandle> StagedCommunicator::reduceScatterAsync(const void *send, void *recv, std::size_t recvCount,
                                                                   DataType type, ReduceOp op)
{
    const std::size_t bytes = recvCount * sizeOf(type);
    Buffer in = stageIn(send, bytes * static_cast<std::size_t>(size()));
    Buffer out = take(bytes);
    auto inner = m_host.reduceScatterAsync(in.data, out.data, recvCount, type, op);
    return std::make_unique<StagedHandle>(*this, std::move(inner), in, out, recv, bytes);
}

std::unique_ptr<CommHandle> StagedCommunicator::allGatherAsync(const void *send, void *recv, std::size_t sendCount,
                                                               DataType type)
{
    const std::size_t bytes = sendCount * sizeOf(type);
    Buffer in = stageIn(send, bytes);
    Buffer out = take(bytes * static_cast<std::size_t>(size()));
    auto inner = m_host.allGatherAsync(in.data, out.data, sendCount, type);
    return std::make_unique<StagedHandle>(*this, std::move(inner), in, out, recv, bytes * static_cast<std::size_t>(size()));
}

std::unique_ptr<CommHandle> StagedCommunicator::sendAsync(const void *data, std::size_t count, DataType type, int peer, int tag)
{
    Buffer b = stageIn(data, count * sizeOf(type));
    auto inner = m_host.sendAsync(b.data, count, type, peer, tag);
    return std::make_unique<StagedHandle>(*this, std::move(inner), b, b, nullptr, 0);
}

std::unique_ptr<CommHandle> StagedCommunicator::recvAsync(void *data, std::size_t count, DataType type, int peer, int tag)
{
    const std::size_t bytes = count * sizeOf(type);
    Buffer b = take(bytes);
    auto inner = m_host.recvAsync(b.data, count, type, peer, tag);
    return std::make_unique<StagedHandle>(*this, std::move(inner), b, b, data, bytes);
}

} // namespace trellis::trainer
