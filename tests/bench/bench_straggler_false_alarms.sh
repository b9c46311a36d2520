#!/usr/bin/env bash
# False kills and false alarms of the supervisor's detectors (docs/failures.md), beside how fast it
# is when a rank truly stops:
#   1. RUNS runs of the dp-4 test model (default 20, 150 steps each) through trellis-cli on this
#      machine with BUSY busy loops (default: as many as it has cores) competing for the cores the
#      whole time: every run must complete (false kills: 0). Stalls named on the way are counted
#      (a starved rank holds the others up: a stall is the right word, never a kill), and
#      straggler alarms (false on a run where no rank is slower by nature).
#   2. The same model with one rank stopped for good (--inject stop@2:20, a real SIGSTOP) and
#      launch.hang_confirm_s CONFIRM (default 10): the time from the stop to the stall being named
#      (the supervisor's own figure, "no heartbeat for N s"; target <= 3 s) and from the stop to
#      the run ending (target <= CONFIRM + 1 s after the stall began).
# Usage: tests/bench/bench_straggler_false_alarms.sh [RUNS] [BUSY] [CONFIRM]
set -euo pipefail
cd "$(dirname "$0")/../.."
runs="${1:-20}"
busy="${2:-$(nproc)}"
confirm="${3:-10}"
work=$(mktemp -d)
loads=()
cleanup() {
  for p in "${loads[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
cat > "$work/plan.json" <<JSON
{"schema": "trellis.plan/1", "name": "busy",
 "model": {"layers": 2, "hidden": 64, "heads": 4, "ffn": 256, "seq_len": 64, "vocab": 256},
 "cluster": {"nodes": [{"host": "localhost", "slots": 4}]},
 "parallel": {"dp": 4, "micro_batch_size": 2},
 "training": {"steps": 150, "lr": 0.003, "min_lr": 0.0003, "seed": 7,
              "data": {"source": "text", "path": "$PWD/resources/corpus/licenses.txt"}},
 "launch": {"hang_confirm_s": $confirm}}
JSON
grep -E -m1 -o 'model name.*' /proc/cpuinfo || true
echo "busy loops: $busy on $(nproc) cores; runs: $runs"
for ((i = 0; i < busy; ++i)); do
  sh -c 'while :; do :; done' &
  loads+=($!)
done
kills=0
for ((i = 1; i <= runs; ++i)); do
  if ! build/bin/trellis-cli --db "$work/busy.sqlite" run "$work/plan.json" --quiet > "$work/run-$i.out" 2> "$work/run-$i.err"; then
    kills=$((kills + 1))
    echo "run $i was ended: $(grep -m1 -E 'hang|failed' "$work/run-$i.err" || tail -1 "$work/run-$i.err")"
  fi
done
for p in "${loads[@]}"; do kill "$p" 2>/dev/null || true; done
loads=()
/usr/bin/python3 - "$work/busy.sqlite" "$runs" "$kills" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
runs, kills = int(sys.argv[2]), int(sys.argv[3])
counts = dict(db.execute("SELECT kind, count(*) FROM events GROUP BY kind").fetchall())
stalls = db.execute("SELECT count(*), coalesce(sum(duration_ms), 0), coalesce(max(duration_ms), 0) FROM stalls").fetchone()
print(f"busy machine: {runs} runs, false kills {kills} (target 0); stalls named {stalls[0]} "
      f"({stalls[1] / 1000:.1f} s in all, the longest {stalls[2] / 1000:.1f} s); false straggler alarms "
      f"{counts.get('straggler', 0)}; hang events {counts.get('hang', 0)}")
PY
# A rank stopped for good: named, then ended.
start=$(date +%s.%N)
build/bin/trellis-cli --db "$work/stop.sqlite" run "$work/plan.json" --inject stop@2:20 --quiet > "$work/stop.out" 2> "$work/stop.err" || true
ended=$(date +%s.%N)
/usr/bin/python3 - "$work/stop.sqlite" "$work/stop.err" "$confirm" <<'PY'
import re, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
err = open(sys.argv[2]).read()
confirm = float(sys.argv[3])
named = re.search(r"stall: rank 2 .*?no heartbeat for (\d+\.\d) s", err)
decided = re.search(r"rank 2's process has been stopped for (\d+\.\d) s", err)
stall = db.execute("SELECT duration_ms, outcome FROM stalls ORDER BY rowid LIMIT 1").fetchone()
if not (named and decided and stall):
    print("stopped rank: not named and ended as expected\n" + err[-2000:])
    sys.exit(1)
silent = float(named.group(1))
after_named = stall[0] / 1000 - silent
print(f"stopped rank: stall named {silent:.1f} s after its last heartbeat (target <= 3 s); hang decided "
      f"{after_named:.1f} s after the stall was named (target <= {confirm + 1:.0f} s: the confirmation time + 1 s; "
      f"it had been seen stopped for {float(decided.group(1)):.1f} s); outcome {stall[1]}")
PY
echo "stopped-rank run, launch to end: $(/usr/bin/python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$ended") s"
