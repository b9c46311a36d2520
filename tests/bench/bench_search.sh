#!/usr/bin/env bash
# Planner search time and memory, side by side in one invocation: the search as trellis-cli runs it
# and the exhaustive reference (--exhaustive: every plan copied, validated in full, kept and ranked
# at the end), for llama2-70b on dgx-h100 nodes at global batch 1024 — 128 nodes (1024 GPUs) and
# 2048 nodes (16,384 GPUs, Llama 3's scale). Prints wall time and peak memory of each command, the
# ratios, and whether both found the same plans. Targets (issue #41): 16,384 GPUs <= 2 s and
# <= 300 MB, 1024 GPUs <= 0.5 s. A benchmark run by hand, never by ctest.
# Usage: tests/bench/bench_search.sh [NODES...]   (default: 128 2048)
set -euo pipefail
cd "$(dirname "$0")/../.."
cli=build/bin/trellis-cli
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
nodes=("$@")
[ ${#nodes[@]} -gt 0 ] || nodes=(128 2048)
measure() { # OUT TIME_FILE ARGS...
  local out=$1 tf=$2
  shift 2
  /usr/bin/time -f "%e %M" -o "$tf" "$cli" search --model llama2-70b --cluster dgx-h100 --global-batch 1024 --top 10 "$@" > "$out"
}
for n in "${nodes[@]}"; do
  measure "$scratch/fast" "$scratch/fast.t" --nodes "$n"
  measure "$scratch/all" "$scratch/all.t" --nodes "$n" --exhaustive
  read -r fs fk < "$scratch/fast.t"
  read -r as ak < "$scratch/all.t"
  same=$(diff <(sed '1d' "$scratch/fast") <(sed '1d' "$scratch/all") > /dev/null && echo "same plans" || echo "PLANS DIFFER")
  printf '%5d nodes (%6d GPUs): %s\n' "$n" $((n * 8)) "$(head -1 "$scratch/fast")"
  awk -v fs="$fs" -v fk="$fk" -v as="$as" -v ak="$ak" -v same="$same" 'BEGIN {
    printf "    search %.2f s %.0f MB | exhaustive %.2f s %.0f MB | %.1fx faster, %.1fx less memory, %s\n",
           fs, fk / 1024, as, ak / 1024, as / fs, ak / fk, same }'
done
