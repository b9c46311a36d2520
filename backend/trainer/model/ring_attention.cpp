// Context parallelism in the model: which positions a cp rank holds, the rows at those positions
// (learned and rotary position embeddings) and ring attention over the cp group (Liu et al. 2023;
// Megatron-LM's context parallelism). Forward: each rank starts with its own keys and values;
// cp − 1 times it sends the block it holds to the next rank and receives the previous rank's,
// the transfer in flight while the held block's attention is computed and merged with the
// online-softmax rule. Backward: the blocks go round again, each with the partial sums of its dK
// and dV that the ranks before added; after the last step every block's complete gradient goes
// back to its owner: cp − 1 key/value sends and cp gradient sends a layer.
#include "kernels/ops.h"
#include "backend/trainer/model/gpt_model.h"

#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace trellis::trainer {

namespace ops = kernels;

std::vector<std::int32_t> contextPositions(int cp, int rank, int local, bool zigzag)
{
    if (cp < 1 || rank < 0 || rank >= cp || local <= 0 || (zigzag && local % 2 != 0))
        throw std::invalid_argument("contextPositions: invalid layout");
    std::vector<std::int32_t> positions(static_cast<std::size_t>(local));
    if (!zigzag || cp == 1) {
        for (int t = 0; t < local; ++t)
            positions[static_cast<std::size_t>(t)] = rank * local + t;
        return positions;
    }
    const int chunk = local / 2, second = 2 * cp - 1 - rank;
    for (int t = 0; t < chunk; ++t) {
        positions[static_cast<std::size_t>(t)] = rank * chunk + t;
        positions[static_cast<std::size_t>(chunk + t)] = second * chunk + t;
    }
    return positions;
}

namespace {
constexpr int kKvTag = 41, kDkvTag = 42;
} // namespace

template <typename T>
void GptModel<T>::setContextParallelGroup(DeviceCommunicator *group)
{
    if (m_config.cp > 1 && (!group || group->size() != m_config.cp || group->rank() != m_config.cpRank))
        throw std::invalid_argument("GptModel: the context-parallel group does not match cp / cpRank");
    m_cpGroup = group;
}

template <typename T>
void GptModel<T>::forEachPositionRun(int first, int rows, const std::function<void(int, int, int)> &f) const
{
    const int Tn = m_seqLen;
    const std::int32_t *mine = m_positionsHost.data() + static_cast<std::size_t>(m_config.cpRank) * Tn;
    int i = first;
    const int end = first + rows;
    while (i < end) {
        const int t = i % Tn;
        int n = 1;
        while (i + n < end && t + n < Tn && mine[t + n] == mine[t] + n)
            ++n;
        f(i - first, mine[t], n);
        i += n;
    }
}

template <typename T>
void GptModel<T>::addPositionRows(T *rows, int first, int count)
{
    const int C = m_config.hidden;
    if (!cp()) {
        ops::addPositions(stream(), rows, param(m_wpe), first, count, m_seqLen, C);
        return;
    }
    forEachPositionRun(first, count, [&](int row, int pos, int n) {
        ops::addPositions(stream(), rows + static_cast<std::int64_t>(row) * C, param(m_wpe) + static_cast<std::int64_t>(pos) * C, 0,
                          n, n, C);
    });
}

template <typename T>
void GptModel<T>::ringAttentionForward(T *out, G *lse, const T *qkv)
{
    const int B = m_batch, Tn = m_seqLen, BT = B * Tn, hs = m_config.hidden / m_config.heads;
    const int cp = m_config.cp, rank = m_config.cpRank, next = (rank + 1) % cp, prev = (rank + cp - 1) % cp;
    const int width = 2 * m_Ckv; // a block row: k, then v
    const std::size_t block = static_cast<std::size_t>(BT) * width, stats = static_cast<std::size_t>(m_NH) * BT;
    m_kvBlocks.ensure(2 * block);
    m_ringStats.ensure(2 * stats);
    T *held = m_kvBlocks.data(), *arriving = held + block;
    G *rowMax = m_ringStats.data(), *rowSum = rowMax + stats;
    // The running output is summed in G: in `out` itself when T is G, else in an accumulator
    // rounded into `out` once at the end.
    G *acc = nullptr;
    if constexpr (std::is_same_v<T, G>) {
        acc = out;
    } else {
        m_ringAcc.ensure(static_cast<std::size_t>(BT) * m_Cq);
        acc = m_ringAcc.data();
    }
    ops::copyColumns(stream(), held, width, qkv + m_Cq, m_QKV, BT, width);
    zero(acc, static_cast<std::size_t>(BT) * m_Cq);
    ops::fill(stream(), rowMax, static_cast<std::int64_t>(stats), -std::numeric_limits<G>::infinity());
    zero(rowSum, stats);
    const std::int32_t *positions = m_positions.data();
    for (int step = 0; step < cp; ++step) {
        const int owner = (rank - step + cp) % cp; // whose keys and values are held
        std::unique_ptr<CommHandle> sent, received;
        if (step + 1 < cp) {
            m_device->synchronize();
            sent = m_cpGroup->sendAsync(held, block, next, kKvTag);
            received = m_cpGroup->recvAsync(arriving, block, prev, kKvTag);
        }
        ops::ringAttentionBlockForward(stream(), acc, rowMax, rowSum, qkv, m_QKV, held, positions + rank * Tn,
                                       positions + owner * Tn, B, Tn, Tn, m_NH, m_KVH, hs);
        if (sent) {
            sent->wait();
            received->wait();
            std::swap(held, arriving);
        }
    }
    ops::ringAttentionFinish(stream(), out, lse, acc, rowMax, rowSum, B, Tn, m_NH, hs);
}

template <typename T>
void GptModel<T>::ringAttentionBackward(T *dqkv, const T *dOut, const T *out, const G *lse, const T *qkv)
{
    const int B = m_batch, Tn = m_seqLen, BT = B * Tn, hs = m_config.hidden / m_config.heads;
    const int cp = m_config.cp, rank = m_config.cpRank, next = (rank + 1) % cp, prev = (rank + cp - 1) % cp;
    const int width = 2 * m_Ckv;
    const std::size_t block = static_cast<std::size_t>(BT) * width, stats = static_cast<std::size_t>(m_NH) * BT;
    m_kvBlocks.ensure(2 * block);
    m_ringStats.ensure(2 * stats);
    m_dkvBlocks.ensure(3 * block);
    T *held = m_kvBlocks.data(), *arriving = held + block;
    // dK/dV in G: this step's contribution (then the running sum), the sum in flight to the next
    // rank, the previous rank's sum arriving.
    G *mine = m_dkvBlocks.data(), *outgoing = mine + block, *incoming = outgoing + block;
    G *delta = m_ringStats.data();
    // dq is summed in G: straight into dqkv's q columns when T is G, else in an accumulator.
    G *dq = nullptr;
    int ldq = m_QKV;
    if constexpr (std::is_same_v<T, G>) {
        dq = dqkv;
    } else {
        m_ringAcc.ensure(static_cast<std::size_t>(BT) * m_Cq);
        dq = m_ringAcc.data();
        ldq = m_Cq;
        zero(dq, static_cast<std::size_t>(BT) * m_Cq);
    }
    ops::ringAttentionDelta(stream(), delta, dOut, out, B, Tn, m_NH, hs);
    ops::copyColumns(stream(), held, width, qkv + m_Cq, m_QKV, BT, width);
    const std::int32_t *positions = m_positions.data();
    std::unique_ptr<CommHandle> gradSent, gradReceived;
    for (int step = 0; step < cp; ++step) {
        const int owner = (rank - step + cp) % cp;
        std::unique_ptr<CommHandle> sent, received;
        if (step + 1 < cp) {
            m_device->synchronize();
            sent = m_cpGroup->sendAsync(held, block, next, kKvTag);
            received = m_cpGroup->recvAsync(arriving, block, prev, kKvTag);
        }
        zero(mine, block);
        ops::ringAttentionBlockBackward(stream(), dq, ldq, mine, dOut, qkv, held, lse, delta, positions + rank * Tn,
                                        positions + owner * Tn, B, Tn, Tn, m_NH, m_KVH, hs);
        if (gradReceived) { // the ranks before added theirs to this block
            gradReceived->wait();
            ops::accumulate(stream(), mine, incoming, static_cast<std::int64_t>(block));
        }
        if (gradSent)
            gradSent->wait();
        std::swap(mine, outgoing);
        m_device->synchronize();
        gradSent = m_cpGroup->sendAsync(outgoing, block, next, kDkvTag);
        gradReceived = m_cpGroup->recvAsync(incoming, block, prev, kDkvTag);
        if (sent) {
            sent->wait();
            received->wait();
            std::swap(held, arriving);
        }
    }
    gradReceived->wait(); // this rank's own block, complete
    gradSent->wait();
    ops::copyColumns(stream(), dqkv + m_Cq, m_QKV, incoming, width, BT, width);
    if constexpr (!std::is_same_v<T, G>)
        ops::copyColumns(stream(), dqkv, m_QKV, dq, m_Cq, BT, m_Cq); // dqkv's q columns were zero
}

#define TRELLIS_RING_MEMBERS(T)                                                                                        \
    template void GptModel<T>::setContextParallelGroup(DeviceCommunicator *);                                                \
    template void GptModel<T>::forEachPositionRun(int, int, const std::function<void(int, int, int)> &) const;         \
    template void GptModel<T>::addPositionRows(T *, int, int);                                                         \
    template void GptModel<T>::ringAttentionForward(T *, typename GptModel<T>::G *, const T *);                       \
    template void GptModel<T>::ringAttentionBackward(T *, const T *, const T *, const typename GptModel<T>::G *,       \
                                                     const T *);
TRELLIS_RING_MEMBERS(float)
TRELLIS_RING_MEMBERS(double)
TRELLIS_RING_MEMBERS(kernels::bf16)
TRELLIS_RING_MEMBERS(kernels::f16)
#undef TRELLIS_RING_MEMBERS

} // namespace trellis::trainer
