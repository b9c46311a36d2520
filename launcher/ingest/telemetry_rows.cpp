// See telemetry_rows.h.
#include "launcher/ingest/telemetry_rows.h"

namespace trellis::launcher {

RankRow rankRowFrom(const proto::Envelope &e)
{
    const auto &h = e.hello();
    RankRow r;
    r.rank = static_cast<int>(e.rank());
    r.host = QString::fromStdString(h.host());
    r.pid = h.pid();
    r.device = QString::fromStdString(h.device());
    r.dp = static_cast<int>(h.coords().dp());
    r.tp = static_cast<int>(h.coords().tp());
    r.pp = static_cast<int>(h.coords().pp());
    r.cp = static_cast<int>(h.coords().cp());
    r.precision = QString::fromStdString(h.precision());
    r.kernels = QString::fromStdString(h.kernels());
    r.threads = static_cast<int>(h.threads());
    return r;
}

StepRow stepRowFrom(const proto::Envelope &e)
{
    const auto &s = e.step();
    StepRow r;
    r.rank = static_cast<int>(e.rank());
    r.step = static_cast<qint64>(s.step());
    r.stepMs = s.step_ms();
    r.computeMs = s.compute_ms();
    r.commMs = s.comm_ms();
    r.commExposedMs = s.comm_exposed_ms();
    r.bubbleMs = s.bubble_ms();
    r.idleMs = s.idle_ms();
    r.tokens = static_cast<qint64>(s.tokens());
    r.tokensPerS = s.tokens_per_s();
    r.loss = s.loss();
    r.gradNorm = s.grad_norm();
    r.lr = s.lr();
    r.memParameters = static_cast<qint64>(s.memory().parameters());
    r.memGradients = static_cast<qint64>(s.memory().gradients());
    r.memOptimizer = static_cast<qint64>(s.memory().optimizer());
    r.memActivations = static_cast<qint64>(s.memory().activations());
    r.memComm = static_cast<qint64>(s.memory().comm_buffers());
    r.peakRss = static_cast<qint64>(s.memory().peak_rss());
    r.memMaster = static_cast<qint64>(s.memory().master_weights());
    r.lossScale = s.loss_scale();
    r.skippedSteps = static_cast<qint64>(s.skipped_steps());
    r.updateSkipped = s.update_skipped();
    r.outerSteps = static_cast<qint64>(s.outer_steps());
    r.dpBytes = static_cast<qint64>(s.dp_bytes());
    r.dpDenseBytes = static_cast<qint64>(s.dp_dense_bytes());
    r.checkpointMs = s.checkpoint_ms();
    r.checkpointBehind = s.checkpoint_behind();
    r.checkpointWriteMs = s.checkpoint_write_ms();
    return r;
}

std::optional<ExpertLoadRow> expertLoadFrom(const proto::Envelope &e)
{
    if (!e.has_step() || !e.step().has_experts())
        return std::nullopt;
    const auto &x = e.step().experts();
    ExpertLoadRow r;
    r.rank = static_cast<int>(e.rank());
    r.step = static_cast<qint64>(e.step().step());
    r.layers = static_cast<int>(x.layers());
    r.experts = static_cast<int>(x.experts());
    r.tokens.assign(x.tokens().begin(), x.tokens().end());
    r.dropped = static_cast<qint64>(x.dropped());
    r.auxLoss = x.aux_loss();
    return r;
}

QString eventKind(proto::Event::Kind kind)
{
    switch (kind) {
    case proto::Event::INFO: return QStringLiteral("info");
    case proto::Event::CHECKPOINT: return QStringLiteral("checkpoint");
    case proto::Event::FAILURE: return QStringLiteral("failure");
    case proto::Event::RESTART: return QStringLiteral("restart");
    case proto::Event::NON_FINITE: return QStringLiteral("nan");
    case proto::Event::STRAGGLER: return QStringLiteral("straggler");
    default: return QStringLiteral("info");
    }
}


} // namespace trellis::launcher
