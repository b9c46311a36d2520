// Telemetry framing: one protobuf Envelope per ZeroMQ message. decodeEnvelope() validates
// everything a receiver must not trust (size, protocol version, rank range, payload present), so
// a malformed or hostile frame is rejected with a reason and never reaches the history store.
#pragma once

#include "telemetry.pb.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace trellis::proto {

inline constexpr std::uint32_t kProtocolVersion = 2;
inline constexpr std::size_t kMaxFrameBytes = 4 * 1024 * 1024;

std::string encodeEnvelope(const Envelope &envelope);

struct DecodeResult {
    bool ok = false;
    std::string error; // why the frame was rejected
};

// `worldSize` 0 skips the rank range check.
DecodeResult decodeEnvelope(std::string_view frame, Envelope &out, std::uint32_t worldSize = 0);

std::string encodeAck(const Ack &ack);
// Validates an Ack a rank receives (size, run id).
DecodeResult decodeAck(std::string_view frame, Ack &out, const std::string &runId);

std::int64_t nowNs();

const char *payloadName(const Envelope &envelope);

} // namespace trellis::proto
