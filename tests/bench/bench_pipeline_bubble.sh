#!/usr/bin/env bash
# Pipeline bubble (pp=4 by default), measured against predicted, for every schedule: the same model and
# global batch run through trellis-cli with a timeline traced every step; the trace is read back
# (trellis-cli trace) and bench_bubble_from_trace prints the closed form for equal costs, the
# simulator's prediction from the measured per-chunk F/B/W times, and the measured bubble fraction
# (1 − compute time / (ranks × wall time of the schedule)), averaged over the traced steps after
# the first.
# Usage: tests/bench/bench_pipeline_bubble.sh [STEPS] [MICRO_BATCHES] [STAGES]
set -euo pipefail
cd "$(dirname "$0")/../.."
steps="${1:-8}"
stages="${3:-4}"
micro="${2:-8}"
cmake --build build --target bench_bubble_from_trace > /dev/null # benchmarks are not in the default build
work=$(mktemp -d)
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
corpus="$PWD/resources/corpus/licenses.txt"
echo "pp=$stages on $(nproc) cores, 8 layers x 128 hidden, $micro micro-batches of 2 x 64 tokens, $steps steps"
printf "%-18s %6s %6s %3s %12s %12s %12s\n" "schedule" "stages" "micro" "v" "closed form" "predicted" "measured"
for schedule in gpipe 1f1b interleaved-1f1b zb-h1; do
  v=1; [ "$schedule" = interleaved-1f1b ] && v=2
  cat > "$work/$schedule.json" <<JSON
{
  "schema": "trellis.plan/1", "name": "bubble-$schedule",
  "model": {"layers": 8, "hidden": 128, "heads": 4, "ffn": 512, "seq_len": 64, "vocab": 256},
  "cluster": {"nodes": [{"host": "localhost", "slots": $stages}]},
  "parallel": {"dp": 1, "pp": $stages, "micro_batch_size": 2, "micro_batches": $micro, "schedule": "$schedule", "virtual_stages": $v},
  "training": {"steps": $steps, "lr": 0.001, "min_lr": 0.0001, "seed": 5, "data": {"source": "text", "path": "$corpus"}},
  "telemetry": {"trace_every": 1}
}
JSON
  build/bin/trellis-cli --db "$work/h.sqlite" run "$work/$schedule.json" --quiet > /dev/null
  build/bin/trellis-cli --db "$work/h.sqlite" trace last --out "$work/$schedule.trace.json" > /dev/null
  build/bin/bench_bubble_from_trace "$work/$schedule.trace.json" "$schedule" "$stages" "$micro" "$v"
done
rm -rf "$work"
