// Rank arithmetic for the device mesh; see mesh.h for the order.
#include "mesh.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>
#include <set>
#include <stdexcept>
#include <string>

namespace trellis::plan {

Mesh::Mesh(const ParallelSpec &p) : m_tp(p.tp), m_cp(p.cp), m_dp(p.dp), m_pp(p.pp) {}

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
    const int size = kind == GroupKind::Tp ? m_tp : kind == GroupKind::Cp ? m_cp : kind == GroupKind::Dp ? m_dp : m_pp;
    for (int i = 0; i < size; ++i) {
        MeshCoordinates c = base;
        (kind == GroupKind::Tp ? c.tp : kind == GroupKind::Cp ? c.cp : kind == GroupKind::Dp ? c.dp : c.pp) = i;
        ranks.push_back(rankOf(c));
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

Diagnostics placementWarnings(const Plan &plan)
{
    Diagnostics d;
    if (plan.parallel.tp <= 1)
        return d;
    Mesh mesh(plan.parallel);
    for (int rank = 0; rank < mesh.worldSize(); rank += plan.parallel.tp) {
        std::set<int> nodes;
        for (int member : mesh.groupOf(rank, GroupKind::Tp))
            nodes.insert(Mesh::nodeOf(member, plan.cluster));
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
