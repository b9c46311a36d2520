// Rank arithmetic for the device mesh; see mesh.h for the order.
#include "backend/plan/mesh.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>
#include <set>
#include <stdexcept>
#include <string>

namespace trellis::plan {

Mesh::Mesh(const ParallelSpec &p) : m_tp(p.tp), m_cp(p.cp), m_dp(p.dp), m_pp(p.pp), m_ep(p.ep > 0 && p.dp % p.ep == 0 ? p.ep : 1)
{
}

const char *toString(GroupKind kind)
{
    switch (kind) {
    case GroupKind::Tp: return "tp";
    case GroupKind::Cp: return "cp";
    case GroupKind::Dp: return "dp";
    case GroupKind::Pp: return "pp";
    case GroupKind::Ep: return "ep";
    case GroupKind::ExpertDp: return "expert_dp";
    case GroupKind::Embedding: return "embedding";
    case GroupKind::DpCp: return "dp_cp";
    }
    return "?";
}

int Mesh::size(GroupKind kind) const
{
    switch (kind) {
    case GroupKind::Tp: return m_tp;
    case GroupKind::Cp: return m_cp;
    case GroupKind::Dp: return m_dp;
    case GroupKind::Pp: return m_pp;
    case GroupKind::Ep: return m_ep;
    case GroupKind::ExpertDp: return m_dp / m_ep;
    case GroupKind::Embedding: return m_pp > 1 ? 2 : 1;
    case GroupKind::DpCp: return m_dp * m_cp;
    }
    return 1;
}

MeshCoordinates Mesh::coordinatesOf(int rank) const
{
    MeshCoordinates c;
    c.tp = rank % m_tp;
    rank /= m_tp;
    c.cp = rank % m_cp;
    rank /= m_cp;
    c.dp = rank % m_dp;
    c.pp = rank / m_dp;
    return c;
}

int Mesh::rankOf(const MeshCoordinates &c) const { return c.tp + m_tp * (c.cp + m_cp * (c.dp + m_dp * c.pp)); }

std::vector<int> Mesh::groupOf(int rank, GroupKind kind) const
{
    const MeshCoordinates base = coordinatesOf(rank);
    std::vector<int> ranks;
    auto with = [&](auto set) {
        MeshCoordinates c = base;
        set(c);
        ranks.push_back(rankOf(c));
    };
    switch (kind) {
    case GroupKind::Tp:
        for (int i = 0; i < m_tp; ++i) with([i](MeshCoordinates &c) { c.tp = i; });
        break;
    case GroupKind::Cp:
        for (int i = 0; i < m_cp; ++i) with([i](MeshCoordinates &c) { c.cp = i; });
        break;
    case GroupKind::Dp:
        for (int i = 0; i < m_dp; ++i) with([i](MeshCoordinates &c) { c.dp = i; });
        break;
    case GroupKind::Pp:
        for (int i = 0; i < m_pp; ++i) with([i](MeshCoordinates &c) { c.pp = i; });
        break;
    case GroupKind::Ep: {
        const int first = base.dp - base.dp % m_ep;
        for (int i = 0; i < m_ep; ++i) with([first, i](MeshCoordinates &c) { c.dp = first + i; });
        break;
    }
    case GroupKind::ExpertDp:
        for (int i = base.dp % m_ep; i < m_dp; i += m_ep) with([i](MeshCoordinates &c) { c.dp = i; });
        break;
    case GroupKind::Embedding:
        with([](MeshCoordinates &c) { c.pp = 0; });
        if (m_pp > 1)
            with([this](MeshCoordinates &c) { c.pp = m_pp - 1; });
        break;
    case GroupKind::DpCp: // cp fastest, as world ranks increase
        for (int d = 0; d < m_dp; ++d)
            for (int i = 0; i < m_cp; ++i) with([d, i](MeshCoordinates &c) { c.dp = d, c.cp = i; });
        break;
    }
    return ranks;
}

int Mesh::nodeOf(int rank, const ClusterSpec &cluster)
{
    int first = 0;
    for (std::size_t i = 0; i < cluster.nodes.size(); ++i) {
        if (rank < first + cluster.nodes[i].slotCount)
            return static_cast<int>(i);
        first += cluster.nodes[i].slotCount;
    }
    return -1;
}

std::vector<std::vector<int>> membersByNode(const std::vector<int> &members, const ClusterSpec &cluster)
{
    // Mesh::nodeOf for every member, by a binary search over the nodes' first ranks: a 16,384-rank
    // group on 2048 nodes is asked about for every plan the planner weighs.
    std::vector<int> starts; // the first rank of each node
    starts.reserve(cluster.nodes.size());
    int total = 0;
    for (const auto &node : cluster.nodes) {
        starts.push_back(total);
        total += node.slotCount;
    }
    const auto nodeOf = [&](int rank) {
        if (rank < 0 || rank >= total)
            return -1;
        // The last node starting at or before the rank (nodes without slots start where the next does).
        return static_cast<int>(std::upper_bound(starts.begin(), starts.end(), rank) - starts.begin()) - 1;
    };
    std::vector<std::vector<int>> byNode;
    std::vector<int> groupOf(cluster.nodes.size() + 1, -1); // by node (the last: no node): its index in byNode
    for (int m : members) {
        const int node = nodeOf(m);
        int &group = groupOf[node < 0 ? cluster.nodes.size() : static_cast<std::size_t>(node)];
        if (group < 0) {
            group = static_cast<int>(byNode.size());
            byNode.push_back({m});
        } else {
            byNode[static_cast<std::size_t>(group)].push_back(m);
        }
    }
    return byNode;
}

std::string whyFlat(const std::vector<std::vector<int>> &byNode)
{
    if (byNode.size() <= 1)
        return "its ranks are on one node";
    for (const auto &node : byNode)
        if (node.size() != byNode.front().size())
            return "its nodes hold different numbers of its ranks (" + std::to_string(byNode.front().size()) + " and " +
                   std::to_string(node.size()) + ")";
    if (byNode.front().size() == 1)
        return "it has one rank on each node";
    return {};
}

Diagnostics placementWarnings(const Plan &plan)
{
    Diagnostics d;
    if (plan.parallel.tp <= 1)
        return d;
    Mesh mesh(plan.parallel);
    // Each rank's node, once (nodeOf per member walks the node list: ranks × nodes at 16k ranks).
    std::vector<int> nodeOfRank(static_cast<std::size_t>(std::max(0, mesh.worldSize())), -1);
    {
        std::size_t rank = 0;
        for (std::size_t node = 0; node < plan.cluster.nodes.size() && rank < nodeOfRank.size(); ++node)
            for (int slot = 0; slot < plan.cluster.nodes[node].slotCount && rank < nodeOfRank.size(); ++slot)
                nodeOfRank[rank++] = static_cast<int>(node);
    }
    for (int rank = 0; rank < mesh.worldSize(); rank += plan.parallel.tp) {
        std::set<int> nodes;
        for (int member : mesh.groupOf(rank, GroupKind::Tp))
            nodes.insert(nodeOfRank[static_cast<std::size_t>(member)]);
        if (nodes.size() > 1) {
            d.push_back({Severity::Warning, "parallel.tp",
                         "the tensor-parallel group of rank " + std::to_string(rank) + " spans " +
                             std::to_string(nodes.size()) + " nodes; its all-reduces leave the node"});
            break;
        }
    }
    return d;
}

static std::vector<int> splitLayers(const ModelSpec &model, int chunks);

std::vector<int> stageLayerBounds(const ModelSpec &model, int chunks)
{
    const int L = model.layers;
    if (chunks < 1 || chunks > L)
        throw std::invalid_argument("stageLayerBounds: need 1 <= chunks <= layers");
    // The planner asks for the same few splits thousands of times: remember them (per thread).
    using Key = std::tuple<int, int, int, int, int, int>;
    thread_local std::map<Key, std::vector<int>> memo;
    const Key key{L, model.hidden, model.ffn, model.seqLen, model.vocab, chunks};
    if (auto it = memo.find(key); it != memo.end())
        return it->second;
    if (memo.size() > 1024)
        memo.clear();
    return memo[key] = splitLayers(model, chunks);
}

static std::vector<int> splitLayers(const ModelSpec &model, int chunks)
{
    const int L = model.layers;
    const double C = model.hidden, F = model.ffn, S = model.seqLen, V = model.vocab;
    const double layer = 4 * C * C + 2 * C * F + 2 * S * C;
    const double head = V * C;
    // best[c][l]: the smallest possible largest cost when chunks 0..c−1 cover layers 0..l−1.
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<std::vector<double>> best(static_cast<std::size_t>(chunks) + 1, std::vector<double>(static_cast<std::size_t>(L) + 1, inf));
    std::vector<std::vector<int>> cut(best.size(), std::vector<int>(static_cast<std::size_t>(L) + 1, 0));
    best[0][0] = 0;
    for (int c = 1; c <= chunks; ++c)
        for (int l = c; l <= L - (chunks - c); ++l)
            for (int from = c - 1; from < l; ++from) {
                const double cost = (l - from) * layer + (c == chunks ? head : 0.0);
                const double worst = std::max(best[c - 1][from], cost);
                // Ties go to the later cut, which leaves fewer layers to the last chunk's head.
                if (worst <= best[c][l]) {
                    best[c][l] = worst;
                    cut[c][l] = from;
                }
            }
    std::vector<int> bounds(static_cast<std::size_t>(chunks) + 1);
    bounds[static_cast<std::size_t>(chunks)] = L;
    for (int c = chunks, l = L; c > 0; --c) {
        l = cut[c][l];
        bounds[static_cast<std::size_t>(c) - 1] = l;
    }
    return bounds;
}

} // namespace trellis::plan
