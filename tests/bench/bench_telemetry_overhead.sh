#!/usr/bin/env bash
# What telemetry costs a training step: the quick-start plan (4 data-parallel ranks) run REPS times each way,
# alternating — supervised by trellis-cli (telemetry on: step reports, collectives, heartbeats,
# acknowledged, into the history) and as bare `mpirun trellis-trainer` without an endpoint
# (telemetry off) — and the median step time of rank 0 over steps after the first 5 compared.
# Target: telemetry on costs at most 1%. Usage: tests/bench/bench_telemetry_overhead.sh [REPS] [STEPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
reps="${1:-3}"
steps="${2:-60}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The bare run uses the launch flags trellis-cli uses (launcher/mpi_command.cpp), without an endpoint.
mpi=(mpirun -np 4 --oversubscribe --bind-to none --tag-output --mca btl_vader_single_copy_mechanism none
     -x OPENBLAS_NUM_THREADS=1)
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  mpi+=(--allow-run-as-root)
fi
export OMPI_MCA_rmaps_base_oversubscribe=1
sed -e "s/\"steps\": 200/\"steps\": $steps/" -e "s#\"\\.\\./corpus/#\"$PWD/resources/corpus/#" \
  resources/plans/quickstart.json > "$work/plan.json"
# Median of the step times (ms) in lines like "step  7/60  loss ...  12.3 ms ...", steps > 5.
median_step() {
  sed -n 's/.*step *\([0-9]*\)\/[0-9]*  loss [^ ]*  lr [^ ]*  *\([0-9.]*\) ms.*/\1 \2/p' |
    awk '$1 > 5 { print $2 }' | sort -n | awk '{a[NR]=$1} END { if (NR == 0) print "nan"; else print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2 }'
}
on=() off=()
for i in $(seq "$reps"); do
  build/bin/trellis-cli --db "$work/h.sqlite" run "$work/plan.json" --quiet >/dev/null
  run=$(ls -td "$work"/runs/2*/ | head -1)
  on+=("$(grep '^O ' "$run/rank-0.log" | median_step)")
  off+=("$("${mpi[@]}" build/bin/trellis-trainer --plan "$work/plan.json" 2>/dev/null | grep '^\[1,0\]<stdout>' | median_step)")
done
median() { printf "%s\n" "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
m_on=$(median "${on[@]}") m_off=$(median "${off[@]}")
echo "4 ranks, $steps steps, $reps runs each: median step with telemetry ${m_on} ms (runs: ${on[*]}), without ${m_off} ms (runs: ${off[*]})"
awk -v a="$m_on" -v b="$m_off" 'BEGIN { printf "telemetry overhead: %+.1f%% (target: at most 1%%)\n", 100 * (a / b - 1) }'
