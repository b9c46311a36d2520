#!/usr/bin/env bash
# Soak: RANKS simulated ranks (default 1024) at HZ steps a second (20) for SECONDS (600) through
# the real path — one RankLink socket per rank, the supervisor's receiver, detectors, SQLite
# history and live feed — with the workbench following the run under Xvfb. Every 15 s it samples
# the resident memory of the supervisor and of the workbench; at the end it checks the history:
# every rank's telemetry arrived in sequence up to its Goodbye (received_seq = goodbye_seq + 1),
# nothing lost or dropped, every step of every rank stored, no detector alarm (the run has no slow
# or silent rank) and every acknowledgement within 2 s (the simulated ranks' own measure). Prints the RSS series and a verdict.
# A script, not a test: it takes SECONDS and a few GB of disk for the history.
# Usage: tests/bench/bench_soak.sh [RANKS] [HZ] [SECONDS]   (SOAK_GUI=0: without the workbench;
# SOAK_RELAYS=K: the first K nodes of 8 ranks through real relay processes, default 2 from 16 ranks;
# SOAK_POLL=S: sample every S seconds, default 15; SOAK_NICE=N: the simulated ranks N nicer than the
# supervisor and the workbench, default 10 — they stand for other machines; 0: the same priority). It also prints when every step was stored
# (to the sampling interval) and the supervisor's CPU seconds at its last sample.
set -euo pipefail
cd "$(dirname "$0")/../.."
ranks="${1:-1024}"
hz="${2:-20}"
seconds="${3:-600}"
work=$(mktemp -d)
db="$work/history.sqlite"
gui=""
keep=0
cleanup() {
  [ -n "$gui" ] && kill "$gui" 2>/dev/null || true
  [ "$keep" -eq 1 ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT
rss() { awk '/^VmRSS/ { printf "%d", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || echo "-"; }
q() { sqlite3 -cmd ".timeout 30000" "$db" "$@"; }

relays="${SOAK_RELAYS:-$( [ "$ranks" -ge 16 ] && echo 2 || echo 0 )}"
out=$(build/bin/trellis-cli --db "$db" simulate --ranks "$ranks" --hz "$hz" --seconds "$seconds" --relays "$relays" \
  --nice "${SOAK_NICE:-10}" --detach)
run=$(echo "$out" | awk '/^run / { print $2 }')
owner=$(echo "$out" | awk '/owner pid/ { print $3 }' | tr -d ';')
echo "run $run: $ranks ranks x $hz Hz x $seconds s ($relays nodes through relay processes); supervisor pid $owner"
# The workbench, following the run (it reattaches to runs going on when it opens).
if [ "${SOAK_GUI:-1}" != 0 ] && command -v xvfb-run >/dev/null; then
  xvfb-run -a -s "-screen 0 1280x800x24" build/bin/trellis --db "$db" --panel heatmap >/dev/null 2>&1 &
  sleep 5
  gui=$(pgrep -f "^build/bin/trellis --db $db" | head -1 || true)
fi
echo "elapsed_s supervisor_rss_mib workbench_rss_mib steps_stored_per_rank (of $(awk -v h="$hz" 'BEGIN { print h }') a second)"
start=$(date +%s)
steps=$(awk -v h="$hz" -v s="$seconds" 'BEGIN { printf "%d", h * s + 0.5 }')
stored_at="" cpu="?"
while kill -0 "$owner" 2>/dev/null; do
  now=$(( $(date +%s) - start ))
  stored=$(q "SELECT coalesce(sum(n), 0) / $ranks FROM step_blocks" 2>/dev/null || echo "?")
  cpu=$(awk '{ printf "%.1f", ($14 + $15) / 100 }' "/proc/$owner/stat" 2>/dev/null || echo "$cpu")
  echo "$now $(rss "$owner") $( [ -n "$gui" ] && rss "$gui" || echo -) $stored"
  if [ -z "$stored_at" ] && [ "$stored" != "?" ] && [ "$stored" -ge "$steps" ]; then stored_at="$now s"; fi
  sleep "${SOAK_POLL:-15}"
done
[ -z "$stored_at" ] && stored_at="the last sample, by the end ($(( $(date +%s) - start )) s)"
echo "every step stored after ${stored_at} of a ${seconds} s run; supervisor CPU ${cpu} s at its last sample"
status=$(q "SELECT status FROM runs WHERE run_id = '$run'")
rows=$(q "SELECT coalesce(sum(n), 0) FROM step_blocks")
incomplete=$(q "SELECT count(*) FROM ranks WHERE goodbye_seq IS NULL OR received_seq != goodbye_seq + 1")
lost=$(q "SELECT coalesce(sum(lost), 0) + coalesce(sum(dropped), 0) FROM ranks")
alarms=$(q "SELECT count(*) FROM events WHERE kind IN ('hang', 'straggler', 'node loss', 'divergence', 'nan')")
acks=$(q "SELECT message FROM events WHERE message LIKE 'simulated ranks: acknowledgements%' LIMIT 1")
ack_s=$(echo "$acks" | awk '{ for (i = 1; i < NF; i++) if ($i == "within") print $(i + 1) }')
echo "status $status; step rows $rows of $((ranks * steps)); ranks not complete in sequence $incomplete; messages lost or dropped $lost; false alarms $alarms"
echo "${acks:-no acknowledgement figure from the simulated ranks}"
if [ "$status" = completed ] && [ "$rows" -eq $((ranks * steps)) ] && [ "$incomplete" -eq 0 ] && [ "$lost" -eq 0 ] &&
   [ "$alarms" -eq 0 ] && [ -n "$ack_s" ] && awk -v s="$ack_s" 'BEGIN { exit !(s <= 2.0) }'; then
  echo "soak: PASS (0 sequence gaps)"
else
  echo "soak: FAIL"
  q "SELECT error FROM runs WHERE run_id = '$run'"
  q "SELECT kind, message FROM events ORDER BY id DESC LIMIT 5"
  tail -20 "$work"/runs/*.log 2>/dev/null || true
  keep=1
  exit 1
fi
