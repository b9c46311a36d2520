// Correctness sweep of the MPI communicator, in the style of nccl-tests: every operation × sizes
// (0, 1, odd, not divisible by the rank count, up to 64 MiB) × in-place and out-of-place ×
// integer and float data, on the world and on sub-groups. Integers are checked exactly, floats to
// fp32 round-off. Run under mpirun with 2, 3 and 4 ranks. Every case counts its wrong elements
// and all ranks agree on the count (so a failure on one rank cannot leave the others waiting);
// rank 0 prints one line per failure and "N passed, M failed" at the end. With 4 ranks the world
// is also swept as a hierarchical group of two nodes of two (parallel.allreduce hierarchical).
// Last, a rank waiting for a late peer must not spin (its CPU time over the wait).
#include "backend/trainer/comm/hierarchical_communicator.h"
#include "backend/trainer/comm/mpi_communicator.h"

#include <mpi.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using namespace trellis::trainer;

namespace {

int g_passed = 0, g_failed = 0;

// Deterministic value of element i contributed by rank r (small integers: exact in float too).
double value(int r, std::size_t i) { return static_cast<double>((r * 7 + static_cast<int>(i % 97) * 3) % 50) - 20; }
// A float value with a fractional part, for round-off checks.
double fvalue(int r, std::size_t i) { return std::sin(0.001 * static_cast<double>(i) + r) * 3.0; }

template <typename T>
void fill(std::vector<T> &v, int rank, std::size_t offset, bool fractional)
{
    for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<T>(fractional ? fvalue(rank, offset + i) : value(rank, offset + i));
}

template <typename T>
bool close(T got, double want, int ranks)
{
    if constexpr (std::is_integral_v<T>)
        return static_cast<double>(got) == want;
    else
        return std::abs(static_cast<double>(got) - want) <= 1e-6 * ranks * (1.0 + std::abs(want));
}

void report(DeviceCommunicator &c, const std::string &name, long long wrong)
{
    long long total = wrong;
    auto *mpi = dynamic_cast<MpiCommunicator *>(&c); // a HierarchicalCommunicator spans the world here
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG_LONG, MPI_SUM, mpi ? mpi->handle() : MPI_COMM_WORLD);
    int worldRank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
    if (total == 0) {
        ++g_passed;
    } else {
        ++g_failed;
        if (c.rank() == 0)
            std::printf("FAIL %s [%s, %d ranks, world rank %d]: %lld wrong elements\n", name.c_str(), c.name().c_str(),
                        c.size(), worldRank, total);
    }
}

template <typename T>
DataType typeOf()
{
    if constexpr (std::is_same_v<T, float>) return DataType::F32;
    else if constexpr (std::is_same_v<T, double>) return DataType::F64;
    else if constexpr (std::is_same_v<T, std::int32_t>) return DataType::I32;
    else return DataType::I64;
}

template <typename T>
void sweep(DeviceCommunicator &c, const std::vector<std::size_t> &sizes, bool fractional)
{
    const int n = c.size(), me = c.rank();
    const DataType type = typeOf<T>();
    const std::string tn = toString(type);
    for (std::size_t count : sizes) {
        for (bool inPlace : {false, true}) {
            for (bool async : {false, true}) {
                for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Avg}) {
                    if (op == ReduceOp::Avg && std::is_integral_v<T>)
                        continue;
                    // all-reduce
                    std::vector<T> send(count), recv(count);
                    fill(send, me, 0, fractional);
                    T *out = inPlace ? send.data() : recv.data();
                    if (async)
                        c.allReduceAsync(send.data(), out, count, type, op)->wait();
                    else
                        c.allReduce(send.data(), out, count, type, op);
                    long long wrong = 0;
                    for (std::size_t i = 0; i < count; ++i) {
                        double want = 0;
                        for (int r = 0; r < n; ++r)
                            want += fractional ? fvalue(r, i) : value(r, i);
                        if (op == ReduceOp::Avg)
                            want /= n;
                        wrong += !close(out[i], want, n);
                    }
                    const std::string mode = std::string(inPlace ? " in-place" : " out-of-place") + (async ? " async" : "") +
                                             (op == ReduceOp::Avg ? " avg" : " sum");
                    report(c, "all_reduce " + tn + " " + std::to_string(count) + mode, wrong);

                    // reduce-scatter: count elements per rank
                    std::vector<T> full(count * n), block(count);
                    fill(full, me, 0, fractional);
                    T *rsOut = inPlace ? full.data() + static_cast<std::size_t>(me) * count : block.data();
                    if (async)
                        c.reduceScatterAsync(full.data(), inPlace ? full.data() : block.data(), count, type, op)->wait();
                    else
                        c.reduceScatter(full.data(), inPlace ? full.data() : block.data(), count, type, op);
                    wrong = 0;
                    for (std::size_t i = 0; i < count; ++i) {
                        const std::size_t g = static_cast<std::size_t>(me) * count + i;
                        double want = 0;
                        for (int r = 0; r < n; ++r)
                            want += fractional ? fvalue(r, g) : value(r, g);
                        if (op == ReduceOp::Avg)
                            want /= n;
                        wrong += !close(rsOut[i], want, n);
                    }
                    report(c, "reduce_scatter " + tn + " " + std::to_string(count) + mode, wrong);
                }
                const std::string mode = std::string(inPlace ? " in-place" : " out-of-place") + (async ? " async" : "");

                // all-gather: count elements from each rank
                std::vector<T> mine(count), gathered(count * n);
                fill(mine, me, static_cast<std::size_t>(me) * count, false);
                if (inPlace)
                    std::copy(mine.begin(), mine.end(), gathered.begin() + static_cast<long>(me * count));
                const T *agSend = inPlace ? gathered.data() + static_cast<std::size_t>(me) * count : mine.data();
                if (async)
                    c.allGatherAsync(agSend, gathered.data(), count, type)->wait();
                else
                    c.allGather(agSend, gathered.data(), count, type);
                long long wrong = 0;
                for (int r = 0; r < n; ++r)
                    for (std::size_t i = 0; i < count; ++i)
                        wrong += !close(gathered[static_cast<std::size_t>(r) * count + i],
                                        value(r, static_cast<std::size_t>(r) * count + i), n);
                report(c, "all_gather " + tn + " " + std::to_string(count) + mode, wrong);

                if (async)
                    continue; // the remaining operations have no asynchronous form to check
                // broadcast from the last rank
                std::vector<T> b(count);
                fill(b, me, 0, false);
                c.broadcast(b.data(), count, type, n - 1);
                wrong = 0;
                for (std::size_t i = 0; i < count; ++i)
                    wrong += !close(b[i], value(n - 1, i), n);
                report(c, "broadcast " + tn + " " + std::to_string(count) + mode, wrong);

                // all-to-all: block j of rank r holds value(r, j·count + i)
                std::vector<T> a2a(count * n), a2aOut(count * n);
                fill(a2a, me, 0, false);
                T *a2aRecv = inPlace ? a2a.data() : a2aOut.data();
                c.allToAll(a2a.data(), a2aRecv, count, type);
                wrong = 0;
                for (int r = 0; r < n; ++r)
                    for (std::size_t i = 0; i < count; ++i)
                        wrong += !close(a2aRecv[static_cast<std::size_t>(r) * count + i],
                                        value(r, static_cast<std::size_t>(me) * count + i), n);
                report(c, "all_to_all " + tn + " " + std::to_string(count) + mode, wrong);
            }
        }
        // send/recv around a ring (asynchronous receive, blocking send, to avoid deadlock)
        std::vector<T> out(count), in(count);
        fill(out, me, 0, false);
        auto pending = c.recvAsync(in.data(), count, type, (me + n - 1) % n, 7);
        c.send(out.data(), count, type, (me + 1) % n, 7);
        pending->wait();
        long long wrong = 0;
        for (std::size_t i = 0; i < count; ++i)
            wrong += !close(in[i], value((me + n - 1) % n, i), n);
        report(c, "send/recv ring " + tn + " " + std::to_string(count), wrong);
    }
}

} // namespace

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    {
        MpiCommunicator world(MPI_COMM_WORLD, "world");
        const std::vector<std::size_t> small = {0, 1, 7, 1023, 100003};
        sweep<std::int32_t>(world, small, false);
        sweep<std::int64_t>(world, {0, 1, 7, 1001}, false);
        sweep<float>(world, small, true);
        sweep<double>(world, {0, 1, 7, 1001}, true);
        // 64 MiB of fp32 per buffer: all-reduce only, in place and out of place.
        const std::size_t big = 16u << 20;
        for (bool inPlace : {false, true}) {
            std::vector<float> send(big), recv(inPlace ? 0 : big);
            fill(send, world.rank(), 0, false);
            float *out = inPlace ? send.data() : recv.data();
            world.allReduce(send.data(), out, big, DataType::F32, ReduceOp::Sum);
            long long wrong = 0;
            for (std::size_t i = 0; i < big; ++i) {
                double want = 0;
                for (int r = 0; r < world.size(); ++r)
                    want += value(r, i);
                wrong += out[i] != static_cast<float>(want);
            }
            report(world, std::string("all_reduce f32 64MiB") + (inPlace ? " in-place" : " out-of-place"), wrong);
        }
        // Sub-groups: even and odd ranks, ordered in reverse to check the key.
        if (world.size() >= 2) {
            auto group = world.split(world.rank() % 2, -world.rank(), world.rank() % 2 ? "odd" : "even");
            sweep<std::int32_t>(*group, {0, 1, 7, 1023}, false);
            sweep<float>(*group, {1, 7, 1023}, true);
            int expectedRank = 0;
            for (int r = world.size() - 1; r > world.rank(); --r)
                expectedRank += (r % 2 == world.rank() % 2);
            report(world, "split orders ranks by key", group->rank() != expectedRank);
        }
        // parallel.allreduce hierarchical: the world as nodes of two ranks (4 ranks: 2 nodes of 2),
        // every all-reduce in three steps; the sweep's sums and averages as for the flat group.
        if (world.size() >= 4 && world.size() % 2 == 0) {
            const int node = world.rank() / 2, position = world.rank() % 2;
            HierarchicalCommunicator h(world, world.split(node, position, "world.node"), world.split(position, node, "world.nodes"));
            sweep<std::int32_t>(h, small, false);
            sweep<float>(h, small, true);
            sweep<double>(h, {0, 1, 7, 1001}, true);
            long long across = 0;
            for (const auto &r : h.across().takeRecords())
                across += r.op == "all_reduce" ? r.count : 0;
            report(world, "hierarchical all-reduces cross nodes in the inter-node group", across == 0);
        }
        // A rank waiting for a late peer (rank 0 joins the all-reduce 1.5 s late) leaves the core
        // after its first 20 ms (MpiHandle's wait naps): it spends well under a fifth of the wait
        // on the CPU, where Open MPI's own wait spins through all of it.
        {
            std::vector<float> data(1024, 1.0f);
            world.barrier();
            if (world.rank() == 0)
                std::this_thread::sleep_for(std::chrono::milliseconds(1500));
            timespec cpu0{}, cpu1{};
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
            const auto wall0 = std::chrono::steady_clock::now();
            world.allReduceAsync(data.data(), data.data(), data.size(), DataType::F32, ReduceOp::Sum)->wait();
            const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
            const double cpu = static_cast<double>(cpu1.tv_sec - cpu0.tv_sec) + 1e-9 * static_cast<double>(cpu1.tv_nsec - cpu0.tv_nsec);
            const bool spun = world.rank() != 0 && cpu > 0.2 * wall;
            if (spun)
                std::printf("rank %d waited %.3f s for a late peer and spent %.3f s of CPU on it\n", world.rank(), wall, cpu);
            report(world, "a rank waiting for a late peer does not spin", spun ? 1 : 0);
        }
        auto records = world.takeRecords();
        long long recorded = 0;
        for (const auto &r : records)
            recorded += r.count;
        report(world, "every call is recorded", recorded == 0);
        if (world.rank() == 0)
            std::printf("%d passed, %d failed\n", g_passed, g_failed);
    }
    MPI_Finalize();
    return g_failed == 0 ? 0 : 1;
}
