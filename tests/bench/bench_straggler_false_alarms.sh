#!/usr/bin/env bash
# False alarms of the straggler and hang detectors on a clean run: trains the dp-4 test model for
# about MINUTES minutes (default 10) through trellis-cli on this machine (4 ranks on the cores
# there are, so scheduling noise is real) and counts the straggler and hang events recorded. The
# target is 0. Usage: tests/bench/bench_straggler_false_alarms.sh [MINUTES]
set -euo pipefail
cd "$(dirname "$0")/../.."
minutes="${1:-10}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
plan() {
  cat > "$work/plan.json" <<JSON
{"schema": "trellis.plan/1", "name": "clean",
 "model": {"layers": 2, "hidden": 64, "heads": 4, "ffn": 256, "seq_len": 64, "vocab": 256},
 "cluster": {"nodes": [{"host": "localhost", "slots": 4}]},
 "parallel": {"dp": 4, "micro_batch_size": 2},
 "training": {"steps": $1, "lr": 0.003, "min_lr": 0.0003, "seed": 7,
              "data": {"source": "text", "path": "$PWD/resources/corpus/licenses.txt"}}}
JSON
}
# How long a step takes here (a 300-step run, launch included), then a run of the asked length.
plan 300
seconds=$(build/bin/trellis-cli --db "$work/h.sqlite" run "$work/plan.json" --quiet |
          sed -n 's/^completed 300 steps in \([0-9.]*\) s.*/\1/p')
steps=$(/usr/bin/python3 -c "import sys; print(int(float(sys.argv[1]) * 60 * 300 / float(sys.argv[2])))" "$minutes" "$seconds")
plan "$steps"
echo "clean run: $steps steps (about $minutes min; 300 steps took $seconds s)"
build/bin/trellis-cli --db "$work/h.sqlite" run "$work/plan.json" --quiet
/usr/bin/python3 - "$work/h.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
run = db.execute("SELECT id FROM runs ORDER BY id DESC LIMIT 1").fetchone()[0]
steps = db.execute("SELECT max(last_step) FROM step_blocks WHERE run = ?", (run,)).fetchone()[0]
rows = db.execute("SELECT kind, count(*) FROM events WHERE run = ? GROUP BY kind", (run,)).fetchall()
counts = dict(rows)
print(f"steps {steps}: straggler alarms {counts.get('straggler', 0)}, hang alarms {counts.get('hang', 0)}")
PY
