// In-memory checkpoints' side of a run (training_run.h, training.checkpoint.memory): each node's
// memory store opened by the node's first rank, the nodes' holders joined in a ring so each
// node's store is copied to the next's, and on a restart the folders to resume from — on several
// nodes after gathering a whole checkpoint into every node's store (memory_restore.h).
#include "backend/trainer/training_run.h"

#include "backend/trainer/checkpoint/memory_restore.h"
#include "backend/trainer/checkpoint/memory_ring.h"
#include "backend/trainer/checkpoint/memory_store.h"
#include "backend/trainer/telemetry/node_relay.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace trellis::trainer {
namespace {

constexpr std::size_t kRecordWords = 96; // a node's ring record: 768 characters, NUL-padded

std::vector<std::int64_t> packRecord(const std::string &text)
{
    std::vector<std::int64_t> words(kRecordWords, 0);
    std::memcpy(words.data(), text.data(), std::min(text.size(), kRecordWords * 8 - 1));
    return words;
}

std::string unpackRecord(const std::int64_t *words)
{
    const char *chars = reinterpret_cast<const char *>(words);
    return std::string(chars, strnlen(chars, kRecordWords * 8));
}

} // namespace

// The node's memory store opened by its first rank (made, its holder started; emptied when the run
// starts afresh), every rank told whether every node has one. Without one the run goes on with
// disk checkpoints only, and says why. The nodes are the ranks that share a host (MPI's shared-
// memory split); on several, each node's store is also copied to the next node's.
void TrainingRun::openMemoryCheckpoints()
{
    if (!m_plan.training.checkpoint.memory.given || m_checkpointDir.empty())
        return;
    MPI_Comm shared;
    MPI_Comm_split_type(m_world.handle(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    int local = 0;
    MPI_Comm_rank(shared, &local);
    MPI_Comm_free(&shared);
    m_nodeLeader = local == 0;
    const std::vector<std::int32_t> leaders = m_world.host().allGather(static_cast<std::int32_t>(m_nodeLeader ? 1 : 0));
    m_nodes = static_cast<int>(std::count(leaders.begin(), leaders.end(), 1));
    std::string error;
    const std::string store = memoryStorePath(m_checkpointDir, error);
    if (m_nodeLeader && !store.empty())
        error = openMemoryStore(store, thisProgram(), !m_options.resume, kMemoryStoreLeaseS, m_nodes > 1);
    std::int32_t failed = store.empty() || !error.empty() ? 1 : 0;
    failed = m_world.host().allReduce(failed, ReduceOp::Max);
    if (!failed) {
        m_memoryStore = store;
        if (m_nodes > 1) {
            m_memoryCheckpoints.placeOnEveryNode(m_nodeLeader);
            joinMemoryRing(leaders);
        }
        return;
    }
    if (m_rank == 0) {
        const std::string text = "no in-memory checkpoints: " + (error.empty() ? std::string("another node has no memory store") : error) +
                                 "; disk checkpoints only";
        std::fprintf(stderr, "trellis-trainer: %s\n", text.c_str());
        publishEvent(proto::Event::INFO, 0, text);
    }
}

// Every node's first rank says where its holder listens and its keys (ring.self); each then tells
// its holder the next node's (ring.next) and the previous node's client key (ring.prev). When a
// holder cannot listen, the stores stay each on its node, said: a node's loss then falls back to
// the disk.
void TrainingRun::joinMemoryRing(const std::vector<std::int32_t> &leaders)
{
    std::string mine;
    if (m_nodeLeader) {
        std::string error;
        if (const auto self = readRingSelf(m_memoryStore, 5000, error))
            mine = hostAddresses() + "|" + std::to_string(self->port) + "|" + self->serverPublic + "|" + self->clientPublic;
        else
            mine = "!" + error;
    }
    const std::vector<std::int64_t> packed = packRecord(mine);
    const std::vector<std::int64_t> all = m_world.host().allGather(std::span<const std::int64_t>(packed));
    std::vector<RingEndpoint> nodes;
    std::string why;
    int me = -1;
    for (std::size_t r = 0; r < leaders.size(); ++r) {
        if (!leaders[r])
            continue;
        if (static_cast<int>(r) == m_rank)
            me = static_cast<int>(nodes.size());
        const std::string record = unpackRecord(all.data() + r * kRecordWords);
        RingEndpoint e;
        const auto bar1 = record.find('|'), bar2 = record.find('|', bar1 + 1), bar3 = record.find('|', bar2 + 1);
        if (record.rfind('!', 0) == 0 || bar3 == std::string::npos) {
            why = "rank " + std::to_string(r) + "'s node: " + (record.empty() ? std::string("no answer") : record.substr(record[0] == '!' ? 1 : 0));
        } else {
            e.addresses = record.substr(0, bar1);
            e.port = std::atoi(record.substr(bar1 + 1, bar2 - bar1 - 1).c_str());
            e.serverPublic = record.substr(bar2 + 1, bar3 - bar2 - 1);
            e.clientPublic = record.substr(bar3 + 1);
        }
        nodes.push_back(e);
    }
    if (!why.empty()) {
        if (m_rank == 0) {
            const std::string text = "in-memory checkpoints stay on each of the " + std::to_string(m_nodes) + " nodes, no copy on the next (" +
                                     why + "): a node's loss falls back to the disk";
            std::fprintf(stderr, "trellis-trainer: %s\n", text.c_str());
            publishEvent(proto::Event::INFO, 0, text);
        }
        return;
    }
    if (m_nodeLeader) {
        const int n = static_cast<int>(nodes.size());
        const RingEndpoint &next = nodes[static_cast<std::size_t>((me + 1) % n)];
        const RingEndpoint &prev = nodes[static_cast<std::size_t>((me + n - 1) % n)];
        if (const std::string e = writeRingNeighbours(m_memoryStore, next, prev.clientPublic, m_plan.training.checkpoint.memory.keep);
            !e.empty())
            std::fprintf(stderr, "trellis-trainer: rank %d: %s: no copy of this node's in-memory checkpoints on the next node\n", m_rank,
                         e.c_str());
    }
}

// The folders a restart looks in, the memory store first ("" where it has nothing whole), and a
// note for the restart's event. On several nodes the stores are first made whole (collective).
std::vector<std::string> TrainingRun::memoryFoldersToResumeFrom(std::string &note)
{
    if (m_memoryStore.empty() || m_nodes <= 1)
        return {m_memoryStore, m_checkpointDir};
    const MemoryRestore r = gatherMemoryCheckpoint(m_world, m_nodeLeader, m_nodeLeader ? m_memoryStore : std::string());
    if (r.step == 0) {
        note = "; none whole across the " + std::to_string(m_nodes) + " nodes' stores and their peer copies";
        return {std::string(), m_checkpointDir};
    }
    if (r.fromOtherNodes > 0 || r.fromPeerCopies > 0)
        note = " (gathered: " + std::to_string(r.fromOtherNodes) + " files from the other nodes' stores, " +
               std::to_string(r.fromPeerCopies) + " from peer copies)";
    return {m_memoryStore, m_checkpointDir};
}

} // namespace trellis::trainer
