#!/usr/bin/env bash
# What a checkpoint costs training (issue #69): the quick start (4 ranks) and a 57 M-parameter GPT
# on one rank (8 layers of 768, 8 sequences of 128 tokens a step; a 680 MB shard: parameters and
# both Adam moments in fp32), each run three ways side by side in one invocation — no checkpoints
# (the baseline), sync saves, async saves (when_busy wait: a save due while the one before is still
# being written waits for it) and async-skip (skipped instead), a save due every step — through trellis-cli run (real
# mpirun, telemetry, history) and read back with trellis-cli export. Prints per run (rank 0, the
# first 2 steps left out): the mean step time; training's wait at the step boundaries for
# checkpoints, a step on average and as a share of the baseline step (the overhead), and at most;
# the saves put in place (async skips a save due while the one before is still being written) and
# their mean write; the step time of the steps run beside a background write against the baseline
# (the slowdown window); the wall time.
# Usage: [MODELS=quick|big] tests/bench/bench_checkpoints.sh [BUILD_DIR] [BIG_STEPS]   (the quick start runs 96 steps)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
big_steps=${2:-12}
work=$(mktemp -d "${TMPDIR:-/tmp}/trellis-bench-ckpt.XXXXXX"); trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
grep -m1 "model name" /proc/cpuinfo || true
echo "cores: $(nproc); disk under $work: $(df -h --output=source,fstype "$work" | tail -1)"
plan() { # name, model (quick|big), mode (none|sync|async)
  /usr/bin/python3 - "$root" "$work" "$@" "$big_steps" <<'PY'
import json, sys
root, work, name, model, mode, big_steps = sys.argv[1:7]
plan = json.load(open(f"{root}/resources/plans/quickstart.json"))
plan["name"] = name
plan["training"]["data"]["path"] = f"{root}/resources/corpus/licenses.txt"
plan["training"].pop("checkpoint", None)
if model == "quick":
    plan["training"]["steps"] = 96
else:  # GPT, 8 layers of 768: 56.9 M parameters; one rank
    plan["model"] = {"arch": "gpt", "layers": 8, "hidden": 768, "heads": 12, "ffn": 3072, "seq_len": 128, "vocab": 256}
    plan["cluster"] = {"nodes": [{"host": "localhost", "slots": 1, "device": "cpu"}]}
    plan["parallel"] = {"dp": 1, "micro_batch_size": 8, "micro_batches": 1}
    plan["training"]["steps"] = int(big_steps)
    plan["training"]["warmup_steps"] = 1
if mode != "none":
    plan["training"]["checkpoint"] = {"every": 1, "dir": f"{work}/{name}-ckpt", "keep": 2, "mode": mode.split("-")[0],
                                      "when_busy": "skip" if mode.endswith("-skip") else "wait"}
json.dump(plan, open(f"{work}/{name}.json", "w"))
PY
}
run() { # name, model, mode
  plan "$@"
  local t0; t0=$(date +%s.%N)
  "$build/bin/trellis-cli" --db "$work/history.sqlite" run "$work/$1.json" --quiet --run-id "$1-$$" >/dev/null
  echo "$1 $(echo "$(date +%s.%N) - $t0" | bc)" >> "$work/times"
  "$build/bin/trellis-cli" --db "$work/history.sqlite" export "$1-$$" --format csv --table steps --out "$work/$1.csv"
  "$build/bin/trellis-cli" --db "$work/history.sqlite" export "$1-$$" --format csv --table events --out "$work/$1.events.csv"
}
models=${MODELS:-quick big} # MODELS=quick (or big) runs one of them
for model in $models; do
  for mode in none sync async async-skip; do run "$model-$mode" "$model" "$mode"; done
done
/usr/bin/python3 - "$work" "$models" <<'PY'
import csv, os, sys
work = sys.argv[1]
times = dict(l.split() for l in open(os.path.join(work, "times")))
def rows(name):
    r = [x for x in csv.DictReader(open(os.path.join(work, name + ".csv"))) if x["rank"] == "0"]
    return sorted(r, key=lambda x: int(x["step"]))[2:]
mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")
print(f"{'run':<16} {'step ms':>9} {'waited ms/step':>15} {'overhead':>9} {'most ms':>8} {'landed':>7} {'write ms':>9} {'beside-write step':>18} {'wall s':>7}")
for model in sys.argv[2].split():
    base = mean([float(x["step_ms"]) for x in rows(f"{model}-none")])
    for mode in ("none", "sync", "async", "async-skip"):
        name = f"{model}-{mode}"
        r = rows(name)
        step = mean([float(x["step_ms"]) for x in r])
        waited = [float(x["checkpoint_ms"]) for x in r]
        writes = [float(x["checkpoint_write_ms"]) for x in r if float(x["checkpoint_write_ms"]) > 0]
        beside = [float(x["step_ms"]) for x in r if x["checkpoint_behind"] == "1"]
        w = mean(waited)
        b = f"{mean(beside):8.1f} ({(mean(beside) / base - 1) * 100:+5.1f}%)" if beside else f"{'-':>18}"
        print(f"{name:<16} {step:9.1f} {w:15.1f} {w / base * 100:8.2f}% {max(waited):8.1f} {len(writes):7d} "
              f"{mean(writes) if writes else 0:9.1f} {b:>18} {float(times[name]):7.1f}")
PY
# One rank-0 event of each kind, as the runs said them.
for f in "$work"/big-async.events.csv "$work"/big-async-skip.events.csv; do
  [ -f "$f" ] || continue
  grep -m1 ",0,[0-9]*,checkpoint," "$f" | cut -d, -f2- || true
  grep -m1 "skipped: the save" "$f" | cut -d, -f2- || true
done
