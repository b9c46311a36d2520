// The trainer's side of a node's telemetry relay (protocol/relay.h). Started by the ranks themselves:
// the launch targets pass --node-relay to every rank; the ranks of a node find each other
// (MPI_Comm_split_type, shared memory), the node's first rank starts the relay — this same program
// with --relay, detached, its output in the relay folder's relay.log — and every rank's telemetry
// goes to it. Any rank of the node starts it again when acknowledgements stall and no relay holds
// the folder's lock; a rank that cannot get one running falls back to the supervisor itself. The
// same code path serves every launch target (local, SSH, Slurm): the relay is whatever trainer
// binary the ranks run, wherever they run.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trellis::trainer {

struct NodeRelay {
    std::string folder;   // node-local, 0700 (protocol/relay.h relayFolder)
    std::string endpoint; // ipc://FOLDER/relay.sock: where this rank sends
    std::string upstream; // the supervisor's receiver
    std::string keysPath; // the ranks' CURVE key file ("" none): the relay's keys toward the supervisor
    std::string runId;
    std::string name;     // "node8": the node of world rank 8, its first (Hello.relay)
    std::vector<std::uint32_t> ranks; // the world ranks on this node
    bool leader = false;              // the node's first rank
    bool detach = false;              // started with --detach: not a child of the starter (which may exec)

    // Starts a relay when none holds the folder's lock and waits up to a second for one to hold it:
    // whether one runs. Any thread.
    bool ensure() const;
    bool running() const;
    std::string rankList() const; // "8,9,10,11": its --ranks
};

// Collective over `world`: this rank's node's relay, or nullopt (a note on stderr) when the node
// has no usable folder for one; telemetry then goes straight to the supervisor.
std::optional<NodeRelay> setUpNodeRelay(MPI_Comm world, const std::string &runId, const std::string &upstream,
                                        const std::string &keysPath);

// This program's path (/proc/self/exe): the relay is the binary the ranks run. "" when unreadable.
std::string thisProgram();

// trellis-trainer --relay ...: the relay process (no MPI).
int relayMain(int argc, char **argv);

// The relay for a rank started by trellis-trainer --exec (a command of its own, no MPI here): the
// node's ranks are taken as consecutive world ranks from the launcher's local rank and size (how
// mpirun and srun place them by default; a rank that is not is refused by that relay and falls
// back). Starts it (detached) unless one runs; nullopt with a note on stderr when none can run.
std::optional<NodeRelay> setUpExecRelay(const std::string &runId, const std::string &upstream, const std::string &keysPath,
                                        std::uint32_t rank, std::uint32_t localRank, std::uint32_t localSize);

} // namespace trellis::trainer
