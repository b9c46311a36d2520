#include "ui/plan/field_table.h"

#include "backend/plan/plan_validate.h"
#include "backend/plan/presets.h"

#include <QCoreApplication>
#include <QRegularExpression>

#include <iterator>

// The table below leaves out trailing members (limits, choices, tips) where a field has none.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace trellis::ui::plan_editor {
namespace {

QStringList names(const std::vector<std::string> &list)
{
    QStringList out;
    for (const auto &n : list)
        out << QString::fromStdString(n);
    return out;
}

QStringList schedules()
{
    QStringList out;
    for (const char *s : plan::kKnownSchedules)
        out << QString::fromLatin1(s);
    return out;
}

// The table by section, in the order the editor shows the sections.
using K = Kind;
using S = Section;

std::vector<Field> trainerFields()
{
    return {
        {QStringLiteral("own_trainer.command"), S::Trainer, QT_TRANSLATE_NOOP("PlanFields", "Command of every rank"), K::JsonText, 0, 0, {},
         QT_TRANSLATE_NOOP("PlanFields", "A JSON list, e.g. [\"python3\", \"train.py\"]: run instead of trellis-trainer, with torchrun's "
                                         "variables set (docs/pytorch.md); never a shell line. Empty: trellis-trainer trains this plan")},
        {QStringLiteral("own_trainer.env"), S::Trainer, QT_TRANSLATE_NOOP("PlanFields", "Its environment"), K::JsonText, 0, 0, {},
         QT_TRANSLATE_NOOP("PlanFields", "A JSON object of NAME: \"value\" pairs added to every rank's environment")},
        {QStringLiteral("own_trainer.dir"), S::Trainer, QT_TRANSLATE_NOOP("PlanFields", "Its folder"), K::Text, 0, 0, {},
         QT_TRANSLATE_NOOP("PlanFields", "Where the command runs: here relative to the plan's folder (empty: that folder); on ssh and Slurm hosts as written, relative to the rank's run folder there")},
    };
}

std::vector<Field> modelFields()
{
    return {
        {QStringLiteral("name"), S::Model, QT_TRANSLATE_NOOP("PlanFields", "Plan name"), K::Text},
        {QStringLiteral("model.preset"), S::Model, QT_TRANSLATE_NOOP("PlanFields", "Model preset"), K::Choice, 0, 0,
         QStringList{QString()} + names(plan::modelPresetNames()),
         QT_TRANSLATE_NOOP("PlanFields", "Choosing a preset replaces every model field with the preset's")},
        {QStringLiteral("model.arch"), S::Model, QT_TRANSLATE_NOOP("PlanFields", "Architecture"), K::Choice, 0, 0,
         {QStringLiteral("gpt"), QStringLiteral("llama")}},
        {QStringLiteral("model.layers"), S::Model, QT_TRANSLATE_NOOP("PlanFields", "Layers"), K::Integer, 1, 4096},
        {QStringLiteral("model.hidden"), S::Model, QT_TRANSLATE_NOOP("PlanFields", "Hidden size"), K::Integer, 1, 1 << 20},
        {QStringLiteral("model.heads"), S::Model, QT_TRANSLATE_NOOP("PlanFields", "Attention heads"), K::Integer, 1, 4096},
        {QStringLiteral("model.kv_heads"), S::Model, QT_TRANSLATE_NOOP("PlanFields", "Key/value heads"), K::Integer, 1, 4096,
         {}, QT_TRANSLATE_NOOP("PlanFields", "Fewer than the heads: grouped-query attention")},
        {QStringLiteral("model.ffn"), S::Model, QT_TRANSLATE_NOOP("PlanFields", "MLP width"), K::Integer, 1, 1 << 22},
        {QStringLiteral("model.seq_len"), S::Model, QT_TRANSLATE_NOOP("PlanFields", "Sequence length"), K::Integer, 1, 1 << 24},
        {QStringLiteral("model.vocab"), S::Model, QT_TRANSLATE_NOOP("PlanFields", "Vocabulary"), K::Integer, 1, 1 << 24},
        {QStringLiteral("model.moe.experts"), S::Model, QT_TRANSLATE_NOOP("PlanFields", "Experts (MoE)"), K::Integer, 0, 4096,
         {}, QT_TRANSLATE_NOOP("PlanFields", "0: a dense model")},
        {QStringLiteral("model.moe.top_k"), S::Model, QT_TRANSLATE_NOOP("PlanFields", "Experts per token"), K::Integer, 0, 64},
        {QStringLiteral("model.moe.capacity_factor"), S::Model, QT_TRANSLATE_NOOP("PlanFields", "Expert capacity factor"),
         K::OptionalNumber, 0, 0, {},
         QT_TRANSLATE_NOOP("PlanFields", "Empty: dropless routing. Else each expert takes at most factor · seq_len · top_k / "
                                         "experts tokens of a sequence; the rest are dropped")},
        {QStringLiteral("model.moe.aux_loss_coef"), S::Model, QT_TRANSLATE_NOOP("PlanFields", "Load-balancing loss weight"),
         K::Number, 0, 0, {}, QT_TRANSLATE_NOOP("PlanFields", "Switch Transformer's auxiliary loss, per sequence")},
    };
}

std::vector<Field> clusterFields()
{
    return {
        {QStringLiteral("cluster.preset"), S::Cluster, QT_TRANSLATE_NOOP("PlanFields", "Cluster preset"), K::Choice, 0, 0,
         QStringList{QString()} + names(plan::clusterPresetNames()),
         QT_TRANSLATE_NOOP("PlanFields", "Choosing a preset makes every node and link the preset's, keeping the node count")},
        {QStringLiteral("cluster.node_count"), S::Cluster, QT_TRANSLATE_NOOP("PlanFields", "Nodes"), K::Integer, 1, 100000,
         {}, QT_TRANSLATE_NOOP("PlanFields", "Nodes added are copies of the last one: one undo step however many")},
        {QStringLiteral("cluster.nodes"), S::Cluster, QT_TRANSLATE_NOOP("PlanFields", "Node list"), K::Nodes},
        {QStringLiteral("cluster.links.intra_node.bandwidth_gbps"), S::Cluster,
         QT_TRANSLATE_NOOP("PlanFields", "Intra-node GB/s"), K::OptionalNumber},
        {QStringLiteral("cluster.links.intra_node.latency_us"), S::Cluster, QT_TRANSLATE_NOOP("PlanFields", "Intra-node latency µs"),
         K::OptionalNumber},
        {QStringLiteral("cluster.links.inter_node.bandwidth_gbps"), S::Cluster,
         QT_TRANSLATE_NOOP("PlanFields", "Inter-node GB/s"), K::OptionalNumber},
        {QStringLiteral("cluster.links.inter_node.latency_us"), S::Cluster, QT_TRANSLATE_NOOP("PlanFields", "Inter-node latency µs"),
         K::OptionalNumber},
        {QStringLiteral("cluster.price_per_device_hour"), S::Cluster, QT_TRANSLATE_NOOP("PlanFields", "Price per device-hour"),
         K::Number},
        {QStringLiteral("cluster.host_memory_gb"), S::Cluster, QT_TRANSLATE_NOOP("PlanFields", "Host memory a node (GB)"),
         K::OptionalNumber, 0, 0, {},
         QT_TRANSLATE_NOOP("PlanFields", "Each node's host memory, for checkpoints' staging buffers: async saves are the default "
                                         "unless they would take more than half of it. Empty: not known (the trainer reads its "
                                         "machine's)")},
    };
}

std::vector<Field> parallelFields()
{
    return {
        {QStringLiteral("parallel.dp"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Data parallel (dp)"), K::Integer, 1, 1 << 20},
        {QStringLiteral("parallel.tp"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Tensor parallel (tp)"), K::Choice, 0, 0, {},
         QT_TRANSLATE_NOOP("PlanFields", "Offered: the divisors of the attention heads")},
        {QStringLiteral("parallel.pp"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Pipeline stages (pp)"), K::Integer, 1, 4096,
         {}, QT_TRANSLATE_NOOP("PlanFields", "At most the number of layers")},
        {QStringLiteral("parallel.cp"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Context parallel (cp)"), K::Integer, 1, 1024},
        {QStringLiteral("parallel.cp_layout"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Context-parallel layout"), K::Choice, 0, 0,
         {QStringLiteral("zigzag"), QStringLiteral("contiguous")},
         QT_TRANSLATE_NOOP("PlanFields", "zigzag: each rank holds chunks r and 2·cp−1−r of the sequence, balancing causal attention")},
        {QStringLiteral("parallel.allreduce"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "All-reduce algorithm"), K::Choice, 0, 0,
         {QStringLiteral("auto"), QStringLiteral("ring"), QStringLiteral("recursive_doubling"), QStringLiteral("hierarchical")},
         QT_TRANSLATE_NOOP("PlanFields", "auto: the library decides; hierarchical: inside each node, then across nodes, then inside "
                                         "again. The Collectives tab predicts each")},
        {QStringLiteral("parallel.ep"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Expert parallel (ep)"), K::Integer, 1, 1024},
        {QStringLiteral("parallel.zero"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "ZeRO stage"), K::Choice, 0, 0,
         {QStringLiteral("0"), QStringLiteral("1"), QStringLiteral("2"), QStringLiteral("3")}},
        {QStringLiteral("parallel.sequence_parallel"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Sequence parallelism"), K::Flag},
        {QStringLiteral("parallel.schedule"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Pipeline schedule"), K::Choice, 0, 0,
         schedules()},
        {QStringLiteral("parallel.virtual_stages"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Virtual stages"), K::Integer, 1, 64},
        {QStringLiteral("parallel.micro_batch_size"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Micro-batch size"), K::Integer, 1,
         1 << 16},
        {QStringLiteral("parallel.micro_batches"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Micro-batches"), K::Integer, 1,
         1 << 16},
        {QStringLiteral("parallel.recompute"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Recompute"), K::Choice, 0, 0,
         {QStringLiteral("none"), QStringLiteral("selective"), QStringLiteral("full")}},
        {QStringLiteral("parallel.precision"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Precision"), K::Choice, 0, 0,
         {QStringLiteral("fp32"), QStringLiteral("bf16"), QStringLiteral("fp16")},
         QT_TRANSLATE_NOOP("PlanFields", "bf16/fp16: 16-bit weights and activations, fp32 master weights, gradients and Adam "
                                         "moments; fp16 also scales the loss")},
        {QStringLiteral("parallel.grad_reduce"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Gradient reduction in"), K::Choice, 0,
         0, {QStringLiteral("fp32"), QStringLiteral("bf16")},
         QT_TRANSLATE_NOOP("PlanFields", "bf16: data-parallel gradients travel as bf16 (half the bytes, rounded); mixed precision only")},
        {QStringLiteral("parallel.loss_scale.initial"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "fp16 initial loss scale"),
         K::Number, 0, 0, {}, QT_TRANSLATE_NOOP("PlanFields", "The loss is multiplied by it before backward (65536 = 2^16)")},
        {QStringLiteral("parallel.loss_scale.growth_interval"), S::Parallel,
         QT_TRANSLATE_NOOP("PlanFields", "fp16 scale growth interval"), K::Integer, 1, 1 << 30, {},
         QT_TRANSLATE_NOOP("PlanFields", "Steps without overflow after which the scale grows")},
        {QStringLiteral("parallel.loss_scale.growth"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "fp16 scale growth factor"),
         K::Number},
        {QStringLiteral("parallel.loss_scale.backoff"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "fp16 scale backoff"), K::Number,
         0, 0, {}, QT_TRANSLATE_NOOP("PlanFields", "The factor the scale shrinks by when a step overflows (and is skipped)")},
        {QStringLiteral("parallel.loss_scale.min"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "fp16 minimum scale"), K::Number},
        {QStringLiteral("parallel.loss_scale.max_skipped"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "fp16 skipped steps in a row"),
         K::Integer, 1, 1 << 20, {}, QT_TRANSLATE_NOOP("PlanFields", "More overflowing steps in a row than this stop the run")},
        {QStringLiteral("parallel.dp_sync.mode"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Data-parallel sync"), K::Choice, 0,
         0, {QStringLiteral("every_step"), QStringLiteral("local_sgd"), QStringLiteral("diloco")},
         QT_TRANSLATE_NOOP("PlanFields", "local_sgd, diloco: the replicas step alone and meet every inner_steps steps")},
        {QStringLiteral("parallel.dp_sync.inner_steps"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Inner steps"), K::Integer, 1,
         1 << 20, {}, QT_TRANSLATE_NOOP("PlanFields", "Steps each replica takes alone between outer steps")},
        {QStringLiteral("parallel.dp_sync.outer_lr"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Outer learning rate"),
         K::Number},
        {QStringLiteral("parallel.dp_sync.outer_momentum"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Outer momentum"),
         K::Number},
        {QStringLiteral("parallel.dp_sync.nesterov"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Nesterov outer step"), K::Flag},
        {QStringLiteral("parallel.grad_compression.kind"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Gradient compression"),
         K::Choice, 0, 0, {QStringLiteral("none"), QStringLiteral("powersgd")},
         QT_TRANSLATE_NOOP("PlanFields", "powersgd: each gradient matrix all-reduced as two rank-r factors, with error feedback")},
        {QStringLiteral("parallel.grad_compression.rank"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Compression rank"),
         K::Integer, 1, 1 << 16, {}, QT_TRANSLATE_NOOP("PlanFields", "Clamped per matrix to min(rows, columns)")},
        {QStringLiteral("parallel.grad_compression.warm_start"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Warm start"), K::Flag,
         0, 0, {}, QT_TRANSLATE_NOOP("PlanFields", "Each step's factors start from the last step's")},
        {QStringLiteral("parallel.framework"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Memory accounting of"), K::Choice, 0, 0,
         {QStringLiteral("auto"), QStringLiteral("trellis"), QStringLiteral("megatron"), QStringLiteral("deepspeed")},
         QT_TRANSLATE_NOOP("PlanFields", "auto: trellis-trainer on CPUs, Megatron-LM on GPUs (DeepSpeed with ZeRO 2/3)")},
        {QStringLiteral("parallel.attention"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Attention kernel"), K::Choice, 0, 0,
         {QStringLiteral("auto"), QStringLiteral("materialized"), QStringLiteral("flash")},
         QT_TRANSLATE_NOOP("PlanFields", "auto: flash on GPUs, materialized on CPUs")},
        {QStringLiteral("parallel.bucket_mb"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Gradient bucket MB"), K::OptionalNumber,
         0, 0, {}, QT_TRANSLATE_NOOP("PlanFields", "Empty: 25 MB, or the whole model")},
        {QStringLiteral("parallel.first_bucket_mb"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "First bucket MB"),
         K::OptionalNumber, 0, 0, {}, QT_TRANSLATE_NOOP("PlanFields", "Empty: the bucket size")},
        {QStringLiteral("parallel.overlap_grad_reduce"), S::Parallel, QT_TRANSLATE_NOOP("PlanFields", "Overlap gradient reduction"),
         K::Flag},
    };
}

std::vector<Field> trainingFields()
{
    return {
        {QStringLiteral("training.steps"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "Steps"), K::Integer, 1, 1 << 30},
        {QStringLiteral("training.lr"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "Learning rate"), K::Number},
        {QStringLiteral("training.min_lr"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "Minimum learning rate"), K::Number},
        {QStringLiteral("training.warmup_steps"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "Warm-up steps"), K::Integer, 0, 1 << 30},
        {QStringLiteral("training.weight_decay"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "Weight decay"), K::Number},
        {QStringLiteral("training.beta1"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "Adam β1"), K::Number},
        {QStringLiteral("training.beta2"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "Adam β2"), K::Number},
        {QStringLiteral("training.eps"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "Adam ε"), K::Number},
        {QStringLiteral("training.grad_clip"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "Gradient clip (0: off)"), K::Number},
        {QStringLiteral("training.on_non_finite"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "On NaN/Inf"), K::Choice, 0, 0,
         {QStringLiteral("stop"), QStringLiteral("skip")}},
        {QStringLiteral("training.seed"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "Seed"), K::Integer, 0, 2147483647},
        {QStringLiteral("training.data.source"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "Data source"), K::Choice, 0, 0,
         {QStringLiteral("text"), QStringLiteral("tokens"), QStringLiteral("synthetic")}},
        {QStringLiteral("training.data.path"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "Data path"), K::Text, 0, 0, {},
         QT_TRANSLATE_NOOP("PlanFields", "Relative paths are relative to the plan file's folder")},
        {QStringLiteral("training.checkpoint.every"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "Checkpoint every (steps)"),
         K::Integer, 0, 1 << 30},
        {QStringLiteral("training.checkpoint.dir"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "Checkpoint folder"), K::Text},
        {QStringLiteral("training.checkpoint.keep"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "Checkpoints kept"), K::Integer, 0, 1000},
        {QStringLiteral("training.checkpoint.mode"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "Checkpoint writing"), K::Choice, 0, 0,
         {QStringLiteral("async"), QStringLiteral("sync")},
         QT_TRANSLATE_NOOP("PlanFields", "async: each rank copies its state to host memory at the step boundary and trains on while a "
                                         "thread writes it; sync: training waits for the disk. Not set: async unless the staging buffers would take more than half a "
                                         "node's host memory")},
        {QStringLiteral("training.checkpoint.memory.every"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "In-memory checkpoint every (steps)"),
         K::OptionalNumber, 0, 0, {},
         QT_TRANSLATE_NOOP("PlanFields", "Empty: none. Each rank's state in its node's shared memory every this many steps, the newest "
                                         "kept (training.checkpoint.memory.keep, 2); a restart reads it before the disk. On several nodes "
                                         "each node's is copied to the next node's, so a lost node's state comes from there")},
        {QStringLiteral("training.checkpoint.when_busy"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "Checkpoint due while writing"),
         K::Choice, 0, 0, {QStringLiteral("wait"), QStringLiteral("skip")},
         QT_TRANSLATE_NOOP("PlanFields", "Async saves: a save due while the one before is still being written waits for it (every "
                                         "save asked for is made) or is skipped (training never waits for the disk)")},
        {QStringLiteral("training.init.from"), S::Training, QT_TRANSLATE_NOOP("PlanFields", "Start from weights"), K::Text, 0, 0, {},
         QT_TRANSLATE_NOOP("PlanFields", "A folder with model.safetensors and config.json in transformers' layout (trellis-cli "
                                         "export-model writes one); empty: the seed's initialisation")},
    };
}

std::vector<Field> telemetryFields()
{
    return {
        {QStringLiteral("telemetry.endpoint"), S::Telemetry, QT_TRANSLATE_NOOP("PlanFields", "Endpoint"), K::Text, 0, 0, {},
         QT_TRANSLATE_NOOP("PlanFields", "Empty: the launcher chooses a private one")},
        {QStringLiteral("telemetry.heartbeat_ms"), S::Telemetry, QT_TRANSLATE_NOOP("PlanFields", "Heartbeat ms"), K::Integer, 0, 600000},
        {QStringLiteral("telemetry.relay"), S::Telemetry, QT_TRANSLATE_NOOP("PlanFields", "Relay per node"), K::Choice, 0, 0,
         {QStringLiteral("auto"), QStringLiteral("on"), QStringLiteral("off")},
         QT_TRANSLATE_NOOP("PlanFields", "on: a relay process per node carries its ranks' telemetry on one connection; auto: from 64 ranks")},
        {QStringLiteral("telemetry.trace_every"), S::Telemetry, QT_TRANSLATE_NOOP("PlanFields", "Trace every (steps)"), K::Integer, 0,
         1 << 30, {}, QT_TRANSLATE_NOOP("PlanFields", "Spans for the step timeline every so many steps; 0: none")},
        {QStringLiteral("telemetry.history"), S::Telemetry, QT_TRANSLATE_NOOP("PlanFields", "Run history"), K::Text, 0, 0, {},
         QT_TRANSLATE_NOOP("PlanFields", "Where this plan's runs are recorded: a file (relative to the plan's folder) or a team's "
                                         "postgresql://USER@HOST/DBNAME, never with a password; empty: the workbench's")},
    };
}

std::vector<Field> launchFields()
{
    return {
        {QStringLiteral("launch.target"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Target"), K::Choice, 0, 0,
         {QStringLiteral("local"), QStringLiteral("ssh"), QStringLiteral("slurm")}},
        {QStringLiteral("launch.ssh.user"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "SSH user"), K::Text},
        {QStringLiteral("launch.ssh.port"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "SSH port"), K::Integer, 0, 70000},
        {QStringLiteral("launch.ssh.identity_file"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "SSH identity file"), K::Text},
        {QStringLiteral("launch.ssh.known_hosts"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "SSH known-hosts file"), K::Text},
        {QStringLiteral("launch.ssh.remote_dir"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Run folder on the hosts"), K::Text},
        {QStringLiteral("launch.ssh.trainer"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Trainer on the hosts"), K::Text},
        {QStringLiteral("launch.ssh.stage_trainer"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Copy the trainer to the hosts"), K::Flag},
        {QStringLiteral("launch.ssh.shared_remote_dir"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Hosts share the remote folder"), K::Flag},
        {QStringLiteral("launch.ssh.mpi_interface"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "MPI network between hosts"), K::Text},
        {QStringLiteral("launch.ssh.telemetry_address"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Address the hosts reach this machine at"), K::Text},
        {QStringLiteral("launch.slurm.partition"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Slurm partition"), K::Text},
        {QStringLiteral("launch.slurm.account"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Slurm account"), K::Text},
        {QStringLiteral("launch.slurm.qos"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Slurm QOS"), K::Text},
        {QStringLiteral("launch.slurm.time"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Slurm time limit"), K::Text},
        {QStringLiteral("launch.slurm.shared_dir"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Folder shared with the Slurm nodes"), K::Text, 0, 0, {},
         QT_TRANSLATE_NOOP("PlanFields", "Empty: the run folder, which the nodes must see at the same path")},
        {QStringLiteral("launch.slurm.trainer"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Trainer on the Slurm nodes"), K::Text},
        {QStringLiteral("launch.slurm.mpi_interface"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "MPI network between Slurm nodes"), K::Text},
        {QStringLiteral("launch.slurm.telemetry_address"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Address the Slurm nodes reach this machine at"), K::Text},
        {QStringLiteral("launch.hang_timeout_s"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Hang timeout s"), K::Integer, 1, 604800, {},
         QT_TRANSLATE_NOOP("PlanFields", "Before a first step, how long a rank may make no progress; after it, the least the learned timeout is")},
        {QStringLiteral("launch.hang_confirm_s"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Hang confirmation s"), K::Integer, 1, 86400, {},
         QT_TRANSLATE_NOOP("PlanFields", "A rank holding the others up is a stall; stopped (or silent on a remote host) this long, a hang")},
        {QStringLiteral("launch.hang_step_factor"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Hang timeout × longest step"), K::Number, 0, 0, {},
         QT_TRANSLATE_NOOP("PlanFields", "A rank that answers but has not moved for this many times the longest step so far is hung")},
        {QStringLiteral("launch.restart.max_restarts"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Restarts at most"), K::Integer, 0,
         1000},
        {QStringLiteral("launch.restart.backoff_s"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Restart back-off s"), K::Number},
        {QStringLiteral("launch.restart.on_crash"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Restart on a crash"), K::Flag},
        {QStringLiteral("launch.restart.on_hang"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Restart on a hang"), K::Flag},
        {QStringLiteral("launch.restart.on_node_loss"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Restart on a lost node"), K::Flag},
        {QStringLiteral("launch.restart.elastic"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Elastic (fewer nodes)"), K::Flag},
        {QStringLiteral("launch.alerts.command"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Alert command"), K::JsonText, 0, 0, {},
         QT_TRANSLATE_NOOP("PlanFields", "A JSON list: the program and its arguments, never a shell line")},
        {QStringLiteral("launch.alerts.webhook"), S::Launch, QT_TRANSLATE_NOOP("PlanFields", "Alert webhook"), K::Text},
    };
}

} // namespace

QString Field::labelText() const { return QCoreApplication::translate("PlanFields", label); }
QString Field::tipText() const { return tip ? QCoreApplication::translate("PlanFields", tip) : QString(); }

const std::vector<Field> &fields()
{
    static const std::vector<Field> table = [] {
        std::vector<Field> all;
        for (auto section : {trainerFields, modelFields, clusterFields, parallelFields, trainingFields, telemetryFields, launchFields}) {
            std::vector<Field> part = section();
            all.insert(all.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
        }
        return all;
    }();
    return table;
}

const Field *fieldAt(const QString &path)
{
    for (const Field &f : fields())
        if (f.path == path)
            return &f;
    return nullptr;
}

int nodeIndexOf(const QString &diagnosticPath)
{
    static const QRegularExpression node(QStringLiteral("^cluster\\.nodes\\[(\\d+)\\]"));
    const auto m = node.match(diagnosticPath);
    return m.hasMatch() ? m.captured(1).toInt() : -1;
}

QString controlPathFor(const QString &diagnosticPath)
{
    if (diagnosticPath.startsWith(QLatin1String("cluster.nodes")))
        return QStringLiteral("cluster.nodes");
    if (diagnosticPath == QLatin1String("cluster.links") || diagnosticPath.startsWith(QLatin1String("cluster.links.intra_node")))
        return fieldAt(diagnosticPath) ? diagnosticPath : QStringLiteral("cluster.links.intra_node.bandwidth_gbps");
    if (diagnosticPath.startsWith(QLatin1String("cluster.links.inter_node")))
        return fieldAt(diagnosticPath) ? diagnosticPath : QStringLiteral("cluster.links.inter_node.bandwidth_gbps");
    if (diagnosticPath == QLatin1String("model.moe"))
        return QStringLiteral("model.moe.experts");
    if (diagnosticPath == QLatin1String("parallel.loss_scale"))
        return QStringLiteral("parallel.loss_scale.initial");
    if (diagnosticPath == QLatin1String("parallel")) // the rank count against the slots
        return QStringLiteral("parallel.dp");
    if (diagnosticPath.startsWith(QLatin1String("training.checkpoint.memory"))) // the section and its keep
        return QStringLiteral("training.checkpoint.memory.every");
    return fieldAt(diagnosticPath) ? diagnosticPath : QString();
}

QString sectionTitle(Section section)
{
    switch (section) {
    case Section::Trainer: return QCoreApplication::translate("PlanFields", "Own trainer (a PyTorch or other script)");
    case Section::Model: return QCoreApplication::translate("PlanFields", "Model");
    case Section::Cluster: return QCoreApplication::translate("PlanFields", "Cluster");
    case Section::Parallel: return QCoreApplication::translate("PlanFields", "Parallelism");
    case Section::Training: return QCoreApplication::translate("PlanFields", "Training");
    case Section::Telemetry: return QCoreApplication::translate("PlanFields", "Telemetry");
    case Section::Launch: return QCoreApplication::translate("PlanFields", "Launch");
    }
    return {};
}

std::vector<int> divisorsOf(int n)
{
    std::vector<int> out;
    for (int d = 1; d <= n && d <= 4096; ++d)
        if (n % d == 0)
            out.push_back(d);
    return out;
}

} // namespace trellis::ui::plan_editor
