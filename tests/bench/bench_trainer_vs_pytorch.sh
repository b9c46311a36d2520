#!/usr/bin/env bash
# trellis-trainer (1 rank, 1 OpenBLAS thread) against PyTorch on the CPU (1 thread) for the same
# model, batch and optimizer, run one after the other. Prints both step times and the ratio of
# tokens/s (trellis / PyTorch). Needs python3-torch (Debian) or torch (PyPI).
# Usage: tests/bench/bench_trainer_vs_pytorch.sh [LAYERS HIDDEN HEADS SEQ BATCH STEPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
layers="${1:-2}" hidden="${2:-128}" heads="${3:-4}" seq="${4:-128}" batch="${5:-4}" steps="${6:-40}"
ffn=$((4 * hidden))
work=$(mktemp -d)
cat > "$work/plan.json" <<JSON
{
  "schema": "trellis.plan/1", "name": "bench",
  "model": {"layers": $layers, "hidden": $hidden, "heads": $heads, "ffn": $ffn, "seq_len": $seq, "vocab": 256},
  "cluster": {"nodes": [{"host": "localhost", "slots": 1}]},
  "parallel": {"dp": 1, "micro_batch_size": $batch},
  "training": {"steps": $steps, "lr": 0.001, "min_lr": 0.0001, "seed": 1,
               "data": {"source": "text", "path": "$PWD/resources/corpus/licenses.txt"}}
}
JSON
mpi=(mpirun -np 1 --bind-to none -x OPENBLAS_NUM_THREADS=1)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
ours=$("${mpi[@]}" build/bin/trellis-trainer --plan "$work/plan.json" |
       awk '$1 == "step" { split($2, s, "/"); if (s[1] > 5) { ms += $7; n++ } } END { printf "%.2f", ms / n }')
python="${PYTHON:-}"
if [ -z "$python" ]; then
  for candidate in /usr/bin/python3 python3; do
    if "$candidate" -c 'import torch' 2>/dev/null; then python="$candidate"; break; fi
  done
fi
[ -n "$python" ] || { echo "no Python with torch found (apt-get install python3-torch, or set PYTHON)" >&2; exit 1; }
theirs=$(OMP_NUM_THREADS=1 "$python" tests/bench/pytorch_gpt.py --layers "$layers" --hidden "$hidden" --heads "$heads" \
         --ffn "$ffn" --seq "$seq" --batch "$batch" --steps "$steps" --threads 1)
echo "model: $layers layers, hidden $hidden, $heads heads, seq $seq, batch $batch; 1 thread each"
echo "trellis-trainer: $ours ms/step, $(awk -v ms="$ours" -v t=$((batch * seq)) 'BEGIN { printf "%.0f", t / ms * 1000 }') tokens/s"
echo "$theirs"
pt=$(echo "$theirs" | sed -E 's/.*: ([0-9.]+) ms\/step.*/\1/')
awk -v a="$ours" -v b="$pt" 'BEGIN { printf "tokens/s ratio trellis / pytorch: %.2f\n", b / a }'
rm -rf "$work"
