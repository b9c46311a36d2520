// JSON <-> Plan. A small ObjectReader walks one JSON object, records which keys it consumed and
// reports type errors with full paths; finish() then flags every key nobody asked for.
#include "backend/plan/plan_json.h"

#include "backend/plan/hostfile.h"

#include "backend/plan/plan_validate.h"
#include "backend/plan/presets.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace trellis::plan {
namespace {

using nlohmann::json;

std::string typeName(const json &value)
{
    if (value.is_number_integer() || value.is_number_unsigned())
        return "integer";
    if (value.is_number_float())
        return "number";
    return value.type_name();
}

class ObjectReader {
public:
    ObjectReader(const json *object, std::string path, Diagnostics &diagnostics)
        : m_object(object), m_path(std::move(path)), m_diagnostics(diagnostics)
    {
    }

    bool present() const { return m_object != nullptr; }
    bool has(const char *key) const { return m_object && m_object->contains(key); }

    std::string pathOf(const char *key) const { return m_path.empty() ? key : m_path + "." + key; }

    void error(const std::string &path, const std::string &message)
    {
        m_diagnostics.push_back({Severity::Error, path, message});
    }

    const json *find(const char *key, bool required)
    {
        m_seen.insert(key);
        if (!m_object || !m_object->contains(key)) {
            if (required && m_object)
                error(pathOf(key), "required field is missing");
            return nullptr;
        }
        return &(*m_object)[key];
    }

    void read(const char *key, int &out, bool required = false)
    {
        const json *v = find(key, required);
        if (!v)
            return;
        if (v->is_number_integer() || v->is_number_unsigned()) {
            long long value = v->is_number_unsigned() ? static_cast<long long>(std::min<std::uint64_t>(
                                                            v->get<std::uint64_t>(), std::numeric_limits<long long>::max()))
                                                      : v->get<long long>();
            if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
                error(pathOf(key), "value " + v->dump() + " is out of range");
                return;
            }
            out = static_cast<int>(value);
        } else if (v->is_number_float()) {
            error(pathOf(key), "expected an integer, got " + v->dump());
        } else {
            error(pathOf(key), "expected an integer, got " + typeName(*v));
        }
    }

    void read(const char *key, std::uint64_t &out, bool required = false)
    {
        const json *v = find(key, required);
        if (!v)
            return;
        if (v->is_number_unsigned() || (v->is_number_integer() && v->get<long long>() >= 0))
            out = v->get<std::uint64_t>();
        else if (v->is_number_integer())
            error(pathOf(key), "expected a non-negative integer, got " + v->dump());
        else
            error(pathOf(key), "expected a non-negative integer, got " + typeName(*v));
    }

    void read(const char *key, double &out, bool required = false)
    {
        const json *v = find(key, required);
        if (!v)
            return;
        if (v->is_number()) {
            out = v->get<double>();
            if (!std::isfinite(out))
                error(pathOf(key), "value is not a finite number");
        } else {
            error(pathOf(key), "expected a number, got " + typeName(*v));
        }
    }

    void read(const char *key, std::optional<double> &out)
    {
        if (!has(key)) {
            m_seen.insert(key);
            return;
        }
        double value = 0;
        read(key, value);
        out = value;
    }

    void read(const char *key, bool &out, bool required = false)
    {
        const json *v = find(key, required);
        if (!v)
            return;
        if (v->is_boolean())
            out = v->get<bool>();
        else
            error(pathOf(key), "expected true or false, got " + typeName(*v));
    }

    void read(const char *key, std::vector<std::string> &out)
    {
        const json *v = find(key, false);
        if (!v)
            return;
        if (!v->is_array()) {
            error(pathOf(key), "expected a list of strings, got " + typeName(*v));
            return;
        }
        out.clear();
        for (std::size_t i = 0; i < v->size(); ++i) {
            if (!(*v)[i].is_string()) {
                error(pathOf(key) + "[" + std::to_string(i) + "]", "expected a string, got " + typeName((*v)[i]));
                return;
            }
            out.push_back((*v)[i].get<std::string>());
        }
    }

    void read(const char *key, std::string &out, bool required = false)
    {
        const json *v = find(key, required);
        if (!v)
            return;
        if (v->is_string())
            out = v->get<std::string>();
        else
            error(pathOf(key), "expected a string, got " + typeName(*v));
    }

    template <typename Enum>
    void readEnum(const char *key, Enum &out, std::initializer_list<std::pair<const char *, Enum>> names)
    {
        std::string text;
        const json *v = find(key, false);
        if (!v)
            return;
        if (!v->is_string()) {
            error(pathOf(key), "expected a string, got " + typeName(*v));
            return;
        }
        text = v->get<std::string>();
        std::string known;
        for (const auto &[name, value] : names) {
            if (text == name) {
                out = value;
                return;
            }
            known += std::string(known.empty() ? "" : ", ") + name;
        }
        error(pathOf(key), "unknown value '" + text + "' (expected one of: " + known + ")");
    }

    // A nested object; absent objects give a reader that reads nothing.
    ObjectReader child(const char *key, bool required = false)
    {
        const json *v = find(key, required);
        if (v && !v->is_object()) {
            error(pathOf(key), "expected an object, got " + typeName(*v));
            v = nullptr;
        }
        return ObjectReader(v, pathOf(key), m_diagnostics);
    }

    const json *array(const char *key, bool required = false)
    {
        const json *v = find(key, required);
        if (v && !v->is_array()) {
            error(pathOf(key), "expected an array, got " + typeName(*v));
            return nullptr;
        }
        return v;
    }

    void finish()
    {
        if (!m_object)
            return;
        for (const auto &item : m_object->items())
            if (!m_seen.count(item.key()))
                error(pathOf(item.key().c_str()), "unknown key");
    }

private:
    const json *m_object;
    std::string m_path;
    Diagnostics &m_diagnostics;
    std::set<std::string> m_seen;
};

void readModel(ObjectReader r, ModelSpec &m, Diagnostics &d)
{
    r.read("preset", m.preset);
    if (!m.preset.empty()) {
        if (auto preset = modelPreset(m.preset)) {
            m = *preset;
        } else {
            std::string known;
            for (const auto &n : modelPresetNames())
                known += (known.empty() ? "" : ", ") + n;
            d.push_back({Severity::Error, "model.preset", "unknown preset '" + m.preset + "' (known: " + known + ")"});
        }
    }
    const bool explicitRequired = m.preset.empty();
    r.read("arch", m.arch);
    r.read("layers", m.layers, explicitRequired);
    r.read("hidden", m.hidden, explicitRequired);
    r.read("heads", m.heads, explicitRequired);
    r.read("kv_heads", m.kvHeads);
    if (m.kvHeads == 0)
        m.kvHeads = m.heads;
    r.read("ffn", m.ffn);
    if (m.ffn == 0)
        m.ffn = 4 * m.hidden;
    r.read("seq_len", m.seqLen, explicitRequired);
    r.read("vocab", m.vocab, explicitRequired);
    r.read("init_std", m.initStd);
    if (!(m.initStd >= 0 && m.initStd < 1)) // NaN too
        r.error("model.init_std", "must be 0 (scaled with the width) or a standard deviation above 0 and below 1, not " +
                                      std::to_string(m.initStd));
    ObjectReader moe = r.child("moe");
    moe.read("experts", m.moe.experts);
    moe.read("top_k", m.moe.topK);
    moe.read("capacity_factor", m.moe.capacityFactor);
    moe.read("aux_loss_coef", m.moe.auxLossCoef);
    moe.finish();
    r.finish();
}

void readCluster(ObjectReader r, ClusterSpec &c, Diagnostics &d, const std::string &baseDir)
{
    r.read("preset", c.preset);
    std::string hostfile;
    r.read("hostfile", hostfile);
    if (!hostfile.empty() && r.has("nodes"))
        d.push_back({Severity::Error, "cluster.hostfile", "give the nodes in cluster.nodes or in a hostfile, not both"});
    int nodeCount = 1;
    r.read("node_count", nodeCount);
    if (!c.preset.empty()) {
        if (auto preset = clusterPreset(c.preset)) {
            if (nodeCount < 1)
                d.push_back({Severity::Error, "cluster.node_count", "must be at least 1, got " + std::to_string(nodeCount)});
            else if (nodeCount > 100000)
                d.push_back({Severity::Error, "cluster.node_count", std::to_string(nodeCount) + " nodes is more than Trellis supports (100000)"});
            else
                c = expandCluster(*preset, nodeCount);
        } else {
            std::string known;
            for (const auto &n : clusterPresetNames())
                known += (known.empty() ? "" : ", ") + n;
            d.push_back({Severity::Error, "cluster.preset", "unknown preset '" + c.preset + "' (known: " + known + ")"});
        }
    }
    if (!hostfile.empty() && !r.has("nodes")) {
        // The hosts from the file (relative to the plan's folder); a preset's device stays.
        Plan holder;
        holder.cluster.nodes = c.nodes;
        const std::filesystem::path file(hostfile);
        const std::string path = file.is_absolute() || baseDir.empty() ? hostfile : (std::filesystem::path(baseDir) / file).string();
        if (const std::string why = applyHostfile(holder, path); !why.empty())
            d.push_back({Severity::Error, "cluster.hostfile", why});
        else
            c.nodes = holder.cluster.nodes;
    }
    if (const json *nodes = r.array("nodes", c.preset.empty() && hostfile.empty())) {
        c.nodes.clear();
        for (std::size_t i = 0; i < nodes->size(); ++i) {
            const std::string path = "cluster.nodes[" + std::to_string(i) + "]";
            const json &item = (*nodes)[i];
            if (!item.is_object()) {
                d.push_back({Severity::Error, path, "expected an object, got " + typeName(item)});
                continue;
            }
            NodeSpec node;
            ObjectReader n(&item, path, d);
            n.read("host", node.host, true);
            n.read("slots", node.slotCount, true);
            n.readEnum("device", node.device, {{"cpu", DeviceKind::Cpu}, {"cuda", DeviceKind::Cuda}});
            n.read("gpu_model", node.gpuModel);
            n.read("user", node.user);
            n.read("port", node.port);
            n.read("identity_file", node.identityFile);
            n.read("remote_dir", node.remoteDir);
            n.finish();
            c.nodes.push_back(node);
        }
    }
    ObjectReader links = r.child("links");
    for (auto [name, link] : {std::pair{"intra_node", &c.intraNode}, std::pair{"inter_node", &c.interNode}}) {
        ObjectReader tier = links.child(name);
        const bool given = tier.has("bandwidth_gbps");
        tier.read("bandwidth_gbps", link->bandwidthGBps);
        tier.read("latency_us", link->latencyUs);
        // A link that moves nothing would make every estimate infinite.
        if (given && !(link->bandwidthGBps > 0))
            tier.error(std::string("cluster.links.") + name + ".bandwidth_gbps", "must be greater than 0");
        tier.finish();
    }
    links.finish();
    r.read("price_per_device_hour", c.pricePerDeviceHour);
    r.read("host_memory_gb", c.hostMemoryGB);
    r.finish();
}

void readParallel(ObjectReader r, ParallelSpec &p)
{
    r.read("dp", p.dp);
    r.read("tp", p.tp);
    r.read("pp", p.pp);
    r.read("cp", p.cp);
    r.read("ep", p.ep);
    r.read("zero", p.zero);
    r.read("sequence_parallel", p.sequenceParallel);
    r.read("schedule", p.schedule);
    r.read("virtual_stages", p.virtualStages);
    r.read("micro_batch_size", p.microBatchSize);
    r.read("micro_batches", p.microBatches);
    r.read("bucket_mb", p.bucketMb);
    r.read("first_bucket_mb", p.firstBucketMb);
    r.read("overlap_grad_reduce", p.overlapGradReduce);
    r.readEnum("recompute", p.recompute,
               {{"none", Recompute::None}, {"selective", Recompute::Selective}, {"full", Recompute::Full}});
    r.readEnum("precision", p.precision,
               {{"fp32", Precision::Fp32}, {"bf16", Precision::Bf16}, {"fp16", Precision::Fp16}});
    r.readEnum("grad_reduce", p.gradReduce, {{"fp32", GradReduce::Fp32}, {"bf16", GradReduce::Bf16}});
    ObjectReader scale = r.child("loss_scale");
    scale.read("initial", p.lossScale.initial);
    scale.read("growth_interval", p.lossScale.growthInterval);
    scale.read("growth", p.lossScale.growth);
    scale.read("backoff", p.lossScale.backoff);
    scale.read("min", p.lossScale.minScale);
    scale.read("max_skipped", p.lossScale.maxSkipped);
    scale.finish();
    r.readEnum("framework", p.framework,
               {{"auto", Framework::Auto}, {"trellis", Framework::Trellis}, {"megatron", Framework::Megatron},
                {"deepspeed", Framework::DeepSpeed}});
    r.readEnum("attention", p.attention,
               {{"auto", AttentionKernel::Auto}, {"materialized", AttentionKernel::Materialized}, {"flash", AttentionKernel::Flash}});
    r.readEnum("cp_layout", p.cpLayout, {{"zigzag", CpLayout::Zigzag}, {"contiguous", CpLayout::Contiguous}});
    r.readEnum("allreduce", p.allReduce,
               {{"auto", AllReduceAlgorithm::Auto}, {"ring", AllReduceAlgorithm::Ring},
                {"recursive_doubling", AllReduceAlgorithm::RecursiveDoubling}, {"hierarchical", AllReduceAlgorithm::Hierarchical}});
    ObjectReader compression = r.child("grad_compression");
    compression.readEnum("kind", p.gradCompression.kind, {{"none", GradCompression::None}, {"powersgd", GradCompression::PowerSgd}});
    compression.read("rank", p.gradCompression.rank);
    compression.read("warm_start", p.gradCompression.warmStart);
    compression.finish();
    ObjectReader sync = r.child("dp_sync");
    sync.readEnum("mode", p.dpSync.mode,
                  {{"every_step", DpSyncMode::EveryStep}, {"local_sgd", DpSyncMode::LocalSgd}, {"diloco", DpSyncMode::DiLoCo}});
    sync.read("inner_steps", p.dpSync.innerSteps);
    sync.read("outer_lr", p.dpSync.outerLr);
    sync.read("outer_momentum", p.dpSync.outerMomentum);
    sync.read("nesterov", p.dpSync.nesterov);
    sync.finish();
    r.finish();
}

void readTraining(ObjectReader r, TrainingSpec &t)
{
    r.read("steps", t.steps);
    r.read("lr", t.lr);
    r.read("min_lr", t.minLr);
    r.read("warmup_steps", t.warmupSteps);
    r.read("weight_decay", t.weightDecay);
    r.read("beta1", t.beta1);
    r.read("beta2", t.beta2);
    r.read("eps", t.eps);
    r.read("grad_clip", t.gradClip);
    r.readEnum("on_non_finite", t.onNonFinite, {{"stop", NonFinitePolicy::Stop}, {"skip", NonFinitePolicy::Skip}});
    r.read("seed", t.seed);
    ObjectReader data = r.child("data");
    data.read("source", t.data.source);
    data.read("path", t.data.path);
    data.finish();
    ObjectReader ckpt = r.child("checkpoint");
    ckpt.read("every", t.checkpoint.every);
    ckpt.read("dir", t.checkpoint.dir);
    ckpt.read("keep", t.checkpoint.keep);
    t.checkpoint.modeGiven = ckpt.has("mode");
    ckpt.readEnum("mode", t.checkpoint.mode, {{"async", CheckpointMode::Async}, {"sync", CheckpointMode::Sync}});
    ckpt.readEnum("when_busy", t.checkpoint.whenBusy, {{"wait", CheckpointWhenBusy::Wait}, {"skip", CheckpointWhenBusy::Skip}});
    t.checkpoint.memory.given = ckpt.has("memory");
    ObjectReader memory = ckpt.child("memory");
    memory.read("every", t.checkpoint.memory.every);
    memory.read("keep", t.checkpoint.memory.keep);
    memory.finish();
    ckpt.finish();
    ObjectReader init = r.child("init");
    init.read("from", t.init.from);
    init.finish();
    r.finish();
}

// own_trainer: {command: [...], env: {NAME: "value"}, dir, ranks}. `ranks` sets parallel.dp when the
// plan has no parallel section; with one it must agree with it (checked by the caller). `section`
// is the name the file gives it (own_trainer, or trainer, its name before 2026-12), so every
// message names the field as the file spells it.
void readOwnTrainer(ObjectReader r, const std::string &section, OwnTrainerSpec &t, int &ranks)
{
    r.read("command", t.command);
    if (r.has("command") && t.command.empty())
        r.error(section + ".command", "is empty: give the program and its arguments, e.g. [\"python3\", \"train.py\"]");
    for (std::size_t i = 0; i < t.command.size(); ++i)
        if (t.command[i].find('\0') != std::string::npos || (i == 0 && t.command[i].empty()))
            r.error(section + ".command[" + std::to_string(i) + "]", i == 0 ? "the program is empty" : "contains a NUL byte");
    r.read("dir", t.dir);
    r.read("ranks", ranks);
    if (r.has("ranks") && ranks < 1)
        r.error(section + ".ranks", "must be at least 1, not " + std::to_string(ranks));
    if (const json *env = r.find("env", false)) {
        if (!env->is_object()) {
            r.error(section + ".env", "expected an object of NAME: \"value\" pairs, got " + typeName(*env));
        } else {
            for (const auto &item : env->items()) {
                const std::string path = section + ".env." + item.key();
                if (!item.value().is_string()) {
                    r.error(path, "expected a string, got " + typeName(item.value()));
                    continue;
                }
                const std::string &name = item.key();
                const bool valid = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                                   std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
                if (!valid)
                    r.error(path, "is not a variable name (letters, digits and _, not starting with a digit)");
                else if (isReservedTrainerVariable(name))
                    r.error(path, "is set by the launcher for every rank and cannot be overridden");
                else if (item.value().get<std::string>().find('\0') != std::string::npos)
                    r.error(path, "contains a NUL byte");
                else
                    t.env.emplace_back(name, item.value().get<std::string>());
            }
        }
    }
    if (r.present() && !r.has("command"))
        r.error(section + ".command", "required field is missing (the program each rank runs and its arguments)");
    r.finish();
}

void readTelemetry(ObjectReader r, TelemetrySpec &t)
{
    r.read("endpoint", t.endpoint);
    r.read("heartbeat_ms", t.heartbeatMs);
    r.read("trace_every", t.traceEvery);
    r.readEnum("relay", t.relay, {{"auto", TelemetryRelay::Auto}, {"on", TelemetryRelay::On}, {"off", TelemetryRelay::Off}});
    r.read("history", t.history);
    r.finish();
}

void readLaunch(ObjectReader r, LaunchSpec &l)
{
    r.readEnum("target", l.target,
               {{"local", LaunchTarget::Local}, {"ssh", LaunchTarget::Ssh}, {"slurm", LaunchTarget::Slurm}});
    ObjectReader ssh = r.child("ssh");
    ssh.read("user", l.ssh.user);
    ssh.read("port", l.ssh.port);
    ssh.read("identity_file", l.ssh.identityFile);
    ssh.read("known_hosts", l.ssh.knownHosts);
    ssh.read("remote_dir", l.ssh.remoteDir);
    ssh.read("trainer", l.ssh.trainer);
    ssh.read("stage_trainer", l.ssh.stageTrainer);
    ssh.read("shared_remote_dir", l.ssh.sharedRemoteDir);
    ssh.read("mpi_interface", l.ssh.mpiInterface);
    ssh.read("telemetry_address", l.ssh.telemetryAddress);
    ssh.finish();
    ObjectReader slurm = r.child("slurm");
    slurm.read("partition", l.slurm.partition);
    slurm.read("account", l.slurm.account);
    slurm.read("qos", l.slurm.qos);
    slurm.read("time", l.slurm.time);
    slurm.read("shared_dir", l.slurm.sharedDir);
    slurm.read("trainer", l.slurm.trainer);
    slurm.read("mpi_interface", l.slurm.mpiInterface);
    slurm.read("telemetry_address", l.slurm.telemetryAddress);
    slurm.finish();
    r.read("hang_timeout_s", l.hangTimeoutS);
    r.read("hang_confirm_s", l.hangConfirmS);
    r.read("hang_step_factor", l.hangStepFactor);
    ObjectReader restart = r.child("restart");
    restart.read("max_restarts", l.restart.maxRestarts);
    restart.read("backoff_s", l.restart.backoffS);
    restart.read("on_crash", l.restart.onCrash);
    restart.read("on_hang", l.restart.onHang);
    restart.read("on_node_loss", l.restart.onNodeLoss);
    restart.read("elastic", l.restart.elastic);
    restart.finish();
    ObjectReader alerts = r.child("alerts");
    alerts.read("command", l.alerts.command);
    alerts.read("webhook", l.alerts.webhook);
    alerts.finish();
    r.finish();
}

// Byte offset -> "line:column" (1-based) for syntax errors.
std::string lineColumn(const std::string &text, std::size_t offset)
{
    int line = 1, column = 1;
    for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return std::to_string(line) + ":" + std::to_string(column);
}

} // namespace

Result<Plan> parsePlan(const std::string &jsonText, const std::string &sourceName, const std::string &baseDir)
{
    json root;
    try {
        root = json::parse(jsonText);
    } catch (const json::parse_error &e) {
        std::string what = e.what();
        // nlohmann's message starts with "[json.exception.parse_error.101] parse error at line..."
        auto pos = what.find("] ");
        std::string reason = pos == std::string::npos ? what : what.substr(pos + 2);
        return Result<Plan>::failure("", sourceName + ":" + lineColumn(jsonText, e.byte == 0 ? 0 : e.byte - 1) +
                                             ": invalid JSON: " + reason);
    }
    if (!root.is_object())
        return Result<Plan>::failure("", sourceName + ": a plan must be a JSON object, got " + typeName(root));

    Diagnostics d;
    Plan plan;
    ObjectReader r(&root, "", d);
    r.read("schema", plan.schema, true);
    if (r.has("schema") && root["schema"].is_string() && plan.schema != kPlanSchema)
        d.push_back({Severity::Error, "schema",
                     "unsupported schema '" + plan.schema + "' (this version reads '" + kPlanSchema + "')"});
    r.read("name", plan.name);
    int ranks = 0;
    // own_trainer was called trainer until 2026-12, the name of the program too: a plan written
    // then still reads, and says so once (validation hands the note on as a warning).
    const bool oldName = r.has("trainer") && !r.has("own_trainer");
    if (r.has("trainer") && r.has("own_trainer"))
        d.push_back({Severity::Error, "trainer", "is the old name of own_trainer: give the section once, as own_trainer"});
    const std::string trainerSection = oldName ? "trainer" : "own_trainer";
    readOwnTrainer(r.child(trainerSection.c_str()), trainerSection, plan.ownTrainer, ranks);
    if (oldName)
        plan.loadNotes.push_back({Severity::Warning, "trainer",
                                  "is now called own_trainer; this plan still reads, and saving it writes the new name"});
    // A plan that runs its own trainer may leave the model out (no estimate then).
    plan.ownTrainer.hasModel = r.has("model") || !plan.ownTrainer.external();
    if (plan.ownTrainer.hasModel)
        readModel(r.child("model", true), plan.model, d);
    readCluster(r.child("cluster", true), plan.cluster, d, baseDir);
    readParallel(r.child("parallel"), plan.parallel);
    // A job with its own trainer and neither ranks nor parallel: a rank per slot of the cluster.
    if (plan.ownTrainer.external() && ranks == 0 && !r.has("parallel") && plan.cluster.totalSlots() > 0)
        ranks = plan.cluster.totalSlots();
    if (ranks > 0) {
        if (!r.has("parallel"))
            plan.parallel.dp = ranks;
        else if (plan.parallel.worldSize() != ranks)
            d.push_back({Severity::Error, trainerSection + ".ranks",
                         std::to_string(ranks) + " ranks, but parallel makes " + std::to_string(plan.parallel.worldSize()) +
                             " (dp·tp·pp·cp): give one of them, or make them agree"});
    }
    readTraining(r.child("training"), plan.training);
    readTelemetry(r.child("telemetry"), plan.telemetry);
    readLaunch(r.child("launch"), plan.launch);
    r.finish();
    if (hasErrors(d))
        return Result<Plan>(d);
    return plan;
}

Result<Plan> loadPlanFile(const std::string &path)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return Result<Plan>::failure("", path + ": no such file");
    if (std::filesystem::is_directory(path, ec))
        return Result<Plan>::failure("", path + ": is a directory, not a plan file");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Result<Plan>::failure("", path + ": cannot be read");
    std::ostringstream text;
    text << in.rdbuf();
    if (text.str().size() > 16 * 1024 * 1024)
        return Result<Plan>::failure("", path + ": larger than 16 MiB, not a plan file");
    return parsePlan(text.str(), path, std::filesystem::path(path).parent_path().string());
}

Result<Plan> loadAndValidatePlanFile(const std::string &path, Diagnostics *warnings)
{
    auto plan = loadPlanFile(path);
    if (!plan)
        return plan;
    Diagnostics d = validatePlan(plan.value());
    if (hasErrors(d)) {
        Diagnostics errors;
        for (auto &x : d)
            if (x.severity == Severity::Error)
                errors.push_back(x);
        return Result<Plan>(errors);
    }
    if (warnings)
        *warnings = d;
    return plan;
}

} // namespace trellis::plan
