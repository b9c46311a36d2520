// See memory_restore.h.
#include "backend/trainer/checkpoint/memory_restore.h"

#include "backend/trainer/checkpoint/checkpoint.h"
#include "backend/trainer/checkpoint/memory_ring.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <vector>

namespace trellis::trainer {
namespace fs = std::filesystem;
namespace {

constexpr int kTag = 4242;
constexpr std::int64_t kMeta = -1, kShards = -2; // an entry's "rank" for meta.json and for the shard count
enum Where : std::int64_t { Own = 0, Peer = 1 };

struct Entry {
    std::int64_t step, rank, value; // value: Where, or the shard count for kShards
};

// What one folder of complete steps (own, or peer/) holds: for each step with a readable
// meta.json, that meta, the number of shards it lists and each listed shard present at its size.
void inventory(const fs::path &root, Where where, std::vector<Entry> &entries)
{
    static const std::regex stepName("step-([0-9]{8,18})"), shard("rank-([0-9]{5,9})\\.bin");
    std::error_code ec;
    for (const auto &dir : fs::directory_iterator(root, ec)) {
        std::smatch m;
        const std::string name = dir.path().filename().string();
        if (!dir.is_directory(ec) || !std::regex_match(name, m, stepName))
            continue;
        const std::int64_t step = std::stoll(m[1].str());
        nlohmann::json meta;
        try {
            meta = nlohmann::json::parse(readFile(dir.path() / "meta.json"));
        } catch (const std::exception &) {
            continue; // incomplete (or damaged: loadCheckpoint says so when it meets it)
        }
        if (!meta.contains("files") || !meta["files"].is_array())
            continue;
        entries.push_back({step, kMeta, where});
        entries.push_back({step, kShards, static_cast<std::int64_t>(meta["files"].size())});
        for (const auto &file : meta["files"]) {
            const std::string shardFile = file.value("name", "");
            std::smatch r;
            if (!std::regex_match(shardFile, r, shard))
                continue;
            if (fs::file_size(dir.path() / shardFile, ec) == file.value("bytes", std::uint64_t(0)) && !ec)
                entries.push_back({step, std::stoll(r[1].str()), where});
        }
    }
}

struct Transfer {
    int to, from;     // leaders (world ranks); from == to: a copy from the node's own peer/
    std::string file; // a shard's name or meta.json
    Where where;      // where `from` holds it
};

// What every node's first rank holds, as all ranks learn it (collective).
struct Holdings {
    std::vector<int> leaders; // world ranks, ascending
    std::map<int, std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>>> held; // leader -> (step, rank, where)
    std::map<std::int64_t, std::int64_t> shardCount; // step -> shards its meta.json lists
    std::set<std::int64_t> inconsistent;             // steps whose meta.json lists differ between nodes

    bool has(int leader, std::int64_t step, std::int64_t rank, Where w) const
    {
        const auto it = held.find(leader);
        return it != held.end() && it->second.count({step, rank, w}) > 0;
    }
};

Holdings gatherHoldings(HostCommunicator &host, bool leader, const std::string &store)
{
    std::vector<Entry> mine;
    if (leader) {
        inventory(store, Own, mine);
        inventory(fs::path(store) / kRingPeerFolder, Peer, mine);
    }
    // Everyone's entries: the counts (a leader's one more than its entries, so that a leader with
    // an empty store still counts), then the entries padded to the longest.
    const std::vector<std::int64_t> counts = host.allGather(static_cast<std::int64_t>(leader ? mine.size() + 1 : 0));
    const std::int64_t most = *std::max_element(counts.begin(), counts.end());
    std::vector<std::int64_t> flat(static_cast<std::size_t>(most) * 3, -9);
    for (std::size_t i = 0; leader && i < mine.size(); ++i) {
        flat[3 * (i + 1)] = mine[i].step;
        flat[3 * (i + 1) + 1] = mine[i].rank;
        flat[3 * (i + 1) + 2] = mine[i].value;
    }
    const std::vector<std::int64_t> all = host.allGather(std::span<const std::int64_t>(flat));
    Holdings h;
    for (int r = 0; r < static_cast<int>(counts.size()); ++r) {
        if (counts[static_cast<std::size_t>(r)] == 0)
            continue;
        h.leaders.push_back(r);
        for (std::int64_t i = 1; i < counts[static_cast<std::size_t>(r)]; ++i) {
            const std::size_t at = (static_cast<std::size_t>(r) * static_cast<std::size_t>(most) + static_cast<std::size_t>(i)) * 3;
            const Entry e{all[at], all[at + 1], all[at + 2]};
            if (e.rank != kShards) {
                h.held[r].insert({e.step, e.rank, e.value});
                continue;
            }
            if (h.shardCount.count(e.step) && h.shardCount[e.step] != e.value)
                h.inconsistent.insert(e.step);
            h.shardCount[e.step] = e.value;
        }
    }
    return h;
}

// The newest step whose meta.json and every shard are somewhere (0: none).
std::uint64_t newestWhole(const Holdings &h)
{
    for (auto it = h.shardCount.rbegin(); it != h.shardCount.rend(); ++it) {
        const auto [step, shards] = *it;
        if (h.inconsistent.count(step) || shards <= 0)
            continue;
        bool whole = true;
        for (std::int64_t r = 0; r < shards && whole; ++r)
            whole = std::any_of(h.leaders.begin(), h.leaders.end(), [&](int l) { return h.has(l, step, r, Own) || h.has(l, step, r, Peer); });
        if (whole)
            return static_cast<std::uint64_t>(step);
    }
    return 0;
}

// What each node lacks of step S and where from: another node's own copy first, else a peer copy
// (its own node's too). Every rank computes the same list, in the same order.
std::vector<Transfer> planTransfers(const Holdings &h, std::int64_t S)
{
    std::vector<Transfer> plan;
    for (int l : h.leaders) {
        auto source = [&](std::int64_t rank) -> std::pair<int, Where> {
            for (int q : h.leaders)
                if (q != l && h.has(q, S, rank, Own))
                    return {q, Own};
            for (int q : h.leaders)
                if (h.has(q, S, rank, Peer))
                    return {q, Peer};
            return {-1, Own};
        };
        for (std::int64_t r = 0; r < h.shardCount.at(S); ++r)
            if (!h.has(l, S, r, Own))
                if (const auto [q, w] = source(r); q >= 0)
                    plan.push_back({l, q, shardName(static_cast<int>(r)), w});
        if (!h.has(l, S, kMeta, Own))
            if (const auto [q, w] = source(kMeta); q >= 0)
                plan.push_back({l, q, "meta.json", w}); // last: the folder is complete once it is there
    }
    return plan;
}

// The transfers this rank takes part in: a file sent (its size, then its bytes as 8-byte words) or
// received into `target`, or copied from the node's own peer/.
void runTransfers(MpiCommunicator &world, const std::vector<Transfer> &plan, const std::string &store, std::uint64_t step,
                  const fs::path &target)
{
    const int me = world.rank();
    for (const Transfer &t : plan) {
        if (t.from != me && t.to != me)
            continue;
        const fs::path source = (t.where == Peer ? fs::path(store) / kRingPeerFolder : fs::path(store)) / stepDirName(step) / t.file;
        if (t.from == me && t.to == me) {
            writeDurably(target / t.file, readFile(source), 0600);
        } else if (t.from == me) {
            std::string bytes = readFile(source);
            const std::int64_t size = static_cast<std::int64_t>(bytes.size());
            world.send(&size, 1, DataType::I64, t.to, kTag);
            bytes.resize((bytes.size() + 7) / 8 * 8);
            world.send(bytes.data(), bytes.size() / 8, DataType::I64, t.to, kTag);
        } else {
            std::int64_t size = 0;
            world.recv(&size, 1, DataType::I64, t.from, kTag);
            std::string bytes((static_cast<std::size_t>(size) + 7) / 8 * 8, '\0');
            world.recv(bytes.data(), bytes.size() / 8, DataType::I64, t.from, kTag);
            bytes.resize(static_cast<std::size_t>(size));
            writeDurably(target / t.file, bytes, 0600);
        }
    }
}

} // namespace

MemoryRestore gatherMemoryCheckpoint(MpiCommunicator &world, bool leader, const std::string &store)
{
    HostCommunicator &host = world.host();
    const Holdings holdings = gatherHoldings(host, leader, store);
    MemoryRestore out;
    out.step = newestWhole(holdings);
    if (out.step == 0) {
        host.hostBarrier();
        return out;
    }
    const std::vector<Transfer> plan = planTransfers(holdings, static_cast<std::int64_t>(out.step));
    for (const Transfer &t : plan) {
        out.fromOtherNodes += t.from != t.to;
        out.fromPeerCopies += t.where == Peer;
    }
    // A node's own folder of the step takes what it lacks; a node without one gathers it aside and
    // puts it in place once meta.json is there.
    const fs::path own = fs::path(store) / stepDirName(out.step);
    const fs::path gathering = fs::path(store) / (stepDirName(out.step) + ".gathering");
    std::error_code ec;
    const bool into = leader && fs::is_directory(own, ec);
    if (leader && !into) {
        fs::remove_all(gathering, ec);
        fs::create_directories(gathering, ec);
        fs::permissions(gathering, fs::perms::owner_all, ec);
    }
    runTransfers(world, plan, store, out.step, into ? own : gathering);
    if (leader) {
        if (!into && fs::exists(gathering / "meta.json", ec))
            fs::rename(gathering, own, ec);
        fs::remove_all(gathering, ec);
        for (const auto &dir : fs::directory_iterator(store, ec)) { // newer ones no restart can use
            const std::string name = dir.path().filename().string();
            if (name.rfind("step-", 0) == 0 && name > stepDirName(out.step))
                fs::remove_all(dir.path(), ec);
        }
    }
    host.hostBarrier(); // every node's store whole before any rank reads it
    return out;
}

} // namespace trellis::trainer
