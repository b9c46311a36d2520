// Processes of this machine that outlive their starter: the node's telemetry relay
// (backend/trainer/telemetry/node_relay.h) and the memory store's holder
// (backend/trainer/checkpoint/memory_store.h) — started detached, one per folder by a lock.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace trellis::proto {

// The lock of the file at `path` (made 0600 when missing), held for the caller's life: a
// descriptor (kept open), -1 when another process holds it, -2 when the file cannot be opened.
// `waitMs` > 0: tried again every 10 ms for that long before -1 — what a process that means to
// hold the lock for its life passes, so a passing probe (relayRunning, memoryStoreHeld, which take
// the lock for an instant to see whether anyone holds it) is not taken for another holder.
int lockFile(const std::string &path, int waitMs = 0);

// `program` started with `args` (argv[0] first) in a session of its own, its signal mask empty, no
// descriptor inherited: standard input /dev/null, standard output and error appended to `log`
// (made 0600). Its pid, or -1 when it could not be started.
pid_t spawnDetached(const std::string &program, std::vector<std::string> args, const std::string &log);

} // namespace trellis::proto
