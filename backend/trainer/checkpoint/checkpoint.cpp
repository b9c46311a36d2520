// See checkpoint.h.
#include "backend/trainer/checkpoint/checkpoint.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace trellis::trainer {
namespace fs = std::filesystem;
namespace {

constexpr char kMagic[8] = {'T', 'R', 'L', 'S', 'C', 'K', 'P', '1'};
constexpr std::uint32_t kNoReplica = 0xFFFFFFFF; // a version 2 shard of every-step training

std::string stepDirName(std::uint64_t step)
{
    char name[32];
    std::snprintf(name, sizeof name, "step-%08llu", static_cast<unsigned long long>(step));
    return name;
}

std::string shardName(int rank)
{
    char name[32];
    std::snprintf(name, sizeof name, "rank-%05d.bin", rank);
    return name;
}

std::string hex(std::uint64_t v)
{
    char text[24];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
    return text;
}

template <typename T>
void put(std::string &out, const T &value)
{
    out.append(reinterpret_cast<const char *>(&value), sizeof value);
}

void putFloats(std::string &out, const std::vector<float> &values)
{
    out.append(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(float));
}

// Writes and fsyncs; a failure leaves no file behind.
bool writeDurably(const fs::path &path, const std::string &bytes)
{
    std::FILE *f = std::fopen(path.c_str(), "wb");
    if (!f)
        return false;
    const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() && std::fflush(f) == 0 &&
                    ::fsync(fileno(f)) == 0;
    std::fclose(f);
    if (!ok) {
        std::error_code ec;
        fs::remove(path, ec);
    }
    return ok;
}

nlohmann::json modelJson(const plan::ModelSpec &m)
{
    return {{"arch", m.arch}, {"layers", m.layers}, {"hidden", m.hidden}, {"heads", m.heads}, {"kv_heads", m.kvHeads},
            {"ffn", m.ffn}, {"seq_len", m.seqLen}, {"vocab", m.vocab}, {"experts", m.moe.experts}};
}

struct Shard {
    std::uint64_t step = 0, parameterCount = 0, adamStep = 0;
    std::vector<float> parameters;
    std::vector<ParamRange> ranges;
    std::vector<float> m, v;
    // Version 2: the replica that wrote it and its outer state (local updates), the writer's own
    // state (PowerSGD).
    int rank = 0, replica = -1;
    std::uint64_t innerSteps = 0, outerSteps = 0;
    std::vector<float> anchor, outerMomentum;
    std::string extra;
};

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

// Parses a shard; returns "" or why it is unusable.
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

bool readFile(const fs::path &path, std::string &out)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return false;
    std::ostringstream s;
    s << in.rdbuf();
    out = s.str();
    return true;
}

// The step folders of `root` (complete or not), by name.
std::vector<fs::path> stepDirs(const fs::path &root, std::error_code &ec)
{
    std::vector<fs::path> dirs;
    static const std::regex name("step-[0-9]{8}");
    for (const auto &entry : fs::directory_iterator(root, ec))
        if (entry.is_directory() && std::regex_match(entry.path().filename().string(), name))
            dirs.push_back(entry.path());
    return dirs;
}

// Rank 0 makes the step's ".partial" folder (an earlier failed save's removed); every rank learns
// whether it could. Returns "" or why not.
std::string makePartialDir(HostCommunicator &world, const fs::path &root, const fs::path &partialDir)
{
    const int rank = world.rank();
    std::int32_t failed = 0;
    std::string error;
    if (rank == 0) {
        std::error_code ec;
        fs::create_directories(root, ec);
        fs::remove_all(partialDir, ec); // leftovers of an earlier failed save
        if (!fs::create_directories(partialDir, ec)) {
            failed = 1;
            error = partialDir.string() + ": cannot be created (" + ec.message() + ")";
        }
    }
    world.broadcast(std::span<std::int32_t>(&failed, 1), 0);
    if (failed)
        return rank == 0 ? error : partialDir.string() + ": cannot be created";
    if (rank != 0) {
        // A host that does not share rank 0's folder (ssh hosts, each with its own run folder):
        // its ranks' shards go into a folder of their own there, gathered by the supervisor.
        std::error_code ec;
        if (!fs::is_directory(partialDir, ec))
            fs::create_directories(partialDir, ec);
    }
    return {};
}

// Shard: header, ranges, parameters (all on rank 0 — they are identical on every rank — or, at
// ZeRO-3, each rank those of its ranges), moments, checksum. Version 2 (local updates, where every
// replica writes the parameters of its ranges, or a rank's own state) adds the replica (or none),
// the outer counters and the lengths of the anchor, the momentum and the own state to the header,
// and those after the moments.
std::string shardBytes(const TrainingState &state, int rank, int worldSize, std::uint64_t parameterCount)
{
    std::string bytes;
    const bool v2 = state.replica >= 0 || !state.extra.empty();
    const std::uint32_t version = v2 ? 2 : 1, rangeCount = static_cast<std::uint32_t>(state.ranges.size());
    const std::vector<float> &params = state.rangeParameters.empty() ? state.parameters : state.rangeParameters;
    const std::uint64_t paramsHere = params.size();
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
    return bytes;
}

// meta.json: the model and layout the checkpoint belongs to, and every shard's size and checksum
// (`files`: bytes and checksum per rank, in rank order).
nlohmann::json metaJson(const plan::Plan &plan, const TrainingState &state, std::uint64_t parameterCount, int worldSize,
                        const std::vector<std::uint64_t> &files)
{
    nlohmann::json meta;
    meta["format"] = kCheckpointFormat;
    meta["step"] = state.step;
    meta["parameter_count"] = parameterCount;
    meta["model"] = modelJson(plan.model);
    meta["dp"] = plan.parallel.dp;
    meta["tp"] = plan.parallel.tp;
    meta["pp"] = plan.parallel.pp;
    meta["zero"] = plan.parallel.zero;
    meta["seed"] = plan.training.seed;
    meta["precision"] = state.precision;
    if (state.lossScale > 0)
        meta["loss_scale"] = {{"scale", state.lossScale}, {"clean_steps", state.lossScaleClean}};
    if (state.replica >= 0)
        meta["dp_sync"] = {{"mode", state.dpSync}, {"replicas", state.replicas}};
    meta["files"] = nlohmann::json::array();
    for (int r = 0; r < worldSize; ++r)
        meta["files"].push_back({{"name", shardName(r)}, {"bytes", files[2 * r]}, {"fnv1a64", hex(files[2 * r + 1])}});
    return meta;
}

// Rank 0: meta.json last into the partial folder, then the folder in place of the step's (an
// older checkpoint of the same step replaced only once the new one is complete). "" or why not.
std::string completeCheckpoint(const fs::path &root, const fs::path &partialDir, const fs::path &finalDir, std::uint64_t step,
                               const nlohmann::json &meta)
{
    std::error_code ec;
    if (!writeDurably(partialDir / "meta.json.tmp", meta.dump(2) + "\n"))
        return (partialDir / "meta.json.tmp").string() + ": write failed";
    fs::rename(partialDir / "meta.json.tmp", partialDir / "meta.json", ec);
    const fs::path old = root / (stepDirName(step) + ".old");
    fs::remove_all(old, ec);
    if (fs::exists(finalDir))
        fs::rename(finalDir, old, ec);
    fs::rename(partialDir, finalDir, ec);
    std::string error;
    if (ec)
        error = finalDir.string() + ": cannot be put in place (" + ec.message() + ")";
    fs::remove_all(old, ec);
    return error;
}

// Keep the newest `keep` complete checkpoints.
void removeOldCheckpoints(const fs::path &root, int keep)
{
    std::error_code ec;
    std::vector<fs::path> complete;
    for (const fs::path &dir : stepDirs(root, ec))
        if (fs::exists(dir / "meta.json"))
            complete.push_back(dir);
    std::sort(complete.begin(), complete.end());
    for (std::size_t i = 0; i + static_cast<std::size_t>(keep) < complete.size(); ++i)
        fs::remove_all(complete[i], ec);
}

// A candidate's meta.json, read and checked against the plan: Skip (incomplete or unreadable: try
// an older one), Refuse (another format or model: result.error says why) or Use.
enum class MetaVerdict { Skip, Refuse, Use };

MetaVerdict readMeta(const fs::path &metaPath, const plan::Plan &plan, std::uint64_t parameterCount, nlohmann::json &meta,
                     LoadResult &result)
{
    std::string text;
    if (!readFile(metaPath, text)) {
        result.skipped.push_back(metaPath.string() + ": missing (incomplete checkpoint)");
        return MetaVerdict::Skip;
    }
    try {
        meta = nlohmann::json::parse(text);
    } catch (const std::exception &) {
        result.skipped.push_back(metaPath.string() + ": not valid JSON");
        return MetaVerdict::Skip;
    }
    const std::string format = meta.value("format", "");
    if (format != kCheckpointFormat) {
        result.error = metaPath.string() + ": format '" + format + "' is not the one this trainer reads ('" +
                       kCheckpointFormat + "')";
        return MetaVerdict::Refuse;
    }
    const nlohmann::json expected = modelJson(plan.model);
    // Checkpoints from before the llama architecture name neither: gpt, kv_heads = heads.
    if (meta["model"].is_object() && !meta["model"].contains("arch"))
        meta["model"]["arch"] = plan::kArchGpt;
    if (meta["model"].is_object() && !meta["model"].contains("kv_heads") && meta["model"].contains("heads"))
        meta["model"]["kv_heads"] = meta["model"]["heads"];
    if (meta["model"].is_object() && !meta["model"].contains("experts")) // before mixtures of experts: dense
        meta["model"]["experts"] = 0;
    for (const auto &[key, value] : expected.items()) {
        if (!meta["model"].contains(key) || meta["model"][key] != value) {
            result.error = metaPath.string() + ": model." + key + " is " + meta["model"].value(key, nlohmann::json()).dump() +
                           " in the checkpoint but " + value.dump() + " in the plan";
            return MetaVerdict::Refuse;
        }
    }
    if (meta.value("parameter_count", std::uint64_t(0)) != parameterCount) {
        result.error = metaPath.string() + ": parameter_count differs from the model's (" + std::to_string(parameterCount) + ")";
        return MetaVerdict::Refuse;
    }
    return MetaVerdict::Use;
}

// Every shard meta.json lists: present, the right size, the recorded checksum. "" or the problem.
std::string readShards(const fs::path &cdir, const fs::path &metaPath, nlohmann::json &meta, std::vector<Shard> &shards)
{
    for (const auto &file : meta["files"]) {
        const fs::path path = cdir / file.value("name", "");
        std::string bytes;
        if (!readFile(path, bytes))
            return path.string() + ": missing";
        if (bytes.size() != file.value("bytes", std::uint64_t(0)))
            return path.string() + ": " + std::to_string(bytes.size()) + " bytes, expected " +
                   std::to_string(file.value("bytes", std::uint64_t(0))) + " (truncated)";
        if (hex(fnv1a64(bytes.data(), bytes.size())) != file.value("fnv1a64", ""))
            return path.string() + ": checksum mismatch (the file is corrupt)";
        Shard s;
        if (const std::string why = parseShard(bytes, s); !why.empty())
            return path.string() + ": " + why;
        shards.push_back(std::move(s));
    }
    if (shards.empty())
        return metaPath.string() + ": lists no shards";
    return {};
}

// fp16's loss scale, when the checkpoint has one. "" or why it is unusable.
std::string readLossScale(const nlohmann::json &meta, const fs::path &metaPath, TrainingState &state)
{
    if (!meta.contains("loss_scale") || !meta["loss_scale"].is_object())
        return {};
    const auto &ls = meta["loss_scale"];
    const nlohmann::json scale = ls.value("scale", nlohmann::json()), clean = ls.value("clean_steps", nlohmann::json());
    if (!scale.is_number() || !(scale.get<double>() > 0) || !clean.is_number_integer() || clean.get<std::int64_t>() < 0)
        return metaPath.string() + ": loss_scale must hold a positive scale and a clean_steps count";
    state.lossScale = scale.get<double>();
    state.lossScaleClean = static_cast<int>(std::min<std::int64_t>(clean.get<std::int64_t>(), 1 << 30));
    return {};
}

// The whole model's parameters: from the shard that has them all or, at ZeRO-3, from every
// shard's ranges together. False when they do not cover every parameter.
bool assembleParameters(const std::vector<Shard> &shards, std::uint64_t parameterCount, TrainingState &state)
{
    for (auto &s : shards)
        if (s.parameters.size() == parameterCount)
            state.parameters = s.parameters;
    if (state.parameters.size() == parameterCount)
        return true;
    state.parameters.assign(parameterCount, 0.0f);
    std::vector<bool> seen(parameterCount, false);
    std::size_t found = 0;
    for (const auto &s : shards) {
        if (s.parameters.empty())
            continue;
        std::size_t at = 0;
        for (const auto &have : s.ranges) {
            for (std::size_t i = have.begin; i < have.end; ++i, ++at) {
                state.parameters[i] = s.parameters[at];
                if (!seen[i]) {
                    seen[i] = true;
                    ++found;
                }
            }
        }
    }
    return found == parameterCount;
}

// The values of `field` (a per-range array: moments, anchor, outer momentum) for the ranges this
// rank owns now, from whichever shards hold them (any layout), in `owned`'s order. False when the
// shards do not cover every element.
bool assembleRanges(const std::vector<Shard> &shards, const std::vector<ParamRange> &owned, std::vector<float> Shard::*field,
                    std::vector<float> &out)
{
    std::size_t total = 0;
    for (const auto &r : owned)
        total += r.end - r.begin;
    out.assign(total, 0.0f);
    // Every shard range, sorted, so each wanted range finds its sources by binary search.
    struct Source {
        std::size_t begin, end;
        const std::vector<float> *values;
        std::size_t offset; // of the range's values in the shard's array
    };
    std::vector<Source> sources;
    for (const auto &s : shards) {
        std::size_t sOffset = 0;
        for (const auto &have : s.ranges) {
            sources.push_back({have.begin, have.end, &(s.*field), sOffset});
            sOffset += have.end - have.begin;
        }
    }
    std::sort(sources.begin(), sources.end(), [](const Source &a, const Source &b) { return a.begin < b.begin; });
    std::vector<bool> filled(total, false);
    std::size_t covered = 0, offset = 0;
    for (const auto &want : owned) {
        auto it = std::upper_bound(sources.begin(), sources.end(), want.begin,
                                   [](std::size_t b, const Source &src) { return b < src.begin; });
        // Ranges starting before want.begin may still reach into it: step back over them.
        while (it != sources.begin() && std::prev(it)->end > want.begin)
            --it;
        for (; it != sources.end() && it->begin < want.end; ++it) {
            const std::size_t begin = std::max(want.begin, it->begin), end = std::min(want.end, it->end);
            if (begin >= end)
                continue;
            std::copy_n(it->values->begin() + static_cast<long>(it->offset + begin - it->begin), end - begin,
                        out.begin() + static_cast<long>(offset + begin - want.begin));
            for (std::size_t i = offset + begin - want.begin; i < offset + end - want.begin; ++i)
                if (!filled[i]) {
                    filled[i] = true;
                    ++covered;
                }
        }
        offset += want.end - want.begin;
    }
    return covered == total;
}

// The moments of the ranges this rank owns now and, from a local-update checkpoint, their outer
// state. False when the shards do not cover every element.
bool assembleMoments(const std::vector<Shard> &shards, const std::vector<ParamRange> &owned, TrainingState &state)
{
    state.ranges = owned;
    if (!assembleRanges(shards, owned, &Shard::m, state.m) || !assembleRanges(shards, owned, &Shard::v, state.v))
        return false;
    if (state.replica < 0)
        return true;
    if (!assembleRanges(shards, owned, &Shard::anchor, state.anchor))
        return false;
    return state.dpSync != "diloco" || assembleRanges(shards, owned, &Shard::outerMomentum, state.outerMomentum);
}

// A local-update checkpoint (meta.json's dp_sync) against the plan: "" or why it cannot resume
// it. On success state's replica fields are set and `shards` keeps the replica's own only.
std::string takeReplica(const nlohmann::json &meta, const fs::path &metaPath, const plan::Plan &plan, int replica,
                        std::vector<Shard> &shards, TrainingState &state)
{
    const plan::DpSyncSpec &sync = plan.parallel.dpSync;
    if (!meta.contains("dp_sync"))
        return {}; // every-step training: every replica starts from its one copy
    const nlohmann::json &d = meta["dp_sync"];
    const std::string mode = d.is_object() ? d.value("mode", std::string()) : std::string();
    const int replicas = d.is_object() ? d.value("replicas", 0) : 0;
    if (mode.empty() || replicas < 1)
        return metaPath.string() + ": dp_sync must name a mode and a replica count";
    const std::string written = "was written by " + mode + " training with " + std::to_string(replicas) +
                                " replicas, each holding its own parameters and optimizer state";
    if (!sync.local())
        return metaPath.string() + ": " + written + "; parallel.dp_sync.mode is every_step (resume it with " + mode + ")";
    if (mode != plan::toString(sync.mode))
        return metaPath.string() + ": " + written + "; parallel.dp_sync.mode is " + plan::toString(sync.mode);
    if (replicas != plan.parallel.dp)
        return metaPath.string() + ": " + written + "; parallel.dp is " + std::to_string(plan.parallel.dp) +
               " (a local-update run resumes at the dp degree it was written at)";
    std::erase_if(shards, [&](const Shard &s) { return s.replica != replica; });
    state.replica = replica;
    state.replicas = replicas;
    state.dpSync = mode;
    if (!shards.empty()) {
        state.innerSteps = shards.front().innerSteps;
        state.outerSteps = shards.front().outerSteps;
    }
    return {};
}

} // namespace

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

std::string saveCheckpoint(HostCommunicator &world, const std::string &dir, const plan::Plan &plan, const TrainingState &state,
                           std::uint64_t parameterCount, int keep)
{
    const int rank = world.rank();
    const fs::path root(dir);
    const fs::path finalDir = root / stepDirName(state.step);
    const fs::path partialDir = root / (stepDirName(state.step) + ".partial");
    if (const std::string error = makePartialDir(world, root, partialDir); !error.empty())
        return error;

    const std::string bytes = shardBytes(state, rank, world.size(), parameterCount);
    const fs::path shard = partialDir / shardName(rank);
    std::int32_t myFailure = writeDurably(shard, bytes) ? 0 : 1;
    const std::int32_t anyFailure = world.allReduce(myFailure, ReduceOp::Sum);
    if (anyFailure)
        return myFailure ? shard.string() + ": write failed" : "checkpoint at step " + std::to_string(state.step) +
                                                                   ": another rank failed to write its shard";

    const std::uint64_t mine[2] = {bytes.size(), fnv1a64(bytes.data(), bytes.size())};
    const std::vector<std::uint64_t> all = world.allGather(std::span<const std::uint64_t>(mine, 2));
    std::int32_t failed = 0;
    std::string error;
    if (rank == 0) {
        error = completeCheckpoint(root, partialDir, finalDir, state.step, metaJson(plan, state, parameterCount, world.size(), all));
        failed = error.empty() ? 0 : 1;
        if (!failed)
            removeOldCheckpoints(root, keep);
    }
    world.broadcast(std::span<std::int32_t>(&failed, 1), 0);
    if (failed)
        return rank == 0 ? error : "checkpoint at step " + std::to_string(state.step) + " failed on rank 0";
    return {};
}

LoadResult loadCheckpoint(const std::string &dir, const plan::Plan &plan, std::uint64_t parameterCount,
                          const std::vector<ParamRange> &owned, TrainingState &state, int replica, int rank)
{
    LoadResult result;
    const fs::path root(dir);
    std::error_code ec;
    if (!fs::is_directory(root, ec))
        return result;
    std::vector<fs::path> candidates = stepDirs(root, ec);
    std::sort(candidates.rbegin(), candidates.rend());

    for (const auto &cdir : candidates) {
        const fs::path metaPath = cdir / "meta.json";
        nlohmann::json meta;
        const MetaVerdict verdict = readMeta(metaPath, plan, parameterCount, meta, result);
        if (verdict == MetaVerdict::Refuse)
            return result;
        if (verdict == MetaVerdict::Skip)
            continue;
        std::vector<Shard> shards;
        if (const std::string problem = readShards(cdir, metaPath, meta, shards); !problem.empty()) {
            result.skipped.push_back(problem);
            continue;
        }
        // Assemble: parameters from the shard that has them, moments for the ranges we own now.
        state = {};
        if (const std::string why = takeReplica(meta, metaPath, plan, replica, shards, state); !why.empty()) {
            result.error = why;
            return result;
        }
        if (shards.empty()) {
            result.skipped.push_back(cdir.string() + ": holds no shard of replica " + std::to_string(replica));
            continue;
        }
        state.step = shards.front().step;
        state.adamStep = shards.front().adamStep;
        state.precision = meta.value("precision", std::string("fp32"));
        if (const std::string why = readLossScale(meta, metaPath, state); !why.empty()) {
            result.error = why;
            return result;
        }
        if (!assembleParameters(shards, parameterCount, state)) {
            result.skipped.push_back(cdir.string() + ": the shards do not hold every parameter");
            continue;
        }
        if (!assembleMoments(shards, owned, state)) {
            result.skipped.push_back(cdir.string() + ": shards do not cover every optimizer state element");
            continue;
        }
        // A rank's own state belongs to its place in the layout that wrote it.
        const bool sameLayout = meta.value("dp", 0) == plan.parallel.dp && meta.value("tp", 0) == plan.parallel.tp &&
                                meta.value("pp", 0) == plan.parallel.pp;
        for (const Shard &s : shards)
            if (sameLayout && s.rank == rank)
                state.extra = s.extra;
        result.found = true;
        result.path = cdir.string();
        return result;
    }
    return result;
}

} // namespace trellis::trainer
