// Process groups from the mesh; see process_groups.h.
#include "backend/trainer/comm/process_groups.h"

#include "backend/trainer/comm/hierarchical_communicator.h"

#include <algorithm>
#include <stdexcept>

namespace trellis::trainer {

std::vector<int> groupMembers(const plan::Mesh &mesh, int rank, plan::GroupKind kind)
{
    std::vector<int> members = mesh.groupOf(rank, kind);
    if (std::find(members.begin(), members.end(), rank) == members.end())
        return {};
    return members;
}

ProcessGroups::ProcessGroups(MpiCommunicator &world, const plan::Mesh &mesh) : m_world(world)
{
    if (world.size() != mesh.worldSize())
        throw std::invalid_argument("ProcessGroups: the world has " + std::to_string(world.size()) +
                                    " ranks, the mesh " + std::to_string(mesh.worldSize()));
    m_all.push_back(&world);
    for (plan::GroupKind kind : kGroupKinds) {
        std::vector<int> members = groupMembers(mesh, world.rank(), kind);
        const std::string name = plan::toString(kind);
        MpiCommunicator *group = nullptr;
        if (static_cast<int>(members.size()) == world.size() && world.name() == name) {
            group = &world; // the world is this group already (every rank takes this branch alike)
        } else if (kind == plan::GroupKind::DpCp && members == m_members[index(plan::GroupKind::Dp)]) {
            group = m_groups[index(plan::GroupKind::Dp)]; // cp = 1: the dp group itself, recorded as "dp"
        } else {
            // Colour: the group's first world rank, unique per group; key: the position in it.
            const int color = members.empty() ? -1 : members.front();
            const int key = members.empty() ? 0
                                            : static_cast<int>(std::find(members.begin(), members.end(), world.rank()) -
                                                               members.begin());
            m_owned.push_back(world.split(color, key, name));
            group = m_owned.back().get();
            if (group)
                m_all.push_back(group);
        }
        if (group && (group->size() != static_cast<int>(members.size())))
            throw std::logic_error("ProcessGroups: the " + name + " group has " + std::to_string(group->size()) +
                                   " ranks, the mesh says " + std::to_string(members.size()));
        m_groups[index(kind)] = group;
        m_device[index(kind)] = group;
        m_members[index(kind)] = std::move(members);
    }
}

std::vector<std::string> ProcessGroups::composeHierarchical(const plan::ClusterSpec &cluster)
{
    std::vector<std::string> lines;
    std::vector<std::pair<MpiCommunicator *, DeviceCommunicator *>> done; // a group shared by two kinds: composed once
    for (plan::GroupKind kind : kGroupKinds) {
        MpiCommunicator *flat = m_groups[index(kind)];
        const std::vector<int> &members = m_members[index(kind)];
        // Every member of a group decides alike (the same members, the same cluster), so the
        // splits below are made by all of them or none.
        if (!flat || members.size() <= 1)
            continue;
        const auto shared = std::find_if(done.begin(), done.end(), [&](const auto &d) { return d.first == flat; });
        if (shared != done.end()) {
            m_device[index(kind)] = shared->second;
            continue;
        }
        const auto byNode = plan::membersByNode(members, cluster);
        const std::string why = plan::whyFlat(byNode);
        const std::string name = plan::toString(kind);
        if (!why.empty()) {
            lines.push_back(name + ": flat (" + why + ")");
            continue;
        }
        int node = 0, position = 0;
        for (std::size_t n = 0; n < byNode.size(); ++n)
            for (std::size_t i = 0; i < byNode[n].size(); ++i)
                if (byNode[n][i] == m_world.rank()) {
                    node = static_cast<int>(n);
                    position = static_cast<int>(i);
                }
        auto inside = flat->split(node, position, name + ".node");
        auto across = flat->split(position, node, name + ".nodes");
        m_all.push_back(inside.get());
        m_all.push_back(across.get());
        m_composed.push_back(std::make_unique<HierarchicalCommunicator>(*flat, std::move(inside), std::move(across)));
        m_device[index(kind)] = m_composed.back().get();
        done.emplace_back(flat, m_composed.back().get());
        lines.push_back(name + ": hierarchical, " + std::to_string(byNode.front().size()) + " ranks on each of " +
                        std::to_string(byNode.size()) + " nodes");
    }
    return lines;
}

} // namespace trellis::trainer
