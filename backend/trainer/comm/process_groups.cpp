// Process groups from the mesh; see process_groups.h.
#include "trainer/comm/process_groups.h"

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
        m_members[index(kind)] = std::move(members);
    }
}

} // namespace trellis::trainer
