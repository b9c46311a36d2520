// A restart from in-memory checkpoints on several nodes: each node's memory store holds its own
// ranks' shards of each save and, under peer/, the previous node's (memory_ring.h) — none holds a
// whole checkpoint. Before loading, the nodes' first ranks say what they hold, agree on the newest
// step whose every shard is somewhere (its own node, or the next node's copy of a node that was
// lost), and bring every node's store the shards it lacks over the job's MPI, so that each node
// then loads a whole checkpoint from its own memory with loadCheckpoint's usual checks.
#pragma once

#include "backend/trainer/comm/mpi_communicator.h"

#include <cstdint>
#include <string>

namespace trellis::trainer {

struct MemoryRestore {
    std::uint64_t step = 0; // the step every node's store now holds whole (0: none — load from disk)
    int fromOtherNodes = 0; // shards this run's nodes took from another node's store
    int fromPeerCopies = 0; // of them, from a peer copy (a node's own shards lost with its memory)
};

// Collective over `world`. `leader`: this rank is its node's first (it reads and writes `store`,
// its node's memory store; the other ranks pass ""). Steps newer than the one chosen, which no
// restart can use, are removed from the stores.
MemoryRestore gatherMemoryCheckpoint(MpiCommunicator &world, bool leader, const std::string &store);

} // namespace trellis::trainer
