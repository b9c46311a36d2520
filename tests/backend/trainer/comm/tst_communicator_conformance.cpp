// The communicator conformance suite (docs/gpu.md): one set of checks every DeviceCommunicator
// implementation must pass, on its device's memory — every operation, fp32 and bf16, in place and
// not, groups split from the world, ordered point-to-point (several messages between the same two
// ranks, taken in the order they were sent), and asynchronous operations completed out of order
// (the last issued waited for first, others polled with test()). Values are small integers and
// halves, exact in bf16, so every result is checked exactly.
// Implementations: "mpi" (MPI on host memory, the CPU ranks'), "staged" (device memory staged
// through pinned host buffers around MPI) over a trap device whose memory the host may not touch
// outside the device's own copies (tests/support/trap_device.h: a stray access kills the test);
// in the CUDA build also "staged-cuda" and "nccl" on the GPU (scripts/gpu/verify.sh runs those).
// Run under mpirun with 2, 3 and 4 ranks: tst_communicator_conformance [IMPLEMENTATION...]
// (default: every one this build and machine can run). Rank 0 prints failures and the count.
#include "backend/trainer/comm/mpi_communicator.h"
#include "backend/trainer/comm/staged_communicator.h"
#include "backend/trainer/device/buffer.h"
#include "tests/support/mpi_checks.h"
#include "tests/support/trap_device.h"
#if defined(TRELLIS_HAVE_NCCL)
#include "backend/trainer/comm/nccl_communicator.h"
#endif

#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace trellis;
using namespace trellis::trainer;
using test::check;

namespace {

// Element i of rank r's contribution: a small integer, exact in bf16 and in fp32 sums of 4.
float value(int r, std::size_t i) { return static_cast<float>(r + 1 + static_cast<int>(i % 7)); }

// Data on a device: written and read only through the device's copies.
template <typename T>
DeviceBuffer<T> upload(Device &d, const std::vector<float> &host)
{
    std::vector<T> typed(host.size());
    for (std::size_t i = 0; i < host.size(); ++i)
        typed[i] = T(host[i]);
    DeviceBuffer<T> b(d, host.size());
    d.fromHost(b.data(), typed.data(), typed.size() * sizeof(T));
    return b;
}

template <typename T>
std::vector<float> download(Device &d, const T *data, std::size_t n)
{
    std::vector<T> typed(n);
    d.toHost(typed.data(), data, n * sizeof(T));
    std::vector<float> out(n);
    for (std::size_t i = 0; i < n; ++i)
        out[i] = static_cast<float>(typed[i]);
    return out;
}

double worst(const std::vector<float> &got, const std::vector<float> &want)
{
    if (got.size() != want.size())
        return INFINITY;
    double e = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
        e = std::max(e, static_cast<double>(std::abs(got[i] - want[i])));
    return e;
}

std::vector<float> contribution(int rank, std::size_t n, std::size_t offset = 0)
{
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = value(rank, offset + i);
    return v;
}

// Reduced over the group's ranks, elementwise.
float reduced(int ranks, std::size_t i, ReduceOp op)
{
    float sum = 0, max = -INFINITY, min = INFINITY;
    for (int r = 0; r < ranks; ++r) {
        sum += value(r, i);
        max = std::max(max, value(r, i));
        min = std::min(min, value(r, i));
    }
    switch (op) {
    case ReduceOp::Sum: return sum;
    case ReduceOp::Avg: return sum / static_cast<float>(ranks);
    case ReduceOp::Max: return max;
    case ReduceOp::Min: return min;
    }
    return 0;
}

struct Suite {
    DeviceCommunicator &c;   // under test
    HostCommunicator &world; // for the verdicts
    Device &device;
    std::string label;       // "staged bf16", ...

    void verdict(const std::string &what, double error) { check(world, label + " " + c.name() + " " + what, error, 0.0); }

    template <typename T>
    void collectives(std::size_t n)
    {
        const int ranks = c.size(), me = c.rank();
        const std::string count = std::to_string(n);
        for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max, ReduceOp::Min})
            for (bool inPlace : {false, true}) {
                auto send = upload<T>(device, contribution(me, n));
                DeviceBuffer<T> recv(device, inPlace ? 0 : n);
                T *out = inPlace ? send.data() : recv.data();
                c.allReduce(send.data(), out, n, dataTypeOf<T>(), op);
                std::vector<float> want(n);
                for (std::size_t i = 0; i < n; ++i)
                    want[i] = reduced(ranks, i, op);
                verdict("all_reduce " + count + (inPlace ? " in place" : "") + " op " + std::to_string(static_cast<int>(op)),
                        worst(download(device, out, n), want));
            }
        { // reduce-scatter: block `me` of the sum
            auto send = upload<T>(device, contribution(me, n * static_cast<std::size_t>(ranks)));
            DeviceBuffer<T> recv(device, n);
            c.reduceScatter(send.data(), recv.data(), n, dataTypeOf<T>(), ReduceOp::Sum);
            std::vector<float> want(n);
            for (std::size_t i = 0; i < n; ++i)
                want[i] = reduced(ranks, static_cast<std::size_t>(me) * n + i, ReduceOp::Sum);
            verdict("reduce_scatter " + count, worst(download(device, recv.data(), n), want));
        }
        { // all-gather, in place (this rank's block of the output is the input) and not
            for (bool inPlace : {false, true}) {
                const std::vector<float> mine = contribution(me, n, static_cast<std::size_t>(me) * n);
                std::vector<float> want;
                for (int r = 0; r < ranks; ++r) {
                    const auto block = contribution(r, n, static_cast<std::size_t>(r) * n);
                    want.insert(want.end(), block.begin(), block.end());
                }
                std::vector<float> start(want.size(), -1.0f);
                std::copy(mine.begin(), mine.end(), start.begin() + static_cast<long>(static_cast<std::size_t>(me) * n));
                auto out = upload<T>(device, start);
                auto send = upload<T>(device, mine);
                c.allGather(inPlace ? out.data() + static_cast<std::size_t>(me) * n : send.data(), out.data(), n, dataTypeOf<T>());
                verdict(std::string("all_gather ") + count + (inPlace ? " in place" : ""), worst(download(device, out.data(), out.size()), want));
            }
        }
        { // broadcast from the last rank
            auto data = upload<T>(device, contribution(me, n));
            c.broadcast(data.data(), n, dataTypeOf<T>(), ranks - 1);
            verdict("broadcast " + count, worst(download(device, data.data(), n), contribution(ranks - 1, n)));
        }
        { // all-to-all: block j of rank r is r·100 + j·10 + i
            std::vector<float> mine(n * static_cast<std::size_t>(ranks)), want(mine.size());
            for (int j = 0; j < ranks; ++j)
                for (std::size_t i = 0; i < n; ++i) {
                    mine[static_cast<std::size_t>(j) * n + i] = static_cast<float>(me * 8 + j * 2 + static_cast<int>(i % 2));
                    want[static_cast<std::size_t>(j) * n + i] = static_cast<float>(j * 8 + me * 2 + static_cast<int>(i % 2));
                }
            auto send = upload<T>(device, mine);
            DeviceBuffer<T> recv(device, mine.size());
            c.allToAll(send.data(), recv.data(), n, dataTypeOf<T>());
            verdict("all_to_all " + count, worst(download(device, recv.data(), mine.size()), want));
        }
        { // all-to-all with counts: rank r sends j + 1 elements to rank j, each r·8 + j
            std::vector<std::size_t> sendCounts(static_cast<std::size_t>(ranks)), recvCounts(sendCounts.size());
            std::vector<float> mine, want;
            for (int j = 0; j < ranks; ++j) {
                sendCounts[static_cast<std::size_t>(j)] = static_cast<std::size_t>(j + 1);
                recvCounts[static_cast<std::size_t>(j)] = static_cast<std::size_t>(me + 1);
                mine.insert(mine.end(), static_cast<std::size_t>(j + 1), static_cast<float>(me * 8 + j));
                want.insert(want.end(), static_cast<std::size_t>(me + 1), static_cast<float>(j * 8 + me));
            }
            auto send = upload<T>(device, mine);
            DeviceBuffer<T> recv(device, want.size());
            c.allToAllV(send.data(), sendCounts, recv.data(), recvCounts, dataTypeOf<T>());
            verdict("all_to_all_v", worst(download(device, recv.data(), want.size()), want));
        }
    }

    // Three messages to the next rank, received from the previous in the order they were sent
    // (each its own contents): what a pipeline's sends between two stages rely on.
    template <typename T>
    void orderedPointToPoint(std::size_t n)
    {
        const int ranks = c.size(), me = c.rank();
        if (ranks < 2)
            return;
        const int next = (me + 1) % ranks, previous = (me + ranks - 1) % ranks;
        std::vector<DeviceBuffer<T>> out, in;
        std::vector<std::unique_ptr<CommHandle>> handles;
        for (int k = 0; k < 3; ++k) {
            out.push_back(upload<T>(device, std::vector<float>(n, static_cast<float>(me * 4 + k))));
            in.emplace_back(device, n);
        }
        for (int k = 0; k < 3; ++k)
            handles.push_back(c.recvAsync(in[static_cast<std::size_t>(k)].data(), n, dataTypeOf<T>(), previous, 7));
        for (int k = 0; k < 3; ++k)
            handles.push_back(c.sendAsync(out[static_cast<std::size_t>(k)].data(), n, dataTypeOf<T>(), next, 7));
        for (auto &h : handles)
            h->wait();
        double error = 0;
        for (int k = 0; k < 3; ++k)
            error = std::max(error, worst(download(device, in[static_cast<std::size_t>(k)].data(), n),
                                          std::vector<float>(n, static_cast<float>(previous * 4 + k))));
        verdict("send/recv in order", error);
        // And blocking: a ring of one message, even ranks sending first.
        auto a = upload<T>(device, std::vector<float>(n, static_cast<float>(me)));
        DeviceBuffer<T> b(device, n);
        if (me % 2 == 0) {
            c.send(a.data(), n, dataTypeOf<T>(), next, 8);
            c.recv(b.data(), n, dataTypeOf<T>(), previous, 8);
        } else {
            c.recv(b.data(), n, dataTypeOf<T>(), previous, 8);
            c.send(a.data(), n, dataTypeOf<T>(), next, 8);
        }
        verdict("send/recv blocking", worst(download(device, b.data(), n), std::vector<float>(n, static_cast<float>(previous))));
    }

    // Asynchronous all-reduces, reduce-scatters and all-gathers issued together, completed out of
    // order: the last one waited for first, the first polled until done, the rest by destruction.
    template <typename T>
    void asynchronous(std::size_t n)
    {
        const int ranks = c.size(), me = c.rank();
        auto a = upload<T>(device, contribution(me, n));
        auto b = upload<T>(device, contribution(me, n * static_cast<std::size_t>(ranks)));
        DeviceBuffer<T> bOut(device, n);
        auto cIn = upload<T>(device, contribution(me, n, static_cast<std::size_t>(me) * n));
        DeviceBuffer<T> cOut(device, n * static_cast<std::size_t>(ranks));
        auto first = c.allReduceAsync(a.data(), a.data(), n, dataTypeOf<T>(), ReduceOp::Sum);
        auto second = c.reduceScatterAsync(b.data(), bOut.data(), n, dataTypeOf<T>(), ReduceOp::Sum);
        auto third = c.allGatherAsync(cIn.data(), cOut.data(), n, dataTypeOf<T>());
        third->wait();
        while (!first->test()) {
        }
        second.reset(); // completes on destruction
        std::vector<float> wantA(n), wantB(n), wantC;
        for (std::size_t i = 0; i < n; ++i) {
            wantA[i] = reduced(ranks, i, ReduceOp::Sum);
            wantB[i] = reduced(ranks, static_cast<std::size_t>(me) * n + i, ReduceOp::Sum);
        }
        for (int r = 0; r < ranks; ++r) {
            const auto block = contribution(r, n, static_cast<std::size_t>(r) * n);
            wantC.insert(wantC.end(), block.begin(), block.end());
        }
        verdict("async all_reduce (polled)", worst(download(device, a.data(), n), wantA));
        verdict("async reduce_scatter (on destruction)", worst(download(device, bOut.data(), n), wantB));
        verdict("async all_gather (waited first)", worst(download(device, cOut.data(), wantC.size()), wantC));
    }

    template <typename T>
    void all()
    {
        for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(1000)}) {
            collectives<T>(n);
            orderedPointToPoint<T>(n);
            asynchronous<T>(n);
        }
    }
};

// The implementations: for a group of ranks (an MPI communicator on host memory), the device
// communicator under test; `keep` owns what it makes. The group split from the world is the even
// and the odd ranks, in reverse order (a key that is not the rank order).
using Make = std::function<DeviceCommunicator &(MpiCommunicator &group, bool split, std::vector<std::unique_ptr<DeviceCommunicator>> &keep)>;

void runSuite(MpiCommunicator &world, const std::string &name, Device &device, const Make &make)
{
    std::vector<std::unique_ptr<DeviceCommunicator>> keep;
    DeviceCommunicator &whole = make(world, false, keep);
    for (const bool bf : {false, true}) {
        Suite s{whole, world.host(), device, name + (bf ? " bf16" : " fp32")};
        bf ? s.all<kernels::bf16>() : s.all<float>();
    }
    if (world.size() >= 2) {
        auto half = world.split(world.rank() % 2, -world.rank(), world.rank() % 2 ? "odd" : "even");
        DeviceCommunicator &group = make(*half, true, keep);
        // The group's ranks agree on its verdicts among themselves: at an odd world size the
        // groups differ in size, and a group of one has no point-to-point to check.
        Suite s{group, half->host(), device, name + " fp32 (split " + half->name() + ")"};
        s.all<float>();
    }
}

// Staged over `device`: each group's MPI communicator with the device's copies around it.
Make staged(Device &device)
{
    return [&device](MpiCommunicator &group, bool, std::vector<std::unique_ptr<DeviceCommunicator>> &keep) -> DeviceCommunicator & {
        keep.push_back(std::make_unique<StagedCommunicator>(group, device));
        return *keep.back();
    };
}

} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    {
        MpiCommunicator world(MPI_COMM_WORLD, "world");
        std::vector<std::string> wanted(argv + 1, argv + argc);
        if (wanted.empty())
            wanted = {"mpi", "staged"};
        for (const std::string &impl : wanted) {
            if (impl == "mpi") {
                runSuite(world, impl, Device::cpu(),
                         [](MpiCommunicator &group, bool, std::vector<std::unique_ptr<DeviceCommunicator>> &) -> DeviceCommunicator & {
                             return group; // MPI on host memory is the CPU ranks' device communicator
                         });
            } else if (impl == "staged") {
                test::TrapDevice trap;
                runSuite(world, impl, trap, staged(trap));
                if (world.rank() == 0)
                    std::printf("staged: %ld copies through the trap device's own calls, no other access\n", trap.copies());
            }
#if defined(TRELLIS_HAVE_CUDA)
            else if (impl == "staged-cuda") {
                runSuite(world, impl, Device::cuda(0), staged(Device::cuda(0)));
            }
#endif
#if defined(TRELLIS_HAVE_NCCL)
            else if (impl == "nccl") {
                // The world's NCCL communicator, and the group split from it with ncclCommSplit
                // (every rank of the parent in the same order), as ProcessGroups makes them.
                auto ncclWorld = NcclCommunicator::create(world, Device::cuda(0));
                runSuite(world, impl, Device::cuda(0),
                         [&ncclWorld](MpiCommunicator &group, bool split,
                                      std::vector<std::unique_ptr<DeviceCommunicator>> &keep) -> DeviceCommunicator & {
                             if (!split)
                                 return *ncclWorld;
                             keep.push_back(ncclWorld->split(group.rank() >= 0 ? (ncclWorld->rank() % 2) : -1, -ncclWorld->rank(),
                                                              group.name()));
                             return *keep.back();
                         });
            }
#endif
            else {
                if (world.rank() == 0)
                    std::printf("FAIL unknown or unbuilt implementation '%s'\n", impl.c_str());
                ++test::g_failed;
            }
        }
        // Every rank's count of failures (a split group's are its own ranks').
        test::g_failed = static_cast<int>(world.host().allReduce(static_cast<double>(test::g_failed), ReduceOp::Max));
        if (world.rank() == 0)
            std::printf("%d passed, %d failed\n", test::g_passed, test::g_failed);
    }
    MPI_Finalize();
    return test::g_failed == 0 ? 0 : 1;
}
