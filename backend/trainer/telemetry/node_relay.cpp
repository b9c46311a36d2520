// See node_relay.h.
#include "backend/trainer/telemetry/node_relay.h"

#include "backend/protocol/curve_keys.h"
#include "backend/protocol/detached.h"
#include "backend/protocol/exit_codes.h"
#include "backend/protocol/relay.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

namespace trellis::trainer {

namespace {

std::string joinRanks(const std::vector<std::uint32_t> &ranks)
{
    std::string s;
    for (std::uint32_t r : ranks) {
        if (!s.empty())
            s += ',';
        s += std::to_string(r);
    }
    return s;
}

// Relays this process started, reaped when they end (they live in their own session).
std::mutex g_childrenMutex;
std::vector<pid_t> g_children;

void reapChildren()
{
    std::lock_guard lock(g_childrenMutex);
    std::erase_if(g_children, [](pid_t pid) { return ::waitpid(pid, nullptr, WNOHANG) != 0; });
}

// This program again, with --relay: detached (its own session, no inherited descriptors), its
// output appended to the folder's relay.log.
bool spawnRelay(const NodeRelay &r)
{
    const std::string self = thisProgram();
    if (self.empty())
        return false;
    std::vector<std::string> args{"trellis-trainer", "--relay", "--run-id", r.runId, "--folder", r.folder,
                                  "--endpoint", r.upstream, "--ranks", r.rankList()};
    if (!r.keysPath.empty())
        args.insert(args.end(), {"--telemetry-keys", r.keysPath});
    if (r.detach)
        args.emplace_back("--detach");
    const pid_t pid = proto::spawnDetached(self, std::move(args), r.folder + "/relay.log");
    if (pid < 0)
        return false;
    if (r.detach) { // it leaves at once: reaped here, the relay is nobody's child
        ::waitpid(pid, nullptr, 0);
        return true;
    }
    std::lock_guard lock(g_childrenMutex);
    g_children.push_back(pid);
    return true;
}

} // namespace

std::string thisProgram()
{
    char self[4096];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    return n > 0 ? std::string(self, static_cast<std::size_t>(n)) : std::string();
}

std::string NodeRelay::rankList() const { return joinRanks(ranks); }

bool NodeRelay::running() const
{
    return proto::relayRunning(folder);
}

bool NodeRelay::ensure() const
{
    reapChildren();
    if (running())
        return true;
    if (!spawnRelay(*this))
        return false;
    for (int i = 0; i < 50; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (running())
            return true;
    }
    return false;
}

std::optional<NodeRelay> setUpExecRelay(const std::string &runId, const std::string &upstream, const std::string &keysPath,
                                        std::uint32_t rank, std::uint32_t localRank, std::uint32_t localSize)
{
    if (localRank > rank || localRank >= localSize)
        return std::nullopt;
    NodeRelay r;
    r.runId = runId;
    r.upstream = upstream;
    r.keysPath = keysPath;
    r.leader = localRank == 0;
    r.detach = true;
    const std::uint32_t first = rank - localRank;
    for (std::uint32_t x = first; x < first + localSize; ++x)
        r.ranks.push_back(x);
    r.name = "node" + std::to_string(first);
    std::string error;
    r.folder = proto::relayFolder(runId, r.name, error);
    if (r.folder.empty()) {
        std::fprintf(stderr, "trellis-trainer --exec: rank %u: no telemetry relay on this node (%s); sending to the supervisor directly\n",
                     rank, error.c_str());
        return std::nullopt;
    }
    r.endpoint = proto::relayEndpoint(r.folder);
    // The node's first rank starts it; the others give it 3 s, then start one themselves (the
    // folder's lock keeps one).
    for (int i = 0; !r.leader && i < 150 && !r.running(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!r.ensure()) {
        std::fprintf(stderr, "trellis-trainer --exec: rank %u: the node's telemetry relay did not start (see %s/relay.log); "
                             "sending to the supervisor directly\n", rank, r.folder.c_str());
        return std::nullopt;
    }
    return r;
}

std::optional<NodeRelay> setUpNodeRelay(MPI_Comm world, const std::string &runId, const std::string &upstream,
                                        const std::string &keysPath)
{
    int rank = 0;
    MPI_Comm_rank(world, &rank);
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int nodeSize = 1, nodeRank = 0;
    MPI_Comm_size(node, &nodeSize);
    MPI_Comm_rank(node, &nodeRank);
    std::vector<int> ranks(static_cast<std::size_t>(nodeSize));
    MPI_Allgather(&rank, 1, MPI_INT, ranks.data(), 1, MPI_INT, node);

    NodeRelay r;
    r.runId = runId;
    r.upstream = upstream;
    r.keysPath = keysPath;
    r.leader = nodeRank == 0;
    for (int x : ranks)
        r.ranks.push_back(static_cast<std::uint32_t>(x));
    std::string error;
    r.name = "node" + std::to_string(ranks.front());
    r.folder = proto::relayFolder(runId, r.name, error);
    // Every rank of the node uses the relay, or none does.
    int ok = r.folder.empty() ? 0 : 1, allOk = 0;
    MPI_Allreduce(&ok, &allOk, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    if (!allOk) {
        if (!error.empty())
            std::fprintf(stderr, "trellis-trainer: rank %d: no telemetry relay on this node (%s); sending to the supervisor directly\n",
                         rank, error.c_str());
        return std::nullopt;
    }
    r.endpoint = proto::relayEndpoint(r.folder);
    if (r.leader && !r.ensure())
        std::fprintf(stderr, "trellis-trainer: rank %d: the node's telemetry relay did not start (see %s/relay.log); "
                             "its ranks fall back to the supervisor when it stays away\n", rank, r.folder.c_str());
    return r;
}

namespace {

std::atomic<bool> g_stop{false};
// How long the folders of finished relays (their relay.log) stay on a node before a relay that
// starts there removes them.
constexpr std::int64_t kRelayFolderKeepS = 24 * 3600;

void onSignal(int) { g_stop = true; }

void relayUsage(std::FILE *to)
{
    std::fprintf(to,
                 "usage: trellis-trainer --relay --run-id ID --folder DIR --endpoint SUPERVISOR --ranks R,R,...\n"
                 "                       [--telemetry-keys FILE] [--idle-exit-s N] [--detach]\n"
                 "A node's telemetry relay: the node's ranks connect to ipc://DIR/relay.sock, and their telemetry goes on to\n"
                 "SUPERVISOR over one connection (CURVE with the keys of FILE). The ranks start it themselves (--node-relay);\n"
                 "one relay per DIR (a lock in it): a second one exits at once. It ends when every rank's Goodbye is\n"
                 "acknowledged, or when no rank has been heard from for N seconds (default 30). --detach: it leaves\n"
                 "its starter at once (a process of its own session, not the starter's child).\n");
}

std::vector<std::uint32_t> parseRanks(const std::string &list, std::string &error)
{
    std::vector<std::uint32_t> out;
    std::size_t start = 0;
    while (start <= list.size()) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        const std::string item = list.substr(start, comma - start);
        char *end = nullptr;
        const unsigned long v = std::strtoul(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || v > 0xFFFFFFFFul) {
            error = "--ranks: '" + item + "' is not a rank";
            return {};
        }
        out.push_back(static_cast<std::uint32_t>(v));
        start = comma + 1;
    }
    return out;
}

struct RelayArgs {
    proto::RelayOptions options;
    std::string folder, keysPath;
    bool detach = false, help = false;
};

// The command line into `a`: empty, or what is wrong ("usage" when only the usage says it).
std::string parseRelayArgs(int argc, char **argv, RelayArgs &a)
{
    proto::RelayOptions &o = a.options;
    std::string error;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            a.help = true;
            return {};
        }
        if (arg == "--detach") {
            a.detach = true;
            continue;
        }
        if (i + 1 >= argc)
            return arg + " needs a value";
        const std::string value = argv[++i];
        if (arg == "--run-id") o.runId = value;
        else if (arg == "--folder") a.folder = value;
        else if (arg == "--endpoint") o.upstream = value;
        else if (arg == "--telemetry-keys") a.keysPath = value;
        else if (arg == "--ranks") o.ranks = parseRanks(value, error);
        else if (arg == "--idle-exit-s") o.idleExitMs = std::max(1, std::atoi(value.c_str())) * 1000;
        else
            return "unknown argument '" + arg + "'";
        if (!error.empty())
            return error;
    }
    if (o.runId.empty() || a.folder.empty() || o.upstream.empty() || o.ranks.empty())
        return "usage";
    if (!a.keysPath.empty()) {
        const auto keys = proto::readCurveKeys(a.keysPath, error);
        if (!keys || !keys->hasClient())
            return keys ? "--telemetry-keys: the file lacks the client keys" : error;
        o.curve = keys->forRanks();
    }
    return {};
}

// The relay's life once it holds its folder: listen, forward until every rank said goodbye, no
// rank was heard from for the idle time, or a signal; then say what it did.
int serveRelay(proto::RelayOptions &o, const std::string &folder)
{
    ::unlink(proto::relaySocketPath(folder).c_str()); // a dead relay's: the lock says none is alive
    proto::sweepOldRelayFolders(folder, kRelayFolderKeepS);
    o.listen = proto::relayEndpoint(folder);
    zmq::context_t context(1);
    proto::Relay relay(context, o);
    if (const std::string why = relay.open(); !why.empty()) {
        std::fprintf(stderr, "trellis-trainer --relay: %s\n", why.c_str());
        return proto::kExitUsage;
    }
    std::ofstream(folder + "/relay.pid") << ::getpid() << "\n";
    std::signal(SIGTERM, onSignal);
    std::signal(SIGINT, onSignal);
    std::uint64_t refusals = 0;
    relay.setOnRefusal([&](const std::string &why) {
        if (++refusals <= 20 || refusals % 1000 == 0)
            std::fprintf(stderr, "relay: refused (%llu so far): %s\n", static_cast<unsigned long long>(refusals), why.c_str());
    });
    std::fprintf(stderr, "relay: run %s, ranks %s: pid %d, listening on %s, sending to %s\n", o.runId.c_str(),
                 joinRanks(o.ranks).c_str(), static_cast<int>(::getpid()), o.listen.c_str(), o.upstream.c_str());
    std::fflush(stderr);
    proto::Relay::State state = proto::Relay::State::Running;
    while (!g_stop && state == proto::Relay::State::Running)
        state = relay.poll(200);
    const proto::RelayStats &s = relay.stats();
    std::fprintf(stderr, "relay: ended (%s): %llu messages forwarded in %llu frames, %llu acknowledgements delivered, %llu refused\n",
                 state == proto::Relay::State::Finished ? "every rank said goodbye"
                 : state == proto::Relay::State::Idle   ? "no rank heard from"
                                                        : "stopped by a signal",
                 static_cast<unsigned long long>(s.envelopesUp), static_cast<unsigned long long>(s.framesUp),
                 static_cast<unsigned long long>(s.acksDown), static_cast<unsigned long long>(s.refused));
    ::unlink(proto::relaySocketPath(folder).c_str());
    return proto::kExitOk;
}

} // namespace

int relayMain(int argc, char **argv)
{
    RelayArgs a;
    if (const std::string wrong = parseRelayArgs(argc, argv, a); !wrong.empty()) {
        if (wrong != "usage")
            std::fprintf(stderr, "trellis-trainer --relay: %s\n", wrong.c_str());
        if (wrong == "usage" || wrong.starts_with("unknown argument"))
            relayUsage(stderr);
        return proto::kExitUsage;
    }
    if (a.help) {
        relayUsage(stdout);
        return proto::kExitOk;
    }
    if (a.detach) { // nothing runs on another thread yet
        const pid_t child = ::fork();
        if (child > 0)
            return proto::kExitOk; // the starter reaps this at once; the relay goes on in the child
        if (child == 0)
            ::setsid();
    }
    const int lock = proto::lockRelayFolder(a.folder, 1000); // relayRunning() holds it for an instant
    if (lock == -1)
        return proto::kExitOk; // another relay serves this node
    if (lock < 0) {
        std::fprintf(stderr, "trellis-trainer --relay: cannot lock %s/relay.lock: %s\n", a.folder.c_str(), std::strerror(errno));
        return proto::kExitUsage;
    }
    return serveRelay(a.options, a.folder);
}

} // namespace trellis::trainer
