// trellis-trainer: one process per rank under mpirun/srun.
//   trellis-trainer --plan PLAN [--run-id ID] [--endpoint tcp://host:port] [--telemetry-keys FILE]
//                   [--inject crash|hang|slow|delay|nan|nanloss|throw|stall|pause|stop|nomem|slowcopy@RANK:STEP] [--dump-params FILE] [--dump-grads FILE]
//                   [--dump-losses FILE] [--no-overlap] [--resume] [--quiet]
//   trellis-trainer --bench-collectives [--max-bytes N] [--ops all_reduce,reduce_scatter,...]
//                   [--allreduce auto|ring|recursive_doubling|hierarchical] [--node-size K]
//   trellis-trainer --calibrate        (this machine's compute rate and link, as one JSON line)
//   trellis-trainer --exec [OPTIONS] -- COMMAND...   (a rank of a job with its own trainer; no MPI)
//   trellis-trainer --relay [OPTIONS]                (a node's telemetry relay; no MPI)
//   trellis-trainer --hold-checkpoints --store DIR   (a node's memory store of checkpoints; no MPI)
//   trellis-trainer --release-checkpoints --checkpoint-dir DIR   (a finished run's store here given back; no MPI)
//   trellis-trainer --export-model CHECKPOINT_DIR --out DIR [--dtype D]   (transformers layout; no MPI)
// Exit codes: protocol/exit_codes.h.
#include "backend/plan/plan_json.h"
#include "backend/plan/plan_validate.h"
#include "backend/protocol/collector_join.h"
#include "backend/protocol/curve_keys.h"
#include "backend/protocol/exit_codes.h"
#include "backend/trainer/checkpoint/memory_store.h"
#include "backend/trainer/measure/calibration.h"
#include "backend/trainer/measure/collective_bench.h"
#include "backend/trainer/exec/exec_rank.h"
#include "backend/trainer/comm/allreduce_algorithm.h"
#include "backend/trainer/comm/hierarchical_communicator.h"
#include "backend/trainer/comm/mpi_communicator.h"
#include "backend/trainer/transformers/export_model.h"
#include "backend/trainer/telemetry/node_relay.h"
#include "backend/trainer/trainer.h"

#include <mpi.h>

#include <csignal>
#include <sys/stat.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace trellis;

void usage(std::FILE *to)
{
    std::fprintf(to,
                 "usage: trellis-trainer --plan PLAN [--run-id ID] [--endpoint tcp://HOST:PORT] [--telemetry-keys FILE]\n"
                 "                       [--inject crash|hang|slow|delay|nan|nanloss|throw|stall|pause|stop|nomem|slowcopy@RANK:STEP] [--dump-params FILE] [--dump-grads FILE]\n"
                 "                       [--dump-losses FILE] [--dump-batch FILE] [--no-overlap] [--resume] [--quiet] [--node-relay]\n"
                 "                       [--replica-group G --replica-groups R --lighthouse tcp://HOST:PORT [--replica-address ADDR]]\n"
                 "  --replica-group/--replica-groups: this job is replica group G of R (fault_tolerance): it trains dp/R of the\n"
                 "  plan's dp ranks (the data of ranks G·dp/R ..) and averages its gradients with the other groups' each step\n"
                 "  through the lighthouse at ENDPOINT (Gloo over TCP, this rank listening on ADDR, 127.0.0.1 by default);\n"
                 "  a step some group failed is dropped by all and trained again\n"
                 "  --dump-params/--dump-grads FILE.safetensors: in transformers' layout instead of raw float32\n"
                 "       trellis-trainer --bench-collectives [--max-bytes N] [--ops all_reduce,all_gather,...]\n"
                 "                       [--allreduce auto|ring|recursive_doubling|hierarchical] [--node-size K]\n"
                 "         --allreduce: the all-reduce algorithm to measure (ring and recursive_doubling forced in\n"
                 "         Open MPI's coll/tuned and coll/libnbc; hierarchical over nodes of K ranks, K from\n"
                 "         --node-size or the ranks sharing this host)\n"
                 "       trellis-trainer --calibrate\n"
                 "       trellis-trainer --relay [OPTIONS]   (a node's telemetry relay; see trellis-trainer --relay --help)\n"
                 "       trellis-trainer --hold-checkpoints --store DIR [OPTIONS]   (a node's in-memory checkpoints; see --hold-checkpoints --help)\n"
                 "       trellis-trainer --release-checkpoints --checkpoint-dir DIR   (a run's in-memory checkpoints on this node given back)\n"
                 "       trellis-trainer --exec [OPTIONS] -- COMMAND [ARGUMENT]...   (see trellis-trainer --exec --help)\n"
                 "       trellis-trainer --export-model CHECKPOINT_DIR --out DIR [--dtype fp32|bf16|fp16]\n"
                 "         the newest complete checkpoint there (any layout) as model.safetensors and config.json\n"
                 "         in Hugging Face transformers' layout (GPT-2 or Llama); one process, no mpirun;\n"
                 "         tensors in the precision the run trained in unless --dtype says otherwise\n"
                 "Runs one rank of the training described by PLAN; start it under mpirun -np N.\n"
                 "--telemetry-keys: a 0600 file of CURVE keys (server_public, client_public, client_secret);\n"
                 "  telemetry then goes to the endpoint encrypted and authenticated.\n"
                 "--node-relay: telemetry goes through one relay process per node (started by the node's ranks),\n"
                 "  which holds the node's one connection to the endpoint.\n"
                 "Started by hand, not by Trellis: with TRELLIS_COLLECTOR=tcp://HOST:PORT and TRELLIS_COLLECTOR_KEYS=FILE\n"
                 "  (what trellis-cli collect prints) and no --endpoint, every rank reports to that collector\n"
                 "  (TRELLIS_JOB_NAME and TRELLIS_JOB_ID name the job; docs/collector.md).\n");
}

int finish(int code)
{
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) {
        if (code == proto::kExitOk)
            MPI_Finalize();
        else
            MPI_Abort(MPI_COMM_WORLD, code); // make mpirun stop every rank, not wait for them
    }
    return code;
}

// The command line: a plan to train, or one of the other modes.
struct Arguments {
    std::string planPath;
    trainer::TrainerOptions options;
    bool benchCollectives = false;
    plan::AllReduceAlgorithm benchAllReduce = plan::AllReduceAlgorithm::Auto;
    int benchNodeSize = 0; // hierarchical's ranks per node in --bench-collectives; 0: this host's
    bool calibrate = false;
    std::string exportFrom, exportTo, exportDtype;
    trainer::CollectiveBenchOptions benchOptions;
};

// "a,b,,c" -> {a, b, c}.
std::vector<std::string> commaList(const std::string &list)
{
    std::vector<std::string> out;
    for (std::size_t start = 0; start <= list.size();) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        if (comma > start)
            out.push_back(list.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

// `text` as a whole number from lo to hi; else nullopt, said (naming `option` and `expects`).
std::optional<int> count(const std::string &option, const std::string &text, long lo, long hi, const char *expects)
{
    char *end = nullptr;
    const long k = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || k < lo || k > hi) {
        std::fprintf(stderr, "trellis-trainer: %s expects %s, got '%s'\n", option.c_str(), expects, text.c_str());
        return std::nullopt;
    }
    return static_cast<int>(k);
}

// Fills `a` from argv; an exit code when the program should end now (bad usage, --help,
// --version), nullopt to go on.
std::optional<int> parseArguments(int argc, char **argv, Arguments &a)
{
    trainer::TrainerOptions &options = a.options;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&](const char *name) -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "trellis-trainer: %s needs a value\n", name);
                std::exit(proto::kExitUsage);
            }
            return argv[++i];
        };
        if (arg == "--plan") a.planPath = value("--plan");
        else if (arg == "--run-id") options.runId = value("--run-id");
        else if (arg == "--endpoint") options.endpoint = value("--endpoint");
        else if (arg == "--telemetry-keys") {
            std::string error;
            const auto keys = proto::readCurveKeys(value("--telemetry-keys"), error);
            if (!keys || !keys->hasClient()) {
                std::fprintf(stderr, "trellis-trainer: %s\n",
                             keys ? "--telemetry-keys: the file lacks server_public, client_public or client_secret" : error.c_str());
                return proto::kExitUsage;
            }
            options.telemetryKeys = keys->forRanks();
            options.telemetryKeysPath = argv[i];
        }
        else if (arg == "--dump-params") options.dumpParamsPath = value("--dump-params");
        else if (arg == "--dump-grads") options.dumpGradsPath = value("--dump-grads");
        else if (arg == "--node-relay") options.nodeRelay = true;
        else if (arg == "--no-overlap") options.overlap = false;
        else if (arg == "--resume") options.resume = true;
        else if (arg == "--dump-losses") options.dumpLossesPath = value("--dump-losses");
        else if (arg == "--dump-batch") options.dumpBatchPath = value("--dump-batch");
        else if (arg == "--lighthouse") options.replica.lighthouse = value("--lighthouse");
        else if (arg == "--replica-address") options.replica.address = value("--replica-address");
        else if (arg == "--replica-group" || arg == "--replica-groups") {
            const std::optional<int> k = count(arg, value(arg.c_str()), 0, 4096, "a number from 0 to 4096");
            if (!k)
                return proto::kExitUsage;
            (arg == "--replica-group" ? options.replica.group : options.replica.groups) = *k;
        }
        else if (arg == "--bench-collectives") a.benchCollectives = true;
        else if (arg == "--calibrate") a.calibrate = true;
        else if (arg == "--export-model") a.exportFrom = value("--export-model");
        else if (arg == "--out") a.exportTo = value("--out");
        else if (arg == "--dtype") a.exportDtype = value("--dtype");
        else if (arg == "--ops") a.benchOptions.ops = commaList(value("--ops"));
        else if (arg == "--allreduce") {
            const std::string v = value("--allreduce");
            if (!trainer::parseAllReduceAlgorithm(v, a.benchAllReduce)) {
                std::fprintf(stderr, "trellis-trainer: --allreduce expects auto, ring, recursive_doubling or hierarchical, got '%s'\n",
                             v.c_str());
                return proto::kExitUsage;
            }
        }
        else if (arg == "--node-size") {
            const std::optional<int> k = count(arg, value("--node-size"), 1, 1 << 20, "a positive rank count");
            if (!k)
                return proto::kExitUsage;
            a.benchNodeSize = *k;
        }
        else if (arg == "--max-bytes") {
            const std::string v = value("--max-bytes");
            try {
                a.benchOptions.maxBytes = std::stoull(v);
            } catch (const std::exception &) {
                std::fprintf(stderr, "trellis-trainer: --max-bytes expects a byte count, got '%s'\n", v.c_str());
                return proto::kExitUsage;
            }
        }
        else if (arg == "--quiet") options.quiet = true;
        else if (arg == "--inject") {
            std::string error;
            if (!trainer::FaultInjection::parse(value("--inject"), options.inject, error)) {
                std::fprintf(stderr, "trellis-trainer: %s\n", error.c_str());
                return proto::kExitUsage;
            }
        } else if (arg == "--help" || arg == "-h") {
            usage(stdout);
            return proto::kExitOk;
        } else if (arg == "--version") {
            std::printf("trellis-trainer %s\n", TRELLIS_VERSION);
            return proto::kExitOk;
        } else {
            std::fprintf(stderr, "trellis-trainer: unknown argument '%s'\n", arg.c_str());
            usage(stderr);
            return proto::kExitUsage;
        }
    }
    return std::nullopt;
}

// --export-model CHECKPOINT_DIR --out DIR (no MPI).
int exportModel(const Arguments &a)
{
    if (a.exportFrom.empty() || a.exportTo.empty()) {
        std::fprintf(stderr, "trellis-trainer: --export-model and --out go together\n");
        return proto::kExitUsage;
    }
    const trainer::ExportResult r = trainer::exportCheckpointModel(a.exportFrom, a.exportTo, a.exportDtype);
    if (!r.error.empty()) {
        std::fprintf(stderr, "trellis-trainer: %s\n", r.error.c_str());
        return proto::kExitCheckpointError;
    }
    std::printf("exported %s (step %llu, %s, %llu parameters, %s) to %s\n", r.checkpoint.c_str(),
                static_cast<unsigned long long>(r.step), r.arch.c_str(), static_cast<unsigned long long>(r.parameters),
                r.dtype.c_str(), a.exportTo.c_str());
    return proto::kExitOk;
}

// --bench-collectives: the collectives over the world, its all-reduce by a.benchAllReduce.
int benchCollectives(const Arguments &a, trainer::MpiCommunicator &world)
{
    if (a.benchAllReduce != plan::AllReduceAlgorithm::Hierarchical) {
        if (world.rank() == 0)
            std::printf("# all-reduce: %s (Open MPI: %s)\n", plan::toString(a.benchAllReduce),
                        trainer::allReduceParametersInEffect().c_str());
        trainer::runCollectiveBench(world, a.benchOptions, stdout);
        return proto::kExitOk;
    }
    int k = a.benchNodeSize;
    if (k == 0) { // the ranks sharing this host
        MPI_Comm shared;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
        MPI_Comm_size(shared, &k);
        MPI_Comm_free(&shared);
        k = world.host().allReduce(k, trainer::ReduceOp::Min);
    }
    if (k <= 1 || world.size() % k != 0 || world.size() == k) {
        if (world.rank() == 0)
            std::fprintf(stderr, "trellis-trainer: --allreduce hierarchical needs nodes of 2 or more ranks, at least two of them, "
                                 "the same size (%d ranks in nodes of %d); use --node-size\n", world.size(), k);
        return proto::kExitUsage;
    }
    const int node = world.rank() / k, position = world.rank() % k;
    trainer::HierarchicalCommunicator hierarchical(world, world.split(node, position, "world.node"),
                                                   world.split(position, node, "world.nodes"));
    if (world.rank() == 0)
        std::printf("# all-reduce: hierarchical, %d nodes of %d ranks\n", world.size() / k, k);
    trainer::CollectiveBenchOptions options = a.benchOptions;
    options.ops = {"all_reduce"};
    trainer::runCollectiveBench(hierarchical, options, stdout);
    return proto::kExitOk;
}

// --bench-collectives or --calibrate, under MPI.
int measure(const Arguments &a)
{
    trainer::MpiCommunicator world(MPI_COMM_WORLD, "world");
    if (a.benchCollectives)
        return benchCollectives(a, world);
    const trainer::Calibration c = trainer::runCalibration(world);
    if (world.rank() == 0)
        std::printf("%s\n", plan::calibrationEntryJson(c).c_str());
    std::fflush(stdout);
    return proto::kExitOk;
}

// Why a replica group cannot train this plan ("" when it can).
std::string replicaGroupProblem(const plan::Plan &thePlan, const trainer::ReplicaGroupOptions &replica)
{
    if (replica.groups < 2)
        return "--replica-groups must be 2 or more, got " + std::to_string(replica.groups);
    if (replica.group < 0 || replica.group >= replica.groups)
        return "--replica-group must be 0 to " + std::to_string(replica.groups - 1) + ", got " + std::to_string(replica.group);
    if (replica.lighthouse.rfind("tcp://", 0) != 0)
        return "--replica-groups needs --lighthouse tcp://HOST:PORT";
    if (thePlan.parallel.dp % replica.groups != 0)
        return "parallel.dp " + std::to_string(thePlan.parallel.dp) + " does not split into " + std::to_string(replica.groups) + " replica groups";
    if (thePlan.parallel.dpSync.local())
        return std::string("replica groups average gradients every step: parallel.dp_sync ") + plan::toString(thePlan.parallel.dpSync.mode) +
               " cannot run in them";
    return {};
}

// The plan every rank trains: valid, one trellis-trainer runs, for the world mpirun started.
// nullopt (and the exit code in `code`, said once by rank 0) when not.
std::optional<plan::Plan> planToTrain(const std::string &planPath, int rank, int size, const trainer::ReplicaGroupOptions &replica, int &code)
{
    // Every rank validates the same file; only rank 0 prints, so errors appear once.
    auto loaded = plan::loadAndValidatePlanFile(planPath);
    if (!loaded) {
        if (rank == 0)
            std::fprintf(stderr, "trellis-trainer: %s\n", loaded.errorText().c_str());
        code = proto::kExitPlanInvalid;
        return std::nullopt;
    }
    plan::Plan thePlan = loaded.value();
    const auto unsupported = plan::checkTrainerSupport(thePlan);
    if (!unsupported.empty()) {
        if (rank == 0)
            for (const auto &d : unsupported)
                std::fprintf(stderr, "trellis-trainer: %s\n", d.toString().c_str());
        code = proto::kExitUnsupported;
        return std::nullopt;
    }
    if (replica.given() || replica.group != 0 || !replica.lighthouse.empty()) { // this job trains its group's share of dp
        if (const std::string why = replicaGroupProblem(thePlan, replica); !why.empty()) {
            if (rank == 0)
                std::fprintf(stderr, "trellis-trainer: %s\n", why.c_str());
            code = proto::kExitUsage;
            return std::nullopt;
        }
        thePlan.parallel.dp /= replica.groups;
        // Each group its own checkpoints (the groups are alike after every committed step, but
        // their shards are named by rank in the group).
        if (!thePlan.training.checkpoint.dir.empty())
            thePlan.training.checkpoint.dir += "/group-" + std::to_string(replica.group);
    }
    if (size != thePlan.parallel.worldSize()) {
        if (rank == 0)
            std::fprintf(stderr, "trellis-trainer: parallel: the plan needs %d ranks (dp·tp·pp·cp%s) but mpirun started %d\n",
                         thePlan.parallel.worldSize(), replica.given() ? ", dp of its replica group" : "", size);
        code = proto::kExitWorldMismatch;
        return std::nullopt;
    }
    return thePlan;
}

// Started by hand (not by Trellis) with TRELLIS_COLLECTOR set: asks the collector for this job's
// run and reports there (docs/collector.md). A refusal or no answer is said once per rank and the
// training goes on without telemetry.
void joinCollector(const plan::Plan &thePlan, const std::string &planPath, int rank, int size, trainer::TrainerOptions &options)
{
    proto::Join join = proto::joinFromEnvironment(thePlan.name);
    join.set_world_size(static_cast<std::uint32_t>(size));
    join.set_rank(static_cast<std::uint32_t>(rank));
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    join.set_host(host);
    join.set_pid(static_cast<std::uint32_t>(::getpid()));
    join.set_command("trellis-trainer --plan " + planPath);
    join.set_client(std::string("trellis-trainer ") + TRELLIS_VERSION);
    const proto::JoinResult joined = proto::joinCollector(join);
    if (!joined.error.empty()) {
        std::fprintf(stderr, "trellis-trainer: rank %d: not reporting to a collector: %s\n", rank, joined.error.c_str());
        return;
    }
    options.endpoint = joined.endpoint;
    options.runId = joined.runId;
    options.telemetryKeys = joined.keys;
    if (rank == 0 && !options.quiet)
        std::printf("reporting to the collector as run %s\n", joined.runId.c_str());
}

// One rank of the plan's training, under MPI.
int train(const Arguments &a)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int code = proto::kExitOk;
    const std::optional<plan::Plan> thePlan = planToTrain(a.planPath, rank, size, a.options.replica, code);
    if (!thePlan)
        return code;
    trainer::TrainerOptions options = a.options;
    options.planDir = std::filesystem::absolute(a.planPath).parent_path().string();
    if (options.endpoint.empty() && thePlan->telemetry.endpoint.empty() && proto::collectorRequested())
        joinCollector(*thePlan, a.planPath, rank, size, options);
    try {
        // The world is the DP group of a purely data-parallel plan; otherwise its own group.
        const auto &ps = thePlan->parallel;
        trainer::MpiCommunicator world(MPI_COMM_WORLD, ps.tp == 1 && ps.pp == 1 && ps.cp == 1 ? "dp" : "world");
        trainer::Trainer t(*thePlan, options, world);
        code = t.run(); // reports its own failures (Event, exit code) and catches everything
    } catch (const std::exception &e) {
        // Only what happens outside the training loop reaches here (setting up the world).
        std::fprintf(stderr, "trellis-trainer: rank %d: internal error: %s\n", rank, e.what());
        code = proto::kExitInternalError;
    }
    return code;
}

} // namespace

int main(int argc, char **argv)
{
    // A peer rank that died closes its connections: writing to one must be an error Open MPI
    // reports, not a SIGPIPE that kills this rank too (mpirun would then name this rank, killed by
    // signal 13, as the job's first failure instead of the one that died).
    std::signal(SIGPIPE, SIG_IGN);
    if (argc > 1 && std::strcmp(argv[1], "--exec") == 0) {
        std::signal(SIGPIPE, SIG_DFL); // the command starts with the default disposition
        return trainer::execRank(argc - 1, argv + 1);
    }
    if (argc > 1 && std::strcmp(argv[1], "--relay") == 0)
        return trainer::relayMain(argc - 1, argv + 1);
    if (argc > 1 && std::strcmp(argv[1], "--hold-checkpoints") == 0)
        return trainer::memoryHolderMain(argc, argv);
    if (argc > 1 && std::strcmp(argv[1], "--release-checkpoints") == 0)
        return trainer::memoryReleaseMain(argc, argv);
    Arguments a;
    if (const std::optional<int> code = parseArguments(argc, argv, a))
        return *code;
    if (!a.exportFrom.empty() || !a.exportTo.empty())
        return exportModel(a);
    if (a.planPath.empty() && !a.benchCollectives && !a.calibrate) {
        usage(stderr);
        return proto::kExitUsage;
    }

    // What a run writes (checkpoints, dumps) is its owner's alone whatever the umask it was started
    // with: weights and optimizer state on a shared node (docs/launching.md). An export above is a
    // file made to be handed on, and keeps the caller's umask.
    ::umask(077);
    // The plan's all-reduce algorithm reaches Open MPI through its MCA parameters, which MPI_Init
    // reads: a plan that does not load leaves them alone (train() reports why it does not).
    plan::AllReduceAlgorithm algorithm = a.benchAllReduce;
    if (!a.planPath.empty())
        if (const auto loaded = plan::loadPlanFile(a.planPath))
            algorithm = loaded.value().parallel.allReduce;
    trainer::forceAllReduceAlgorithm(algorithm);
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    if (a.benchCollectives || a.calibrate)
        return finish(measure(a));
    return finish(train(a));
}
