#!/usr/bin/env bash
# Exposed communication at dp=2 with and without bucketed overlap: the same plan run twice through
# trellis-cli (overlap_grad_reduce true / false), step metrics exported from the run history.
# Prints mean comm_ms, mean comm_exposed_ms and the exposed fraction for both, and the ratio of
# exposed time (overlap / no overlap). Steps 1-5 are skipped as warm-up.
# Usage: tests/bench/bench_overlap.sh [STEPS] [BUCKET_MB]
set -euo pipefail
cd "$(dirname "$0")/../.."
steps="${1:-60}"
bucket="${2:-0.25}"
work=$(mktemp -d)
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
corpus="$PWD/resources/corpus/licenses.txt"
for overlap in true false; do
  cat > "$work/plan-$overlap.json" <<JSON
{
  "schema": "trellis.plan/1", "name": "overlap-$overlap",
  "model": {"layers": 4, "hidden": 256, "heads": 8, "ffn": 1024, "seq_len": 128, "vocab": 256},
  "cluster": {"nodes": [{"host": "localhost", "slots": 2}]},
  "parallel": {"dp": 2, "micro_batch_size": 4, "bucket_mb": $bucket, "overlap_grad_reduce": $overlap},
  "training": {"steps": $steps, "lr": 0.001, "min_lr": 0.0001, "seed": 5, "data": {"source": "text", "path": "$corpus"}}
}
JSON
  build/bin/trellis-cli --db "$work/h.sqlite" run "$work/plan-$overlap.json" --quiet > /dev/null
  build/bin/trellis-cli --db "$work/h.sqlite" export last --format csv > "$work/$overlap.csv"
done
echo "dp=2, 4 layers x 256 hidden (3.2 M parameters, 12.6 MB of gradients), buckets of $bucket MB, $steps steps"
printf "%-12s %12s %14s %16s %10s\n" "overlap" "step ms" "comm ms" "exposed ms" "exposed"
for overlap in true false; do
  awk -F, -v name="$overlap" 'NR > 1 && $3 > 5 { step += $5; comm += $8; exposed += $9; n++ }
      END { printf "%-12s %12.2f %14.2f %16.2f %9.1f%%\n", name, step/n, comm/n, exposed/n, 100*exposed/comm }' "$work/$overlap.csv"
done
awk -F, 'FNR == 1 { f++ } FNR > 1 && $3 > 5 { e[f] += $9; n[f]++ }
    END { printf "exposed time with overlap / without: %.3f\n", (e[1]/n[1]) / (e[2]/n[2]) }' "$work/true.csv" "$work/false.csv"
rm -rf "$work"
