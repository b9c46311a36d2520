#!/usr/bin/env bash
# Every-step data parallelism against DiLoCo and local SGD (H = 8 and 32) on the quick-start model: 4 replicas
# on this machine's CPUs, 192 steps, the same data and seed. Prints, per run, the loss (mean of
# 8 steps) at a quarter, half, three quarters and the end of the tokens, the data-parallel bytes
# each rank sends into all-reduces (every-step: the fp32 gradients every step; DiLoCo: the fp32
# parameters every H steps), and the wall time.
# Usage: tests/bench/bench_local_updates.sh [BUILD_DIR]   (OUTER_LR, OUTER_MOMENTUM for DiLoCo)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() { # name, dp_sync JSON or ""
  /usr/bin/python3 "$root/tests/bench/quickstart_plan.py" "$root" "$work/$1.json" dp_sync "$2"
  local t0=$SECONDS
  mpirun -np 4 --oversubscribe --bind-to none --mca btl_vader_single_copy_mechanism none -x OPENBLAS_NUM_THREADS=1 \
    "$build/bin/trellis-trainer" --plan "$work/$1.json" --quiet --dump-losses "$work/$1.losses" --dump-params "$work/$1.params"
  echo "$1 $((SECONDS - t0))" >> "$work/times"
}
lr=${OUTER_LR:-0.7}; mu=${OUTER_MOMENTUM:-0.9}
run every-step ""
run diloco-8 "{\"mode\": \"diloco\", \"inner_steps\": 8, \"outer_lr\": $lr, \"outer_momentum\": $mu}"
run diloco-32 "{\"mode\": \"diloco\", \"inner_steps\": 32, \"outer_lr\": $lr, \"outer_momentum\": $mu}"
run local-sgd-8 '{"mode": "local_sgd", "inner_steps": 8}'
run local-sgd-32 '{"mode": "local_sgd", "inner_steps": 32}'
/usr/bin/python3 - "$work" <<'PY'
import os, struct, sys
work = sys.argv[1]
times = dict(l.split() for l in open(os.path.join(work, "times")))
print(f"{'run':<12} {'loss@48':>8} {'loss@96':>8} {'loss@144':>8} {'loss@192':>8} {'dp bytes/rank':>14} {'wall s':>7}")
for name, syncs in (("every-step", 192), ("diloco-8", 192 // 8), ("diloco-32", 192 // 32), ("local-sgd-8", 192 // 8),
                    ("local-sgd-32", 192 // 32)):
    b = open(os.path.join(work, name + ".losses"), "rb").read()
    losses = struct.unpack("%dd" % (len(b) // 8), b)
    n = os.path.getsize(os.path.join(work, name + ".params")) // 4
    at = lambda s: sum(losses[s - 8:s]) / 8
    print(f"{name:<12} {at(48):8.4f} {at(96):8.4f} {at(144):8.4f} {at(192):8.4f} {syncs * n * 4 / 2**20:11.1f} MB {times[name]:>7}")
PY
