// Encode/decode with validation; see framing.h.
#include "backend/protocol/framing.h"

#include <chrono>
#include <cmath>

namespace trellis::proto {

std::string encodeEnvelope(const Envelope &envelope)
{
    std::string bytes;
    envelope.SerializeToString(&bytes);
    return bytes;
}

DecodeResult decodeEnvelope(std::string_view frame, Envelope &out, std::uint32_t worldSize)
{
    if (frame.empty())
        return {false, "empty frame"};
    if (frame.size() > kMaxFrameBytes)
        return {false, "frame of " + std::to_string(frame.size()) + " bytes exceeds the 4 MiB limit"};
    if (!out.ParseFromArray(frame.data(), static_cast<int>(frame.size())))
        return {false, "not a valid protobuf Envelope (" + std::to_string(frame.size()) + " bytes)"};
    if (out.protocol_version() != kProtocolVersion)
        return {false, "protocol version " + std::to_string(out.protocol_version()) + " (this receiver speaks " +
                           std::to_string(kProtocolVersion) + ")"};
    if (worldSize > 0 && out.rank() >= worldSize)
        return {false, "rank " + std::to_string(out.rank()) + " outside a world of " + std::to_string(worldSize)};
    if (out.payload_case() == Envelope::PAYLOAD_NOT_SET)
        return {false, "envelope without payload"};
    if (out.run_id().size() > 128)
        return {false, "run_id longer than 128 bytes"};
    if (out.has_step() && out.step().has_experts()) {
        const ExpertLoad &x = out.step().experts();
        const std::uint64_t cells = static_cast<std::uint64_t>(x.layers()) * x.experts();
        if (x.layers() == 0 || x.experts() == 0 || x.layers() > 65536 || x.experts() > 65536 ||
            static_cast<std::uint64_t>(x.tokens_size()) != cells)
            return {false, "step report's expert load has " + std::to_string(x.tokens_size()) + " token counts for " +
                               std::to_string(x.layers()) + " layers × " + std::to_string(x.experts()) + " experts"};
        if (!std::isfinite(x.aux_loss()))
            return {false, "step report's expert load has a non-finite aux_loss"};
    }
    return {true, {}};
}

namespace {
constexpr unsigned char kBatchTag0 = 0xA2, kBatchTag1 = 0x06; // field 100, length-delimited
}

void appendVarint(std::string &out, std::uint64_t value)
{
    for (std::uint64_t n = value;; n >>= 7) {
        if (n < 0x80) {
            out.push_back(static_cast<char>(n));
            break;
        }
        out.push_back(static_cast<char>((n & 0x7F) | 0x80));
    }
}

void appendBatchPartHeader(std::string &frame, std::size_t size)
{
    frame.push_back(static_cast<char>(kBatchTag0));
    frame.push_back(static_cast<char>(kBatchTag1));
    appendVarint(frame, size);
}

void appendToBatch(std::string &frame, std::string_view envelope)
{
    appendBatchPartHeader(frame, envelope.size());
    frame.append(envelope);
}

DecodeResult splitFrame(std::string_view frame, std::vector<std::string_view> &envelopes)
{
    envelopes.clear();
    if (frame.empty())
        return {false, "empty frame"};
    if (frame.size() > kMaxFrameBytes)
        return {false, "frame of " + std::to_string(frame.size()) + " bytes exceeds the 4 MiB limit"};
    const auto *p = reinterpret_cast<const unsigned char *>(frame.data());
    const auto *end = p + frame.size();
    if (frame.size() < 2 || p[0] != kBatchTag0 || p[1] != kBatchTag1) {
        envelopes.push_back(frame); // a bare envelope
        return {true, {}};
    }
    while (p < end) {
        if (end - p < 2 || p[0] != kBatchTag0 || p[1] != kBatchTag1)
            return {false, "a batch frame with something other than envelopes at byte " +
                               std::to_string(p - reinterpret_cast<const unsigned char *>(frame.data()))};
        p += 2;
        std::uint64_t length = 0;
        int shift = 0;
        for (;;) {
            if (p == end || shift > 28)
                return {false, "a batch frame with a truncated or oversized length"};
            const unsigned char b = *p++;
            length |= static_cast<std::uint64_t>(b & 0x7F) << shift;
            shift += 7;
            if (!(b & 0x80))
                break;
        }
        if (length > static_cast<std::uint64_t>(end - p))
            return {false, "a batch frame whose envelope of " + std::to_string(length) + " bytes runs past its end"};
        envelopes.emplace_back(reinterpret_cast<const char *>(p), static_cast<std::size_t>(length));
        p += length;
    }
    return {true, {}};
}

std::string encodeAck(const Ack &ack)
{
    std::string bytes;
    ack.SerializeToString(&bytes);
    return bytes;
}

DecodeResult decodeAck(std::string_view frame, Ack &out, const std::string &runId)
{
    if (frame.size() > 1024)
        return {false, "ack of " + std::to_string(frame.size()) + " bytes"};
    if (!out.ParseFromArray(frame.data(), static_cast<int>(frame.size())))
        return {false, "not a valid protobuf Ack"};
    if (out.run_id() != runId)
        return {false, "ack for run '" + out.run_id() + "'"};
    return {true, {}};
}

std::int64_t nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

const char *payloadName(const Envelope &e)
{
    switch (e.payload_case()) {
    case Envelope::kHello: return "hello";
    case Envelope::kStep: return "step";
    case Envelope::kHeartbeat: return "heartbeat";
    case Envelope::kEvent: return "event";
    case Envelope::kGoodbye: return "goodbye";
    case Envelope::kCollective: return "collective";
    case Envelope::kSpans: return "spans";
    case Envelope::kSkip: return "skip";
    case Envelope::PAYLOAD_NOT_SET: break;
    }
    return "none";
}

} // namespace trellis::proto
