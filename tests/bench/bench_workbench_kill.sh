#!/usr/bin/env bash
# The workbench killed mid-run, REPS times (default 100): each time `trellis --launch` starts a
# 4-rank run of the test model under its own supervisor, is killed with kill -9 after a random
# 0.5-3 s, and the run is followed to its end with `trellis-cli attach`. Then the history is
# checked: the run completed, every rank's every step is there, every rank's telemetry arrived
# in sequence up to its Goodbye (received_seq = goodbye_seq + 1) with nothing dropped, and
# PRAGMA integrity_check says ok. Prints one line per repetition and what was lost in total.
# Usage: tests/bench/bench_workbench_kill.sh [REPS] [STEPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
reps="${1:-100}"
steps="${2:-400}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1 QT_QPA_PLATFORM=offscreen
sed -e "s/\"steps\": 12/\"steps\": $steps/" -e "s#\"\\.\\./\\.\\./\\.\\./resources/#\"$PWD/resources/#" \
  tests/data/plans/dp4_short.json > "$work/plan.json"
db="$work/history.sqlite"
q() { sqlite3 -cmd ".timeout 10000" "$db" "$@"; }
lost_steps=0 lost_messages=0 incomplete=0 bad_files=0 killed_mid_run=0 not_launched=0
for i in $(seq "$reps"); do
  before=$( [ -f "$db" ] && q "SELECT count(*) FROM runs" || echo 0)
  build/bin/trellis --db "$db" --launch "$work/plan.json" >/dev/null 2>&1 &
  gui=$!
  sleep "$(awk -v r="$RANDOM" 'BEGIN { printf "%.2f", 0.5 + 2.5 * r / 32767 }')"
  kill -9 "$gui" 2>/dev/null || true
  wait "$gui" 2>/dev/null || true
  running=$(build/bin/trellis-cli ps | grep -c '^[0-9]' || true)
  [ "$running" -gt 0 ] && killed_mid_run=$((killed_mid_run + 1))
  # A supervisor the window started just before it died may still be claiming its run.
  sleep 0.5
  while build/bin/trellis-cli ps | grep -q '^[0-9]'; do sleep 0.2; done
  if [ "$( [ -f "$db" ] && q "SELECT count(*) FROM runs" || echo 0)" -le "$before" ]; then
    not_launched=$((not_launched + 1))
    echo "run $i: the window was killed before it launched anything"
    continue
  fi
  run=$(q "SELECT id FROM runs ORDER BY id DESC LIMIT 1")
  status=$(q "SELECT status FROM runs WHERE id = $run")
  rows=$(q "SELECT coalesce(sum(n), 0) FROM step_blocks WHERE run = $run")
  gaps=$(q "SELECT coalesce(sum(coalesce(goodbye_seq, -1) + 1 - received_seq + dropped + lost), 0) FROM ranks WHERE run = $run")
  ranks=$(q "SELECT count(*) FROM ranks WHERE run = $run AND goodbye_seq IS NOT NULL")
  integrity=$(q "PRAGMA integrity_check")
  missing=$((4 * steps - rows))
  lost_steps=$((lost_steps + missing))
  lost_messages=$((lost_messages + gaps))
  [ "$status" = completed ] && [ "$ranks" -eq 4 ] || incomplete=$((incomplete + 1))
  [ "$integrity" = ok ] || bad_files=$((bad_files + 1))
  echo "run $i: $status (killed while running: $([ "$running" -gt 0 ] && echo yes || echo no)), step rows $rows/$((4 * steps)), telemetry gaps $gaps, integrity $integrity"
done
echo "$reps workbench kills ($killed_mid_run while the run was going, $not_launched before it launched): $lost_steps step rows lost, $lost_messages telemetry messages lost, $incomplete runs not completed, $bad_files integrity failures"
