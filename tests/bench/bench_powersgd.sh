#!/usr/bin/env bash
# Every-step data parallelism against PowerSGD (parallel.grad_compression) at ranks 1, 4, 16 and 128
# (128: the quick-start model's hidden size, every matrix at full rank) on the quick-start model:
# 4 replicas on this machine's CPUs, 192 steps, the same data and seed, in one invocation. Prints,
# per run, the loss (mean of 8 steps) at a quarter, half, three quarters and the end, the bytes each
# rank puts into data-parallel all-reduces a step (from the trainer's own line), and the wall time.
# Usage: tests/bench/bench_powersgd.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() { # name, grad_compression JSON or ""
  /usr/bin/python3 "$root/tests/bench/quickstart_plan.py" "$root" "$work/$1.json" grad_compression "$2"
  local t0=$SECONDS
  mpirun -np 4 --oversubscribe --bind-to none --mca btl_vader_single_copy_mechanism none -x OPENBLAS_NUM_THREADS=1 \
    "$build/bin/trellis-trainer" --plan "$work/$1.json" --dump-losses "$work/$1.losses" --dump-params "$work/$1.params" \
    | grep '^grad compression' > "$work/$1.note" || true
  echo "$1 $((SECONDS - t0))" >> "$work/times"
}
run every-step ""
run powersgd-1 '{"kind": "powersgd", "rank": 1}'
run powersgd-4 '{"kind": "powersgd", "rank": 4}'
run powersgd-16 '{"kind": "powersgd", "rank": 16}'
run powersgd-128 '{"kind": "powersgd", "rank": 128}'
/usr/bin/python3 - "$work" <<'PY'
import os, re, struct, sys
work = sys.argv[1]
times = dict(l.split() for l in open(os.path.join(work, "times")))
print(f"{'run':<12} {'loss@48':>8} {'loss@96':>8} {'loss@144':>8} {'loss@192':>8} {'dp MB/step/rank':>16} {'wall s':>7}")
for name in ("every-step", "powersgd-1", "powersgd-4", "powersgd-16", "powersgd-128"):
    b = open(os.path.join(work, name + ".losses"), "rb").read()
    losses = struct.unpack("%dd" % (len(b) // 8), b)
    note = open(os.path.join(work, name + ".note")).read()
    m = re.search(r"([0-9.]+) MB a step all-reduced instead of ([0-9.]+) MB", note)
    if m:
        mb = float(m.group(1))
    else:  # uncompressed: every fp32 gradient, every step
        mb = os.path.getsize(os.path.join(work, name + ".params")) / 1e6
    at = lambda s: sum(losses[s - 8:s]) / 8
    print(f"{name:<12} {at(48):8.4f} {at(96):8.4f} {at(144):8.4f} {at(192):8.4f} {mb:16.3f} {times[name]:>7}")
PY
