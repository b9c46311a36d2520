// CSV and JSON exports; see run_export.h.
#include "launcher/report/run_export.h"


#include <algorithm>
#include <limits>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

namespace trellis::launcher {

QByteArray exportCsv(const RunData &run)
{
    QByteArray out = "run_id,rank,step,loss,step_ms,tokens_per_s,compute_ms,comm_ms,comm_exposed_ms,bubble_ms,"
                     "idle_ms,tokens,grad_norm,lr,mem_parameters,mem_gradients,mem_optimizer,mem_activations,"
                     "mem_comm,peak_rss,mem_master,loss_scale,skipped_steps,update_skipped,outer_steps,dp_bytes,"
                     "dp_dense_bytes,checkpoint_ms,checkpoint_behind,checkpoint_write_ms\n";
    const QByteArray runId = run.run.runId.toUtf8();
    for (const StepRow &s : run.steps) {
        out += runId + ',' + QByteArray::number(s.rank) + ',' + QByteArray::number(s.step) + ',' +
               QByteArray::number(s.loss, 'g', 9) + ',' + QByteArray::number(s.stepMs, 'f', 3) + ',' +
               QByteArray::number(s.tokensPerS, 'f', 1) + ',' + QByteArray::number(s.computeMs, 'f', 3) + ',' +
               QByteArray::number(s.commMs, 'f', 3) + ',' + QByteArray::number(s.commExposedMs, 'f', 3) + ',' +
               QByteArray::number(s.bubbleMs, 'f', 3) + ',' + QByteArray::number(s.idleMs, 'f', 3) + ',' +
               QByteArray::number(s.tokens) + ',' + QByteArray::number(s.gradNorm, 'g', 6) + ',' +
               QByteArray::number(s.lr, 'g', 6) + ',' + QByteArray::number(s.memParameters) + ',' +
               QByteArray::number(s.memGradients) + ',' + QByteArray::number(s.memOptimizer) + ',' +
               QByteArray::number(s.memActivations) + ',' + QByteArray::number(s.memComm) + ',' +
               QByteArray::number(s.peakRss) + ',' + QByteArray::number(s.memMaster) + ',' +
               QByteArray::number(s.lossScale, 'g', 9) + ',' + QByteArray::number(s.skippedSteps) + ',' +
               (s.updateSkipped ? "1" : "0") + ',' + QByteArray::number(s.outerSteps) + ',' + QByteArray::number(s.dpBytes) +
               ',' + QByteArray::number(s.dpDenseBytes) + ',' + QByteArray::number(s.checkpointMs, 'f', 3) + ',' +
               (s.checkpointBehind ? "1" : "0") + ',' + QByteArray::number(s.checkpointWriteMs, 'f', 3) + '\n';
    }
    return out;
}

namespace {

// One step row of the JSON export.
QJsonObject stepJson(const StepRow &s)
{
    return QJsonObject{{QStringLiteral("rank"), s.rank},
                       {QStringLiteral("step"), s.step},
                       {QStringLiteral("loss"), s.loss},
                       {QStringLiteral("step_ms"), s.stepMs},
                       {QStringLiteral("tokens_per_s"), s.tokensPerS},
                       {QStringLiteral("compute_ms"), s.computeMs},
                       {QStringLiteral("comm_ms"), s.commMs},
                       {QStringLiteral("comm_exposed_ms"), s.commExposedMs},
                       {QStringLiteral("tokens"), s.tokens},
                       {QStringLiteral("grad_norm"), s.gradNorm},
                       {QStringLiteral("lr"), s.lr},
                       {QStringLiteral("peak_rss"), s.peakRss},
                       {QStringLiteral("mem_master"), s.memMaster},
                       {QStringLiteral("loss_scale"), s.lossScale},
                       {QStringLiteral("skipped_steps"), s.skippedSteps},
                       {QStringLiteral("update_skipped"), s.updateSkipped},
                       {QStringLiteral("outer_steps"), s.outerSteps},
                       {QStringLiteral("dp_bytes"), s.dpBytes},
                       {QStringLiteral("dp_dense_bytes"), s.dpDenseBytes},
                       {QStringLiteral("checkpoint_ms"), s.checkpointMs},
                       {QStringLiteral("checkpoint_behind"), s.checkpointBehind},
                       {QStringLiteral("checkpoint_write_ms"), s.checkpointWriteMs}};
}

} // namespace

QByteArray exportJson(const RunData &run)
{
    QJsonObject root;
    const RunSummary &r = run.run;
    root[QStringLiteral("run")] = QJsonObject{{QStringLiteral("id"), r.id},
                                              {QStringLiteral("run_id"), r.runId},
                                              {QStringLiteral("name"), r.name},
                                              {QStringLiteral("target"), r.target},
                                              {QStringLiteral("status"), r.status},
                                              {QStringLiteral("world_size"), r.worldSize},
                                              {QStringLiteral("total_steps"), r.totalSteps},
                                              {QStringLiteral("started_at"), r.startedAt.toString(Qt::ISODateWithMs)},
                                              {QStringLiteral("ended_at"), r.endedAt.toString(Qt::ISODateWithMs)},
                                              {QStringLiteral("exit_code"), r.exitCode},
                                              {QStringLiteral("error"), r.error},
                                              {QStringLiteral("note"), r.note},
                                              {QStringLiteral("tags"), QJsonArray::fromStringList(r.tags)},
                                              {QStringLiteral("archived"), r.archived},
                                              {QStringLiteral("tokens_per_s"), r.tokensPerS >= 0 ? QJsonValue(r.tokensPerS) : QJsonValue()},
                                              {QStringLiteral("mfu"), r.mfu >= 0 ? QJsonValue(r.mfu) : QJsonValue()}};
    root[QStringLiteral("plan")] = QJsonDocument::fromJson(run.planJson.toUtf8()).object();
    QJsonArray ranks;
    for (const RankRow &k : run.ranks)
        ranks.append(QJsonObject{{QStringLiteral("rank"), k.rank},
                                 {QStringLiteral("host"), k.host},
                                 {QStringLiteral("pid"), k.pid},
                                 {QStringLiteral("device"), k.device},
                                 {QStringLiteral("coords"), QJsonObject{{QStringLiteral("dp"), k.dp},
                                                                        {QStringLiteral("tp"), k.tp},
                                                                        {QStringLiteral("pp"), k.pp},
                                                                        {QStringLiteral("cp"), k.cp}}},
                                 {QStringLiteral("precision"), k.precision},
                                 {QStringLiteral("kernels"), k.kernels},
                                 {QStringLiteral("threads"), k.threads},
                                 {QStringLiteral("exit_code"), k.exitCode},
                                 {QStringLiteral("dropped"), k.dropped}});
    root[QStringLiteral("ranks")] = ranks;
    QJsonArray steps;
    for (const StepRow &s : run.steps)
        steps.append(stepJson(s));
    root[QStringLiteral("steps")] = steps;
    QJsonArray events;
    for (const EventRow &e : run.events)
        events.append(QJsonObject{{QStringLiteral("rank"), e.rank},
                                  {QStringLiteral("step"), e.step},
                                  {QStringLiteral("kind"), e.kind},
                                  {QStringLiteral("message"), e.message},
                                  {QStringLiteral("at"), e.at.toString(Qt::ISODateWithMs)}});
    root[QStringLiteral("events")] = events;
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

bool exportTable(const QString &name, const RunData &run, const QList<CollectiveRow> &collectives, const QList<SpanRow> &spans,
                 ExportTable &out)
{
    out = {};
    const QString runId = run.run.runId;
    auto cols = [&](std::initializer_list<const char *> names) {
        out.columns << QStringLiteral("run_id");
        for (const char *n : names)
            out.columns << QString::fromLatin1(n);
    };
    using V = QVariant;
    if (name == QLatin1String("steps")) {
        cols({"rank", "step", "loss", "step_ms", "tokens_per_s", "compute_ms", "comm_ms", "comm_exposed_ms", "bubble_ms", "idle_ms",
              "tokens", "grad_norm", "lr", "loss_scale", "skipped_steps", "update_skipped", "outer_steps", "dp_bytes",
              "dp_dense_bytes", "checkpoint_ms", "checkpoint_behind", "checkpoint_write_ms"});
        for (const StepRow &s : run.steps)
            out.rows.append({runId, V(s.rank), V(s.step), V(s.loss), V(s.stepMs), V(s.tokensPerS), V(s.computeMs), V(s.commMs),
                             V(s.commExposedMs), V(s.bubbleMs), V(s.idleMs), V(s.tokens), V(s.gradNorm), V(s.lr),
                             V(s.lossScale), V(s.skippedSteps), V(s.updateSkipped ? 1 : 0), V(s.outerSteps), V(s.dpBytes),
                             V(s.dpDenseBytes), V(s.checkpointMs), V(s.checkpointBehind ? 1 : 0), V(s.checkpointWriteMs)});
    } else if (name == QLatin1String("memory")) {
        cols({"rank", "step", "parameters", "master_weights", "gradients", "optimizer", "activations", "communication",
              "peak_rss"});
        for (const StepRow &s : run.steps)
            out.rows.append({runId, V(s.rank), V(s.step), V(s.memParameters), V(s.memMaster), V(s.memGradients),
                             V(s.memOptimizer), V(s.memActivations), V(s.memComm), V(s.peakRss)});
    } else if (name == QLatin1String("collectives")) {
        cols({"rank", "step", "group", "op", "bytes", "ms", "bus_gbps", "count"});
        for (const CollectiveRow &c : collectives)
            out.rows.append({runId, V(c.rank), V(c.step), c.group, c.op, V(c.bytes), V(c.ms), V(c.busGBps), V(c.count)});
    } else if (name == QLatin1String("events")) {
        cols({"rank", "step", "kind", "message", "at"});
        for (const EventRow &e : run.events)
            out.rows.append({runId, V(e.rank), V(e.step), e.kind, e.message, e.at.toString(Qt::ISODateWithMs)});
    } else if (name == QLatin1String("spans")) {
        cols({"rank", "step", "name", "start_ns", "end_ns", "micro_batch", "chunk"});
        for (const SpanRow &s : spans)
            out.rows.append({runId, V(s.rank), V(s.step), s.name, V(s.startNs), V(s.endNs), V(s.microBatch), V(s.stage)});
    } else if (name == QLatin1String("ranks")) {
        cols({"rank", "host", "pid", "device", "dp", "tp", "pp", "cp", "exit_code", "dropped", "received_seq", "goodbye_seq", "lost",
              "precision", "kernels", "threads"});
        for (const RankRow &k : run.ranks)
            out.rows.append({runId, V(k.rank), k.host, V(k.pid), k.device, V(k.dp), V(k.tp), V(k.pp), V(k.cp),
                             k.exitCode < 0 ? V() : V(k.exitCode), V(k.dropped), V(k.receivedSeq),
                             k.goodbyeSeq < 0 ? V() : V(k.goodbyeSeq), V(k.lost), k.precision, k.kernels,
                             k.threads > 0 ? V(k.threads) : V()});
    } else {
        return false;
    }
    return true;
}

namespace {

QByteArray csvField(const QVariant &v)
{
    if (v.isNull())
        return {};
    switch (v.typeId()) {
    case QMetaType::Double:
        return QByteArray::number(v.toDouble(), 'g', 10);
    case QMetaType::Int:
    case QMetaType::LongLong:
        return QByteArray::number(v.toLongLong());
    default: {
        QByteArray text = v.toString().toUtf8();
        if (text.contains(',') || text.contains('"') || text.contains('\n') || text.contains('\r'))
            text = '"' + text.replace('"', "\"\"") + '"';
        return text;
    }
    }
}

} // namespace

QByteArray tableCsv(const ExportTable &table)
{
    QByteArray out = table.columns.join(QLatin1Char(',')).toUtf8() + '\n';
    for (const QVariantList &row : table.rows) {
        for (int i = 0; i < row.size(); ++i) {
            if (i)
                out += ',';
            out += csvField(row[i]);
        }
        out += '\n';
    }
    return out;
}

QJsonArray tableRowsJson(const ExportTable &table)
{
    QJsonArray rows;
    for (const QVariantList &row : table.rows) {
        QJsonObject o;
        for (int i = 0; i < row.size() && i < table.columns.size(); ++i)
            o.insert(table.columns[i], QJsonValue::fromVariant(row[i]));
        rows.append(o);
    }
    return rows;
}

QByteArray tableJson(const ExportTable &table) { return QJsonDocument(tableRowsJson(table)).toJson(QJsonDocument::Indented); }

QJsonArray stepsJson(const QList<StepRow> &rows)
{
    QJsonArray out;
    for (const StepRow &s : rows)
        out.append(stepJson(s));
    return out;
}

bool JsonArrayStream::begin(const QByteArray &document, const QByteArray &opening)
{
    const qsizetype at = document.lastIndexOf(opening);
    if (at < 0)
        return false;
    m_head = document.left(at + opening.size());
    m_rest = document.mid(at + opening.size());
    // The array is empty in `document`: its closing bracket's line gives the depth.
    const qsizetype close = m_rest.indexOf(']');
    m_level = close > 0 ? static_cast<int>(close - 1) / 4 : 0;
    m_first = true;
    return true;
}

QByteArray JsonArrayStream::items(const QJsonArray &part)
{
    QByteArray out;
    const QByteArray indent((m_level + 1) * 4, ' ');
    for (const QJsonValue &v : part) {
        Q_ASSERT(v.isObject()); // the exports' arrays hold objects
        const QByteArray text = QJsonDocument(v.toObject()).toJson(QJsonDocument::Indented);
        out += m_first ? "\n" : ",\n";
        m_first = false;
        qsizetype from = 0;
        while (from < text.size()) {
            qsizetype end = text.indexOf('\n', from);
            if (end < 0)
                end = text.size();
            if (from > 0)
                out += '\n';
            out += indent;
            out.append(text.constData() + from, end - from);
            from = end + 1;
        }
    }
    return out;
}

QString writeFileAtomically(const QString &path, const QByteArray &contents)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return QStringLiteral("%1: cannot be written (%2)").arg(path, file.errorString());
    file.write(contents);
    if (!file.commit())
        return QStringLiteral("%1: write failed (%2)").arg(path, file.errorString());
    return {};
}

QByteArray exportTrace(const RunData &run, const QList<SpanRow> &spans)
{
    QJsonArray events;
    events.append(QJsonObject{{QStringLiteral("ph"), QStringLiteral("M")},
                              {QStringLiteral("name"), QStringLiteral("process_name")},
                              {QStringLiteral("pid"), 0},
                              {QStringLiteral("args"), QJsonObject{{QStringLiteral("name"),
                                                                    QStringLiteral("%1 (%2)").arg(run.run.name, run.run.runId)}}}});
    for (const RankRow &r : run.ranks)
        events.append(QJsonObject{
            {QStringLiteral("ph"), QStringLiteral("M")},
            {QStringLiteral("name"), QStringLiteral("thread_name")},
            {QStringLiteral("pid"), 0},
            {QStringLiteral("tid"), r.rank},
            {QStringLiteral("args"),
             QJsonObject{{QStringLiteral("name"), QStringLiteral("rank %1 (pp %2, dp %3, tp %4)").arg(r.rank).arg(r.pp).arg(r.dp).arg(r.tp)}}}});
    qint64 origin = std::numeric_limits<qint64>::max();
    for (const SpanRow &s : spans)
        origin = std::min(origin, s.startNs);
    for (const SpanRow &s : spans) {
        QString label = s.name;
        if (s.microBatch >= 0)
            label += QStringLiteral(" %1").arg(s.microBatch);
        events.append(QJsonObject{{QStringLiteral("ph"), QStringLiteral("X")},
                                  {QStringLiteral("name"), label},
                                  {QStringLiteral("cat"), s.name},
                                  {QStringLiteral("pid"), 0},
                                  {QStringLiteral("tid"), s.rank},
                                  {QStringLiteral("ts"), double(s.startNs - origin) / 1000.0},
                                  {QStringLiteral("dur"), double(s.endNs - s.startNs) / 1000.0},
                                  {QStringLiteral("args"), QJsonObject{{QStringLiteral("step"), s.step},
                                                                       {QStringLiteral("micro_batch"), s.microBatch},
                                                                       {QStringLiteral("chunk"), s.stage}}}});
    }
    QJsonObject root{{QStringLiteral("traceEvents"), events}, {QStringLiteral("displayTimeUnit"), QStringLiteral("ms")}};
    return QJsonDocument(root).toJson(QJsonDocument::Compact);
}

} // namespace trellis::launcher
