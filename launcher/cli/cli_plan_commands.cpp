// trellis-cli's plan commands: validate, estimate, search, convert, calibrate (see cli_commands.h
// for the conventions).
#include "launcher/document/calibration_file.h"
#include "launcher/cli/cli_support.h"
#include "launcher/report/run_export.h"
#include "backend/plan/cost/calibration.h"
#include "backend/plan/cost/cost_model.h"
#include "backend/plan/frameworks/framework_configs.h"
#include "backend/plan/plan_json.h"
#include "backend/plan/plan_validate.h"
#include "backend/plan/cost/planner.h"
#include "backend/plan/presets.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QThread>

#include <unistd.h>

#include <cstdio>

namespace trellis::launcher::cli {

int cmdValidate(const Args &a)
{
    if (a.positional.size() != 1)
        return usageError(QStringLiteral("validate takes one plan file"));
    const QString path = a.positional.first();
    const auto loaded = loadValidPlan(path);
    if (!loaded)
        return 1;
    const plan::Plan &p = *loaded;
    if (p.ownTrainer.external() && !p.ownTrainer.hasModel) {
        out() << path << ": valid — " << p.parallel.worldSize() << " ranks running their own trainer: "
              << QString::fromStdString(p.ownTrainer.command.front()) << " (no model section: no estimate)" << Qt::endl;
        return 0;
    }
    out() << path << ": valid — " << p.parallel.worldSize() << " ranks (dp " << p.parallel.dp << " · tp "
          << p.parallel.tp << " · pp " << p.parallel.pp << " · cp " << p.parallel.cp << "), global batch "
          << p.parallel.globalBatch() << " × " << p.model.seqLen << " tokens" << Qt::endl;
    for (const auto &d : plan::checkTrainerSupport(p))
        out() << "note: trellis-trainer cannot run this plan yet: " << QString::fromStdString(d.toString()) << "\n";
    for (const auto &d : plan::checkpointWarnings(p))
        out() << QString::fromStdString(d.toString()) << "\n";
    out().flush();
    return 0;
}
// Applies this machine's calibration (--calibration FILE, or calibration.json beside the history
// database when it exists) to a CPU plan. Returns an error message for a file that exists but is
// not a calibration.
namespace {
QString calibrate(const Args &a, const QString &dbPath, plan::Plan &p, plan::DeviceSpec &device, bool &applied)
{
    const bool given = a.options.contains(QStringLiteral("--calibration"));
    return applyCalibrationFile(given ? a.options[QStringLiteral("--calibration")] : defaultCalibrationPath(dbPath), given, p,
                                device, applied);
}
} // namespace

namespace {

// Measures this machine at each world size (trellis-trainer --calibrate under mpirun, every rank
// computing at once) into `entries`, printing each as it comes; "" or why not.
QString measureCalibration(const QList<int> &ranks, std::vector<plan::CalibrationEntry> &entries, QTextStream &print)
{
    const QString trainer = QCoreApplication::applicationDirPath() + QStringLiteral("/trellis-trainer");
    for (int n : ranks) {
        QStringList args{QStringLiteral("-np"), QString::number(n)};
        if (n > QThread::idealThreadCount())
            args << QStringLiteral("--oversubscribe");
        if (geteuid() == 0)
            args << QStringLiteral("--allow-run-as-root");
        args << QStringLiteral("--mca") << QStringLiteral("btl_vader_single_copy_mechanism") << QStringLiteral("none")
             << QStringLiteral("-x") << QStringLiteral("OPENBLAS_NUM_THREADS=1") << trainer << QStringLiteral("--calibrate");
        QProcess p;
        p.start(QStringLiteral("mpirun"), args);
        if (!p.waitForFinished(300000) || p.exitCode() != 0)
            return QStringLiteral("calibration with %1 ranks failed: %2").arg(n).arg(QString::fromUtf8(p.readAllStandardError()));
        const QList<QByteArray> lines = p.readAllStandardOutput().trimmed().split('\n');
        const auto parsed = plan::parseCalibration(QStringLiteral("{\"format\": \"%1\", \"entries\": [%2]}")
                                                       .arg(QLatin1String(plan::kCalibrationFormat), QString::fromUtf8(lines.last()))
                                                       .toStdString());
        if (!parsed)
            return QStringLiteral("calibration with %1 ranks: unexpected output '%2'").arg(n).arg(QString::fromUtf8(lines.last()));
        entries.push_back(parsed.value().front());
        const auto &e = entries.back();
        print << QStringLiteral("%1 ranks: %2 GFLOP/s a rank; all-reduce latency %3 us, bandwidth %4 GB/s; checkpoint copy %5 GB/s "
                                "a rank, durable write %6 GB/s\n")
                     .arg(n, 3)
                     .arg(e.gflopsPerRank, 0, 'f', 2)
                     .arg(e.latencyUs, 0, 'f', 2)
                     .arg(e.bandwidthGBps, 0, 'f', 2)
                     .arg(e.hostCopyGBps, 0, 'f', 2)
                     .arg(e.diskWriteGBps, 0, 'f', 2);
        print.flush();
    }
    return {};
}

// estimate of a CPU plan that runs here, on a machine not calibrated yet: calibrated first for the
// plan's world size (said on stderr), unless --no-calibrate or $TRELLIS_AUTO_CALIBRATE=0. A
// calibration that fails is said, and the estimate goes on with default rates.
void autoCalibrate(const Args &a, const QString &dbPath, const plan::Plan &p)
{
    const QString path = defaultCalibrationPath(dbPath);
    if (a.options.contains(QStringLiteral("--calibration")) || a.flags.contains(QStringLiteral("--no-calibrate")) ||
        !wantsAutoCalibration(p, path))
        return;
    const int ranks = std::min(p.parallel.worldSize(), 256);
    err() << "this machine is not calibrated: measuring it for " << ranks << (ranks == 1 ? " rank" : " ranks")
          << " first (once; trellis-cli calibrate measures more, --no-calibrate skips)" << Qt::endl;
    std::vector<plan::CalibrationEntry> entries;
    QString error = measureCalibration({ranks}, entries, err());
    if (error.isEmpty())
        error = mergeCalibrationFile(path, entries);
    err() << (error.isEmpty() ? QStringLiteral("calibration %1").arg(QFileInfo(path).absoluteFilePath())
                              : QStringLiteral("not calibrated (%1): the estimate uses default rates").arg(error))
          << Qt::endl;
}

} // namespace

// calibrate [--ranks 1,2,4] [--out FILE]: the entries measured replace those of the same world
// sizes in the file; the others are kept.
int cmdCalibrate(const Args &a, const QString &dbPath)
{
    QList<int> ranks;
    for (const QString &part : a.options.value(QStringLiteral("--ranks"), QStringLiteral("1,2,4")).split(QLatin1Char(','))) {
        bool ok = false;
        const int n = part.trimmed().toInt(&ok);
        if (!ok || n < 1 || n > 256)
            return usageError(QStringLiteral("--ranks expects a list of rank counts such as 1,2,4, got '%1'").arg(part));
        ranks << n;
    }
    std::vector<plan::CalibrationEntry> entries;
    if (const QString e = measureCalibration(ranks, entries, out()); !e.isEmpty())
        return fail(e);
    const QString path = a.options.value(QStringLiteral("--out"), defaultCalibrationPath(dbPath));
    if (const QString e = mergeCalibrationFile(path, entries); !e.isEmpty())
        return fail(e);
    out() << "calibration " << QFileInfo(path).absoluteFilePath() << Qt::endl;
    return 0;
}

int cmdConvert(const Args &a)
{
    if (a.options.contains(QStringLiteral("--to"))) {
        if (a.positional.size() != 1)
            return usageError(QStringLiteral("convert --to takes one plan file"));
        const auto loaded = loadValidPlan(a.positional.first());
        if (!loaded)
            return 1;
        const QString to = a.options[QStringLiteral("--to")];
        if (to == QLatin1String("deepspeed"))
            out() << QString::fromStdString(plan::toDeepSpeedConfig(*loaded).dump(2)) << "\n";
        else if (to == QLatin1String("megatron"))
            out() << QString::fromStdString(plan::toMegatronArgs(*loaded)) << "\n";
        else
            return usageError(QStringLiteral("--to must be deepspeed or megatron"));
        out().flush();
        return 0;
    }
    const QString from = a.options.value(QStringLiteral("--from"));
    if ((from != QLatin1String("deepspeed") && from != QLatin1String("megatron")) || a.positional.size() != 1 ||
        !a.options.contains(QStringLiteral("--base")))
        return usageError(QStringLiteral("convert takes PLAN --to deepspeed|megatron, or --from deepspeed|megatron FILE --base PLAN"));
    const auto base = loadValidPlan(a.options[QStringLiteral("--base")]);
    if (!base)
        return 1;
    QFile f(a.positional.first());
    if (!f.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("%1: cannot be read").arg(a.positional.first()));
    const std::string text = f.readAll().toStdString();
    plan::Diagnostics warnings;
    plan::Result<plan::Plan> converted = plan::Result<plan::Plan>::failure("convert", "no input");
    if (from == QLatin1String("deepspeed")) {
        nlohmann::json config;
        try {
            config = nlohmann::json::parse(text);
        } catch (const std::exception &e) {
            return fail(QStringLiteral("%1: not valid JSON (%2)").arg(a.positional.first(), QString::fromUtf8(e.what())));
        }
        converted = plan::fromDeepSpeedConfig(config, *base, &warnings);
    } else {
        converted = plan::fromMegatronArgs(text, *base, &warnings);
    }
    for (const auto &w : warnings)
        err() << a.positional.first() << ": " << QString::fromStdString(w.toString()) << "\n";
    if (!converted) {
        for (const auto &e : converted.errors())
            err() << a.positional.first() << ": " << QString::fromStdString(e.toString()) << "\n";
        err().flush();
        return 1;
    }
    err().flush();
    for (const auto &d : plan::validatePlan(converted.value()))
        err() << "converted plan: " << QString::fromStdString(d.toString()) << "\n";
    const QByteArray json = QByteArray::fromStdString(plan::planToJson(converted.value()));
    if (a.options.contains(QStringLiteral("--out"))) {
        if (const QString e = writeFileAtomically(a.options[QStringLiteral("--out")], json); !e.isEmpty())
            return fail(e);
    } else {
        out() << json;
    }
    out().flush();
    return 0;
}

// The data-parallel gradient all-reduce under each algorithm (parallel.allreduce).
QJsonObject allReduceJson(const plan::AllReduceChoice &c)
{
    if (c.group.empty())
        return {};
    QJsonObject ms;
    for (const auto &o : c.options)
        ms.insert(QString::fromLatin1(plan::toString(o.algorithm)), o.msPerStep);
    return {{QStringLiteral("group"), QString::fromStdString(c.group)},
            {QStringLiteral("ranks"), c.ranks},
            {QStringLiteral("nodes"), c.nodes},
            {QStringLiteral("per_node"), c.perNode},
            {QStringLiteral("calls_per_step"), c.callsPerStep},
            {QStringLiteral("bytes_per_call"), c.bytesPerCall},
            {QStringLiteral("ms_per_step"), ms},
            {QStringLiteral("chosen"), QString::fromLatin1(plan::toString(c.chosen))},
            {QStringLiteral("fastest"), QString::fromLatin1(plan::toString(c.fastest))},
            {QStringLiteral("why"), QString::fromStdString(c.why)}};
}

void printAllReduce(const plan::AllReduceChoice &c)
{
    if (c.group.empty())
        return;
    out() << "gradient all-reduce (" << QString::fromStdString(c.group) << ", " << c.ranks << " ranks on " << c.nodes
          << (c.nodes == 1 ? " node" : " nodes") << ", " << QString::number(c.bytesPerCall / (1024.0 * 1024.0), 'f', 2)
          << " MiB a call):";
    for (const auto &o : c.options)
        out() << " " << plan::toString(o.algorithm) << " " << QString::number(o.msPerStep, 'f', 2) << " ms"
              << (o.algorithm == c.chosen ? "*" : "");
    out() << "\n  " << QString::fromStdString(c.why) << "\n";
}

// estimate --json: the whole estimate as one object.
QJsonObject estimateJson(const plan::Plan &p, const plan::Estimate &e, const plan::DeviceSpec &device, bool calibrated)
{
    QJsonArray memory, collectives, warnings;
    for (const auto &m : e.memory)
        memory.append(QJsonObject{{QStringLiteral("stage"), m.stage},
                                  {QStringLiteral("parameters"), double(m.parameters)},
                                  {QStringLiteral("gradients"), double(m.gradients)},
                                  {QStringLiteral("optimizer"), double(m.optimizer)},
                                  {QStringLiteral("activations"), double(m.activations)},
                                  {QStringLiteral("comm_buffers"), double(m.commBuffers)},
                                  {QStringLiteral("total"), double(m.total())}});
    for (const auto &c : e.collectives)
        collectives.append(QJsonObject{{QStringLiteral("group"), QString::fromStdString(c.group)},
                                       {QStringLiteral("op"), QString::fromStdString(c.op)},
                                       {QStringLiteral("bytes"), double(c.bytes)},
                                       {QStringLiteral("calls_per_step"), c.callsPerStep},
                                       {QStringLiteral("ms_per_step"), c.msPerStep},
                                       {QStringLiteral("inter_node"), c.interNode},
                                       {QStringLiteral("stage"), c.stage}});
    for (const auto &w : e.warnings)
        warnings.append(QString::fromStdString(w.toString()));
    QJsonObject checkpoint{{QStringLiteral("enabled"), e.checkpoint.enabled}};
    const QJsonObject memoryCheckpoints{{QStringLiteral("every"), e.checkpoint.memoryEvery},
                                        {QStringLiteral("keep"), e.checkpoint.memoryKeep},
                                        {QStringLiteral("bytes_per_node"), double(e.checkpoint.memoryBytesPerNode)},
                                        {QStringLiteral("peer_copy"), e.checkpoint.peerCopy},
                                        {QStringLiteral("peer_bytes_per_save"), double(e.checkpoint.peerBytesPerSave)},
                                        {QStringLiteral("peer_copy_ms"), e.checkpoint.peerCopyMs},
                                        {QStringLiteral("peer_share"), e.checkpoint.peerShare}};
    if (e.checkpoint.enabled)
        checkpoint = QJsonObject{{QStringLiteral("enabled"), true},
                                 {QStringLiteral("mode"), QString::fromLatin1(plan::toString(e.checkpoint.mode))},
                                 {QStringLiteral("bytes_per_save"), double(e.checkpoint.bytesPerSave)},
                                 {QStringLiteral("most_bytes_per_rank"), double(e.checkpoint.mostBytesPerRank)},
                                 {QStringLiteral("most_bytes_per_node"), double(e.checkpoint.mostBytesPerNode)},
                                 {QStringLiteral("staging_bytes_per_node"), double(e.checkpoint.stagingBytesPerNode)},
                                 {QStringLiteral("host_memory_gb"), e.checkpoint.hostMemoryGB},
                                 {QStringLiteral("copy_ms"), e.checkpoint.copyMs},
                                 {QStringLiteral("write_ms"), e.checkpoint.writeMs},
                                 {QStringLiteral("copy_behind"), e.checkpoint.copyBehind},
                                 {QStringLiteral("block_ms"), e.checkpoint.blockMs},
                                 {QStringLiteral("write_wait_ms"), e.checkpoint.writeWaitMs},
                                 {QStringLiteral("overhead_fraction"), e.checkpoint.overheadFraction},
                                 {QStringLiteral("lands_every"), e.checkpoint.landsEvery}};
    if (e.checkpoint.memoryEvery > 0)
        checkpoint.insert(QStringLiteral("memory"), memoryCheckpoints);
    return QJsonObject{{QStringLiteral("device"), QString::fromStdString(device.name)},
                           {QStringLiteral("calibrated"), calibrated},
                           {QStringLiteral("framework"), QString::fromLatin1(plan::toString(e.framework))},
                           {QStringLiteral("attention"), e.flashAttention ? QStringLiteral("flash") : QStringLiteral("materialized")},
                           {QStringLiteral("accounting"), QString::fromStdString(plan::accountingSummary(p))},
                           {QStringLiteral("parameters"), double(e.parametersTotal)},
                           {QStringLiteral("memory_per_rank"), memory},
                           {QStringLiteral("collectives"), collectives},
                           {QStringLiteral("gradient_allreduce"), allReduceJson(e.allReduce)},
                           {QStringLiteral("step_ms"), e.stepMs},
                           {QStringLiteral("compute_ms"), e.computeMs},
                           {QStringLiteral("exposed_comm_ms"), e.exposedCommMs},
                           {QStringLiteral("bubble_ms"), e.bubbleMs},
                           {QStringLiteral("bubble_fraction"), e.bubbleFraction},
                           {QStringLiteral("tokens_per_s"), e.tokensPerS},
                           {QStringLiteral("mfu"), e.mfu},
                           {QStringLiteral("model_flops_per_step"), e.modelFlopsPerStep},
                           {QStringLiteral("hardware_flops_per_step"), e.hardwareFlopsPerStep},
                           {QStringLiteral("cost_per_run"), e.costPerRun},
                           {QStringLiteral("checkpoint"), checkpoint},
                           {QStringLiteral("warnings"), warnings}};
}

int cmdEstimate(const Args &a, const QString &dbPath)
{
    if (a.positional.size() != 1)
        return usageError(QStringLiteral("estimate takes one plan file"));
    auto loaded = loadValidPlan(a.positional.first());
    if (!loaded)
        return 1;
    plan::Plan &p = *loaded;
    if (p.ownTrainer.external() && !p.ownTrainer.hasModel)
        return fail(QStringLiteral("%1: no estimate: the plan runs its own trainer (own_trainer.command) and has no model section to "
                                   "predict from; add model and parallel sections describing what the script trains")
                        .arg(a.positional.first()));
    autoCalibrate(a, dbPath, p);
    plan::DeviceSpec device = plan::deviceFor(p.cluster);
    bool calibrated = false;
    if (const QString error = calibrate(a, dbPath, p, device, calibrated); !error.isEmpty())
        return fail(error);
    const plan::Estimate e = plan::estimatePlan(p, device);
    if (a.flags.contains(QStringLiteral("--json"))) {
        const QJsonObject root = estimateJson(p, e, device, calibrated);
        out() << QJsonDocument(root).toJson(QJsonDocument::Indented);
        out().flush();
        return 0;
    }
    const plan::ParallelSpec &ps = p.parallel;
    out() << p.name.c_str() << ": " << ps.worldSize() << " ranks (dp " << ps.dp << " · tp " << ps.tp << " · pp " << ps.pp
          << "), ZeRO " << ps.zero << ", " << (ps.pp > 1 ? QString::fromStdString(ps.schedule) : QStringLiteral("no pipeline"))
          << ", " << ps.microBatches << " micro-batches of " << ps.microBatchSize << ", "
          << QString::number(static_cast<double>(e.parametersTotal) / 1e6, 'f', 2) << " M parameters on "
          << QString::fromStdString(device.name)
          << (p.cluster.nodes.empty() || p.cluster.nodes.front().device != plan::DeviceKind::Cpu ? ""
              : calibrated ? " (calibrated)" : " (not calibrated: run trellis-cli calibrate)")
          << "\n\n";
    out() << "memory as " << QString::fromStdString(plan::accountingSummary(p)) << "\n";
    out() << QStringLiteral("memory per rank (MiB)\n%1 %2 %3 %4 %5 %6\n")
                 .arg(QStringLiteral("stage"), 6)
                 .arg(QStringLiteral("parameters"), 12)
                 .arg(QStringLiteral("gradients"), 12)
                 .arg(QStringLiteral("optimizer"), 12)
                 .arg(QStringLiteral("activations"), 12)
                 .arg(QStringLiteral("total"), 12);
    for (const auto &m : e.memory)
        out() << QStringLiteral("%1 %2 %3 %4 %5 %6\n")
                     .arg(m.stage, 6)
                     .arg(mb(m.parameters), 12)
                     .arg(mb(m.gradients), 12)
                     .arg(mb(m.optimizer), 12)
                     .arg(mb(m.activations), 12)
                     .arg(mb(m.total()), 12);
    out() << "\nstep " << QString::number(e.stepMs, 'f', 2) << " ms = compute " << QString::number(e.computeMs, 'f', 2)
          << " + exposed communication " << QString::number(e.exposedCommMs, 'f', 2) << " + bubble "
          << QString::number(e.bubbleMs, 'f', 2) << " (" << QString::number(100 * e.bubbleFraction, 'f', 1) << "%)\n";
    out() << "tokens/s " << QString::number(e.tokensPerS, 'f', 0) << "   MFU "
          << (e.mfu > 0 ? QString::number(100 * e.mfu, 'f', 1) + QLatin1Char('%') : QStringLiteral("n/a (a CPU has no datasheet peak)"))
          << "   cost " << QString::number(e.costPerRun, 'f', 2) << " per run of " << p.training.steps << " steps\n";
    for (const auto &c : e.collectives)
        out() << "  " << (c.stage >= 0 ? QStringLiteral("stage %1 ").arg(c.stage) : QString()) << QString::fromStdString(c.group) << " " << QString::fromStdString(c.op) << ": " << mb(c.bytes)
              << " MiB in " << c.callsPerStep << " calls = " << QString::number(c.msPerStep, 'f', 2) << " ms/step ("
              << (c.interNode ? "inter-node" : "intra-node") << ")\n";
    printAllReduce(e.allReduce);
    if (const plan::CheckpointEstimate &c = e.checkpoint; c.enabled) {
        out() << "checkpoint every " << p.training.checkpoint.every << " steps (" << plan::toString(c.mode) << "): "
              << mb(c.bytesPerSave) << " MiB a save, the busiest node writes " << mb(c.mostBytesPerNode) << " MiB";
        if (c.stagingBytesPerNode > 0)
            out() << " and keeps " << mb(c.stagingBytesPerNode) << " MiB of staging buffers"
                  << (c.hostMemoryGB > 0 ? QStringLiteral(" (of %1 GB host memory)").arg(c.hostMemoryGB, 0, 'f', 0) : QString());
        out() << "\n  training waits " << QString::number(c.blockMs, 'f', 1) << " ms a save ("
              << QString::number(100 * c.overheadFraction, 'f', 2) << "% of the steps between saves); the copy takes "
              << QString::number(c.copyMs, 'f', 1) << " ms"
              << (c.copyBehind ? QStringLiteral(" behind the next step's forward and backward") : QString())
              << ", the write " << QString::number(c.writeMs, 'f', 1) << " ms";
        if (c.landsEvery > c.every)
            out() << ", longer than the steps between saves: one lands every " << c.landsEvery << " steps, the others are skipped";
        else if (c.writeWaitMs > 0.05)
            out() << ", longer than the steps between saves: the next save waits for the rest";
        out() << "\n";
    }
    if (const plan::CheckpointEstimate &c = e.checkpoint; c.memoryEvery > 0)
        out() << "in-memory checkpoints " << (c.memoryEvery == 1 ? QStringLiteral("every step") : QStringLiteral("every %1 steps").arg(c.memoryEvery))
              << ": the busiest node's memory store holds "
              << mb(c.memoryBytesPerNode) << " MiB (" << c.memoryKeep << (c.memoryKeep == 1 ? " save" : " saves")
              << " and the one being written"
              << (c.peerCopy ? QStringLiteral(", and the previous node's copy of as many); each node's saves copied to the next node: %1 MiB a save, "
                                              "%2 ms at the inter-node bandwidth, %3% of it over the steps between saves")
                                   .arg(mb(c.peerBytesPerSave))
                                   .arg(c.peerCopyMs, 0, 'f', 1)
                                   .arg(100 * c.peerShare, 0, 'f', 1)
                             : QStringLiteral("); one node, no copy on another: a lost node's state comes from the disk"))
              << "\n";
    for (const auto &w : e.warnings)
        out() << QString::fromStdString(w.toString()) << "\n";
    out().flush();
    return 0;
}

namespace {

// search's request from its arguments: a plan file's model, cluster, batch and training, or
// presets named by --model, --cluster and --nodes; nullopt with `code` set (the usage printed).
std::optional<plan::SearchRequest> searchRequest(const Args &a, int &code)
{
    plan::SearchRequest request;
    bool ok = true;
    const auto usage = [&](const QString &message) {
        code = usageError(message);
        return std::nullopt;
    };
    request.top = a.options.contains(QStringLiteral("--top")) ? a.options[QStringLiteral("--top")].toInt(&ok) : 10;
    if (!ok || request.top < 1)
        return usage(QStringLiteral("--top needs a positive integer"));
    request.exhaustive = a.flags.contains(QStringLiteral("--exhaustive"));
    if (a.positional.size() == 1) {
        const auto loaded = loadValidPlan(a.positional.first());
        if (!loaded) {
            code = 1;
            return std::nullopt;
        }
        request.model = loaded->model;
        request.cluster = loaded->cluster;
        request.globalBatch = loaded->parallel.globalBatch();
        request.training = loaded->training;
        return request;
    }
    if (!a.positional.isEmpty())
        return usage(QStringLiteral("search takes one plan file or --model, --cluster and --nodes"));
    const QString modelName = a.options.value(QStringLiteral("--model"));
    const QString clusterName = a.options.value(QStringLiteral("--cluster"));
    const auto model = plan::modelPreset(modelName.toStdString());
    if (!model)
        return usage(QStringLiteral("--model: unknown preset '%1'").arg(modelName));
    const auto cluster = plan::clusterPreset(clusterName.toStdString());
    if (!cluster)
        return usage(QStringLiteral("--cluster: unknown preset '%1'").arg(clusterName));
    const int nodes = a.options.value(QStringLiteral("--nodes"), QStringLiteral("1")).toInt(&ok);
    if (!ok || nodes < 1 || nodes > 100000)
        return usage(QStringLiteral("--nodes needs a positive integer"));
    request.model = *model;
    request.cluster = plan::expandCluster(*cluster, nodes);
    if (a.options.contains(QStringLiteral("--global-batch"))) {
        request.globalBatch = a.options[QStringLiteral("--global-batch")].toInt(&ok);
        if (!ok || request.globalBatch < 1)
            return usage(QStringLiteral("--global-batch needs a positive integer"));
    }
    return request;
}

// The plans found, best first, a line each with why; then those trellis-trainer cannot launch yet
// (plans for other trainers are estimates only).
void printSearch(const plan::SearchResult &r)
{
    out() << QStringLiteral("%1 %2 %3 %4 %5 %6 %7 %8 %9 %10 %11  %12 %13  why\n")
                 .arg(QStringLiteral("#"), 3)
                 .arg(QStringLiteral("dp"), 5)
                 .arg(QStringLiteral("tp"), 3)
                 .arg(QStringLiteral("pp"), 3)
                 .arg(QStringLiteral("cp"), 3)
                 .arg(QStringLiteral("ep"), 3)
                 .arg(QStringLiteral("zero"), 4)
                 .arg(QStringLiteral("schedule"), -18)
                 .arg(QStringLiteral("mbs"), 3)
                 .arg(QStringLiteral("m"), 5)
                 .arg(QStringLiteral("recompute"), -9)
                 .arg(QStringLiteral("tokens/s"), 12)
                 .arg(QStringLiteral("GB/rank"), 8);
    int rank = 1;
    for (const auto &c : r.best) {
        const auto &p = c.plan.parallel;
        const std::uint64_t peak = c.estimate.peakMemory();
        const QString schedule = p.pp > 1 ? QString::fromStdString(p.schedule) + (p.virtualStages > 1 ? QStringLiteral(" v%1").arg(p.virtualStages) : QString())
                                          : QStringLiteral("-");
        out() << QStringLiteral("%1 %2 %3 %4 %5 %6 %7 %8 %9 %10 %11  %12 %13  %14\n")
                     .arg(rank++, 3)
                     .arg(p.dp, 5)
                     .arg(p.tp, 3)
                     .arg(p.pp, 3)
                     .arg(p.cp, 3)
                     .arg(p.ep, 3)
                     .arg(p.zero, 4)
                     .arg(schedule, -18)
                     .arg(p.microBatchSize, 3)
                     .arg(p.microBatches, 5)
                     .arg(QString::fromLatin1(plan::toString(p.recompute)), -9)
                     .arg(QString::number(c.estimate.tokensPerS, 'f', 0), 12)
                     .arg(QString::number(static_cast<double>(peak) / 1e9, 'f', 1), 8)
                     .arg(QString::fromStdString(c.reason));
    }
    rank = 1;
    for (const auto &c : r.best) {
        if (!c.notLaunchable.empty())
            out() << QStringLiteral("#%1 is not launchable by trellis-trainer yet: %2\n").arg(rank).arg(QString::fromStdString(c.notLaunchable));
        ++rank;
    }
}

} // namespace

int cmdSearch(const Args &a)
{
    int code = 0;
    const std::optional<plan::SearchRequest> request = searchRequest(a, code);
    if (!request)
        return code;
    QElapsedTimer timer;
    timer.start();
    const plan::SearchResult r = plan::searchPlans(*request);
    out() << r.considered << " plans considered, " << r.valid << " valid, " << r.fitting << " fit in memory ("
          << timer.elapsed() << " ms)\n";
    if (r.best.empty()) {
        out() << "no plan fits: more devices, a smaller micro-batch or a smaller model\n";
        out().flush();
        return 1;
    }
    printSearch(r);
    out().flush();
    return 0;
}

} // namespace trellis::launcher::cli
