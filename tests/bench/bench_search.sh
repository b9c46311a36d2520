#!/usr/bin/env bash
# Planner search time: every plan for llama2-70b on 128 DGX H100 nodes (1024 GPUs), global batch
# 1024 sequences, estimated and ranked; prints the search's own timing line and the wall time of
# the whole command, and the top 5 plans.
# Usage: tests/bench/bench_search.sh [NODES] [GLOBAL_BATCH]
set -euo pipefail
cd "$(dirname "$0")/../.."
nodes="${1:-128}"
batch="${2:-1024}"
start=$(date +%s.%N)
build/bin/trellis-cli search --model llama2-70b --cluster dgx-h100 --nodes "$nodes" --global-batch "$batch" --top 5
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" 'BEGIN { printf "wall time %.3f s\n", e - s }'
