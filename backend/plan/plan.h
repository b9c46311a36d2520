// The trellis.plan/1 document: the single description of a run (docs/architecture.md §4).
// The GUI edits it, the CLI reads it, the launcher hands it to every rank and the trainer builds
// its process groups from it. Plain data; loading, validation and presets live beside it.
#pragma once

#include "backend/plan/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trellis::plan {

inline constexpr const char *kPlanSchema = "trellis.plan/1";

// A mixture-of-experts MLP in every layer (Switch/GShard style): a router (softmax over the experts,
// no bias) picks each token's top_k experts, whose outputs are summed weighted by their router
// probabilities (not renormalised). capacityFactor: each expert takes at most
// ceil(factor · seq_len · top_k / experts) tokens of each sequence, earliest positions first,
// the rest dropped (the token keeps its residual); unset: dropless, every routed token is
// computed. auxLossCoef weighs the load-balancing loss, per sequence (DeepSeek-V3's
// sequence-wise form of the Switch Transformer's loss): coef · experts · Σₑ fₑ·Pₑ.
struct MoeSpec {
    int experts = 0; // 0: dense model
    int topK = 0;
    std::optional<double> capacityFactor; // unset: dropless
    double auxLossCoef = 0.01;
    bool operator==(const MoeSpec &) const = default;
};

// Slots an expert has for each sequence of seqLen tokens under a capacity factor.
int expertCapacity(const MoeSpec &moe, int seqLen);

// The decoder's architecture (trellis-trainer runs both). gpt: LayerNorm with biases, GELU MLP,
// learned positions, the head tied to the embedding. llama: RMSNorm, no biases, SwiGLU MLP (three
// matrices of width ffn), rotary positions (theta 10000), grouped-query attention (kv_heads), an
// untied head.
inline constexpr const char *kArchGpt = "gpt";
inline constexpr const char *kArchLlama = "llama";

struct ModelSpec {
    std::string preset; // informative once resolved; the explicit fields below are authoritative
    std::string arch = kArchGpt;
    int layers = 0;
    int hidden = 0;
    int heads = 0;
    int kvHeads = 0;
    int ffn = 0;
    int seqLen = 0;
    int vocab = 0;
    MoeSpec moe;
    // The weights' initial standard deviation; 0 (the default) scales GPT-2's 0.02 with the width,
    // 0.02·sqrt(768 / hidden) (docs/trainer.md, "Initialisation").
    double initStd = 0;
    bool operator==(const ModelSpec &) const = default;
};

enum class DeviceKind { Cpu, Cuda };

struct NodeSpec {
    std::string host;
    int slotCount = 0;
    DeviceKind device = DeviceKind::Cpu;
    std::string gpuModel;
    // How the ssh target reaches this node; empty / 0: launch.ssh's defaults.
    std::string user;
    int port = 0;
    std::string identityFile;
    std::string remoteDir;
    bool operator==(const NodeSpec &) const = default;
};

struct LinkSpec {
    double bandwidthGBps = 0; // GB/s per direction
    double latencyUs = 0;
    bool operator==(const LinkSpec &) const = default;
};

struct ClusterSpec {
    std::string preset;
    std::vector<NodeSpec> nodes;
    LinkSpec intraNode;
    LinkSpec interNode;
    double pricePerDeviceHour = 0; // currency units per device-hour, for cost estimates
    double hostMemoryGB = 0;       // each node's host memory (checkpoint staging); 0: not known
    bool operator==(const ClusterSpec &) const = default;

    int totalSlots() const
    {
        int total = 0;
        for (const auto &n : nodes)
            total += n.slotCount;
        return total;
    }
};

enum class Recompute { None, Selective, Full };
// What the trainer does when the loss or the gradients become NaN or infinite: stop the run (exit 7)
// or skip the step's update (at most 10 in a row) and go on. Either way it names the step, the
// rank and the first tensor that went non-finite.
enum class NonFinitePolicy { Stop, Skip };
// How a checkpoint is written: Sync — training waits while every rank writes its shard; Async —
// each rank copies its state to a host buffer at the step boundary and trains on while a thread
// writes it; the checkpoint is put in place at the first step boundary after every rank's write
// has ended (a save due before then: CheckpointWhenBusy).
enum class CheckpointMode { Sync, Async };
// Async: what a save due while the one before is still being written does — Wait (training waits
// for that write, and every save asked for is made) or Skip (it is skipped: training never waits
// for the disk, and fewer checkpoints are made than asked).
enum class CheckpointWhenBusy { Wait, Skip };
// fp32; or mixed precision (bf16, fp16): 16-bit parameter copies and activations, fp32 master
// weights, Adam moments, gradient accumulation, norm statistics, softmaxes and loss.
enum class Precision { Fp32, Bf16, Fp16 };
// The element type data-parallel gradients are reduced in (Megatron-LM's
// accumulate-allreduce-grads-in-fp32, DeepSpeed's communication_data_type): fp32, or bf16 (half
// the bytes, with mixed precision only). Gradients accumulate in fp32 either way.
enum class GradReduce { Fp32, Bf16 };
// fp16's dynamic loss scaling (Micikevicius et al. 2018; apex, Megatron-LM): the loss is multiplied
// by the scale before backward and the gradients divided by it after; a step whose gradients
// overflow is skipped (every rank alike) and the scale multiplied by backoff; after
// growth_interval steps without one it is multiplied by growth. More than max_skipped skipped
// steps in a row stop the run naming the first non-finite tensor.
struct LossScaleSpec {
    double initial = 65536.0; // 2^16
    int growthInterval = 1000;
    double growth = 2.0;
    double backoff = 0.5;
    double minScale = 1.0;
    int maxSkipped = 10;
    bool operator==(const LossScaleSpec &) const = default;
};
// Whose implementation the memory accounting follows (cost_model.h). auto: trellis-trainer's where
// it runs the plan (CPU nodes), else Megatron-LM's, or DeepSpeed's for ZeRO stages 2 and 3 (which
// Megatron-LM's distributed optimizer does not have).
enum class Framework { Auto, Trellis, Megatron, DeepSpeed };
// How attention is computed. materialized: the softmax probabilities (heads·b·s² a layer) are
// written out and kept for backward (trellis-trainer on the CPU; Megatron-LM before flash
// attention). flash: a fused kernel (FlashAttention) keeps only the output and the row
// statistics and recomputes the scores in backward. auto: flash on GPUs, materialized on CPUs.
enum class AttentionKernel { Auto, Materialized, Flash };
// Which tokens of a sequence a context-parallel rank holds. zigzag (causal load balance): the
// sequence in 2·cp chunks, rank r holding chunks r and 2·cp − 1 − r, so every rank has as much
// causal attention work; contiguous: chunk r of cp, the last rank doing the most.
enum class CpLayout { Zigzag, Contiguous };

// How the data-parallel replicas stay together (parallel.dp_sync). every_step: gradients are
// averaged over dp every step. local_sgd: each replica takes inner_steps optimizer steps alone on
// its own data (its own AdamW state), then the replicas' parameters are averaged. diloco (Douillard
// et al. 2023): the same inner steps, then an outer SGD step with (Nesterov) momentum on the
// averaged parameter change: Δ = anchor − mean(θ), m = μ·m + Δ, θ = anchor − outer_lr·(Nesterov ?
// Δ + μ·m : m), anchor = θ. Communication: one parameter all-reduce every inner_steps steps.
enum class DpSyncMode { EveryStep, LocalSgd, DiLoCo };
struct DpSyncSpec {
    DpSyncMode mode = DpSyncMode::EveryStep;
    int innerSteps = 1;
    double outerLr = 0.7;        // DiLoCo's published setting
    double outerMomentum = 0.9;
    bool nesterov = true;
    bool local() const { return mode != DpSyncMode::EveryStep; }
    bool operator==(const DpSyncSpec &) const = default;
};

// Gradient compression over the data-parallel replicas (parallel.grad_compression). powersgd
// (Vogels et al. 2019): each gradient matrix M (rows × cols) plus the rank's error feedback E goes
// as two low-rank factors — P = M·Q all-reduced and orthonormalised (Householder QR), then
// Q = Mᵀ·P all-reduced — and is replaced by P·Qᵀ; E keeps what that left out, for the next step.
// Q starts from the seed and, with warm_start, carries over from step to step (one power
// iteration a step). rank r is clamped per matrix to min(rows, cols); a matrix the factors would
// not make smaller, and every vector (biases, norm gains), is all-reduced whole.
enum class GradCompression { None, PowerSgd };
struct GradCompressionSpec {
    GradCompression kind = GradCompression::None;
    int rank = 4;
    bool warmStart = true;
    bool operator==(const GradCompressionSpec &) const = default;
};

// The all-reduce algorithm of the whole job (parallel.allreduce). auto: the library's own choice
// (Open MPI's coll/tuned and coll/libnbc decision rules, NCCL's tuner). ring and
// recursive_doubling: forced in Open MPI's own components through their MCA parameters (on GPUs
// NCCL_ALGO=Ring; NCCL has no recursive doubling). hierarchical: composed by trellis-trainer over
// the mesh's nodes: a reduce-scatter inside each node, an all-reduce across nodes of each rank's
// share, an all-gather inside the node; a group on one node does the flat one.
enum class AllReduceAlgorithm { Auto, Ring, RecursiveDoubling, Hierarchical };

struct ParallelSpec {
    int dp = 1;
    int tp = 1;
    int pp = 1;
    int cp = 1;
    int ep = 1;
    int zero = 0;
    bool sequenceParallel = false;
    std::string schedule = "1f1b";
    int virtualStages = 1;
    int microBatchSize = 1;
    int microBatches = 1;
    std::optional<double> bucketMb;      // gradient bucket size; absent: 25 MB or the whole model
    std::optional<double> firstBucketMb; // size of the first bucket reduced; absent: bucket_mb
    bool overlapGradReduce = true;       // reduce buckets during backward (false: all after it)
    Recompute recompute = Recompute::None;
    Precision precision = Precision::Fp32;
    GradReduce gradReduce = GradReduce::Fp32;
    LossScaleSpec lossScale; // fp16 only
    Framework framework = Framework::Auto;
    AttentionKernel attention = AttentionKernel::Auto;
    CpLayout cpLayout = CpLayout::Zigzag;
    DpSyncSpec dpSync;
    AllReduceAlgorithm allReduce = AllReduceAlgorithm::Auto;
    GradCompressionSpec gradCompression;
    bool operator==(const ParallelSpec &) const = default;

    int worldSize() const { return dp * tp * pp * cp; }
    int globalBatch() const { return microBatchSize * microBatches * dp; }
};

struct DataSpec {
    std::string source = "text"; // text: bytes are tokens (vocab 256); tokens: llm.c .bin shard; synthetic
    std::string path;            // relative paths resolve against the plan file's folder
    bool operator==(const DataSpec &) const = default;
};

// In-memory checkpoints (training.checkpoint.memory): every `every` steps each rank's shard goes to
// its node's memory store (shared memory, /dev/shm, held by a process of the run that outlives a
// failed job), the newest `keep` kept; a restart loads from there before the disk. Given: the plan
// has the section (absent: none).
struct MemoryCheckpointSpec {
    bool given = false;
    int every = 1; // steps
    int keep = 2;
    bool operator==(const MemoryCheckpointSpec &) const = default;
};

struct CheckpointSpec {
    int every = 0; // steps; 0 disables
    std::string dir;
    int keep = 2;
    CheckpointMode mode = CheckpointMode::Async;
    // Whether the plan names the mode: without, async unless the staging buffers would take
    // more than half a node's host memory (resolvedCheckpointMode, backend/plan/cost/cost_model.h).
    bool modeGiven = false;
    CheckpointWhenBusy whenBusy = CheckpointWhenBusy::Wait;
    MemoryCheckpointSpec memory;
    bool operator==(const CheckpointSpec &) const = default;
};

// Where the weights of a fresh start come from: "" — the seed's initialisation; else a directory
// holding model.safetensors and config.json in Hugging Face transformers' layout (trellis-cli
// export-model writes one, so does save_pretrained), relative to the plan file's folder. A resumed
// run takes its checkpoint instead.
struct InitSpec {
    std::string from;
    bool operator==(const InitSpec &) const = default;
};

struct TrainingSpec {
    int steps = 100;
    double lr = 1e-3;
    double minLr = 1e-4;
    int warmupSteps = 0;
    double weightDecay = 0.1;
    double beta1 = 0.9;
    double beta2 = 0.95;
    double eps = 1e-8;
    double gradClip = 1.0; // global-norm clip; 0 disables
    NonFinitePolicy onNonFinite = NonFinitePolicy::Stop;
    std::uint64_t seed = 1234;
    DataSpec data;
    CheckpointSpec checkpoint;
    InitSpec init;
    bool operator==(const TrainingSpec &) const = default;
};

// How ranks reach the supervisor: each on its own connection (off), or through one relay process
// per node (on) that batches its node's ranks onto one connection (backend/protocol/relay.h);
// auto: relays from kRelayAutoRanks ranks up.
enum class TelemetryRelay { Auto, On, Off };
inline constexpr int kRelayAutoRanks = 64;
struct TelemetrySpec {
    std::string endpoint; // empty: the launcher chooses one (or telemetry is off for bare runs)
    int heartbeatMs = 500;
    int traceEvery = 0;
    TelemetryRelay relay = TelemetryRelay::Auto;
    // The run history this plan's runs are recorded in (docs/history.md): a file (relative to the
    // plan's folder) or a team's postgresql:// database, never with a password in it. Empty: the
    // launcher's default ($TRELLIS_HISTORY, else the user's file). --db comes before it.
    std::string history;
    bool relaysFor(int worldSize) const { return relay == TelemetryRelay::On || (relay == TelemetryRelay::Auto && worldSize >= kRelayAutoRanks); }
    bool operator==(const TelemetrySpec &) const = default;
};

enum class LaunchTarget { Local, Ssh, Slurm };

// What the run supervisor does when a run fails: end the job, wait, and resume from the newest
// complete checkpoint (from the start without one), at most max_restarts times. A cause not
// retried fails the run at once. elastic: a crashed rank's node is left out of the next attempt,
// which runs at a smaller dp with the same global batch (more micro-batches) where that is possible.
struct RestartPolicy {
    int maxRestarts = 0;
    double backoffS = 5.0; // before the first restart; doubles each time, at most 300 s
    bool onCrash = true;
    bool onHang = true;
    bool onNodeLoss = true;
    bool elastic = false;
    bool operator==(const RestartPolicy &) const = default;
};

// Where alerts (failures, hangs, stragglers, restarts, NaN, loss divergence) go besides the
// history and the workbench: a command run with the alert in its environment (an argument list,
// never a shell) and/or an HTTP POST of JSON.
struct AlertSpec {
    std::vector<std::string> command;
    std::string webhook;
    bool operator==(const AlertSpec &) const = default;
};

// The ssh target (launcher/targets/ssh_target.h): how the nodes of cluster.nodes are reached, where
// each keeps the run's files, and how their telemetry comes back (ZeroMQ CURVE over TCP).
struct SshSpec {
    std::string user;           // empty: ssh's default (the local user or ~/.ssh/config)
    int port = 22;
    std::string identityFile;   // empty: ssh's default keys
    std::string knownHosts;     // empty: ~/.ssh/known_hosts; host keys are never accepted silently
    std::string remoteDir = "trellis-runs"; // per host; relative to the remote home; a folder per run inside
    std::string trainer;        // the trainer on the hosts; empty: this machine's path to it
    bool stageTrainer = false;  // copy this machine's trainer into each run folder instead
    // true: remote_dir is on a filesystem every host shares. false (default): each host keeps its
    // ranks' checkpoint shards; the supervisor gathers every checkpoint into this machine's
    // checkpoint folder and, before a restart, puts the newest back on every host.
    bool sharedRemoteDir = false;
    std::string mpiInterface;   // network (CIDR) or interface MPI and its daemons use between hosts
    std::string telemetryAddress; // address the hosts reach this machine at; empty: routed toward the first host
    bool operator==(const SshSpec &) const = default;
};

// How the slurm target submits: one batch job per launch attempt, run where sbatch sends it.
struct SlurmSpec {
    std::string partition;        // empty: the cluster's default partition
    std::string account;          // empty: the user's default account
    std::string qos;              // empty: the default quality of service
    std::string time = "01:00:00"; // the job's time limit, in a form sbatch takes (MM, HH:MM:SS, D-HH:MM...)
    std::string sharedDir;        // a folder every node sees at this path; empty: the run folder itself
    std::string trainer;          // the trainer on the nodes; empty: this machine's path to it
    std::string mpiInterface;     // network (CIDR) or interface MPI uses between the nodes
    std::string telemetryAddress; // address the nodes reach this machine at; empty: routed toward the controller
    bool operator==(const SlurmSpec &) const = default;
};

struct LaunchSpec {
    LaunchTarget target = LaunchTarget::Local;
    SshSpec ssh;
    SlurmSpec slurm;
    // When a rank holding the others up is a hang, not a stall (docs/failures.md): the supervisor
    // names a stall in seconds and goes on; it ends or restarts the job only when certain.
    int hangTimeoutS = 60;       // the floor of the learned timeout, and the whole of it before a first step
    int hangConfirmS = 30;       // a holder stopped (or silent on a remote host) this long is hung
    double hangStepFactor = 5;   // the learned timeout: this many times the longest step seen so far
    RestartPolicy restart;
    AlertSpec alerts;
    bool operator==(const LaunchSpec &) const = default;
};

// A job that runs its own trainer (docs/pytorch.md): every rank runs `command` (an argument list,
// never a shell line) instead of trellis-trainer, in `dir` (relative to the plan's folder), with
// torchrun's variables, the Trellis telemetry variables and `env` set. The world size is
// parallel's (dp alone when parallel is absent: `ranks` sets it); `model` becomes optional
// (informative: without it there is no estimate).
struct OwnTrainerSpec {
    std::vector<std::string> command; // empty: trellis-trainer reads this plan
    std::vector<std::pair<std::string, std::string>> env;
    std::string dir;                  // empty: the plan file's folder
    bool hasModel = true;             // false: the plan has no model section (no estimate)
    bool external() const { return !command.empty(); }
    bool operator==(const OwnTrainerSpec &) const = default;
};

// Environment names a plan's own_trainer.env may not set: the launcher sets them for every rank.
bool isReservedTrainerVariable(const std::string &name);

struct Plan {
    std::string schema = kPlanSchema;
    std::string name;
    OwnTrainerSpec ownTrainer;
    ModelSpec model;
    ClusterSpec cluster;
    ParallelSpec parallel;
    TrainingSpec training;
    TelemetrySpec telemetry;
    LaunchSpec launch;
    // What reading the file noticed that is no part of the plan (an old field name read through its
    // alias): validatePlan passes these on as warnings. Not written, not compared.
    Diagnostics loadNotes;
    bool operator==(const Plan &other) const;
};

// Parameters of the decoder `model` describes, every expert counted. For the gpt architecture
// (tied embeddings, biases, learned positions) V·C + S·C + 2C + L·(4C² + 2C·F + 9C + F) with
// kv_heads = heads; grouped-query attention shrinks the k and v projections to kv_heads heads.
std::uint64_t parameterCount(const ModelSpec &model);
// Parameters one token passes through (top_k of the experts; all of a dense model).
std::uint64_t activeParameterCount(const ModelSpec &model);

const char *toString(DeviceKind kind);
const char *toString(Recompute recompute);
const char *toString(NonFinitePolicy policy);
const char *toString(CheckpointMode mode);
const char *toString(CheckpointWhenBusy whenBusy);
// Bytes a saved element of the model takes in a checkpoint shard: its parameter and both Adam
// moments, and with local updates the anchor and (DiLoCo) the outer momentum — fp32 each.
double checkpointBytesPerElement(const Plan &plan);
// The mode a run saves in: the plan's when it names one; else async, unless the staging buffers
// on the busiest node (stagingBytesPerNode) would take more than half its host memory
// (hostMemoryGB; 0: not known — async) — then sync, and `why` says so.
CheckpointMode checkpointModeFor(const CheckpointSpec &checkpoint, double stagingBytesPerNode, double hostMemoryGB,
                                 std::string *why = nullptr);
// "2095.3 GB", "1.4 MB": a size of host memory as those messages say it.
std::string memorySizeText(double bytes);
const char *toString(Precision precision);
const char *toString(GradReduce gradReduce);
const char *toString(DpSyncMode mode);
const char *toString(TelemetryRelay relay);
const char *toString(Framework framework);
const char *toString(AttentionKernel attention);
const char *toString(CpLayout layout);
const char *toString(AllReduceAlgorithm algorithm);
const char *toString(GradCompression kind);
const char *toString(LaunchTarget target);

} // namespace trellis::plan
