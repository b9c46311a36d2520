// Where a run's in-memory checkpoints live on a node (training.checkpoint.memory): the trainer
// writes there (backend/trainer/checkpoint/memory_store.h), the supervisor removes what a run that
// ended for good left there. One folder per run's checkpoint folder: its name is the user's id and
// the FNV-1a of the checkpoint folder's resolved path, so every attempt of a run — and the
// supervisor — finds the same one.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

namespace trellis::proto {

inline constexpr const char *kMemoryStoreRoot = "/dev/shm";
// The marker a run leaves when it is over: the store's holder then removes the store.
inline constexpr const char *kMemoryStoreDone = "done";
// How long a store outlives its run's last sign of life (its holder then removes it): past a
// hang's detection (60 s by default), the kill, the back-off and a relaunch.
inline constexpr int kMemoryStoreLeaseS = 600;

// trellis-UID-ckpt-HASH for the checkpoint folder `checkpointDir` (made absolute and resolved as
// far as it exists) on the host named `host`.
inline std::string memoryStoreName(const std::string &checkpointDir, const std::string &host)
{
    std::error_code ec;
    const std::string key =
        std::filesystem::weakly_canonical(std::filesystem::absolute(checkpointDir, ec), ec).string() + '\n' + host;
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const char c : key) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    char name[96];
    std::snprintf(name, sizeof name, "trellis-%u-ckpt-%016llx", static_cast<unsigned>(::getuid()), static_cast<unsigned long long>(h));
    return name;
}

// The same on this host.
inline std::string memoryStoreName(const std::string &checkpointDir)
{
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return memoryStoreName(checkpointDir, host);
}

} // namespace trellis::proto
