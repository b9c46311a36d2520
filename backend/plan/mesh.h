// The device mesh: rank <-> (tp, cp, dp, pp) coordinates and the process groups derived from
// them. Single source of truth for the trainer, the cost model and the mesh view. Rank order is
// rank = tp + TP·(cp + CP·(dp + DP·pp)), so tensor-parallel groups stay inside a node. Expert
// parallelism folds inside dp (Megatron-LM's layout): an ep group is ep consecutive dp
// coordinates, and the ranks holding the same experts (the same dp mod ep) form the expert
// data-parallel group that reduces the experts' gradients.
#pragma once

#include "backend/plan/plan.h"
#include "backend/plan/result.h"

#include <string>
#include <vector>

namespace trellis::plan {

struct MeshCoordinates {
    int tp = 0;
    int cp = 0;
    int dp = 0;
    int pp = 0;
    bool operator==(const MeshCoordinates &) const = default;
};

enum class GroupKind {
    Tp,
    Cp,
    Dp,
    Pp,
    Ep,        // dp coordinates dp − dp mod ep … + ep − 1: the ranks that split the experts
    ExpertDp,  // dp coordinates with the same dp mod ep: the replicas of the same experts
    Embedding, // pp 0 and pp − 1 (one rank without a pipeline): the two copies of the tied embedding
    DpCp,      // every dp and cp coordinate: the replicas that reduce (and ZeRO-shard) the gradients;
               // the dp group itself when cp = 1 (Megatron-LM's data-parallel group with context parallelism)
};
const char *toString(GroupKind kind); // "tp", "cp", "dp", "pp", "ep", "expert_dp", "embedding", "dp_cp"

class Mesh {
public:
    explicit Mesh(const ParallelSpec &parallel);

    int worldSize() const { return m_tp * m_cp * m_dp * m_pp; }
    int size(GroupKind kind) const;
    MeshCoordinates coordinatesOf(int rank) const;
    int rankOf(const MeshCoordinates &c) const;
    // The ranks sharing every coordinate with `rank` except the group's own, in increasing order.
    std::vector<int> groupOf(int rank, GroupKind kind) const;
    // Node index of `rank` when ranks fill the cluster's nodes in order.
    static int nodeOf(int rank, const ClusterSpec &cluster);

private:
    int m_tp, m_cp, m_dp, m_pp, m_ep;
};

// A group's members split by the node each is on (Mesh::nodeOf), in the order the nodes first
// appear; members the cluster does not place (no nodes listed) count as one node.
std::vector<std::vector<int>> membersByNode(const std::vector<int> &members, const ClusterSpec &cluster);
// Why a hierarchical all-reduce over `members` is the flat one ("" when it is hierarchical: two
// or more nodes with the same number of members on each).
std::string whyFlat(const std::vector<std::vector<int>> &byNode);

// Pipeline partition: layer bounds of `chunks` contiguous model chunks (size chunks + 1; chunk c
// runs layers [b[c], b[c+1])), each with at least one layer. The first chunk also runs the
// embeddings and the last the final norm and the output head; the split minimises the largest
// chunk's forward cost, counted per token as 4C² + 2CF + 2SC multiply-adds a layer and VC for the
// head. Needs 1 <= chunks <= model.layers.
std::vector<int> stageLayerBounds(const ModelSpec &model, int chunks);

// Warnings for groups that leave a node although they need the fastest links (TP groups).
Diagnostics placementWarnings(const Plan &plan);

} // namespace trellis::plan
