// See checkpoint.h.
#include "backend/trainer/checkpoint/checkpoint.h"

#include "backend/trainer/checkpoint/memory_ring.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace trellis::trainer {
namespace fs = std::filesystem;

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

bool writeDurably(const fs::path &path, const std::string &bytes, mode_t mode)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    std::FILE *f = fd >= 0 ? ::fdopen(fd, "wb") : nullptr;
    if (!f) {
        if (fd >= 0)
            ::close(fd);
        return false;
    }
    const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() && std::fflush(f) == 0 &&
                    ::fsync(fileno(f)) == 0;
    std::fclose(f);
    if (!ok) {
        std::error_code ec;
        fs::remove(path, ec);
    }
    return ok;
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

std::string readFile(const fs::path &path)
{
    std::string bytes;
    readFile(path, bytes);
    return bytes;
}

namespace {

std::string hex(std::uint64_t v)
{
    char text[24];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
    return text;
}

nlohmann::json modelJson(const plan::ModelSpec &m)
{
    return {{"arch", m.arch}, {"layers", m.layers}, {"hidden", m.hidden}, {"heads", m.heads}, {"kv_heads", m.kvHeads},
            {"ffn", m.ffn}, {"seq_len", m.seqLen}, {"vocab", m.vocab}, {"experts", m.moe.experts}};
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

// The maker (rank 0, or each node's first rank: CheckpointWriter::placeOnEveryNode) makes the
// step's ".partial" folder (an earlier failed save's removed); every rank learns whether all could.
// Returns "" or why not.
std::string makePartialDir(HostCommunicator &world, const fs::path &root, const fs::path &partialDir, bool privateFiles, bool maker)
{
    std::int32_t failed = 0;
    std::string error;
    if (maker) {
        std::error_code ec;
        fs::create_directories(root, ec);
        fs::remove_all(partialDir, ec); // leftovers of an earlier failed save
        if (!fs::create_directories(partialDir, ec)) {
            failed = 1;
            error = partialDir.string() + ": cannot be created (" + ec.message() + ")";
        } else if (privateFiles) {
            fs::permissions(partialDir, fs::perms::owner_all, ec);
        }
    }
    failed = world.allReduce(failed, ReduceOp::Max);
    if (failed)
        return !error.empty() ? error : partialDir.string() + ": cannot be created";
    if (!maker) {
        // A host that does not share rank 0's folder (ssh hosts, each with its own run folder):
        // its ranks' shards go into a folder of their own there, gathered by the supervisor.
        std::error_code ec;
        if (!fs::is_directory(partialDir, ec))
            fs::create_directories(partialDir, ec);
    }
    return {};
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
                               const nlohmann::json &meta, mode_t fileMode)
{
    std::error_code ec;
    if (!writeDurably(partialDir / "meta.json.tmp", meta.dump(2) + "\n", fileMode))
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

// Keep the newest `keep` complete checkpoints — and, in a memory store, the one the next node's
// holder confirmed it has a copy of (memory_ring.h: a peer copy always has its twin here).
void removeOldCheckpoints(const fs::path &root, int keep)
{
    std::error_code ec;
    std::vector<fs::path> complete;
    for (const fs::path &dir : stepDirs(root, ec))
        if (fs::exists(dir / "meta.json"))
            complete.push_back(dir);
    std::sort(complete.begin(), complete.end());
    const std::uint64_t acked = ringAcked(root.string());
    const fs::path twin = acked ? root / stepDirName(acked) : fs::path();
    for (std::size_t i = 0; i + static_cast<std::size_t>(keep) < complete.size(); ++i)
        if (complete[i] != twin)
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

CheckpointWriter::CheckpointWriter(bool background, bool privateFiles) : m_background(background), m_privateFiles(privateFiles) {}

CheckpointWriter::~CheckpointWriter()
{
    if (m_thread.joinable())
        m_thread.join(); // an exception's way out: the partial folder stays, ignored by every load
    if (m_completer.joinable())
        m_completer.join();
}

std::string CheckpointWriter::begin(HostCommunicator &world, const std::string &dir, const plan::Plan &plan,
                                    std::uint64_t parameterCount, int keep, std::function<void()> stage, double stagingMs)
{
    if (m_pending)
        return "checkpoint at step " + std::to_string(m_staging.step) + " begun while the save of step " +
               std::to_string(m_step) + " was not finished";
    const auto started = std::chrono::steady_clock::now();
    // The save before put in place first (rank 0's completer: meta.json, the rename, the pruning;
    // done long since, unless the machine or the disk is slow): a save is never put in place after
    // a newer one has begun writing. On a tight disk the newer one's shards took the room the
    // older one's meta.json needed, and the older save failed instead of the newer (seen under
    // load in tst_checkpoint aSaveThatCannotBeWrittenIsSaidAndTrainingGoesOn). Counted in this
    // save's blocking time.
    joinCompleter();
    m_root = dir;
    m_plan = &plan;
    m_parameterCount = parameterCount;
    m_keep = keep;
    m_step = m_staging.step;
    m_rank = world.rank();
    m_worldSize = world.size();
    m_partialDir = m_root / (stepDirName(m_step) + ".partial");
    if (const std::string error = makePartialDir(world, m_root, m_partialDir, m_privateFiles, maker()); !error.empty())
        return error;
    m_pending = true;
    m_begunAt = started;
    m_done = false;
    m_stagedWaitMs = 0;
    m_stagingMs = stagingMs;
    m_stage = std::move(stage);
    {
        std::lock_guard lock(m_stageMutex);
        m_staged = !m_stage;
    }
    if (m_background)
        m_thread = std::thread([this] { writeShard(); });
    else
        writeShard();
    m_blockedMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    return {};
}

// This rank's shard from the staging state into the partial folder (the background thread in
// async mode: file work only, never a collective).
void CheckpointWriter::writeShard()
{
    const auto started = std::chrono::steady_clock::now();
    // Whatever fails here (host memory for the copy or the serialised shard) fails this save
    // alone, as a write that did not happen: finish() says so and the earlier checkpoints stay.
    bool ok = true;
    try {
        if (m_stage)
            m_stage();
    } catch (const std::exception &) {
        ok = false;
    }
    m_stage = nullptr;
    {
        std::lock_guard lock(m_stageMutex);
        m_staged = true;
    }
    m_stageDone.notify_all(); // training may change the live state from here on
    try {
        if (ok) {
            shardBytes(m_staging, m_rank, m_worldSize, m_parameterCount, m_shard);
            ok = writeDurably(m_partialDir / shardName(m_rank), m_shard, m_privateFiles ? 0600 : 0644);
        }
    } catch (const std::exception &) {
        ok = false;
    }
    m_written = ok;
    m_bytes = ok ? m_shard.size() : 0;
    // The whole file's FNV-1a (meta.json's) goes on from the shard's own, its last 8 bytes, over
    // those 8: one pass over the shard instead of two.
    std::uint64_t inner = 0;
    if (ok)
        std::memcpy(&inner, m_shard.data() + m_shard.size() - 8, 8);
    m_checksum = ok ? fnv1a64(m_shard.data() + m_shard.size() - 8, 8, inner) : 0;
    m_writeMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    m_done = true;
}

double CheckpointWriter::waitStaged()
{
    std::unique_lock lock(m_stageMutex);
    if (m_staged)
        return 0;
    const auto started = std::chrono::steady_clock::now();
    m_stageDone.wait(lock, [this] { return m_staged; });
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    m_stagedWaitMs += ms;
    return ms;
}

CheckpointWriter::Outcome CheckpointWriter::land(HostCommunicator &world, bool wait, bool now, std::uint64_t dueStep)
{
    Outcome out;
    if (!m_pending)
        return out;
    const auto started = std::chrono::steady_clock::now();
    if (wait && m_thread.joinable())
        m_thread.join();
    const double waitedMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    // One gather a boundary: whether each rank's write has ended, whether it failed, and what
    // meta.json lists of its shard.
    const bool done = m_done;
    const std::uint64_t mine[4] = {done ? 1U : 0U, done && !m_written ? 1U : 0U, m_bytes, m_checksum};
    const std::vector<std::uint64_t> all = world.allGather(std::span<const std::uint64_t>(mine, 4));
    int failedRank = -1;
    for (int r = 0; r < m_worldSize; ++r) {
        if (all[4 * static_cast<std::size_t>(r)] == 0)
            return out; // still being written somewhere
        if (failedRank < 0 && all[4 * static_cast<std::size_t>(r) + 1] != 0)
            failedRank = r;
    }
    if (m_thread.joinable())
        m_thread.join(); // its work has ended
    m_pending = false;
    out.landed = true;
    out.step = m_step;
    out.dueStep = dueStep;
    out.bytes = m_bytes;
    out.writeMs = m_writeMs;
    out.blockedMs = m_stagingMs + m_blockedMs;
    out.stagedWaitMs = m_stagedWaitMs;
    out.waitedMs = waitedMs;
    if (failedRank >= 0) {
        out.error = failedRank == m_rank ? (m_partialDir / shardName(m_rank)).string() + ": write failed"
                                         : "checkpoint at step " + std::to_string(m_step) + ": rank " + std::to_string(failedRank) +
                                               " failed to write its shard";
        return out;
    }
    if (!maker())
        return out;
    // Rank 0 (each node's first rank) puts the folder in place: meta.json (every shard's size and checksum), the rename,
    // the old checkpoints removed — behind training unless asked for now.
    std::vector<std::uint64_t> files;
    for (int r = 0; r < m_worldSize; ++r) {
        files.push_back(all[4 * static_cast<std::size_t>(r) + 2]);
        files.push_back(all[4 * static_cast<std::size_t>(r) + 3]);
    }
    joinCompleter(); // the one before (a step ago at least)
    m_putting = out;
    m_completerDone = false;
    auto putInPlace = [this, meta = metaJson(*m_plan, m_staging, m_parameterCount, m_worldSize, files), root = m_root,
                       partial = m_partialDir, step = m_step, keep = m_keep, mode = m_privateFiles ? 0600 : 0644] {
        m_putting.error = completeCheckpoint(root, partial, root / stepDirName(step), step, meta, static_cast<mode_t>(mode));
        if (m_putting.error.empty())
            removeOldCheckpoints(root, keep);
        else {
            std::error_code ec;
            fs::remove_all(partial, ec);
        }
        m_completerDone = true;
    };
    if (m_background && !now)
        m_completer = std::thread(std::move(putInPlace));
    else
        putInPlace();
    if (!m_completer.joinable())
        joinCompleter(); // done already: to m_put
    return out;
}

void CheckpointWriter::joinCompleter()
{
    if (m_completer.joinable())
        m_completer.join();
    if (m_completerDone) {
        m_put.push_back(m_putting);
        m_completerDone = false;
    }
}

std::optional<CheckpointWriter::Outcome> CheckpointWriter::completed(bool wait)
{
    if (wait || m_completerDone)
        joinCompleter();
    if (m_put.empty())
        return std::nullopt;
    Outcome out = m_put.front();
    m_put.erase(m_put.begin());
    return out;
}

CheckpointWriter::Outcome CheckpointWriter::finish(HostCommunicator &world)
{
    Outcome out = land(world, true, true);
    joinCompleter();
    return out;
}

void CheckpointWriter::discard(HostCommunicator &world)
{
    if (m_thread.joinable())
        m_thread.join();
    m_pending = false;
    if (maker() && !m_partialDir.empty()) {
        std::error_code ec;
        fs::remove_all(m_partialDir, ec); // what fits of it frees the disk for the next save
    }
    world.hostBarrier(); // the others go on once it is removed
}

LoadResult loadCheckpoint(const std::string &dir, const plan::Plan &plan, std::uint64_t parameterCount,
                          const std::vector<ParamRange> &owned, TrainingState &state, int replica, int rank)
{
    return loadCheckpoint(std::vector<std::string>{dir}, plan, parameterCount, owned, state, replica, rank);
}

LoadResult loadCheckpoint(const std::vector<std::string> &dirs, const plan::Plan &plan, std::uint64_t parameterCount,
                          const std::vector<ParamRange> &owned, TrainingState &state, int replica, int rank)
{
    LoadResult result;
    // Every root's step folders, newest first; of the same step, the earlier root's first.
    std::vector<std::pair<fs::path, int>> candidates;
    for (std::size_t i = 0; i < dirs.size(); ++i) {
        std::error_code ec;
        if (dirs[i].empty() || !fs::is_directory(dirs[i], ec))
            continue;
        for (fs::path &p : stepDirs(dirs[i], ec))
            candidates.emplace_back(std::move(p), static_cast<int>(i));
    }
    std::sort(candidates.begin(), candidates.end(), [](const auto &a, const auto &b) {
        const std::string x = a.first.filename().string(), y = b.first.filename().string();
        return x != y ? x > y : a.second < b.second;
    });

    for (const auto &[cdir, source] : candidates) {
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
        result.source = source;
        return result;
    }
    return result;
}

} // namespace trellis::trainer
