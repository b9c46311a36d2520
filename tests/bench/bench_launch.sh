#!/usr/bin/env bash
# Launch latency: from trellis-cli starting mpirun to the first telemetry of any rank (its Hello),
# for 4 local ranks of the quick-start model, beside a bare `mpirun -np 4 true` (the floor: what
# starting 4 MPI processes costs here), alternating, REPS times each; medians and their ratio.
# Target: 3 s or less for trellis. Usage: tests/bench/bench_launch.sh [REPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
reps="${1:-5}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpi=(mpirun -np 4 --oversubscribe)
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  mpi+=(--allow-run-as-root)
fi
sed -e 's/"steps": 200/"steps": 30/' resources/plans/quickstart.json > "$work/plan.json"
sed -i "s#\"\\.\\./corpus/#\"$PWD/resources/corpus/#" "$work/plan.json"
ours=() bare=()
for i in $(seq "$reps"); do
  ms=$(build/bin/trellis-cli --db "$work/h.sqlite" run "$work/plan.json" 2>&1 >/dev/null |
       sed -n 's/^first telemetry \([0-9]*\) ms after launch$/\1/p')
  [ -n "$ms" ] || { echo "trellis-cli printed no launch time" >&2; exit 1; }
  ours+=("$ms")
  start=$(date +%s%N)
  "${mpi[@]}" true
  bare+=($(( ($(date +%s%N) - start) / 1000000 )))
done
median() { printf "%s\n" "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
m1=$(median "${ours[@]}") m2=$(median "${bare[@]}")
echo "4 ranks, $reps runs each: launch to first telemetry ${m1} ms (runs: ${ours[*]}); bare mpirun -np 4 true ${m2} ms (runs: ${bare[*]})"
awk -v a="$m1" -v b="$m2" 'BEGIN { printf "ratio trellis / bare mpirun: %.2f (target: trellis at most 3000 ms)\n", a / b }'
