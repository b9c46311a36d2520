// Process groups from the mesh; see process_groups.h.
#include "backend/trainer/comm/process_groups.h"

#include "backend/trainer/comm/collective_tracker.h"

#include "backend/trainer/comm/hierarchical_communicator.h"
#include "backend/trainer/comm/staged_communicator.h"
#if defined(TRELLIS_HAVE_NCCL)
#include "backend/trainer/comm/nccl_communicator.h"
#endif

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
    m_deviceWorld = &world;
    for (plan::GroupKind kind : kGroupKinds) {
        std::vector<int> members = groupMembers(mesh, world.rank(), kind);
        const std::string name = plan::toString(kind);
        if (!members.empty() && name != "world")
            CollectiveTracker::setMembers(name, members); // sent with the waits in it (collective_tracker.h)
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

std::string ProcessGroups::placeOn(Device &device, bool sharedGpu)
{
    if (device.hostAccessible())
        return {}; // MPI reads and writes the tensors where they are
    // Every rank takes part (the same collectives on every rank), with NCCL built in or not.
    [[maybe_unused]] const bool shared = m_world.host().allReduce(std::int32_t(sharedGpu ? 1 : 0), ReduceOp::Max) != 0;
#if defined(TRELLIS_HAVE_NCCL)
    if (!shared) {
        // One world communicator; every group split from it in kGroupKinds' order on every rank
        // (NCCL requires each split to be called by every rank of the parent, in the same order).
        auto ncclWorld = NcclCommunicator::create(m_world, device);
        std::vector<std::pair<MpiCommunicator *, DeviceCommunicator *>> made{{&m_world, ncclWorld.get()}};
        m_all.push_back(ncclWorld.get());
        m_deviceWorld = ncclWorld.get();
        for (plan::GroupKind kind : kGroupKinds) {
            MpiCommunicator *flat = m_groups[index(kind)];
            const auto same = std::find_if(made.begin(), made.end(), [&](const auto &m) { return m.first == flat && flat; });
            if (same != made.end()) {
                m_device[index(kind)] = same->second;
                continue;
            }
            const std::vector<int> &members = m_members[index(kind)];
            const int color = members.empty() ? -1 : members.front();
            const int key = members.empty() ? 0
                                            : static_cast<int>(std::find(members.begin(), members.end(), m_world.rank()) - members.begin());
            auto group = ncclWorld->split(color, key, plan::toString(kind));
            m_device[index(kind)] = group.get();
            if (group) {
                made.emplace_back(flat, group.get());
                m_all.push_back(group.get());
                m_composed.push_back(std::move(group));
            }
        }
        m_composed.push_back(std::move(ncclWorld));
        NcclCommunicator::abortOnTerminate(); // a hang the supervisor decides aborts NCCL's calls
        return "collectives: NCCL, every group split from the world's communicator";
    }
#endif
    // Staged: each distinct group wrapped once (its MPI communicator keeps the records).
    std::vector<std::pair<DeviceCommunicator *, DeviceCommunicator *>> made;
    auto stage = [&](DeviceCommunicator *c) -> DeviceCommunicator * {
        if (!c)
            return nullptr;
        for (const auto &[from, to] : made)
            if (from == c)
                return to;
        m_composed.push_back(std::make_unique<StagedCommunicator>(*c, device));
        made.emplace_back(c, m_composed.back().get());
        return m_composed.back().get();
    };
    m_deviceWorld = stage(m_deviceWorld);
    for (plan::GroupKind kind : kGroupKinds)
        m_device[index(kind)] = stage(m_device[index(kind)]);
#if defined(TRELLIS_HAVE_NCCL)
    return "collectives: MPI staged through pinned host memory (ranks share a GPU: NCCL refuses two ranks of a "
           "communicator on one device)";
#else
    return "collectives: MPI staged through pinned host memory (this build has no NCCL)";
#endif
}

} // namespace trellis::trainer
