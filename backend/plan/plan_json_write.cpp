// Writing plans: planToJson() and savePlanFile() of plan_json.h, in the schema's section order
// (the reading half, with its field-by-field checks, is plan_json.cpp).
#include "backend/plan/plan_json.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace trellis::plan {

namespace {

// ordered_json keeps the schema's section order, so saved plans read top-down like the docs.
using OrderedJson = nlohmann::ordered_json;

OrderedJson modelToJson(const ModelSpec &m)
{
    OrderedJson j = {{"arch", m.arch}, {"layers", m.layers}, {"hidden", m.hidden}, {"heads", m.heads}, {"kv_heads", m.kvHeads},
                     {"ffn", m.ffn},       {"seq_len", m.seqLen}, {"vocab", m.vocab}};
    if (!m.preset.empty())
        j["preset"] = m.preset; // explicit fields below override it on load
    if (m.initStd > 0)
        j["init_std"] = m.initStd;
    if (m.moe.experts > 0)
    {
        j["moe"] = {{"experts", m.moe.experts}, {"top_k", m.moe.topK}, {"aux_loss_coef", m.moe.auxLossCoef}};
        if (m.moe.capacityFactor)
            j["moe"]["capacity_factor"] = *m.moe.capacityFactor;
    }
    return j;
}

OrderedJson clusterToJson(const ClusterSpec &cluster)
{
    OrderedJson nodes = OrderedJson::array();
    for (const auto &n : cluster.nodes) {
        OrderedJson node = {{"host", n.host}, {"slots", n.slotCount}, {"device", toString(n.device)}};
        if (!n.gpuModel.empty())
            node["gpu_model"] = n.gpuModel;
        if (!n.user.empty())
            node["user"] = n.user;
        if (n.port != 0)
            node["port"] = n.port;
        if (!n.identityFile.empty())
            node["identity_file"] = n.identityFile;
        if (!n.remoteDir.empty())
            node["remote_dir"] = n.remoteDir;
        nodes.push_back(node);
    }
    // A link tier with no bandwidth is unknown (the cost model assumes one): it is left out.
    OrderedJson links = OrderedJson::object();
    for (auto [name, link] : {std::pair{"intra_node", &cluster.intraNode}, std::pair{"inter_node", &cluster.interNode}})
        if (link->bandwidthGBps > 0)
            links[name] = {{"bandwidth_gbps", link->bandwidthGBps}, {"latency_us", link->latencyUs}};
    OrderedJson j = {{"nodes", nodes}, {"links", links}, {"price_per_device_hour", cluster.pricePerDeviceHour}};
    if (cluster.hostMemoryGB > 0)
        j["host_memory_gb"] = cluster.hostMemoryGB;
    if (!cluster.preset.empty())
        j["preset"] = cluster.preset;
    return j;
}

OrderedJson parallelToJson(const ParallelSpec &q)
{
    OrderedJson j = {{"dp", q.dp},
                     {"tp", q.tp},
                     {"pp", q.pp},
                     {"cp", q.cp},
                     {"ep", q.ep},
                     {"zero", q.zero},
                     {"sequence_parallel", q.sequenceParallel},
                     {"schedule", q.schedule},
                     {"virtual_stages", q.virtualStages},
                     {"micro_batch_size", q.microBatchSize},
                     {"micro_batches", q.microBatches},
                     {"overlap_grad_reduce", q.overlapGradReduce},
                     {"recompute", toString(q.recompute)},
                     {"precision", toString(q.precision)},
                     {"grad_reduce", toString(q.gradReduce)},
                     {"framework", toString(q.framework)},
                     {"attention", toString(q.attention)},
                     {"cp_layout", toString(q.cpLayout)},
                     {"allreduce", toString(q.allReduce)}};
    if (q.precision == Precision::Fp16 || q.lossScale != LossScaleSpec{})
        j["loss_scale"] = {{"initial", q.lossScale.initial},
                           {"growth_interval", q.lossScale.growthInterval},
                           {"growth", q.lossScale.growth},
                           {"backoff", q.lossScale.backoff},
                           {"min", q.lossScale.minScale},
                           {"max_skipped", q.lossScale.maxSkipped}};
    if (q.gradCompression != GradCompressionSpec{})
        j["grad_compression"] = {{"kind", toString(q.gradCompression.kind)},
                                 {"rank", q.gradCompression.rank},
                                 {"warm_start", q.gradCompression.warmStart}};
    if (q.dpSync != DpSyncSpec{})
        j["dp_sync"] = {{"mode", toString(q.dpSync.mode)},
                        {"inner_steps", q.dpSync.innerSteps},
                        {"outer_lr", q.dpSync.outerLr},
                        {"outer_momentum", q.dpSync.outerMomentum},
                        {"nesterov", q.dpSync.nesterov}};
    if (q.bucketMb)
        j["bucket_mb"] = *q.bucketMb;
    if (q.firstBucketMb)
        j["first_bucket_mb"] = *q.firstBucketMb;
    return j;
}

// The mode only where the plan names it: without, the default rule decides (async unless the
// staging buffers would not fit half a node's host memory), and a written plan keeps that.
OrderedJson checkpointJson(const CheckpointSpec &c)
{
    OrderedJson j = {{"every", c.every}, {"dir", c.dir}, {"keep", c.keep}};
    if (c.modeGiven)
        j["mode"] = toString(c.mode);
    j["when_busy"] = toString(c.whenBusy);
    if (c.memory.given)
        j["memory"] = OrderedJson{{"every", c.memory.every}, {"keep", c.memory.keep}};
    return j;
}

OrderedJson trainingToJson(const TrainingSpec &t)
{
    return {{"steps", t.steps},
            {"lr", t.lr},
            {"min_lr", t.minLr},
            {"warmup_steps", t.warmupSteps},
            {"weight_decay", t.weightDecay},
            {"beta1", t.beta1},
            {"beta2", t.beta2},
            {"eps", t.eps},
            {"grad_clip", t.gradClip},
            {"on_non_finite", toString(t.onNonFinite)},
            {"seed", t.seed},
            {"data", {{"source", t.data.source}, {"path", t.data.path}}},
            {"checkpoint", checkpointJson(t.checkpoint)},
            {"init", {{"from", t.init.from}}}};
}

OrderedJson launchToJson(const LaunchSpec &l)
{
    return {{"target", toString(l.target)},
            {"ssh",
             {{"user", l.ssh.user},
              {"port", l.ssh.port},
              {"identity_file", l.ssh.identityFile},
              {"known_hosts", l.ssh.knownHosts},
              {"remote_dir", l.ssh.remoteDir},
              {"trainer", l.ssh.trainer},
              {"stage_trainer", l.ssh.stageTrainer},
              {"shared_remote_dir", l.ssh.sharedRemoteDir},
              {"mpi_interface", l.ssh.mpiInterface},
              {"telemetry_address", l.ssh.telemetryAddress}}},
            {"slurm",
             {{"partition", l.slurm.partition},
              {"account", l.slurm.account},
              {"qos", l.slurm.qos},
              {"time", l.slurm.time},
              {"shared_dir", l.slurm.sharedDir},
              {"trainer", l.slurm.trainer},
              {"mpi_interface", l.slurm.mpiInterface},
              {"telemetry_address", l.slurm.telemetryAddress}}},
            {"hang_timeout_s", l.hangTimeoutS},
            {"hang_confirm_s", l.hangConfirmS},
            {"hang_step_factor", l.hangStepFactor},
            {"restart",
             {{"max_restarts", l.restart.maxRestarts},
              {"backoff_s", l.restart.backoffS},
              {"on_crash", l.restart.onCrash},
              {"on_hang", l.restart.onHang},
              {"on_node_loss", l.restart.onNodeLoss},
              {"elastic", l.restart.elastic}}},
            {"alerts", {{"command", l.alerts.command}, {"webhook", l.alerts.webhook}}}};
}

} // namespace

std::string planToJson(const Plan &p, int indent)
{
    OrderedJson j;
    j["schema"] = p.schema;
    j["name"] = p.name;
    if (p.ownTrainer.external()) {
        OrderedJson t = {{"command", p.ownTrainer.command}};
        if (!p.ownTrainer.env.empty()) {
            OrderedJson env = OrderedJson::object();
            for (const auto &[name, value] : p.ownTrainer.env)
                env[name] = value;
            t["env"] = env;
        }
        if (!p.ownTrainer.dir.empty())
            t["dir"] = p.ownTrainer.dir;
        j["own_trainer"] = t;
    }
    if (p.ownTrainer.hasModel || !p.ownTrainer.external())
        j["model"] = modelToJson(p.model);
    j["cluster"] = clusterToJson(p.cluster);
    j["parallel"] = parallelToJson(p.parallel);
    j["training"] = trainingToJson(p.training);
    j["telemetry"] = {{"endpoint", p.telemetry.endpoint},
                      {"heartbeat_ms", p.telemetry.heartbeatMs},
                      {"trace_every", p.telemetry.traceEvery},
                      {"relay", toString(p.telemetry.relay)}};
    if (!p.telemetry.history.empty()) // written only when set: a plan without it opens in an older Trellis
        j["telemetry"]["history"] = p.telemetry.history;
    j["launch"] = launchToJson(p.launch);
    return j.dump(indent);
}

Result<bool> savePlanFile(const Plan &plan, const std::string &path)
{
    const std::string temp = path + ".tmp";
    {
        errno = 0;
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        if (!out)
            return Result<bool>::failure("", temp + ": cannot be written" + (errno ? " (" + std::string(std::strerror(errno)) + ")" : std::string()));
        out << planToJson(plan) << "\n";
        if (!out.flush()) {
            const int error = errno;
            out.close();
            std::error_code ignored;
            std::filesystem::remove(temp, ignored);
            return Result<bool>::failure("", temp + ": write failed" + (error ? " (" + std::string(std::strerror(error)) + ")" : std::string()));
        }
    }
    std::error_code ec;
    std::filesystem::rename(temp, path, ec);
    if (ec) {
        std::filesystem::remove(temp, ec);
        return Result<bool>::failure("", path + ": cannot replace file: " + ec.message());
    }
    return true;
}

} // namespace trellis::plan
