// Baseline for the all-reduce benchmark: a bare MPI_Allreduce loop over the same sizes and with
// the same iteration policy as `trellis-trainer --bench-collectives`, so the two can be compared
// side by side (tests/bench/bench_allreduce.sh).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, n = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const std::size_t maxBytes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (64u << 20);
    if (rank == 0)
        std::printf("%-15s %12s %8s %12s %12s %12s\n", "op", "size(B)", "iters", "time(us)", "algbw(GB/s)", "busbw(GB/s)");
    for (std::size_t bytes = 8; bytes <= maxBytes; bytes *= 4) {
        const int count = static_cast<int>(std::max<std::size_t>(static_cast<std::size_t>(n), bytes / sizeof(float)));
        std::vector<float> a(static_cast<std::size_t>(count), 1.0f);
        for (int i = 0; i < 3; ++i)
            MPI_Allreduce(MPI_IN_PLACE, a.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        auto start = std::chrono::steady_clock::now();
        MPI_Allreduce(MPI_IN_PLACE, a.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double oneMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        MPI_Allreduce(MPI_IN_PLACE, &oneMs, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        oneMs /= n;
        int iterations = std::clamp(static_cast<int>(200.0 / std::max(oneMs, 1e-3)), 1, 1000);
        MPI_Bcast(&iterations, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        start = std::chrono::steady_clock::now();
        for (int i = 0; i < iterations; ++i)
            MPI_Allreduce(MPI_IN_PLACE, a.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        MPI_Allreduce(MPI_IN_PLACE, &ms, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        const double us = ms * 1000.0 / iterations;
        const double alg = static_cast<double>(count) * sizeof(float) / (us * 1e3);
        if (rank == 0)
            std::printf("%-15s %12zu %8d %12.2f %12.3f %12.3f\n", "all_reduce", static_cast<std::size_t>(count) * sizeof(float),
                        iterations, us, alg, alg * 2.0 * (n - 1) / n);
    }
    MPI_Finalize();
    return 0;
}
