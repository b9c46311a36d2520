// Plan loading and validation: a table of good and bad plans with their exact messages, a
// save/load round trip, presets and the mesh's rank order.
#include "backend/plan/hostfile.h"
#include "backend/plan/mesh.h"
#include "backend/plan/plan_json.h"
#include "backend/plan/plan_validate.h"
#include "backend/plan/presets.h"

#include <nlohmann/json.hpp>

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace trellis::plan;
using nlohmann::json;

namespace {

json basePlan()
{
    return json::parse(R"({
      "schema": "trellis.plan/1",
      "name": "base",
      "model": {"layers": 2, "hidden": 64, "heads": 4, "ffn": 256, "seq_len": 32, "vocab": 256},
      "cluster": {"nodes": [{"host": "localhost", "slots": 4, "device": "cpu"}]},
      "parallel": {"dp": 4, "micro_batch_size": 2},
      "training": {"steps": 10, "lr": 0.001, "min_lr": 0.0001, "data": {"source": "text", "path": "x.txt"}}
    })");
}

// Every diagnostic as "path: message" (warnings prefixed), parse errors first.
QStringList messagesFor(const std::string &text)
{
    QStringList out;
    auto parsed = parsePlan(text, "plan.json");
    if (!parsed) {
        for (const auto &e : parsed.errors())
            out << QString::fromStdString(e.toString());
        return out;
    }
    for (const auto &d : validatePlan(parsed.value()))
        out << QString::fromStdString(d.toString());
    return out;
}

} // namespace

class TstPlan : public QObject {
    Q_OBJECT
private slots:
    void baseIsValid()
    {
        QCOMPARE(messagesFor(basePlan().dump()), QStringList());
    }

    void badPlans_data()
    {
        QTest::addColumn<QString>("patch");
        QTest::addColumn<QString>("expected");
        auto row = [](const char *name, const char *patch, const char *expected) {
            QTest::newRow(name) << QString::fromUtf8(patch) << QString::fromUtf8(expected);
        };
        row("unknown top key", R"({"colour": "red"})", "colour: unknown key");
        row("unknown parallel key", R"({"parallel": {"foo": 1}})", "parallel.foo: unknown key");
        row("unknown node key", R"({"cluster": {"nodes": [{"host": "a", "slots": 4, "gpus": 8}]}})",
            "cluster.nodes[0].gpus: unknown key");
        row("dp string", R"({"parallel": {"dp": "four"}})", "parallel.dp: expected an integer, got string");
        row("dp float", R"({"parallel": {"dp": 2.5}})", "parallel.dp: expected an integer, got 2.5");
        row("lr string", R"({"training": {"lr": "fast"}})", "training.lr: expected a number, got string");
        row("sp not bool", R"({"parallel": {"sequence_parallel": 1}})",
            "parallel.sequence_parallel: expected true or false, got integer");
        row("model not object", R"({"model": 7})", "model: expected an object, got integer");
        row("schema wrong", R"({"schema": "trellis.plan/9"})",
            "schema: unsupported schema 'trellis.plan/9' (this version reads 'trellis.plan/1')");
        row("missing schema", R"({"schema": null})", "schema: required field is missing");
        row("missing model", R"({"model": null})", "model: required field is missing");
        row("unknown preset", R"({"model": {"preset": "gpt5"}})",
            "model.preset: unknown preset 'gpt5' (known: gpt2-1.5b, gpt2-124m, gpt2-350m, gpt2-774m, gpt3-175b, "
            "llama2-13b, llama2-70b, llama2-7b, llama3-405b, mixtral-8x7b, tiny)");
        row("unknown cluster preset", R"({"cluster": {"preset": "tpu-pod", "nodes": null}})",
            "cluster.preset: unknown preset 'tpu-pod' (known: a100-pcie-8, cpu-local, dgx-a100, dgx-h100, h200-8)");
        // Local updates (parallel.dp_sync): the inner steps, the outer optimizer, ZeRO.
        row("telemetry relay", R"({"telemetry": {"relay": "sometimes"}})",
            "telemetry.relay: unknown value 'sometimes' (expected one of: auto, on, off)");
        row("dp_sync mode", R"({"parallel": {"dp_sync": {"mode": "async"}}})",
            "parallel.dp_sync.mode: unknown value 'async' (expected one of: every_step, local_sgd, diloco)");
        row("inner_steps 0", R"({"parallel": {"dp_sync": {"mode": "diloco", "inner_steps": 0}}})",
            "parallel.dp_sync.inner_steps: must be at least 1 step, got 0");
        row("outer_lr 0", R"({"parallel": {"dp_sync": {"mode": "diloco", "outer_lr": 0}}})",
            "parallel.dp_sync.outer_lr: must be a finite number greater than 0");
        row("outer_momentum 1", R"({"parallel": {"dp_sync": {"mode": "diloco", "outer_momentum": 1}}})",
            "parallel.dp_sync.outer_momentum: must be in [0, 1)");
        row("diloco with zero", R"({"parallel": {"zero": 1, "dp_sync": {"mode": "diloco", "inner_steps": 5}}})",
            "parallel.zero: ZeRO shards the optimizer state over the data-parallel replicas, but diloco "
            "(parallel.dp_sync) needs each replica's whole state");
        row("unknown dp_sync key", R"({"parallel": {"dp_sync": {"mode": "local_sgd", "h": 4}}})",
            "parallel.dp_sync.h: unknown key");
        row("steps not a multiple", R"({"parallel": {"dp_sync": {"mode": "local_sgd", "inner_steps": 4}}})",
            "warning: parallel.dp_sync.inner_steps: the last 2 of 10 steps come after the last outer step: the "
            "replicas end apart (dumps and exports read the first replica's parameters)");
        // parallel.allreduce: the value, NCCL's algorithms, a hierarchy with nothing to compose.
        row("bad allreduce", R"({"parallel": {"allreduce": "tree"}})",
            "parallel.allreduce: unknown value 'tree' (expected one of: auto, ring, recursive_doubling, hierarchical)");
        row("recursive doubling on cuda",
            R"({"cluster": {"nodes": [{"host": "a", "slots": 4, "device": "cuda", "gpu_model": "H100-SXM"}]},
                "parallel": {"allreduce": "recursive_doubling"}})",
            "parallel.allreduce: NCCL has no recursive doubling (its algorithms are ring and tree): choose ring, "
            "hierarchical or auto on CUDA devices");
        row("hierarchical on one node", R"({"parallel": {"allreduce": "hierarchical"}})",
            "warning: parallel.allreduce: hierarchical is the flat all-reduce for the data-parallel gradients here: its "
            "ranks are on one node");
        row("hierarchical over uneven nodes",
            R"({"cluster": {"nodes": [{"host": "a", "slots": 3}, {"host": "b", "slots": 1}]}, "parallel": {"allreduce": "hierarchical"}})",
            "warning: parallel.allreduce: hierarchical is the flat all-reduce for the data-parallel gradients here: its "
            "nodes hold different numbers of its ranks (3 and 1)");
        // parallel.grad_compression: its rank, and what it cannot compose with.
        row("compression rank 0", R"({"parallel": {"grad_compression": {"kind": "powersgd", "rank": 0}}})",
            "parallel.grad_compression.rank: must be at least 1, got 0");
        row("compression rank above every matrix", R"({"parallel": {"grad_compression": {"kind": "powersgd", "rank": 65}}})",
            "parallel.grad_compression.rank: 65 is above the rank any gradient matrix can have (at most model.hidden = 64)");
        row("compression with zero", R"({"parallel": {"zero": 1, "grad_compression": {"kind": "powersgd"}}})",
            "parallel.zero: PowerSGD compresses the all-reduce of whole gradients; ZeRO stage 1 reduce-scatters them (use zero 0 "
            "with parallel.grad_compression)");
        row("compression with diloco",
            R"({"parallel": {"dp_sync": {"mode": "diloco", "inner_steps": 5}, "grad_compression": {"kind": "powersgd"}}})",
            "parallel.grad_compression.kind: PowerSGD compresses gradients, and diloco (parallel.dp_sync) reduces none");
        row("compression kind", R"({"parallel": {"grad_compression": {"kind": "topk"}}})",
            "parallel.grad_compression.kind: unknown value 'topk' (expected one of: none, powersgd)");
        row("bad precision", R"({"parallel": {"precision": "fp8"}})",
            "parallel.precision: unknown value 'fp8' (expected one of: fp32, bf16, fp16)");
        row("bad device", R"({"cluster": {"nodes": [{"host": "a", "slots": 4, "device": "tpu"}]}})",
            "cluster.nodes[0].device: unknown value 'tpu' (expected one of: cpu, cuda)");
        row("ranks vs slots", R"({"parallel": {"dp": 8}})",
            "parallel: dp·tp·pp·cp = 8·1·1·1 = 8 ranks, but cluster.nodes provide 4 slots");
        row("tp divides heads", R"({"parallel": {"dp": 1, "tp": 3}, "cluster": {"nodes": [{"host": "a", "slots": 3}]}})",
            "parallel.tp: 3 does not divide model.heads (4)");
        row("pp exceeds layers", R"({"parallel": {"dp": 1, "pp": 4}})",
            "parallel.pp: 4 pipeline stages exceed model.layers (2)");
        row("cp divides seq", R"({"model": {"seq_len": 30}, "parallel": {"dp": 1, "cp": 4}})",
            "parallel.cp: 4 does not divide model.seq_len (30)");
        row("zigzag needs 2cp chunks", R"({"model": {"seq_len": 36}, "parallel": {"dp": 1, "cp": 4}})",
            "parallel.cp_layout: zigzag cuts model.seq_len (36) into 2·cp = 8 chunks, which do not divide it (use contiguous, or "
            "another cp)");
        row("bad cp layout", R"({"parallel": {"cp_layout": "striped"}})",
            "parallel.cp_layout: unknown value 'striped' (expected one of: zigzag, contiguous)");
        row("sp under cp", R"({"model": {"seq_len": 6}, "parallel": {"dp": 1, "cp": 2, "tp": 2, "sequence_parallel": true, "cp_layout": "contiguous"}})",
            "parallel.sequence_parallel: a context-parallel rank's 3 tokens of a sequence are not a multiple of parallel.tp (2)");
        row("zero stage", R"({"parallel": {"zero": 4}})", "parallel.zero: stage must be 0, 1, 2 or 3, got 4");
        row("dp zero", R"({"parallel": {"dp": 0}})", "parallel.dp: must be at least 1, got 0");
        row("negative layers", R"({"model": {"layers": -2}})", "model.layers: must be at least 1, got -2");
        row("heads divide hidden", R"({"model": {"heads": 5}})", "model.heads: 5 does not divide model.hidden (64)");
        row("huge vocab", R"({"model": {"vocab": 1000000000}})",
            "model.vocab: 1000000000 is larger than the supported maximum (16777216)");
        row("out of int range", R"({"model": {"layers": 1e30}})", "model.layers: expected an integer, got 1e+30");
        row("bad host", R"({"cluster": {"nodes": [{"host": "-oProxyCommand=x", "slots": 4}]}})",
            "cluster.nodes[0].host: '-oProxyCommand=x' is not a valid host name");
        row("host with space", R"({"cluster": {"nodes": [{"host": "a b", "slots": 4}]}})",
            "cluster.nodes[0].host: 'a b' is not a valid host name");
        row("ssh user", R"({"launch": {"target": "ssh", "ssh": {"user": "a;b"}}})",
            "launch.ssh.user: 'a;b' may hold only letters, digits and '.', '_', '-', and must not start with '-'");
        row("ssh remote dir", R"({"launch": {"ssh": {"remote_dir": "x;rm -rf y"}}})",
            "launch.ssh.remote_dir: 'x;rm -rf y' may hold only letters, digits and '.', '_', '-', '+', '~', '/', and must not start with '-'");
        row("node identity", R"({"cluster": {"nodes": [{"host": "a", "slots": 4, "identity_file": "$HOME/k"}]}, "launch": {"target": "ssh"}})",
            "cluster.nodes[0].identity_file: '$HOME/k' may hold only letters, digits and '.', '_', '-', '+', '~', '/', and must not start with '-'");
        row("node port", R"({"cluster": {"nodes": [{"host": "a", "slots": 4, "port": 70000}]}, "launch": {"target": "ssh"}})",
            "cluster.nodes[0].port: must be between 1 and 65535 (0: launch.ssh.port)");
        row("slurm partition", R"({"launch": {"target": "slurm", "slurm": {"partition": "gpu\nx"}}})",
            "launch.slurm.partition: 'gpu\nx' may hold only letters, digits and '.', '_', '-', and must not start with '-'");
        row("slurm account option", R"({"launch": {"slurm": {"account": "--wrap=id"}}})",
            "launch.slurm.account: '--wrap=id' may hold only letters, digits and '.', '_', '-', and must not start with '-'");
        row("slurm time", R"({"launch": {"slurm": {"time": "1 hour"}}})",
            "launch.slurm.time: '1 hour' is not a time limit sbatch takes (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)");
        row("slurm time parts", R"({"launch": {"slurm": {"time": "1:2:3:4"}}})",
            "launch.slurm.time: '1:2:3:4' is not a time limit sbatch takes (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS)");
        row("slurm shared dir", R"({"launch": {"slurm": {"shared_dir": "scratch/runs"}}})",
            "launch.slurm.shared_dir: 'scratch/runs' must be an absolute path (the nodes see it from their own working folders)");
        row("slurm nodes alike", R"({"cluster": {"nodes": [{"host": "a", "slots": 2}, {"host": "b", "slots": 3}]}, "parallel": {"dp": 5}, "launch": {"target": "slurm"}})",
            "cluster.nodes[1]: a Slurm job asks for nodes alike (the same slots, and all or none with GPUs); this node differs from the first");
        row("slots zero", R"({"cluster": {"nodes": [{"host": "a", "slots": 0}]}})",
            "cluster.nodes[0].slots: must be at least 1, got 0");
        row("no nodes", R"({"cluster": {"nodes": []}})", "cluster.nodes: at least one node is needed");
        row("unknown schedule", R"({"parallel": {"schedule": "magic"}})",
            "parallel.schedule: unknown schedule 'magic' (expected gpipe, 1f1b, interleaved-1f1b or zb-h1)");
        row("tp vocab", R"({"model": {"heads": 8, "vocab": 250}, "parallel": {"dp": 1, "tp": 4}})",
            "parallel.tp: 4 does not divide model.vocab (250)");
        row("unknown arch", R"({"model": {"arch": "bert"}})", "model.arch: unknown architecture 'bert' (expected gpt or llama)");
        row("tp ffn", R"({"model": {"heads": 8, "ffn": 250}, "parallel": {"dp": 1, "tp": 4}})",
            "parallel.tp: 4 does not divide model.ffn (250)");
        row("sp seq", R"({"model": {"seq_len": 30}, "parallel": {"dp": 1, "tp": 4, "sequence_parallel": true}})",
            "parallel.sequence_parallel: model.seq_len (30) is not a multiple of parallel.tp (4), which sequence "
            "parallelism splits it by");
        row("zero bandwidth", R"({"cluster": {"links": {"intra_node": {"bandwidth_gbps": 0}}}})",
            "cluster.links.intra_node.bandwidth_gbps: must be greater than 0");
        row("absurd hidden", R"({"model": {"hidden": 1e30}})", "model.hidden: expected an integer, got 1e+30");
        row("bucket at zero 3", R"({"parallel": {"zero": 3, "bucket_mb": 0.1}})",
            "warning: parallel.bucket_mb: is not used at ZeRO stage 3, which reduces gradients one layer at a time");
        row("bucket zero", R"({"parallel": {"bucket_mb": 0}})", "parallel.bucket_mb: must be greater than 0");
        row("bucket too big", R"({"parallel": {"bucket_mb": 30}})",
            "parallel.bucket_mb: 30 MB is larger than the model's fp32 gradients (0.452 MB)");
        row("first bucket negative", R"({"parallel": {"first_bucket_mb": -1}})",
            "parallel.first_bucket_mb: must be greater than 0");
        row("warmup exceeds", R"({"training": {"warmup_steps": 50}})",
            "training.warmup_steps: 50 exceeds training.steps (10)");
        row("lr zero", R"({"training": {"lr": 0}})", "training.lr: must be greater than 0");
        row("beta2", R"({"training": {"beta2": 1.0}})", "training.beta2: must be in [0, 1)");
        row("data path", R"({"training": {"data": {"path": ""}}})", "training.data.path: a text data source needs a path");
        row("data source", R"({"training": {"data": {"source": "s3"}}})",
            "training.data.source: unknown source 's3' (expected text, tokens or synthetic)");
        row("ckpt dir", R"({"training": {"checkpoint": {"every": 5}}})",
            "training.checkpoint.dir: checkpoints are enabled but no directory is given");
        // In-memory checkpoints (training.checkpoint.memory).
        row("memory every", R"({"training": {"checkpoint": {"every": 5, "dir": "c", "memory": {"every": 0}}}})",
            "training.checkpoint.memory.every: must be at least 1, got 0");
        row("memory keep", R"({"training": {"checkpoint": {"every": 5, "dir": "c", "memory": {"keep": 0}}}})",
            "training.checkpoint.memory.keep: must be at least 1, got 0");
        row("memory dir", R"({"training": {"checkpoint": {"memory": {}}}})",
            "training.checkpoint.dir: in-memory checkpoints need it: it names the run's memory store, and a restart looks in both");
        // On several nodes a store holds the previous node's copy too: 43.5 GB fits 60, twice it does not.
        row("memory nodes fit",
            R"({"model": {"layers": 24, "hidden": 2048, "heads": 16, "ffn": 8192},
                "cluster": {"nodes": [{"host": "a", "slots": 2}, {"host": "b", "slots": 2}], "host_memory_gb": 60},
                "training": {"checkpoint": {"dir": "c", "memory": {"keep": 2}}}})",
            "training.checkpoint.memory.keep: the memory store would hold 87.1 GB (2 saves kept and one being written, and the previous "
            "node's copy of as many), more than the node's 60.0 GB host memory");
        row("memory fit",
            R"({"model": {"layers": 24, "hidden": 2048, "heads": 16, "ffn": 8192}, "cluster": {"host_memory_gb": 4},
                "training": {"checkpoint": {"dir": "c", "memory": {"keep": 2}}}})",
            "training.checkpoint.memory.keep: the memory store would hold 43.5 GB (2 saves kept and one being written), more than the node's "
            "4.0 GB host memory");
        row("memory unknown key", R"({"training": {"checkpoint": {"dir": "c", "memory": {"evry": 1}}}})",
            "training.checkpoint.memory.evry: unknown key");
        row("heartbeat", R"({"telemetry": {"heartbeat_ms": 5}})",
            "telemetry.heartbeat_ms: must be between 50 and 60000, got 5");
        row("endpoint", R"({"telemetry": {"endpoint": "http://x"}})",
            "telemetry.endpoint: 'http://x' must start with tcp:// or ipc://");
        // A plan's history: a file or a postgresql:// string; a password never (nor echoed).
        row("history password", R"({"telemetry": {"history": "postgresql://ann:s3cret@db.example/runs"}})",
            "telemetry.history: holds a password: a plan never does (it is shared and committed); the password comes from "
            "~/.pgpass, PGPASSWORD or a service file");
        row("history password key", R"({"telemetry": {"history": "postgres://ann@db.example/runs?sslmode=require&Password=x"}})",
            "telemetry.history: holds a password: a plan never does (it is shared and committed); the password comes from "
            "~/.pgpass, PGPASSWORD or a service file");
        row("history scheme", R"({"telemetry": {"history": "mysql://ann:pw@db/runs"}})",
            "telemetry.history: 'mysql://…' is not a history: give a file path or a postgresql://USER@HOST/DBNAME connection string");
        row("history control", "{\"telemetry\": {\"history\": \"runs\\n.sqlite\"}}", "telemetry.history: must not hold control characters");
        row("history folder", R"({"telemetry": {"history": "runs/"}})", "telemetry.history: 'runs/' is no file name");
        row("launch target", R"({"launch": {"target": "k8s"}})",
            "launch.target: unknown value 'k8s' (expected one of: local, ssh, slurm)");
        row("non-finite policy", R"({"training": {"on_non_finite": "ignore"}})",
            "training.on_non_finite: unknown value 'ignore' (expected one of: stop, skip)");
        row("checkpoint mode", R"({"training": {"checkpoint": {"mode": "later"}}})",
            "training.checkpoint.mode: unknown value 'later' (expected one of: async, sync)");
        row("checkpoint when busy", R"({"training": {"checkpoint": {"when_busy": "drop"}}})",
            "training.checkpoint.when_busy: unknown value 'drop' (expected one of: wait, skip)");
        row("host memory", R"({"cluster": {"preset": "cpu-local", "host_memory_gb": -4}})",
            "cluster.host_memory_gb: must be 0 (not known) or a node's host memory in GB");
        row("alert webhook", R"({"launch": {"alerts": {"webhook": "ftp://x"}}})",
            "launch.alerts.webhook: 'ftp://x' must start with http:// or https://");
        row("alert command type", R"({"launch": {"alerts": {"command": "notify-send x"}}})",
            "launch.alerts.command: expected a list of strings, got string");
        row("alert command empty", R"({"launch": {"alerts": {"command": [""]}}})",
            "launch.alerts.command: the program (the first element) must not be empty");
        row("negative restarts", R"({"launch": {"restart": {"max_restarts": -1}}})",
            "launch.restart.max_restarts: must be between 0 and 100, got -1");
        row("absurd restarts", R"({"launch": {"restart": {"max_restarts": 100000}}})",
            "launch.restart.max_restarts: must be between 0 and 100, got 100000");
        row("negative backoff", R"({"launch": {"restart": {"backoff_s": -2}}})",
            "launch.restart.backoff_s: must be between 0 and 3600 seconds, got -2");
        row("restart cause type", R"({"launch": {"restart": {"on_hang": "yes"}}})",
            "launch.restart.on_hang: expected true or false, got string");
        row("restart unknown key", R"({"launch": {"restart": {"on_crashes": true}}})",
            "launch.restart.on_crashes: unknown key");
        row("ep without moe", R"({"parallel": {"ep": 2}})",
            "parallel.ep: expert parallelism needs a mixture-of-experts model (model.moe.experts)");
        row("ep divides dp", R"({"parallel": {"ep": 3}})", "parallel.ep: 3 does not divide parallel.dp (4)");
        row("interleaved m", R"({"model": {"layers": 4}, "parallel": {"dp": 1, "pp": 4, "schedule": "interleaved-1f1b", "micro_batches": 6}})",
            "parallel.micro_batches: 6 is not a multiple of parallel.pp (4), which interleaved-1f1b needs");
        row("virtual stages", R"({"parallel": {"virtual_stages": 2}})",
            "parallel.virtual_stages: only the interleaved-1f1b schedule uses virtual stages");
        row("kv heads", R"({"model": {"kv_heads": 3}})", "model.kv_heads: 3 does not divide model.heads (4)");
        row("top_k", R"({"model": {"moe": {"experts": 4, "top_k": 5}}})",
            "model.moe.top_k: must be between 1 and model.moe.experts (4), got 5");
        row("capacity zero", R"({"model": {"moe": {"experts": 4, "top_k": 1, "capacity_factor": 0}}})",
            "model.moe.capacity_factor: must be greater than 0 (leave it out for dropless routing), got 0");
        row("capacity negative", R"({"model": {"moe": {"experts": 4, "top_k": 1, "capacity_factor": -1.5}}})",
            "model.moe.capacity_factor: must be greater than 0 (leave it out for dropless routing), got -1.5");
        row("capacity type", R"({"model": {"moe": {"experts": 4, "top_k": 1, "capacity_factor": "big"}}})",
            "model.moe.capacity_factor: expected a number, got string");
        row("aux loss negative", R"({"model": {"moe": {"experts": 4, "top_k": 1, "aux_loss_coef": -0.1}}})",
            "model.moe.aux_loss_coef: must not be negative, got -0.1");
        row("ep divides experts", R"({"model": {"moe": {"experts": 6, "top_k": 1}}, "parallel": {"ep": 4}})",
            "parallel.ep: 4 does not divide model.moe.experts (6)");
        row("init std negative", R"({"model": {"init_std": -0.02}})",
            "model.init_std: must be 0 (scaled with the width) or a standard deviation above 0 and below 1, not -0.020000");
        row("init std string", R"({"model": {"init_std": "small"}})", "model.init_std: expected a number, got string");
        // A plan that runs its own trainer (own_trainer.command).
        row("empty command", R"({"own_trainer": {"command": []}})",
            "own_trainer.command: is empty: give the program and its arguments, e.g. [\"python3\", \"train.py\"]");
        row("command a string", R"({"own_trainer": {"command": "python3 train.py"}})", "own_trainer.command: expected a list of strings, got string");
        row("no command", R"({"own_trainer": {"env": {"A": "1"}}})",
            "own_trainer.command: required field is missing (the program each rank runs and its arguments)");
        row("reserved variable", R"({"own_trainer": {"command": ["x"], "env": {"MASTER_PORT": "1"}}})",
            "own_trainer.env.MASTER_PORT: is set by the launcher for every rank and cannot be overridden");
        row("trellis variable", R"({"own_trainer": {"command": ["x"], "env": {"TRELLIS_RUN_ID": "1"}}})",
            "own_trainer.env.TRELLIS_RUN_ID: is set by the launcher for every rank and cannot be overridden");
        row("bad name", R"({"own_trainer": {"command": ["x"], "env": {"A-B": "1"}}})",
            "own_trainer.env.A-B: is not a variable name (letters, digits and _, not starting with a digit)");
        row("value a number", R"({"own_trainer": {"command": ["x"], "env": {"A": 1}}})", "own_trainer.env.A: expected a string, got integer");
        row("ranks disagree", R"({"own_trainer": {"command": ["x"], "ranks": 2}})",
            "own_trainer.ranks: 2 ranks, but parallel makes 4 (dp·tp·pp·cp): give one of them, or make them agree");
        row("ranks zero", R"({"own_trainer": {"command": ["x"], "ranks": 0}})", "own_trainer.ranks: must be at least 1, not 0");
        row("unknown key", R"({"own_trainer": {"command": ["x"], "args": ["y"]}})", "own_trainer.args: unknown key");
    }

    // own_trainer was called trainer until 2026-12: an old plan still reads, says so once as a
    // warning, and is saved under the new name; naming the section twice is an error.
    void oldTrainerSectionIsAnAlias()
    {
        json old = basePlan();
        old["trainer"] = {{"command", {"python3", "train.py"}}, {"env", {{"A", "1"}}}};
        const auto read = parsePlan(old.dump(), "old.json");
        QVERIFY2(read.ok(), read.ok() ? "" : read.errorText().c_str());
        QCOMPARE(read.value().ownTrainer.command, (std::vector<std::string>{"python3", "train.py"}));
        const Diagnostics warnings = validatePlan(read.value());
        QVERIFY(std::any_of(warnings.begin(), warnings.end(), [](const Diagnostic &w) {
            return w.severity == Severity::Warning && w.path == "trainer" && w.message.find("own_trainer") != std::string::npos;
        }));
        const json saved = json::parse(planToJson(read.value()));
        QVERIFY(saved.contains("own_trainer"));
        QVERIFY(!saved.contains("trainer"));
        QCOMPARE(parsePlan(saved.dump(), "new.json").value(), read.value());
        for (const Diagnostic &w : validatePlan(parsePlan(saved.dump(), "new.json").value()))
            QVERIFY2(w.path != "trainer", w.message.c_str()); // read under its own name: no note
        // Errors through the alias name the field as the file spells it.
        json bad = basePlan();
        bad["trainer"] = {{"command", json::array()}};
        QVERIFY(messagesFor(bad.dump()).contains(
            QStringLiteral("trainer.command: is empty: give the program and its arguments, e.g. [\"python3\", \"train.py\"]")));
        json both = basePlan();
        both["trainer"] = {{"command", {"x"}}};
        both["own_trainer"] = {{"command", {"x"}}};
        QVERIFY(messagesFor(both.dump()).contains(
            QStringLiteral("trainer: is the old name of own_trainer: give the section once, as own_trainer")));
    }

    void badPlans()
    {
        QFETCH(QString, patch);
        QFETCH(QString, expected);
        json plan = basePlan();
        plan.merge_patch(json::parse(patch.toStdString()));
        const QStringList messages = messagesFor(plan.dump());
        QVERIFY2(messages.contains(expected), qPrintable(QStringLiteral("expected \"%1\"\n got: %2")
                                                             .arg(expected, messages.join(QStringLiteral(" | ")))));
    }

    // Local updates: a round trip keeps dp_sync; dp 1 is accepted; what trellis-trainer cannot do
    // with them yet is named.
    void localUpdates()
    {
        json j = basePlan();
        j["parallel"]["dp_sync"] = {{"mode", "diloco"}, {"inner_steps", 5}, {"outer_lr", 0.5}, {"outer_momentum", 0.8},
                                    {"nesterov", false}};
        auto p = parsePlan(j.dump(), "plan.json");
        QVERIFY2(p.ok(), p.errorText().c_str());
        QCOMPARE(p.value().parallel.dpSync.mode, DpSyncMode::DiLoCo);
        QCOMPARE(p.value().parallel.dpSync.innerSteps, 5);
        QVERIFY(!p.value().parallel.dpSync.nesterov);
        auto again = parsePlan(planToJson(p.value()), "again.json");
        QVERIFY2(again.ok(), again.errorText().c_str());
        QVERIFY(again.value().parallel == p.value().parallel);
        QVERIFY(checkTrainerSupport(p.value()).empty());
        j["parallel"]["dp"] = 1;
        j["cluster"]["nodes"][0]["slots"] = 1;
        QCOMPARE(messagesFor(j.dump()), QStringList());
        j["parallel"]["cp"] = 2;
        j["cluster"]["nodes"][0]["slots"] = 2;
        j["training"]["checkpoint"] = {{"every", 5}, {"dir", "ck"}};
        p = parsePlan(j.dump(), "plan.json");
        QVERIFY2(p.ok(), p.errorText().c_str());
        QStringList messages;
        for (const auto &d : checkTrainerSupport(p.value()))
            messages << QString::fromStdString(d.toString());
        QVERIFY2(messages.contains(QStringLiteral("parallel.dp_sync.mode: diloco with context parallelism (its ranks share one "
                                                  "replica's gradients) is not supported by this version of trellis-trainer yet")),
                 qPrintable(messages.join(QStringLiteral(" | "))));
        // Checkpoints compose (each replica writes its own state; tst_checkpoint resumes them).
        QVERIFY2(!messages.join(QLatin1Char('\n')).contains(QStringLiteral("training.checkpoint")),
                 qPrintable(messages.join(QStringLiteral(" | "))));
    }

    // A plan that runs its own trainer (docs/pytorch.md): model, parallel and training optional.
    void ownTrainer()
    {
        const json own = json::parse(R"({
          "schema": "trellis.plan/1", "name": "ddp",
          "own_trainer": {"command": ["python3", "train.py; rm -rf ~", "--steps", "5"], "env": {"OMP_NUM_THREADS": "1", "X": "a b"},
                      "dir": "examples"},
          "cluster": {"nodes": [{"host": "localhost", "slots": 4}]}
        })");
        auto parsed = parsePlan(own.dump(), "own.json");
        QVERIFY2(parsed.ok(), parsed.errorText().c_str());
        const Plan &p = parsed.value();
        QVERIFY(p.ownTrainer.external());
        QVERIFY(!p.ownTrainer.hasModel);
        QCOMPARE(p.ownTrainer.command.size(), std::size_t(4));
        QCOMPARE(p.ownTrainer.command[1], std::string("train.py; rm -rf ~")); // one argument, as written
        QCOMPARE(p.ownTrainer.env.size(), std::size_t(2));
        QCOMPARE(p.parallel.worldSize(), 4); // a rank per slot when neither ranks nor parallel say
        QVERIFY(!hasErrors(validatePlan(p)));
        QVERIFY(checkTrainerSupport(p).empty()); // trellis-trainer does not train it
        auto again = parsePlan(planToJson(p));
        QVERIFY2(again.ok(), again.errorText().c_str());
        QVERIFY(again.value() == p);
        QVERIFY(planToJson(p).find("\"model\"") == std::string::npos); // no model invented

        json ranks = own;
        ranks["own_trainer"]["ranks"] = 2;
        ranks["cluster"]["nodes"][0]["slots"] = 2;
        QCOMPARE(parsePlan(ranks.dump()).value().parallel.dp, 2);
        // A model given with it is checked as usual (and estimated).
        json modelled = own;
        modelled["model"] = basePlan()["model"];
        modelled["model"]["heads"] = 3;
        auto m = parsePlan(modelled.dump());
        QVERIFY2(m.ok(), m.errorText().c_str());
        QVERIFY(m.value().ownTrainer.hasModel);
        QVERIFY(hasErrors(validatePlan(m.value())));
    }

    void syntaxErrorNamesLineAndColumn()
    {
        const QStringList m = messagesFor("{\n  \"schema\": \"trellis.plan/1\",\n  \"model\": {,}\n}");
        QCOMPARE(m.size(), 1);
        QVERIFY2(m.first().startsWith(QStringLiteral("plan.json:3:13: invalid JSON")), qPrintable(m.first()));
    }

    void missingFile()
    {
        auto r = loadPlanFile("/nonexistent/plan.json");
        QVERIFY(!r.ok());
        QCOMPARE(QString::fromStdString(r.errorText()), QStringLiteral("/nonexistent/plan.json: no such file"));
    }

    void roundTrip()
    {
        json j = basePlan();
        j["model"] = {{"preset", "gpt2-124m"}};
        j["parallel"] = {{"dp", 2}, {"tp", 2}, {"zero", 1}, {"precision", "bf16"}, {"recompute", "full"}, {"bucket_mb", 4.5},
                         {"allreduce", "hierarchical"}, {"grad_compression", {{"kind", "powersgd"}, {"rank", 2}, {"warm_start", false}}}};
        j["telemetry"] = {{"relay", "on"}, {"history", "postgresql://team@db.example:5433/runs?sslmode=verify-full"}};
        auto first = parsePlan(j.dump());
        QVERIFY2(first.ok(), first.errorText().c_str());
        auto second = parsePlan(planToJson(first.value()));
        QVERIFY2(second.ok(), second.errorText().c_str());
        QVERIFY(first.value() == second.value());
        QVERIFY(second.value().telemetry.relay == TelemetryRelay::On);
        QCOMPARE(second.value().telemetry.history, std::string("postgresql://team@db.example:5433/runs?sslmode=verify-full"));
        for (const Diagnostic &d : validatePlan(second.value()))
            QVERIFY2(d.path != "telemetry.history", d.toString().c_str()); // a connection string with no password is a history
        // Not set, not written: a plan without it still opens in a Trellis that predates the field.
        QVERIFY(planToJson(parsePlan(basePlan().dump()).value()).find("\"history\"") == std::string::npos);
        QVERIFY(second.value().parallel.allReduce == AllReduceAlgorithm::Hierarchical);
        QVERIFY((second.value().parallel.gradCompression == GradCompressionSpec{GradCompression::PowerSgd, 2, false}));
        QCOMPARE(second.value().model.hidden, 768);
        QCOMPARE(second.value().model.preset, std::string("gpt2-124m"));
        QCOMPARE(parameterCount(second.value().model), 124439808ull); // GPT-2 small as released (tied, 1024 positions)
        QCOMPARE(second.value().model.initStd, 0.0); // the default (scaled with the width) is not written
        QVERIFY(planToJson(second.value()).find("init_std") == std::string::npos);
        j["model"]["init_std"] = 0.02;
        auto pinned = parsePlan(planToJson(parsePlan(j.dump()).value()));
        QVERIFY2(pinned.ok(), pinned.errorText().c_str());
        QCOMPARE(pinned.value().model.initStd, 0.02);

        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("p.json")).toStdString();
        QVERIFY(savePlanFile(first.value(), path).ok());
        auto loaded = loadPlanFile(path);
        QVERIFY(loaded.ok());
        QVERIFY(loaded.value() == first.value());
    }

    // Hostfiles (plan/hostfile.h): Open MPI's "host slots=N" lines with the ssh fields beside.
    void hostfileLines_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected"); // the nodes as "user@host:port/slots/identity/remote_dir/device/gpu;", or the error
        QTest::newRow("open mpi form") << "# two hosts\nnode1 slots=2\n\nnode2 slots=4 max_slots=8  # comment\n"
                                       << "@node1:0/2///cpu/;@node2:0/4///cpu/;";
        QTest::newRow("every field") << "alice@10.0.0.2:2222 slots=8 identity=~/.ssh/id remote_dir=/scratch/t device=cuda gpu=H100\n"
                                     << "alice@10.0.0.2:2222/8/~/.ssh/id//scratch/t/cuda/H100;";
        QTest::newRow("fields over the short form") << "node1 slots=1 user=bob port=22\n" << "bob@node1:22/1///cpu/;";
        QTest::newRow("ipv6 keeps its colons") << "fe80::1 slots=1\n" << "@fe80::1:0/1///cpu/;";
        QTest::newRow("no slots") << "node1\n" << "hosts:1: node1 has no slots=N (how many ranks it runs)";
        QTest::newRow("bad slots") << "node1 slots=two\n" << "hosts:1: slots='two' is not a positive whole number";
        QTest::newRow("zero slots") << "node1 slots=0\n" << "hosts:1: slots='0' is not a positive whole number";
        QTest::newRow("bad port") << "node1:70000 slots=1\n" << "hosts:1: '70000' is not a port (1 to 65535)";
        QTest::newRow("unknown field") << "node1 slots=1 colour=red\n"
                                       << "hosts:1: unknown field 'colour' (slots, max_slots, user, port, identity, remote_dir, device, gpu)";
        QTest::newRow("not a pair") << "node1 slots=1 extra\n"
                                    << "hosts:1: 'extra' is not a field=value pair (slots=N, user=, port=, identity=, remote_dir=, device=, gpu=)";
        QTest::newRow("twice") << "node1 slots=1\nnode1 slots=2\n" << "hosts:2: node1 is listed already on line 1 (give it once, with all its slots)";
        QTest::newRow("bad device") << "node1 slots=1 device=tpu\n" << "hosts:1: device='tpu' is not cpu or cuda";
        QTest::newRow("empty") << "# nothing\n\n" << "hosts: lists no hosts";
    }

    void hostfileLines()
    {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        const auto parsed = parseHostfile(text.toStdString(), "hosts");
        QString got;
        if (!parsed) {
            QStringList errors;
            for (const auto &e : parsed.errors())
                errors << QString::fromStdString(e.message);
            got = errors.join(QStringLiteral(" | "));
        } else {
            for (const auto &h : parsed.value()) {
                const NodeSpec &n = h.node;
                got += QStringLiteral("%1@%2:%3/%4/%5/%6/%7/%8;")
                           .arg(QString::fromStdString(n.user), QString::fromStdString(n.host))
                           .arg(n.port)
                           .arg(n.slotCount)
                           .arg(QString::fromStdString(n.identityFile), QString::fromStdString(n.remoteDir),
                                QString::fromUtf8(toString(n.device)), QString::fromStdString(n.gpuModel));
            }
        }
        QCOMPARE(got, expected);
    }

    // cluster.hostfile, relative to the plan's folder; a preset's device stays; never with nodes.
    void planWithHostfile()
    {
        QTemporaryDir dir;
        QFile hosts(dir.filePath(QStringLiteral("hosts.txt")));
        QVERIFY(hosts.open(QIODevice::WriteOnly));
        hosts.write("node-a slots=2\nnode-b slots=2 remote_dir=/scratch\n");
        hosts.close();
        json j = basePlan();
        j["cluster"] = {{"hostfile", "hosts.txt"}};
        const std::string path = dir.filePath(QStringLiteral("plan.json")).toStdString();
        auto write = [&](const json &plan) {
            QFile f(QString::fromStdString(path));
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write(QByteArray::fromStdString(plan.dump()));
        };
        write(j);
        auto loaded = loadPlanFile(path);
        QVERIFY2(loaded.ok(), loaded.errorText().c_str());
        QCOMPARE(loaded.value().cluster.nodes.size(), std::size_t(2));
        QCOMPARE(loaded.value().cluster.nodes[1].host, std::string("node-b"));
        QCOMPARE(loaded.value().cluster.nodes[1].remoteDir, std::string("/scratch"));
        QVERIFY(validatePlan(loaded.value()).empty());
        // Written back with the hosts it read.
        auto again = parsePlan(planToJson(loaded.value()));
        QVERIFY2(again.ok(), again.errorText().c_str());
        QVERIFY(again.value() == loaded.value());
        // A preset's device carries over to the hosts of the file.
        j["cluster"] = {{"preset", "dgx-h100"}, {"node_count", 1}, {"hostfile", "hosts.txt"}};
        j["parallel"] = {{"dp", 4}, {"micro_batch_size", 2}};
        write(j);
        loaded = loadPlanFile(path);
        QVERIFY2(loaded.ok(), loaded.errorText().c_str());
        QCOMPARE(loaded.value().cluster.nodes.size(), std::size_t(2));
        QVERIFY(loaded.value().cluster.nodes[0].device == DeviceKind::Cuda);
        // Both, or a file that is not there: errors naming cluster.hostfile.
        j["cluster"] = {{"hostfile", "hosts.txt"}, {"nodes", json::array({{{"host", "x"}, {"slots", 4}}})}};
        write(j);
        QCOMPARE(QString::fromStdString(loadPlanFile(path).errorText()),
                 QStringLiteral("cluster.hostfile: give the nodes in cluster.nodes or in a hostfile, not both"));
        j["cluster"] = {{"hostfile", "missing.txt"}};
        write(j);
        QCOMPARE(QString::fromStdString(loadPlanFile(path).errorText()),
                 QStringLiteral("cluster.hostfile: %1/missing.txt: no such file").arg(dir.path()));
    }

    void shippedPlansAreValid_data()
    {
        QTest::addColumn<QString>("path");
        for (const QString &folder : {QStringLiteral("/resources/plans"), QStringLiteral("/resources/plans/gpu")}) {
            const QDir dir(QStringLiteral(TRELLIS_SOURCE_DIR) + folder);
            for (const QString &f : dir.entryList({QStringLiteral("*.json")}))
                QTest::newRow(qPrintable(f)) << dir.filePath(f);
        }
    }

    void shippedPlansAreValid()
    {
        QFETCH(QString, path);
        Diagnostics warnings;
        auto plan = loadAndValidatePlanFile(path.toStdString(), &warnings);
        QVERIFY2(plan.ok(), plan.errorText().c_str());
    }

    // What the cost model plans but the trainer cannot run yet is refused before launch, named.
    void trainerSupportNamesTheField()
    {
        json j = basePlan();
        j["model"] = {{"preset", "llama2-7b"}};
        j["parallel"] = {{"dp", 2}, {"cp", 2}, {"tp", 2}, {"precision", "bf16"}}; // context parallelism and bf16 run
        auto p = parsePlan(j.dump());
        QVERIFY2(p.ok(), p.errorText().c_str());
        QCOMPARE(p.value().model.arch, std::string("llama"));
        QVERIFY(checkTrainerSupport(p.value()).empty());
        // On CUDA devices fp16 is not yet (the GPU kernels are fp32 and bf16); several ranks are
        // (NCCL, or staged MPI where they share a GPU).
        json gpu = j;
        gpu["parallel"]["precision"] = "fp16";
        gpu["cluster"] = {{"nodes", {{{"host", "localhost"}, {"slots", 8}, {"device", "cuda"}, {"gpu_model", "h100"}}}}};
        p = parsePlan(gpu.dump());
        QVERIFY2(p.ok(), p.errorText().c_str());
        QStringList messages;
        for (const auto &d : checkTrainerSupport(p.value()))
            messages << QString::fromStdString(d.toString());
        QVERIFY2(messages == (QStringList{QStringLiteral("parallel.precision: fp16 training on CUDA devices (the GPU kernels are fp32 and bf16) is "
                                                         "not supported by this version of trellis-trainer yet")}),
                 qPrintable(messages.join(QStringLiteral(" | "))));
        j["parallel"] = {{"dp", 4}}; // the llama architecture runs
        p = parsePlan(j.dump());
        QVERIFY(p.ok());
        QVERIFY(checkTrainerSupport(p.value()).empty());
        j["model"] = {{"preset", "gpt2-124m"}};
        p = parsePlan(j.dump());
        QVERIFY(p.ok());
        QCOMPARE(p.value().model.arch, std::string("gpt"));
        QVERIFY(checkTrainerSupport(p.value()).empty());
        // Mixtures of experts run with ep over dp and with pipelines; with ZeRO under ep, context
        // parallelism or zb-h1 not yet.
        j["model"] = {{"preset", "gpt2-124m"}, {"moe", {{"experts", 4}, {"top_k", 2}}}};
        j["parallel"] = {{"dp", 4}, {"ep", 2}, {"pp", 2}, {"micro_batches", 4}};
        p = parsePlan(j.dump());
        QVERIFY2(p.ok(), p.errorText().c_str());
        QVERIFY(checkTrainerSupport(p.value()).empty());
        j["parallel"] = {{"dp", 2}, {"ep", 2}, {"zero", 1}, {"cp", 2}, {"pp", 2}, {"schedule", "zb-h1"}, {"micro_batches", 4}};
        p = parsePlan(j.dump());
        QVERIFY(p.ok());
        messages.clear();
        for (const auto &d : checkTrainerSupport(p.value()))
            messages << QString::fromStdString(d.path);
        QCOMPARE(messages, (QStringList{QStringLiteral("parallel.zero"), QStringLiteral("parallel.cp"), QStringLiteral("parallel.schedule")}));
    }

    void presets()
    {
        for (const auto &name : modelPresetNames()) {
            auto m = modelPreset(name);
            QVERIFY(m.has_value());
            QCOMPARE(m->hidden % m->heads, 0);
        }
        QCOMPARE(modelPreset("llama2-70b")->kvHeads, 8);
        auto dgx = clusterPreset("dgx-h100");
        QVERIFY(dgx.has_value());
        const ClusterSpec c = expandCluster(*dgx, 4);
        QCOMPARE(c.totalSlots(), 32);
    }

    void meshRankOrder()
    {
        ParallelSpec p;
        p.tp = 2;
        p.cp = 1;
        p.dp = 2;
        p.pp = 2;
        Mesh mesh(p);
        QCOMPARE(mesh.worldSize(), 8);
        for (int r = 0; r < 8; ++r)
            QCOMPARE(mesh.rankOf(mesh.coordinatesOf(r)), r);
        QCOMPARE(mesh.coordinatesOf(5), (MeshCoordinates{1, 0, 0, 1}));
        QCOMPARE(mesh.groupOf(5, GroupKind::Tp), (std::vector<int>{4, 5}));
        QCOMPARE(mesh.groupOf(5, GroupKind::Dp), (std::vector<int>{5, 7}));
        QCOMPARE(mesh.groupOf(5, GroupKind::Pp), (std::vector<int>{1, 5}));
    }

    void tpGroupSpanningNodesWarns()
    {
        json j = basePlan();
        j["cluster"]["nodes"] = json::array({{{"host", "a"}, {"slots", 2}}, {{"host", "b"}, {"slots", 2}}});
        j["parallel"] = {{"dp", 1}, {"tp", 4}};
        const QStringList m = messagesFor(j.dump());
        QVERIFY2(m.contains(QStringLiteral("warning: parallel.tp: the tensor-parallel group of rank 0 spans 2 nodes; its "
                                           "all-reduces leave the node")),
                 qPrintable(m.join(QStringLiteral(" | "))));
    }
};

QTEST_GUILESS_MAIN(TstPlan)
#include "tst_plan.moc"
