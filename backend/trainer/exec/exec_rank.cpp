// See exec_rank.h.
#include "backend/trainer/exec/exec_rank.h"

#include "backend/protocol/exit_codes.h"
#include "backend/trainer/telemetry/node_relay.h"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace trellis::trainer {

namespace {

const char *env(const char *name)
{
    const char *v = std::getenv(name);
    return v && *v ? v : nullptr;
}

// The first of `names` that is set.
const char *firstEnv(std::initializer_list<const char *> names)
{
    for (const char *n : names)
        if (const char *v = env(n))
            return v;
    return nullptr;
}

bool validName(const std::string &name)
{
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
        return false;
    for (char ch : name)
        if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'))
            return false;
    return true;
}

// --node-relay: this rank's telemetry goes through its node's relay, started here unless one runs.
// The command's client is pointed at the relay (plain ipc, no keys) and told how to start it again
// or reach the supervisor itself should it go (TRELLIS_RELAY_*; python/trellis_telemetry does both).
void useNodeRelay(const char *rank, const char *localRank, const char *localSize)
{
    const char *runId = env("TRELLIS_RUN_ID"), *endpoint = env("TRELLIS_TELEMETRY_ENDPOINT");
    if (!runId || !endpoint || !localRank || !localSize)
        return; // nothing to relay, or the node's ranks cannot be told: straight to the supervisor
    const std::string upstream = endpoint, keys = env("TRELLIS_TELEMETRY_KEYS") ? env("TRELLIS_TELEMETRY_KEYS") : "";
    const auto relay = setUpExecRelay(runId, upstream, keys, static_cast<std::uint32_t>(std::strtoul(rank, nullptr, 10)),
                                      static_cast<std::uint32_t>(std::strtoul(localRank, nullptr, 10)),
                                      static_cast<std::uint32_t>(std::strtoul(localSize, nullptr, 10)));
    if (!relay)
        return;
    ::setenv("TRELLIS_RELAY_UPSTREAM", upstream.c_str(), 1);
    if (!keys.empty())
        ::setenv("TRELLIS_RELAY_UPSTREAM_KEYS", keys.c_str(), 1);
    ::unsetenv("TRELLIS_TELEMETRY_KEYS"); // the relay's socket is this node's, in a 0700 folder
    ::setenv("TRELLIS_TELEMETRY_ENDPOINT", relay->endpoint.c_str(), 1);
    ::setenv("TRELLIS_RELAY_FOLDER", relay->folder.c_str(), 1);
    ::setenv("TRELLIS_RELAY_NAME", relay->name.c_str(), 1);
    ::setenv("TRELLIS_RELAY_RANKS", relay->rankList().c_str(), 1);
    ::setenv("TRELLIS_RELAY_PROGRAM", thisProgram().c_str(), 1);
}

int usage(const char *why)
{
    if (why)
        std::fprintf(stderr, "trellis-trainer --exec: %s\n", why);
    std::fprintf(why ? stderr : stdout,
                 "usage: trellis-trainer --exec [--run-id ID] [--endpoint URL] [--telemetry-keys FILE] [--protocol N]\n"
                 "                              [--heartbeat-ms N] [--master-addr HOST] [--master-port PORT]\n"
                 "                              [--restart-count N] [--checkpoint-dir DIR] [--dir DIR] [--env NAME=VALUE]...\n"
                 "                              [--node-relay]\n"
                 "                              -- COMMAND [ARGUMENT]...\n"
                 "Runs COMMAND as this rank of a job, with RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and\n"
                 "MASTER_PORT set as torchrun sets them (from mpirun's or Slurm's variables) and the TRELLIS_* telemetry\n"
                 "variables the trellis_telemetry client reads. No shell is involved. Started by the launcher; see docs/pytorch.md.\n");
    return proto::kExitUsage;
}

struct ExecOptions {
    std::vector<std::pair<std::string, std::string>> vars; // set in the command's environment
    std::string dir, masterAddr, masterPort;
    int first = -1; // argv index of the command
    bool nodeRelay = false;
    bool help = false;
};

// The options before `--`: an empty string, or what is wrong with them.
std::string parseOptions(int argc, char **argv, ExecOptions &o)
{
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--") {
            o.first = i + 1;
            break;
        }
        if (arg == "--help" || arg == "-h") {
            o.help = true;
            return {};
        }
        if (arg == "--node-relay") {
            o.nodeRelay = true;
            continue;
        }
        if (i + 1 >= argc)
            return arg + " needs a value";
        const std::string value = argv[++i];
        if (arg == "--run-id") o.vars.emplace_back("TRELLIS_RUN_ID", value);
        else if (arg == "--endpoint") o.vars.emplace_back("TRELLIS_TELEMETRY_ENDPOINT", value);
        else if (arg == "--telemetry-keys") o.vars.emplace_back("TRELLIS_TELEMETRY_KEYS", value);
        else if (arg == "--protocol") o.vars.emplace_back("TRELLIS_PROTOCOL_VERSION", value);
        else if (arg == "--heartbeat-ms") o.vars.emplace_back("TRELLIS_HEARTBEAT_MS", value);
        else if (arg == "--restart-count") {
            o.vars.emplace_back("TRELLIS_RESTART_COUNT", value);
            o.vars.emplace_back("TORCHELASTIC_RESTART_COUNT", value);
        } else if (arg == "--checkpoint-dir") o.vars.emplace_back("TRELLIS_CHECKPOINT_DIR", value);
        else if (arg == "--master-addr") o.masterAddr = value;
        else if (arg == "--master-port") o.masterPort = value;
        else if (arg == "--dir") o.dir = value;
        else if (arg == "--env") {
            const auto eq = value.find('=');
            if (eq == std::string::npos || !validName(value.substr(0, eq)))
                return "--env takes NAME=VALUE with NAME of letters, digits and _, not '" + value + "'";
            o.vars.emplace_back(value.substr(0, eq), value.substr(eq + 1));
        } else
            return "unknown option " + arg;
    }
    if (o.first < 0 || o.first >= argc)
        return "no command after --";
    return {};
}

// Who this rank is — mpirun's variables, else Slurm's (srun), else torchrun's own (already set) —
// told to the command as torchrun tells it, with the options' variables. Empty, or what failed.
std::string setRankVariables(ExecOptions &o, std::string &rankText)
{
    const char *rank = firstEnv({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID", "RANK"});
    const char *size = firstEnv({"OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS", "WORLD_SIZE"});
    const char *localRank = firstEnv({"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "LOCAL_RANK"});
    const char *localSize = firstEnv({"OMPI_COMM_WORLD_LOCAL_SIZE", "LOCAL_WORLD_SIZE"});
    if (!rank || !size)
        return "cannot tell this process's rank: none of OMPI_COMM_WORLD_RANK, PMIX_RANK, SLURM_PROCID or RANK is set "
               "(start it under mpirun or srun)";
    rankText = rank;
    const std::string sizeText = size;
    o.vars.emplace_back("RANK", rankText);
    o.vars.emplace_back("WORLD_SIZE", sizeText);
    o.vars.emplace_back("LOCAL_RANK", localRank ? localRank : rankText.c_str());
    o.vars.emplace_back("LOCAL_WORLD_SIZE", localSize ? localSize : sizeText.c_str());
    if (!o.masterAddr.empty())
        o.vars.emplace_back("MASTER_ADDR", o.masterAddr);
    else if (!env("MASTER_ADDR"))
        o.vars.emplace_back("MASTER_ADDR", "127.0.0.1");
    if (!o.masterPort.empty())
        o.vars.emplace_back("MASTER_PORT", o.masterPort);
    for (const auto &[name, value] : o.vars)
        if (::setenv(name.c_str(), value.c_str(), 1) != 0)
            return "cannot set " + name;
    if (o.nodeRelay)
        useNodeRelay(rankText.c_str(), localRank, localSize);
    return {};
}

// The checkpoint folder made absolute: relative to where the rank started (its run folder), not to
// the command's folder. Made if missing; the command reports it if it matters.
void absoluteCheckpointDir()
{
    if (const char *ckpt = env("TRELLIS_CHECKPOINT_DIR")) {
        std::error_code ec;
        const std::filesystem::path absolute = std::filesystem::absolute(ckpt, ec);
        if (!ec)
            ::setenv("TRELLIS_CHECKPOINT_DIR", absolute.c_str(), 1);
        std::filesystem::create_directories(absolute, ec);
    }
}

} // namespace

int execRank(int argc, char **argv)
{
    ExecOptions o;
    if (const std::string wrong = parseOptions(argc, argv, o); !wrong.empty())
        return usage(wrong.c_str());
    if (o.help) {
        usage(nullptr);
        return proto::kExitOk;
    }
    std::string rank;
    if (const std::string wrong = setRankVariables(o, rank); !wrong.empty())
        return usage(wrong.c_str());
    absoluteCheckpointDir();
    if (!o.dir.empty() && ::chdir(o.dir.c_str()) != 0) {
        std::fprintf(stderr, "trellis-trainer --exec: rank %s: cannot change to the job's folder %s: %s\n", rank.c_str(), o.dir.c_str(),
                     std::strerror(errno));
        return proto::kExitCommandNotFound;
    }
    // The command is no MPI program: nothing would end it when mpirun (or orted) goes — stopped,
    // killed, or giving up on a hung job. The kernel does: this signal survives exec.
    const pid_t launcher = ::getppid();
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != launcher) // it went before the request was in place
        return proto::kExitUsage;
    std::fflush(nullptr);
    const int first = o.first;
    ::execvp(argv[first], argv + first);
    const int error = errno;
    std::fprintf(stderr, "trellis-trainer --exec: rank %s: cannot run '%s': %s\n", rank.c_str(), argv[first], std::strerror(error));
    return error == ENOENT ? proto::kExitCommandNotFound : proto::kExitCommandNotExecutable;
}

} // namespace trellis::trainer
