#!/usr/bin/env bash
# trellis-trainer (1 rank) against PyTorch on the CPU for the same model, batch and optimizer, at
# each thread count: trellis with OPENBLAS_NUM_THREADS=N (its kernels follow that count), PyTorch
# with torch.set_num_threads(N), OMP_NUM_THREADS=N and OPENBLAS_NUM_THREADS=N (its GEMMs are
# OpenBLAS too). The two are run alternately REPS times per configuration; each run's figure is
# its mean step time after step 5, and the table shows the median of the runs, their range, and
# the ratio of tokens/s (trellis / PyTorch, > 1 means trellis is faster) from the two medians.
# Needs python3-torch (Debian) or torch (PyPI); set PYTHON to pick the interpreter.
#
# Usage: tests/bench/bench_trainer_vs_pytorch.sh                      both README sizes
#        tests/bench/bench_trainer_vs_pytorch.sh LAYERS HIDDEN [HEADS SEQ BATCH STEPS]
# Environment: THREADS (default "1 2"), REPS (default 5), STEPS (default 40).
set -euo pipefail
cd "$(dirname "$0")/../.."
threads_list="${THREADS:-1 2}" reps="${REPS:-5}"
if [ $# -ge 2 ]; then
  models=("$1 $2 ${3:-4} ${4:-128} ${5:-4} ${6:-${STEPS:-40}}")
else
  steps="${STEPS:-40}"
  models=("2 128 4 128 4 $steps" "4 256 4 128 4 $steps")
fi
python="${PYTHON:-}"
if [ -z "$python" ]; then
  for candidate in /usr/bin/python3 python3; do
    if "$candidate" -c 'import torch' 2>/dev/null; then python="$candidate"; break; fi
  done
fi
[ -n "$python" ] || { echo "no Python with torch found (apt-get install python3-torch, or set PYTHON)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run_trellis() { # plan threads -> mean ms/step after step 5
  local mpi=(mpirun -np 1 --bind-to none -x "OPENBLAS_NUM_THREADS=$2")
  [ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
  "${mpi[@]}" build/bin/trellis-trainer --plan "$1" |
    awk '$1 == "step" { split($2, s, "/"); if (s[1] > 5) { ms += $7; n++ } } END { printf "%.2f", ms / n }'
}
run_pytorch() { # layers hidden heads seq batch steps threads -> mean ms/step after step 5
  OMP_NUM_THREADS=$7 OPENBLAS_NUM_THREADS=$7 "$python" tests/bench/pytorch_gpt.py --layers "$1" --hidden "$2" \
    --heads "$3" --ffn $((4 * $2)) --seq "$4" --batch "$5" --steps "$6" --warmup 5 --threads "$7" |
    sed -E 's/.*: ([0-9.]+) ms\/step.*/\1/'
}
stats() { # numbers -> "median min max"
  tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f %.2f %.2f", m, v[1], v[NR] }'
}

echo "trellis-trainer vs $("$python" -c 'import torch; print("pytorch", torch.__version__)'); $reps runs each, alternating;" \
     "ms/step = median of the runs' means over steps 6-N (min-max)"
printf '%-34s %7s %24s %24s %14s\n' "model" "threads" "trellis ms/step" "pytorch ms/step" "tokens/s ratio"
for model in "${models[@]}"; do
  read -r layers hidden heads seq batch steps <<< "$model"
  plan="$work/plan_${layers}_${hidden}.json"
  cat > "$plan" <<JSON
{
  "schema": "trellis.plan/1", "name": "bench",
  "model": {"layers": $layers, "hidden": $hidden, "heads": $heads, "ffn": $((4 * hidden)), "seq_len": $seq, "vocab": 256},
  "cluster": {"nodes": [{"host": "localhost", "slots": 1}]},
  "parallel": {"dp": 1, "micro_batch_size": $batch},
  "training": {"steps": $steps, "lr": 0.001, "min_lr": 0.0001, "seed": 1,
               "data": {"source": "text", "path": "$PWD/resources/corpus/licenses.txt"}}
}
JSON
  for threads in $threads_list; do
    ours="" theirs=""
    for ((r = 0; r < reps; r++)); do
      if ((r % 2 == 0)); then
        ours+=" $(run_trellis "$plan" "$threads")"; theirs+=" $(run_pytorch "$layers" "$hidden" "$heads" "$seq" "$batch" "$steps" "$threads")"
      else
        theirs+=" $(run_pytorch "$layers" "$hidden" "$heads" "$seq" "$batch" "$steps" "$threads")"; ours+=" $(run_trellis "$plan" "$threads")"
      fi
    done
    read -r om omin omax <<< "$(echo "$ours" | stats)"
    read -r tm tmin tmax <<< "$(echo "$theirs" | stats)"
    printf '%-34s %7s %24s %24s %14s\n' "$layers layers, hidden $hidden, $heads heads" "$threads" \
      "$om ($omin-$omax)" "$tm ($tmin-$tmax)" "$(awk -v a="$om" -v b="$tm" 'BEGIN { printf "%.2f", b / a }')"
    if [ -n "${VERBOSE:-}" ]; then echo "  runs: trellis$ours; pytorch$theirs"; fi
  done
done
echo "(seq $seq, batch $batch, ffn 4 x hidden, vocab 256; tokens/step = batch x seq)"
