// See memory_store.h.
#include "backend/trainer/checkpoint/memory_store.h"

#include "backend/trainer/checkpoint/memory_ring.h"

#include "backend/protocol/detached.h"
#include "backend/protocol/exit_codes.h"
#include "backend/protocol/memory_store_path.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>
#include <vector>

namespace trellis::trainer {
namespace fs = std::filesystem;
namespace {

constexpr const char *kLock = "holder.lock", *kLease = "lease", *kDone = proto::kMemoryStoreDone;

// The store's lock, held by its holder for the holder's life (proto::lockFile); `waitMs` as there.
int lockStore(const std::string &store, int waitMs = 0) { return proto::lockFile(store + "/" + kLock, waitMs); }

void touch(const std::string &path)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0) {
        ::futimens(fd, nullptr);
        ::close(fd);
    }
}

// Everything in the store but what its holder keeps there (its lock, where it listens, its log):
// a fresh run's start.
void emptyStore(const std::string &store)
{
    std::error_code ec;
    for (const auto &entry : fs::directory_iterator(store, ec))
        if (const std::string name = entry.path().filename().string(); name != kLock && name != "ring.self" && name != "ring.log")
            fs::remove_all(entry.path(), ec);
}

// The holder: this program again, detached (its own session, no inherited descriptors, output to
// /dev/null — the store it would log into goes with the run). It leaves at once (--detach): reaped
// here, the holder is nobody's child.
bool spawnHolder(const std::string &program, const std::string &store, int leaseS, bool ring)
{
    std::vector<std::string> args = {"trellis-trainer", "--hold-checkpoints", "--store", store, "--lease-s", std::to_string(leaseS), "--detach"};
    if (ring)
        args.push_back("--ring");
    const pid_t pid = proto::spawnDetached(program, std::move(args), "/dev/null");
    if (pid < 0)
        return false;
    ::waitpid(pid, nullptr, 0);
    return true;
}

volatile std::sig_atomic_t g_stop = 0;
void onSignal(int) { g_stop = 1; }

void holderUsage(std::FILE *to)
{
    std::fprintf(to, "usage: trellis-trainer --hold-checkpoints --store DIR [--lease-s N] [--ring] [--detach]\n"
                     "Holds a node's memory store of in-memory checkpoints (training.checkpoint.memory) for its run: started by\n"
                     "the node's first rank, it outlives the job's processes, and removes DIR and ends when the run says it is\n"
                     "done (DIR/done), when no rank has renewed DIR/lease for N seconds (default 600), or on SIGTERM. One\n"
                     "holder per DIR (a lock in it): a second one exits at once. --detach: it leaves its starter at once.\n"
                     "--ring: the run has several nodes: it listens for the previous node's holder (TCP, CURVE; DIR/ring.self\n"
                     "says where) and sends this node's newest checkpoint to the next node's (DIR/ring.next, written by the\n"
                     "node's first rank), keeping the previous node's in DIR/peer (backend/trainer/checkpoint/memory_ring.h).\n");
}

void releaseUsage(std::FILE *to)
{
    std::fprintf(to, "usage: trellis-trainer --release-checkpoints --checkpoint-dir DIR\n"
                     "Gives back this node's memory store of in-memory checkpoints (training.checkpoint.memory) of the run whose\n"
                     "checkpoint folder is DIR (as the ranks read it: absolute, or relative to the folder this runs in): its\n"
                     "holder removes it and ends. For a run that is over for good; a supervisor runs it on each remote host of a\n"
                     "run that failed or was stopped, so the store does not wait for its lease. Nothing here: nothing done.\n");
}

} // namespace

std::string memoryStorePath(const std::string &checkpointDir, std::string &error, const std::string &root)
{
    std::error_code ec;
    if (!fs::is_directory(root, ec)) {
        error = root + " is not a folder here (in-memory checkpoints keep their shards in shared memory there)";
        return {};
    }
    return (fs::path(root) / proto::memoryStoreName(checkpointDir)).string();
}

std::string openMemoryStore(const std::string &store, const std::string &program, bool fresh, int leaseS, bool ring)
{
    if (::mkdir(store.c_str(), 0700) != 0 && errno != EEXIST)
        return store + ": cannot be made (" + std::strerror(errno) + ")";
    struct stat st {};
    if (::lstat(store.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid())
        return store + ": not a folder of this user's";
    ::chmod(store.c_str(), 0700);
    if (fresh)
        emptyStore(store);
    ::unlink((store + "/" + kDone).c_str()); // a run going on again (a restart after the last step's save, say)
    touch(store + "/" + kLease);
    if (memoryStoreHeld(store))
        return {};
    if (program.empty() || !spawnHolder(program, store, leaseS, ring))
        return store + ": its holder could not be started";
    for (int i = 0; i < 100; ++i) { // up to 2 s for it to take the lock
        if (memoryStoreHeld(store))
            return {};
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return store + ": its holder did not start";
}

void renewMemoryStoreLease(const std::string &store) { touch(store + "/" + kLease); }

void closeMemoryStore(const std::string &store)
{
    if (!memoryStoreHeld(store)) {
        std::error_code ec;
        fs::remove_all(store, ec);
        return;
    }
    touch(store + "/" + kDone);
}

bool memoryStoreHeld(const std::string &store)
{
    const int fd = lockStore(store);
    if (fd == -1)
        return true;
    if (fd >= 0)
        ::close(fd);
    return false;
}

int memoryHolderMain(int argc, char **argv)
{
    std::string store;
    int leaseS = kMemoryStoreLeaseS;
    bool detach = false, ring = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--hold-checkpoints")
            continue;
        if (a == "--help" || a == "-h") {
            holderUsage(stdout);
            return proto::kExitOk;
        }
        if (a == "--detach") {
            detach = true;
        } else if (a == "--ring") {
            ring = true;
        } else if (a == "--store" && i + 1 < argc) {
            store = argv[++i];
        } else if (a == "--lease-s" && i + 1 < argc) {
            char *end = nullptr;
            const long v = std::strtol(argv[++i], &end, 10);
            if (!end || *end || v < 1 || v > 7 * 24 * 3600) {
                std::fprintf(stderr, "trellis-trainer --hold-checkpoints: --lease-s must be 1 to 604800 seconds, got '%s'\n", argv[i]);
                return proto::kExitUsage;
            }
            leaseS = static_cast<int>(v);
        } else {
            std::fprintf(stderr, "trellis-trainer --hold-checkpoints: unknown argument '%s'\n", a.c_str());
            holderUsage(stderr);
            return proto::kExitUsage;
        }
    }
    if (store.empty() || fs::path(store).filename().string().rfind("trellis-", 0) != 0) {
        std::fprintf(stderr, "trellis-trainer --hold-checkpoints: --store must name a memory store (a trellis-… folder)\n");
        holderUsage(stderr);
        return proto::kExitUsage;
    }
    if (detach) { // nothing runs on another thread yet
        const pid_t child = ::fork();
        if (child > 0)
            return proto::kExitOk; // the starter reaps this at once; the holder goes on in the child
        if (child == 0)
            ::setsid();
    }
    const int lock = lockStore(store, 1000); // a rank's memoryStoreHeld() holds it for an instant
    if (lock == -1)
        return proto::kExitOk; // another holder has it
    if (lock < 0)
        return proto::kExitUsage;
    std::signal(SIGTERM, onSignal);
    std::signal(SIGINT, onSignal);
    std::signal(SIGHUP, SIG_IGN);
    const std::string lease = store + "/" + kLease, done = store + "/" + kDone;
    std::optional<MemoryRing> peers;
    if (ring) {
        peers.emplace(store);
        peers->start(); // no ring: ring.self says why, for the node's first rank
    }
    while (!g_stop) {
        if (peers)
            peers->poll(200);
        else
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        struct stat st {};
        if (::stat(store.c_str(), &st) != 0)
            return proto::kExitOk; // removed under it
        if (::stat(done.c_str(), &st) == 0)
            break;
        if (::stat(lease.c_str(), &st) != 0 || std::time(nullptr) - st.st_mtime > leaseS)
            break;
    }
    peers.reset();
    std::error_code ec;
    fs::remove_all(store, ec); // the lock goes with it
    ::close(lock);
    return proto::kExitOk;
}

int memoryReleaseMain(int argc, char **argv)
{
    std::string dir;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--release-checkpoints")
            continue;
        if (a == "--help" || a == "-h") {
            releaseUsage(stdout);
            return proto::kExitOk;
        }
        if (a == "--checkpoint-dir" && i + 1 < argc) {
            dir = argv[++i];
        } else {
            std::fprintf(stderr, "trellis-trainer --release-checkpoints: unknown argument '%s'\n", a.c_str());
            releaseUsage(stderr);
            return proto::kExitUsage;
        }
    }
    if (dir.empty()) {
        std::fprintf(stderr, "trellis-trainer --release-checkpoints: --checkpoint-dir DIR is required\n");
        releaseUsage(stderr);
        return proto::kExitUsage;
    }
    std::string error;
    const std::string store = memoryStorePath(dir, error);
    std::error_code ec;
    if (store.empty() || !fs::is_directory(fs::symlink_status(store, ec))) {
        std::printf("no in-memory checkpoints of %s on this node\n", dir.c_str());
        return proto::kExitOk;
    }
    struct stat st {};
    if (::lstat(store.c_str(), &st) != 0 || st.st_uid != ::getuid()) {
        std::fprintf(stderr, "trellis-trainer --release-checkpoints: %s is not this user's: left alone\n", store.c_str());
        return proto::kExitIoError;
    }
    closeMemoryStore(store);
    for (int i = 0; i < 50 && fs::exists(store, ec); ++i) // its holder looks every 200 ms
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (fs::exists(store, ec)) {
        std::fprintf(stderr, "trellis-trainer --release-checkpoints: %s is still there 2.5 s after its holder was told\n", store.c_str());
        return proto::kExitIoError;
    }
    std::printf("released %s\n", store.c_str());
    return proto::kExitOk;
}

} // namespace trellis::trainer
