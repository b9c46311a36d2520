// Telemetry framing: a ZeroMQ message holds a Batch of encoded Envelopes (or one bare Envelope);
// splitFrame() takes a batch apart without copying, decodeEnvelope() validates
// everything a receiver must not trust (size, protocol version, rank range, payload present), so
// a malformed or hostile frame is rejected with a reason and never reaches the history store.
#pragma once

#include "backend/protocol/telemetry.pb.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trellis::proto {

inline constexpr std::uint32_t kProtocolVersion = 3;
inline constexpr std::size_t kMaxFrameBytes = 4 * 1024 * 1024;

std::string encodeEnvelope(const Envelope &envelope);

struct DecodeResult {
    bool ok = false;
    std::string error; // why the frame was rejected
};

// `worldSize` 0 skips the rank range check.
DecodeResult decodeEnvelope(std::string_view frame, Envelope &out, std::uint32_t worldSize = 0);

// Appends one encoded envelope to a Batch frame (field 100 of telemetry.proto's Batch).
void appendToBatch(std::string &frame, std::string_view envelope);
// Appends the tag and length of a Batch part of `size` bytes, for a caller that serializes the
// envelope into the frame itself (the live feed's TelemetryBatch, the same wire format).
void appendBatchPartHeader(std::string &frame, std::size_t size);
void appendVarint(std::string &out, std::uint64_t value); // protobuf's base-128 varint
// The envelopes of a frame: the parts of a Batch, or the frame itself when it is a bare Envelope.
// A frame that claims to be a batch but does not parse as one is rejected whole, with the reason.
DecodeResult splitFrame(std::string_view frame, std::vector<std::string_view> &envelopes);

std::string encodeAck(const Ack &ack);
// Validates an Ack a rank receives (size, run id).
DecodeResult decodeAck(std::string_view frame, Ack &out, const std::string &runId);

std::int64_t nowNs();

const char *payloadName(const Envelope &envelope);

} // namespace trellis::proto
