// A node's memory store for in-memory checkpoints (training.checkpoint.memory): a folder in shared
// memory (/dev/shm, 0700, its files 0600) holding the node's ranks' newest shards in the checkpoint
// layout (step-NNNNNNNN/ with meta.json written last and renamed into place, checkpoint.h), so a
// restart loads them with the same code and checks as a disk checkpoint — without reading the disk.
//
// The store outlives the MPI job: it is shared memory, and its holder — this same program with
// --hold-checkpoints, started by the node's first rank, detached (a session of its own, as the
// node's telemetry relay is) — keeps it while the run lives and removes it when the run ends: at
// once when the run says it is done (a `done` marker, after its last step), or when no rank has
// renewed the lease (a file the node's first rank touches every step) for the lease's length, so
// a run whose supervisor is gone leaves no shared memory behind. One holder per store (a lock in
// it). Its name is a hash of the run's checkpoint folder and the host's name, so a restart — same
// plan, same folder — finds it. On several nodes each node has its own, and the holders copy each
// node's to the next node's (memory_ring.h); a restart gathers a whole checkpoint from them
// (memory_restore.h).
#pragma once

#include "backend/protocol/memory_store_path.h"

#include <string>

namespace trellis::trainer {

// How long a store outlives its run's last sign of life (backend/protocol/memory_store_path.h).
constexpr int kMemoryStoreLeaseS = proto::kMemoryStoreLeaseS;

// The store of the run whose resolved checkpoint folder is `checkpointDir`, under `root` (default
// /dev/shm): ROOT/trellis-UID-ckpt-HASH. "" and `error` when root is not a folder.
std::string memoryStorePath(const std::string &checkpointDir, std::string &error, const std::string &root = "/dev/shm"); // proto::memoryStoreName

// The node's first rank at the start of a job: the store made (0700) and, unless one holds it, its
// holder started (`program`: this binary). fresh: a run that does not resume — what an earlier run
// with the same folder left in it is removed. ring: the run has several nodes, the holder joins
// their ring (memory_ring.h). "" or why not (the run then goes on without in-memory checkpoints).
std::string openMemoryStore(const std::string &store, const std::string &program, bool fresh, int leaseS = kMemoryStoreLeaseS,
                            bool ring = false);
// The lease renewed (the node's first rank, each step): cheap, a file's times.
void renewMemoryStoreLease(const std::string &store);
// The run is over: the holder removes the store and ends (the store removed here when no holder
// holds it).
void closeMemoryStore(const std::string &store);
// Whether a holder holds the store's lock now.
bool memoryStoreHeld(const std::string &store);

// trellis-trainer --hold-checkpoints --store DIR [--lease-s N] [--ring] [--detach]: the holder (no MPI).
int memoryHolderMain(int argc, char **argv);
// trellis-trainer --release-checkpoints --checkpoint-dir DIR: the run whose checkpoint folder is DIR
// is over for good; its store on this node is given back now (closeMemoryStore), not when the lease
// runs out. What a supervisor runs on each remote host of a run that failed or was stopped
// (launcher/targets: LaunchTarget::releaseMemoryCheckpoints). No MPI; says what it did on stdout.
int memoryReleaseMain(int argc, char **argv);

} // namespace trellis::trainer
