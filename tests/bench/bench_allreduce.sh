#!/usr/bin/env bash
# Our all-reduce (trellis-trainer --bench-collectives) against a bare MPI_Allreduce loop, same
# sizes, same rank count, run one after the other in the same invocation. Prints both bus
# bandwidths and their ratio (ours / bare) per size.
# Usage: tests/bench/bench_allreduce.sh [RANKS] [MAX_BYTES]     (after ./test.sh or a build)
set -euo pipefail
cd "$(dirname "$0")/../.."
ranks="${1:-2}"
max="${2:-67108864}"
mpi=(mpirun -np "$ranks" --oversubscribe --bind-to none --mca btl_vader_single_copy_mechanism none
     -x OPENBLAS_NUM_THREADS=1)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
cmake --build build --target bench_bare_allreduce > /dev/null # benchmarks are not in the default build
ours=$(mktemp) bare=$(mktemp)
"${mpi[@]}" build/bin/trellis-trainer --bench-collectives --ops all_reduce --max-bytes "$max" | grep '^all_reduce' > "$ours"
"${mpi[@]}" build/bin/bench_bare_allreduce "$max" | grep '^all_reduce' > "$bare"
echo "all-reduce, $ranks ranks: bus bandwidth of trellis' communicator vs bare MPI_Allreduce"
printf "%12s %14s %14s %8s\n" "size(B)" "trellis GB/s" "bare GB/s" "ratio"
paste "$ours" "$bare" | awk '{ printf "%12d %14.3f %14.3f %8.3f\n", $2, $6, $12, ($12 > 0 ? $6 / $12 : 0) }'
rm -f "$ours" "$bare"
