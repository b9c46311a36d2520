// Every communicator a rank trains with, made from plan::Mesh (the single source of rank ↔ group
// truth that the cost model and the mesh view read too): tp, cp, dp, pp, ep, expert_dp and the
// embedding group (the first and last pipeline stage of a column, which hold the tied
// embedding) and dp_cp (dp × cp: the ranks reducing the same gradients). A group whose members are the whole world and whose name the world already has
// (the world of a purely data-parallel plan is "dp") is the world itself, so its collectives are
// recorded once. Construction is collective over the world. Each group is one MPI communicator
// seen through both interfaces: tensors go through the device one (dp(), tp(), …), host values
// through host(kind) / hostWorld().
// Threading: training thread only.
#pragma once

#include "backend/plan/mesh.h"
#include "backend/trainer/comm/mpi_communicator.h"
#include "backend/trainer/device/device.h"

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace trellis::trainer {

inline constexpr std::array<plan::GroupKind, 8> kGroupKinds{plan::GroupKind::Tp, plan::GroupKind::Cp,
                                                            plan::GroupKind::Dp, plan::GroupKind::Pp,
                                                            plan::GroupKind::Ep, plan::GroupKind::ExpertDp,
                                                            plan::GroupKind::Embedding, plan::GroupKind::DpCp};

// Which group of kind `kind` world rank `rank` joins: its members in group-rank order, or empty
// when the rank joins none (a middle pipeline stage has no embedding group). Pure: tests check it
// against the mesh for every rank without MPI.
std::vector<int> groupMembers(const plan::Mesh &mesh, int rank, plan::GroupKind kind);

class ProcessGroups {
public:
    ProcessGroups(MpiCommunicator &world, const plan::Mesh &mesh);

    DeviceCommunicator &world() { return *m_deviceWorld; }
    HostCommunicator &hostWorld() { return m_world; }
    // parallel.allreduce hierarchical: every group whose ranks sit on several of the cluster's
    // nodes, the same number (two or more) on each, all-reduces its tensors over a node group and
    // an inter-node group split from it (HierarchicalCommunicator); the others stay flat.
    // Collective over the world. Returns a line per kind saying which it did, for the log.
    std::vector<std::string> composeHierarchical(const plan::ClusterSpec &cluster);
    // The rank's tensors live on `device`. Where the host cannot touch its memory (a GPU), every
    // group's device communicator becomes NCCL — split from one world communicator, in the
    // groups' order on every rank — when this build has NCCL and no two ranks of a host share a
    // GPU (`sharedGpu` false on every rank, agreed over the world), else MPI staged through the
    // device's pinned memory (StagedCommunicator). Collective over the world. Returns a line for
    // the log: which it chose and why.
    std::string placeOn(Device &device, bool sharedGpu);

    // The group of that kind; nullptr only for the embedding group of a middle stage.
    DeviceCommunicator *group(plan::GroupKind kind) { return m_device[index(kind)]; }
    // Host values over the group of that kind (null where group(kind) is).
    HostCommunicator *host(plan::GroupKind kind) { return m_groups[index(kind)]; }
    DeviceCommunicator &tp() { return *group(plan::GroupKind::Tp); }
    DeviceCommunicator &cp() { return *group(plan::GroupKind::Cp); }
    DeviceCommunicator &dp() { return *group(plan::GroupKind::Dp); }
    DeviceCommunicator &pp() { return *group(plan::GroupKind::Pp); }
    DeviceCommunicator &ep() { return *group(plan::GroupKind::Ep); }
    DeviceCommunicator &expertDp() { return *group(plan::GroupKind::ExpertDp); }
    DeviceCommunicator *embedding() { return group(plan::GroupKind::Embedding); }
    // The gradient replicas: dp × cp ranks (the dp group itself when cp = 1).
    DeviceCommunicator &dpCp() { return *group(plan::GroupKind::DpCp); }
    const std::vector<int> &members(plan::GroupKind kind) const { return m_members[index(kind)]; }

    // Every distinct communicator, the world first: what telemetry takes records from and
    // sums blocking time over.
    const std::vector<DeviceCommunicator *> &all() const { return m_all; }

private:
    static std::size_t index(plan::GroupKind kind) { return static_cast<std::size_t>(kind); }

    MpiCommunicator &m_world;
    DeviceCommunicator *m_deviceWorld = nullptr; // the world's device communicator: m_world, or its staged or NCCL form
    std::vector<std::unique_ptr<MpiCommunicator>> m_owned;
    std::array<MpiCommunicator *, kGroupKinds.size()> m_groups{};
    std::array<DeviceCommunicator *, kGroupKinds.size()> m_device{}; // m_groups', or their hierarchical form
    std::vector<std::unique_ptr<DeviceCommunicator>> m_composed;
    std::array<std::vector<int>, kGroupKinds.size()> m_members;
    std::vector<DeviceCommunicator *> m_all;
};

} // namespace trellis::trainer
