// See step_telemetry.h.
#include "backend/trainer/telemetry/step_telemetry.h"

#include "backend/protocol/exit_codes.h"
#include "backend/protocol/telemetry.pb.h"

#include <cblas.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

namespace trellis::trainer {
namespace {

std::uint64_t peakRssBytes()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024; // ru_maxrss is in KiB on Linux
}

} // namespace

std::string hostName()
{
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    return host;
}

void publishHello(TelemetryPublisher &telemetry, int worldSize, const plan::MeshCoordinates &coords,
                  std::uint64_t parameters, const std::string &device, const std::string &precision,
                  const std::string &kernels)
{
    proto::Envelope e;
    auto *hello = e.mutable_hello();
    hello->set_host(hostName());
    hello->set_pid(static_cast<std::uint32_t>(getpid()));
    hello->set_device(device);
    hello->set_world_size(static_cast<std::uint32_t>(worldSize));
    auto *c = hello->mutable_coords();
    c->set_dp(coords.dp);
    c->set_tp(coords.tp);
    c->set_pp(coords.pp);
    c->set_cp(coords.cp);
    hello->set_trainer_version(TRELLIS_VERSION);
    hello->set_threads(static_cast<std::uint32_t>(openblas_get_num_threads()));
    hello->set_parameters(parameters);
    hello->set_precision(precision);
    hello->set_kernels(kernels);
    telemetry.publish(std::move(e));
}

void publishStep(TelemetryPublisher &telemetry, const StepFigures &f, const std::vector<DeviceCommunicator *> &groups,
                 const std::vector<TimelineSpan> *spans)
{
    // The step's collectives, spans and report go out together: one wake-up of the sender thread
    // and one frame on the wire instead of one per message.
    std::vector<proto::Envelope> out;
    for (DeviceCommunicator *group : groups) {
        for (const auto &rec : group->takeRecords()) {
            proto::Envelope &ce = out.emplace_back();
            auto *c = ce.mutable_collective();
            c->set_step(f.step);
            c->set_group(group->name());
            c->set_op(rec.op);
            c->set_bytes(rec.bytes);
            c->set_ms(rec.ms);
            c->set_count(rec.count);
            const double algGBps = rec.ms > 0 ? rec.bytes / (rec.ms * 1e6) : 0.0;
            c->set_bus_gbps(algGBps * busBandwidthFactor(rec.op, group->size()));
        }
    }
    if (spans) {
        auto *batch = out.emplace_back().mutable_spans();
        batch->set_step(f.step);
        for (const auto &sp : *spans) {
            auto *span = batch->add_spans();
            span->set_name(sp.name);
            span->set_start_ns(sp.startNs);
            span->set_end_ns(sp.endNs);
            span->set_micro_batch(sp.microBatch);
            span->set_stage(sp.chunk);
        }
    }
    auto *r = out.emplace_back().mutable_step();
    r->set_step(f.step);
    r->set_total_steps(f.totalSteps);
    r->set_step_ms(f.stepMs);
    r->set_compute_ms(std::max(0.0, f.stepMs - f.exposedMs - f.bubbleMs));
    r->set_bubble_ms(f.bubbleMs);
    r->set_comm_ms(f.commMs);
    r->set_comm_exposed_ms(f.exposedMs);
    r->set_tokens(f.tokens);
    r->set_tokens_per_s(static_cast<double>(f.tokens) / (f.stepMs / 1000.0));
    r->set_loss(f.loss);
    r->set_grad_norm(f.gradNorm);
    r->set_lr(f.lr);
    auto *mem = r->mutable_memory();
    mem->set_parameters(f.parameterBytes);
    mem->set_gradients(f.gradientBytes);
    mem->set_optimizer(f.optimizerBytes);
    mem->set_activations(f.activationBytes);
    mem->set_comm_buffers(f.bufferBytes);
    mem->set_peak_rss(peakRssBytes());
    mem->set_master_weights(f.masterBytes);
    mem->set_device_allocated(f.deviceAllocated);
    mem->set_device_peak(f.devicePeak);
    mem->set_device_reserved(f.deviceReserved);
    r->set_loss_scale(f.lossScale);
    r->set_skipped_steps(f.skippedSteps);
    r->set_update_skipped(f.updateSkipped);
    r->set_outer_steps(f.outerSteps);
    r->set_dp_bytes(f.dpBytes);
    r->set_dp_dense_bytes(f.dpDenseBytes);
    r->set_checkpoint_ms(f.checkpointMs);
    r->set_checkpoint_behind(f.checkpointBehind);
    r->set_checkpoint_write_ms(f.checkpointWriteMs);
    r->set_memory_checkpoint_step(f.memoryCheckpointStep);
    if (!f.experts.tokens.empty()) {
        auto *x = r->mutable_experts();
        x->set_layers(static_cast<std::uint32_t>(f.experts.layers));
        x->set_experts(static_cast<std::uint32_t>(f.experts.experts));
        for (const std::uint64_t n : f.experts.tokens)
            x->add_tokens(n);
        x->set_dropped(f.experts.dropped);
        x->set_aux_loss(f.experts.auxTerms > 0 ? f.experts.auxLoss / static_cast<double>(f.experts.auxTerms) : 0.0);
    }
    telemetry.publish(out);
}

int publishFailure(TelemetryPublisher &telemetry, int rank, int code, const std::string &message, std::uint64_t step)
{
    std::fprintf(stderr, "%s rank %d: %s\n", hostName().c_str(), rank, message.c_str());
    std::fflush(stderr);
    proto::Envelope e;
    auto *ev = e.mutable_event();
    ev->set_kind(code == proto::kExitNonFinite ? proto::Event::NON_FINITE : proto::Event::FAILURE);
    ev->set_step(step);
    ev->set_message(message);
    telemetry.publish(std::move(e));
    telemetry.close(code, message, step);
    return code;
}

} // namespace trellis::trainer
