#!/usr/bin/env bash
# What telemetry costs a training step. The quick-start model with one data-parallel rank per core
# (RANKS, default: this machine's cores; ranks are not oversubscribed in a real job) is run PAIRS
# times each way: supervised by trellis-cli (telemetry on: step reports, collectives, heartbeats,
# acknowledged, into the history) and as bare `mpirun trellis-trainer` with the same launch flags
# and no endpoint (telemetry off). The two runs of a pair follow each other, in alternating order,
# so the machine's drift over minutes cancels in the pair's ratio. A run's figure is the median
# step time of rank 0 over the steps after the fifth; the overhead is the median of the pairs'
# ratios, with a 95% confidence interval from order statistics (distribution-free: a run disturbed
# by something else on the machine moves it no more than any other run).
# Target: telemetry on costs at most 1% — met when the interval's upper end is at most 1%.
# Usage: tests/bench/bench_telemetry_overhead.sh [PAIRS (20)] [STEPS (200)] [RANKS (cores)]
set -euo pipefail
cd "$(dirname "$0")/../.."
pairs="${1:-20}"
steps="${2:-200}"
ranks="${3:-$(nproc)}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The bare run uses the launch flags trellis-cli uses (buildLocalCommand in launcher/targets/mpi_command.cpp),
# without an endpoint: ranks bound to cores by Open MPI's default unless there are more ranks than cores.
mpi=(mpirun -np "$ranks")
[ "$ranks" -gt "$(nproc)" ] && mpi+=(--oversubscribe --bind-to none)
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  mpi+=(--allow-run-as-root)
fi
mpi+=(--tag-output --mca btl_vader_single_copy_mechanism none -x OPENBLAS_NUM_THREADS=1)
export OMPI_MCA_rmaps_base_oversubscribe=1
sed -e "s/\"steps\": 200/\"steps\": $steps/" -e "s/\"dp\": 4/\"dp\": $ranks/" \
    -e "s/{\"preset\": \"cpu-local\"}/{\"nodes\": [{\"host\": \"localhost\", \"slots\": $ranks}]}/" \
    -e "s#\"\\.\\./corpus/#\"$PWD/resources/corpus/#" resources/plans/quickstart.json > "$work/plan.json"
# Median of the step times (ms) in lines like "step  7/60  loss ...  12.3 ms ...", steps > 5.
median_step() {
  sed -n 's/.*step *\([0-9]*\)\/[0-9]*  loss [^ ]*  lr [^ ]*  *\([0-9.]*\) ms.*/\1 \2/p' |
    awk '$1 > 5 { print $2 }' | sort -n | awk '{a[NR]=$1} END { if (NR == 0) print "nan"; else print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2 }'
}
run_on() {
  build/bin/trellis-cli --db "$work/h.sqlite" run "$work/plan.json" --quiet >/dev/null
  local run
  run=$(ls -td "$work"/runs/2*/ | head -1)
  grep '^O ' "$run/rank-0.log" | median_step
}
run_off() {
  "${mpi[@]}" build/bin/trellis-trainer --plan "$work/plan.json" 2>/dev/null | grep '^\[1,0\]<stdout>' | median_step
}
on=() off=() ratio=()
for i in $(seq "$pairs"); do
  if [ $((i % 2)) -eq 1 ]; then a=$(run_on); b=$(run_off); else b=$(run_off); a=$(run_on); fi
  case "$a$b" in *nan*) echo "pair $i: a run reported no steps" >&2; exit 1 ;; esac
  on+=("$a") off+=("$b")
  ratio+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.5f", a / b }')")
  echo "pair $i: with telemetry $a ms, without $b ms"
done
median() { printf "%s\n" "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
echo "$ranks ranks, $steps steps, $pairs pairs: median step with telemetry $(median "${on[@]}") ms, without $(median "${off[@]}") ms"
# The interval [r(k), r(n+1-k)] of the sorted ratios covers the median with probability
# 1 - 2·P(Binomial(n, 1/2) < k); k is the largest with that probability at least 95%.
printf "%s\n" "${ratio[@]}" | sort -g | awk '
  { r[NR] = $1 }
  END {
    n = NR; k = 0; tail = 0; term = 0.5 ^ n  # term = P(B = j)
    for (j = 0; j < n; ++j) { if (2 * (tail + term) > 0.05) break; tail += term; k = j + 1; term = term * (n - j) / (j + 1) }
    med = (n % 2) ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2
    printf "telemetry overhead: %+.2f%% (median of %d paired ratios", 100 * (med - 1), n
    if (k == 0) { printf "; too few pairs for a 95%% interval)\n"; exit 0 }
    lo = r[k]; hi = r[n + 1 - k]
    printf "; %.0f%% interval %+.2f%% to %+.2f%%)\n", 100 * (1 - 2 * tail), 100 * (lo - 1), 100 * (hi - 1)
    if (hi <= 1.01) print "target (at most 1%): met"
    else if (lo > 1.01) print "target (at most 1%): missed"
    else print "target (at most 1%): undecided, the interval straddles 1% (run more pairs)"
  }'
