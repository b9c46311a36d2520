// Expert parallelism's pieces against the whole model, in one process per rank under mpirun (2
// and 4 ranks, ep = the world), in double precision. Every rank holds its ep shard of a model with
// 4 experts (cut from the whole model by sliceOfWhole) and runs its own batch; the reference is
// the whole model (ep = 1) run on each rank's batch. Checked: each rank's loss and balance loss
// equal the whole model's on its batch; the gradients of everything but the experts equal the
// whole model's on the rank's own batch; an expert's gradients equal the sum over every rank's
// batch (its rows came from all of them); the routing counts agree. Cases: top-2 dropless, top-1
// with a capacity, and a router that sends every token to expert 0 (zero weights: ties go to the
// lowest index) dropless and with a capacity — rank 0 then receives every row and the others
// none, which must still be exact. Prints one line per failure and "N passed, M failed" on rank 0.
#include "backend/trainer/model/gpt_model.h"
#include "backend/trainer/comm/mpi_communicator.h"
#include "backend/trainer/common/rng.h"
#include "tests/support/mpi_checks.h"

#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace trellis;
using namespace trellis::trainer;

namespace {

using test::check;
using test::g_failed;
using test::g_passed;
using test::relative;

struct Batch {
    std::vector<std::int32_t> tokens, targets;
};

Batch batchOf(int rank, int BT)
{
    Rng rng(100 + static_cast<std::uint64_t>(rank));
    Batch b;
    for (int i = 0; i < BT; ++i) {
        b.tokens.push_back(static_cast<std::int32_t>(rng.below(64)));
        b.targets.push_back(static_cast<std::int32_t>(rng.below(64)));
    }
    return b;
}

void run(MpiCommunicator &world, const std::string &name, int topK, int capacity, bool oneExpert, bool llama)
{
    const int ep = world.size(), batch = 2, seq = 8, BT = batch * seq;
    GptConfig whole{64, 8, 2, 16, 4, 32};
    whole.llama = llama;
    whole.experts = 4;
    whole.topK = topK;
    whole.capacity = capacity;
    whole.auxLossCoef = 0.1;
    GptConfig shard = whole;
    shard.ep = ep;
    shard.epRank = world.rank();
    const std::string mode = name + " ep " + std::to_string(ep);

    GptModel<double> dense(whole);
    dense.initialize(11);
    Rng jitter(17); // off the initialisation's special point (zero biases, unit gains)
    for (double &p : dense.parameters())
        p += 0.05 * jitter.normal();
    if (oneExpert)
        for (const ParamTensor &t : dense.tensors())
            if (t.name.ends_with("mlp.router.weight"))
                std::fill_n(dense.parameters().begin() + static_cast<long>(t.offset), t.size, 0.0);
    // The whole model on every rank's batch: this rank's own gradients, and the sum over all.
    std::vector<double> own, all(dense.parameterCount(), 0.0);
    double ownLoss = 0, ownAux = 0;
    ExpertLoad ownLoad;
    for (int r = 0; r < ep; ++r) {
        const Batch b = batchOf(r, BT);
        dense.zeroGradients();
        const double loss = dense.forward(b.tokens.data(), b.targets.data(), batch, seq);
        const double aux = dense.auxLoss();
        dense.backward(1.0);
        const ExpertLoad load = dense.takeExpertLoad();
        for (std::size_t i = 0; i < all.size(); ++i)
            all[i] += dense.gradients()[i];
        if (r == world.rank()) {
            own.assign(dense.gradients().begin(), dense.gradients().end());
            ownLoss = loss;
            ownAux = aux;
            ownLoad = load;
        }
    }
    // What this rank's shard should hold: experts summed over the ranks, the rest its own.
    std::vector<double> expected = own;
    for (std::size_t i = 0; i < dense.tensors().size(); ++i)
        if (dense.isExpert(i))
            for (std::size_t j = dense.tensors()[i].offset; j < dense.tensors()[i].offset + dense.tensors()[i].size; ++j)
                expected[j] = all[j];

    GptModel<double> part(shard);
    part.setExpertParallelGroup(&world, &world);
    const std::vector<double> mine = part.sliceOfWhole(dense.parameters().data());
    std::copy(mine.begin(), mine.end(), part.parameters().begin());
    const Batch b = batchOf(world.rank(), BT);
    part.zeroGradients();
    const double loss = part.forward(b.tokens.data(), b.targets.data(), batch, seq);
    check(world, mode + " loss", std::abs(loss - ownLoss) / std::abs(ownLoss), 1e-12);
    check(world, mode + " balance loss", std::abs(part.auxLoss() - ownAux) / std::abs(ownAux), 1e-12);
    part.backward(1.0);
    const std::vector<double> want = part.sliceOfWhole(expected.data());
    for (std::size_t i = 0; i < part.tensors().size(); ++i) {
        const ParamTensor &t = part.tensors()[i];
        const std::vector<double> got(part.gradients().begin() + static_cast<long>(t.offset),
                                      part.gradients().begin() + static_cast<long>(t.offset + t.size));
        const std::vector<double> ref(want.begin() + static_cast<long>(t.offset), want.begin() + static_cast<long>(t.offset + t.size));
        check(world, mode + " gradient of " + t.name, relative(got, ref), 1e-10);
    }
    const ExpertLoad load = part.takeExpertLoad();
    check(world, mode + " routing counts", load.tokens == ownLoad.tokens && load.dropped == ownLoad.dropped ? 0.0 : 1.0, 0);
    if (oneExpert) { // every choice on expert 0 (top-1), beyond the capacity dropped
        const std::uint64_t perLayer = static_cast<std::uint64_t>(BT) * topK;
        const bool all0 = load.tokens[0] == perLayer && load.tokens[4] == perLayer;
        const std::uint64_t dropped = capacity > 0 ? 2u * static_cast<std::uint64_t>(batch) * (seq - capacity) : 0u;
        check(world, mode + " every token to expert 0", all0 && load.dropped == dropped ? 0.0 : 1.0, 0);
    }
}

} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int failed = 0;
    {
        MpiCommunicator world(MPI_COMM_WORLD, "ep");
        run(world, "top-2 dropless", 2, 0, false, false);
        run(world, "top-1 capacity 3", 1, 3, false, false);
        run(world, "llama top-2 capacity 5", 2, 5, false, true);
        run(world, "every token to one expert, dropless", 1, 0, true, false);
        run(world, "every token to one expert, capacity 3", 1, 3, true, false);
        if (world.rank() == 0)
            std::printf("%d passed, %d failed\n", g_passed, g_failed);
        failed = g_failed;
    }
    MPI_Finalize();
    return failed == 0 ? 0 : 1;
}
