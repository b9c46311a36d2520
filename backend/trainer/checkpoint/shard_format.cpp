// See shard_format.h.
#include "backend/trainer/checkpoint/shard_format.h"

#include <cstring>

namespace trellis::trainer {
namespace {

constexpr char kMagic[8] = {'T', 'R', 'L', 'S', 'C', 'K', 'P', '1'};
constexpr std::uint32_t kNoReplica = 0xFFFFFFFF; // a version 2 shard of every-step training

template <typename T>
void put(std::string &out, const T &value)
{
    out.append(reinterpret_cast<const char *>(&value), sizeof value);
}

void putFloats(std::string &out, const std::vector<float> &values)
{
    out.append(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(float));
}

class Reader {
public:
    explicit Reader(const std::string &bytes) : m_bytes(bytes) {}
    template <typename T>
    bool get(T &out)
    {
        if (m_pos + sizeof out > m_bytes.size())
            return false;
        std::memcpy(&out, m_bytes.data() + m_pos, sizeof out);
        m_pos += sizeof out;
        return true;
    }
    bool bytes(std::string &out, std::uint64_t n)
    {
        if (n > m_bytes.size() - m_pos)
            return false;
        out.assign(m_bytes.data() + m_pos, n);
        m_pos += n;
        return true;
    }
    bool floats(std::vector<float> &out, std::size_t n)
    {
        if (n > (m_bytes.size() - m_pos) / sizeof(float))
            return false;
        out.resize(n);
        std::memcpy(out.data(), m_bytes.data() + m_pos, n * sizeof(float));
        m_pos += n * sizeof(float);
        return true;
    }
    std::size_t position() const { return m_pos; }

private:
    const std::string &m_bytes;
    std::size_t m_pos = 0;
};

} // namespace

// Shard: header, ranges, parameters (all on rank 0 — they are identical on every rank — or, at
// ZeRO-3, each rank those of its ranges), moments, checksum. Version 2 (local updates, where every
// replica writes the parameters of its ranges, or a rank's own state) adds the replica (or none),
// the outer counters and the lengths of the anchor, the momentum and the own state to the header,
// and those after the moments.
std::string shardBytes(const TrainingState &state, int rank, int worldSize, std::uint64_t parameterCount)
{
    std::string bytes;
    shardBytes(state, rank, worldSize, parameterCount, bytes);
    return bytes;
}

void shardBytes(const TrainingState &state, int rank, int worldSize, std::uint64_t parameterCount, std::string &bytes)
{
    const bool v2 = state.replica >= 0 || !state.extra.empty();
    const std::uint32_t version = v2 ? 2 : 1, rangeCount = static_cast<std::uint32_t>(state.ranges.size());
    const std::vector<float> &params = state.rangeParameters.empty() ? state.parameters : state.rangeParameters;
    const std::uint64_t paramsHere = params.size();
    // Sized once for the whole shard (the header's 112 bytes at most): no growth copies, and a
    // buffer kept between saves is neither allocated nor touched again before it is filled.
    bytes.clear();
    bytes.reserve(112 + 16 * state.ranges.size() +
                  sizeof(float) * (params.size() + state.m.size() + state.v.size() + state.anchor.size() + state.outerMomentum.size()) +
                  state.extra.size() + 8);
    bytes.append(kMagic, sizeof kMagic);
    put(bytes, version);
    put(bytes, static_cast<std::uint32_t>(rank));
    put(bytes, static_cast<std::uint32_t>(worldSize));
    put(bytes, state.step);
    put(bytes, parameterCount);
    put(bytes, state.adamStep);
    put(bytes, paramsHere);
    put(bytes, rangeCount);
    if (v2) {
        put(bytes, state.replica >= 0 ? static_cast<std::uint32_t>(state.replica) : kNoReplica);
        put(bytes, static_cast<std::uint32_t>(state.replicas));
        put(bytes, state.innerSteps);
        put(bytes, state.outerSteps);
        put(bytes, static_cast<std::uint64_t>(state.anchor.size()));
        put(bytes, static_cast<std::uint64_t>(state.outerMomentum.size()));
        put(bytes, static_cast<std::uint64_t>(state.extra.size()));
    }
    for (const auto &r : state.ranges) {
        put(bytes, static_cast<std::uint64_t>(r.begin));
        put(bytes, static_cast<std::uint64_t>(r.end));
    }
    putFloats(bytes, params);
    putFloats(bytes, state.m);
    putFloats(bytes, state.v);
    if (v2) {
        putFloats(bytes, state.anchor);
        putFloats(bytes, state.outerMomentum);
        bytes += state.extra;
    }
    put(bytes, fnv1a64(bytes.data(), bytes.size()));
}

std::string parseShard(const std::string &bytes, Shard &s)
{
    if (bytes.size() < sizeof kMagic + 8 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
        return "not a Trellis checkpoint shard";
    std::uint64_t stored = 0;
    std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
    if (fnv1a64(bytes.data(), bytes.size() - 8) != stored)
        return "checksum mismatch (the file is corrupt)";
    Reader r(bytes);
    char magic[8];
    std::uint32_t version = 0, rank = 0, world = 0, rangeCount = 0;
    std::uint64_t paramsHere = 0;
    if (!r.get(magic) || !r.get(version) || !r.get(rank) || !r.get(world) || !r.get(s.step) || !r.get(s.parameterCount) ||
        !r.get(s.adamStep) || !r.get(paramsHere) || !r.get(rangeCount))
        return "truncated header";
    if (version != 1 && version != 2)
        return "shard format version " + std::to_string(version) + " is not supported";
    s.rank = static_cast<int>(rank);
    std::uint32_t replica = kNoReplica, replicas = 0;
    std::uint64_t anchorHere = 0, momentumHere = 0, extraBytes = 0;
    if (version == 2) {
        if (!r.get(replica) || !r.get(replicas) || !r.get(s.innerSteps) || !r.get(s.outerSteps) || !r.get(anchorHere) ||
            !r.get(momentumHere) || !r.get(extraBytes))
            return "truncated header";
        if (replica != kNoReplica && replica >= replicas)
            return "replica " + std::to_string(replica) + " of " + std::to_string(replicas);
        s.replica = replica == kNoReplica ? -1 : static_cast<int>(replica);
    }
    std::size_t moments = 0;
    for (std::uint32_t i = 0; i < rangeCount; ++i) {
        std::uint64_t begin = 0, end = 0;
        if (!r.get(begin) || !r.get(end) || begin > end || end > s.parameterCount)
            return "bad parameter range";
        s.ranges.push_back({begin, end});
        moments += end - begin;
    }
    // Parameters: none, all of them, or those of the shard's ranges (ZeRO-3).
    if (paramsHere != 0 && paramsHere != s.parameterCount && paramsHere != moments)
        return "holds " + std::to_string(paramsHere) + " parameters, neither all nor those of its ranges";
    if (!r.floats(s.parameters, paramsHere) || !r.floats(s.m, moments) || !r.floats(s.v, moments))
        return "truncated data";
    if (version == 2) {
        if ((anchorHere != 0 && anchorHere != moments) || (momentumHere != 0 && momentumHere != moments))
            return "holds an outer state of " + std::to_string(anchorHere) + " and " + std::to_string(momentumHere) +
                   " elements for " + std::to_string(moments);
        if (!r.floats(s.anchor, anchorHere) || !r.floats(s.outerMomentum, momentumHere) || !r.bytes(s.extra, extraBytes))
            return "truncated data";
    }
    if (r.position() + 8 != bytes.size())
        return "unexpected trailing bytes";
    return {};
}

std::uint64_t fnv1a64(const void *data, std::size_t bytes, std::uint64_t seed)
{
    std::uint64_t h = seed;
    const auto *p = static_cast<const unsigned char *>(data);
    for (std::size_t i = 0; i < bytes; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

} // namespace trellis::trainer
