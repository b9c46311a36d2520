#!/usr/bin/env bash
# trellis-trainer (1 rank) against PyTorch on the CPU for the same model, batch and optimizer, at
# each thread count N: trellis with OPENBLAS_NUM_THREADS=N (its kernels follow that count),
# PyTorch with torch.set_num_threads(N), OMP_NUM_THREADS=N and OPENBLAS_NUM_THREADS=N (its GEMMs
# are OpenBLAS too). For N > 1 PyTorch also runs in tuned variants, because with libgomp's
# spin-waiting next to OpenBLAS's pthreads its default is far slower on few cores:
#   passive     OMP_WAIT_POLICY=passive (OpenMP workers sleep at once)
#   spin10k     GOMP_SPINCOUNT=10000 (they spin briefly)
#   blasonly    torch.set_num_threads(1), OMP_NUM_THREADS=1: only the GEMMs use N threads
# and the fastest of its variants is the second baseline. Runs alternate (trellis, then each
# PyTorch variant, in rotating order) REPS times per configuration; a run's figure is its median
# step time after step 5 (a median, because on a shared machine a burst of outside load can
# inflate a few steps of a run); the table shows the median of the runs, their range, and the
# tokens/s ratios trellis / PyTorch (> 1: trellis is faster) from those medians.
# PRECISIONS (default "fp32 bf16"): each model also in bf16 — trellis with parallel.precision
# bf16, PyTorch with bf16 autocast — and the bf16 rows add trellis bf16 / trellis fp32 (the speed
# mixed precision buys on this CPU; see Hello's kernels line for whether its GEMMs run natively).
# Needs python3-torch (Debian) or torch (PyPI); set PYTHON to pick the interpreter.
#
# Usage: tests/bench/bench_trainer_vs_pytorch.sh                      both README sizes
#        tests/bench/bench_trainer_vs_pytorch.sh LAYERS HIDDEN [HEADS SEQ BATCH STEPS]
# Environment: THREADS (default "1 2"), REPS (default 5), STEPS (default 40),
#              VARIANTS (PyTorch variants for N > 1, default "passive spin10k blasonly"; "" for
#              the default configuration only), VERBOSE=1 (every run's figure).
set -euo pipefail
cd "$(dirname "$0")/../.."
threads_list="${THREADS:-1 2}" reps="${REPS:-5}" variants="${VARIANTS-passive spin10k blasonly}"
precisions="${PRECISIONS:-fp32 bf16}"
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

stats() { # numbers -> "median min max"
  tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f %.2f %.2f", m, v[1], v[NR] }'
}
run_trellis() { # plan threads -> median ms/step after step 5
  local mpi=(mpirun -np 1 --bind-to none -x "OPENBLAS_NUM_THREADS=$2")
  [ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
  "${mpi[@]}" build/bin/trellis-trainer --plan "$1" |
    awk '$1 == "step" { split($2, s, "/"); if (s[1] > 5) print $7 }' | stats | cut -d' ' -f1
}
run_pytorch() { # variant layers hidden heads seq batch steps threads precision -> median ms/step after step 5
  local env=(OMP_NUM_THREADS="$8" OPENBLAS_NUM_THREADS="$8") torch_threads=$8
  case $1 in
    default) ;;
    passive) env+=(OMP_WAIT_POLICY=passive) ;;
    spin10k) env+=(GOMP_SPINCOUNT=10000) ;;
    blasonly) env=(OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS="$8"); torch_threads=1 ;;
    *) echo "unknown PyTorch variant $1" >&2; exit 1 ;;
  esac
  env "${env[@]}" "$python" tests/bench/pytorch_gpt.py --layers "$2" --hidden "$3" --heads "$4" --ffn $((4 * $3)) \
    --seq "$5" --batch "$6" --steps "$7" --warmup 5 --threads "$torch_threads" $([ "$9" = bf16 ] && echo --bf16) |
    sed -E 's/.*median ([0-9.]+) ms.*/\1/'
}

echo "trellis-trainer vs $("$python" -c 'import torch; print("pytorch", torch.__version__)'); $reps runs each, alternating;" \
     "ms/step = median over runs of each run's median step, steps 6-N (min-max over runs)"
printf '%-30s %5s %7s %22s %22s %8s %30s %8s %10s\n' "model" "prec" "threads" "trellis ms/step" "pytorch default" "ratio" \
  "pytorch best variant" "ratio" "vs fp32"
for model in "${models[@]}"; do
  read -r layers hidden heads seq batch steps <<< "$model"
  declare -A fp32ms=()
  for precision in $precisions; do
  plan="$work/plan_${layers}_${hidden}_$precision.json"
  cat > "$plan" <<JSON
{
  "schema": "trellis.plan/1", "name": "bench",
  "model": {"layers": $layers, "hidden": $hidden, "heads": $heads, "ffn": $((4 * hidden)), "seq_len": $seq, "vocab": 256},
  "cluster": {"nodes": [{"host": "localhost", "slots": 1}]},
  "parallel": {"dp": 1, "micro_batch_size": $batch, "precision": "$precision"},
  "training": {"steps": $steps, "lr": 0.001, "min_lr": 0.0001, "seed": 1,
               "data": {"source": "text", "path": "$PWD/resources/corpus/licenses.txt"}}
}
JSON
  for threads in $threads_list; do
    names=(default)
    if [ "$threads" -gt 1 ]; then for v in $variants; do names+=("$v"); done; fi
    declare -A runs=()
    ours=""
    for ((r = 0; r < reps; r++)); do
      ours+=" $(run_trellis "$plan" "$threads")"
      for ((i = 0; i < ${#names[@]}; i++)); do
        v=${names[(i + r) % ${#names[@]}]}
        runs[$v]+=" $(run_pytorch "$v" "$layers" "$hidden" "$heads" "$seq" "$batch" "$steps" "$threads" "$precision")"
      done
    done
    read -r om omin omax <<< "$(echo "$ours" | stats)"
    read -r dm dmin dmax <<< "$(echo "${runs[default]}" | stats)"
    best=default bm=$dm bmin=$dmin bmax=$dmax
    for v in "${names[@]}"; do
      read -r m mn mx <<< "$(echo "${runs[$v]}" | stats)"
      if awk -v a="$m" -v b="$bm" 'BEGIN { exit !(a < b) }'; then best=$v bm=$m bmin=$mn bmax=$mx; fi
    done
    ratio() { awk -v a="$om" -v b="$1" 'BEGIN { printf "%.2f", b / a }'; }
    [ "$precision" = fp32 ] && fp32ms[$threads]=$om
    versus=-
    [ "$precision" != fp32 ] && [ -n "${fp32ms[$threads]:-}" ] && versus=$(ratio "${fp32ms[$threads]}")
    printf '%-30s %5s %7s %22s %22s %8s %30s %8s %10s\n' "$layers layers, hidden $hidden" "$precision" "$threads" \
      "$om ($omin-$omax)" "$dm ($dmin-$dmax)" "$(ratio "$dm")" "$best $bm ($bmin-$bmax)" "$(ratio "$bm")" "$versus"
    if [ -n "${VERBOSE:-}" ]; then
      echo "  runs: trellis$ours"
      for v in "${names[@]}"; do echo "        pytorch $v${runs[$v]}"; done
    fi
    unset runs
  done
  done
  unset fp32ms
done
echo "($heads heads, seq $seq, batch $batch, ffn 4 x hidden, vocab 256; tokens/step = batch x seq; ratio = tokens/s trellis / pytorch;"
echo " vs fp32 = tokens/s of trellis in this precision / trellis in fp32; bf16 GEMMs: $(build/bin/trellis-trainer --help >/dev/null;
  grep -qw avx512_bf16 /proc/cpuinfo && echo 'this CPU has AVX512-BF16 (oneDNN native; target: bf16 >= 1.3x fp32 at 1 and 2 threads)' ||
    echo 'this CPU has no AVX512-BF16: fp32 GEMMs on converted operands, and the 1.3x bf16 target does not apply here')"
