// Every communicator the trainer makes against plan::Mesh, under a real mpirun with 8 ranks: for
// meshes with context and expert parallelism (which the trainer does not run yet) as well as the
// running kinds, each rank's tp, cp, dp, pp, ep, expert_dp and embedding communicator holds
// exactly the world ranks groupMembers() names (which is the mesh's groupOf), in that order, and
// the pure groupMembers() of every rank of larger meshes agrees with groupOf. Prints
// "N passed, M failed"; exits 1 on any failure.
#include "backend/plan/mesh.h"
#include "backend/trainer/comm/mpi_communicator.h"
#include "backend/trainer/comm/process_groups.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

using namespace trellis;
using namespace trellis::trainer;

namespace {

int g_passed = 0, g_failed = 0;

void report(DeviceCommunicator &world, const std::string &what, bool wrong)
{
    int bad = wrong ? 1 : 0;
    world.allReduce(&bad, &bad, 1, DataType::I32, ReduceOp::Sum);
    if (bad) {
        ++g_failed;
        if (world.rank() == 0)
            std::printf("FAIL %s (%d ranks)\n", what.c_str(), bad);
    } else {
        ++g_passed;
    }
}

plan::ParallelSpec spec(int tp, int cp, int dp, int pp, int ep)
{
    plan::ParallelSpec p;
    p.tp = tp;
    p.cp = cp;
    p.dp = dp;
    p.pp = pp;
    p.ep = ep;
    return p;
}

std::string name(const plan::ParallelSpec &p)
{
    return "tp" + std::to_string(p.tp) + " cp" + std::to_string(p.cp) + " dp" + std::to_string(p.dp) + " pp" +
           std::to_string(p.pp) + " ep" + std::to_string(p.ep);
}

} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    {
        MpiCommunicator world(MPI_COMM_WORLD, "world");
        // Meshes of the world's size (8 when run as ctest has it).
        std::vector<plan::ParallelSpec> meshes;
        for (const auto &p : {spec(2, 2, 2, 1, 2), spec(1, 2, 4, 1, 4), spec(2, 1, 2, 2, 2), spec(1, 2, 2, 2, 2),
                              spec(1, 1, 4, 2, 2), spec(2, 2, 1, 2, 1), spec(1, 1, 8, 1, 4), spec(1, 1, 1, 8, 1)})
            if (p.worldSize() == world.size())
                meshes.push_back(p);
        report(world, "meshes of this world size", meshes.size() < 4);
        for (const auto &p : meshes) {
            const plan::Mesh mesh(p);
            ProcessGroups groups(world, mesh);
            for (plan::GroupKind kind : kGroupKinds) {
                const std::vector<int> want = groupMembers(mesh, world.rank(), kind);
                DeviceCommunicator *group = groups.group(kind);
                bool wrong = want.empty() != (group == nullptr);
                if (group && !want.empty()) {
                    // Which world rank sits at each group rank.
                    std::vector<int> members(static_cast<std::size_t>(group->size()));
                    int me = world.rank();
                    group->allGather(&me, members.data(), 1, DataType::I32);
                    // dp_cp without context parallelism is the dp group itself, recorded as "dp".
                    const std::string named = kind == plan::GroupKind::DpCp && p.cp == 1 ? "dp" : plan::toString(kind);
                    wrong = wrong || members != want || group->name() != named;
                }
                // The mesh itself: groupOf contains the rank (but a middle stage's embedding group).
                const std::vector<int> of = mesh.groupOf(world.rank(), kind);
                const bool member = std::find(of.begin(), of.end(), world.rank()) != of.end();
                wrong = wrong || (member ? of != want : !want.empty());
                report(world, name(p) + " " + plan::toString(kind) + " group", wrong);
            }
        }
        // Pure: every rank of a 4096-rank mesh with cp and ep, against groupOf's definition.
        if (world.rank() == 0) {
            const plan::Mesh big(spec(8, 4, 16, 8, 4));
            long long wrong = 0;
            for (int r = 0; r < big.worldSize(); ++r) {
                const plan::MeshCoordinates c = big.coordinatesOf(r);
                for (int m : groupMembers(big, r, plan::GroupKind::Ep)) {
                    const plan::MeshCoordinates o = big.coordinatesOf(m);
                    wrong += o.tp != c.tp || o.cp != c.cp || o.pp != c.pp || o.dp / 4 != c.dp / 4;
                }
                for (int m : groupMembers(big, r, plan::GroupKind::ExpertDp)) {
                    const plan::MeshCoordinates o = big.coordinatesOf(m);
                    wrong += o.tp != c.tp || o.cp != c.cp || o.pp != c.pp || o.dp % 4 != c.dp % 4;
                }
                for (int m : groupMembers(big, r, plan::GroupKind::Cp)) {
                    const plan::MeshCoordinates o = big.coordinatesOf(m);
                    wrong += o.tp != c.tp || o.dp != c.dp || o.pp != c.pp;
                }
                const auto embedding = groupMembers(big, r, plan::GroupKind::Embedding);
                wrong += (c.pp == 0 || c.pp == 7) ? embedding.size() != 2 : !embedding.empty();
                wrong += groupMembers(big, r, plan::GroupKind::Ep).size() != 4 ||
                         groupMembers(big, r, plan::GroupKind::ExpertDp).size() != 4 ||
                         groupMembers(big, r, plan::GroupKind::Cp).size() != 4;
            }
            if (wrong) {
                ++g_failed;
                std::printf("FAIL 4096-rank mesh: %lld wrong memberships\n", wrong);
            } else {
                ++g_passed;
            }
        }
        world.broadcast(&g_failed, 1, DataType::I32, 0);
        if (world.rank() == 0)
            std::printf("%d passed, %d failed\n", g_passed, g_failed);
    }
    MPI_Finalize();
    return g_failed == 0 ? 0 : 1;
}
