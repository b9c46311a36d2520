// Telemetry messages as history rows: shared by the run supervisor (which records them) and the
// live feed's subscribers (which chart them).
#pragma once

#include <optional>

#include "launcher/run_types.h"
#include "backend/protocol/telemetry.pb.h"

namespace trellis::launcher {

StepRow stepRowFrom(const proto::Envelope &e);
// The rank's row from its Hello: host, pid, device, coordinates, precision, kernels, threads.
RankRow rankRowFrom(const proto::Envelope &e);
// The step report's expert load, when it has one (decodeEnvelope checked its shape).
std::optional<ExpertLoadRow> expertLoadFrom(const proto::Envelope &e);
QString eventKind(proto::Event::Kind kind);

} // namespace trellis::launcher
