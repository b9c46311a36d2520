#!/usr/bin/env bash
# The history's two engines side by side: RANKS simulated ranks (default 1024) at HZ steps a second
# (20) for SECONDS (60) through the real path — one RankLink socket per rank, the supervisor's
# receiver, detectors and history writer, every message acknowledged after its commit — once into
# an SQLite file and once into a PostgreSQL server (a private one, tests/support/postgres_cluster.sh
# up --durable: Debian's defaults, fsync on), one after the other in one invocation. For each:
# the wall time of the run (a writer that cannot keep up makes the run end late: the ranks wait for
# acknowledgements), the supervisor's CPU seconds and peak memory, and the history's verdict: every
# rank's telemetry arrived in sequence up to its Goodbye (received_seq = goodbye_seq + 1), nothing
# lost, every step of every rank stored.
# Usage: tests/bench/bench_history_engines.sh [RANKS] [HZ] [SECONDS]   (needs build/bin/trellis-cli)
set -euo pipefail
cd "$(dirname "$0")/../.."
ranks="${1:-1024}"
hz="${2:-20}"
seconds="${3:-60}"
work=$(mktemp -d /tmp/trellis-bench-history-XXXXXX)
cleanup() { bash tests/support/postgres_cluster.sh down "$work/pg" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
chmod 711 "$work" # the server runs as nobody under root
bash tests/support/postgres_cluster.sh up "$work/pg" --durable
url=$(cat "$work/pg/url")
export XDG_DATA_HOME="$work/data"

verdict() { # engine, then the SQL client's command
  local engine=$1; shift
  local ranksRow steps
  ranksRow=$("$@" "SELECT count(*), sum(CASE WHEN received_seq = goodbye_seq + 1 THEN 1 ELSE 0 END), coalesce(sum(lost), 0) FROM ranks")
  steps=$("$@" "SELECT coalesce(sum(n), 0), coalesce(max(last_step), 0) FROM step_blocks")
  echo "$engine: ranks, complete, lost: $ranksRow; step reports stored, last step: $steps"
}

# The PostgreSQL server's CPU seconds so far: its own and its finished backends' (cutime, cstime).
server_cpu() {
  local pid
  pid=$(head -n1 "$work/pg/data/postmaster.pid")
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15 + $16 + $17) / hz }' "/proc/$pid/stat"
}

one() { # engine, history
  local engine=$1 db=$2
  local start end server0
  server0=$(server_cpu)
  start=$(date +%s.%N)
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" build/bin/trellis-cli --db "$db" simulate --ranks "$ranks" --hz "$hz" \
    --seconds "$seconds" --quiet --run-id "bench-$engine" >"$work/$engine.out" 2>&1 || { cat "$work/$engine.out"; return 1; }
  end=$(date +%s.%N)
  read -r wall user sys rss <"$work/time"
  printf '%s: %d ranks x %d Hz x %d s: wall %.1f s (%.1f s past the run), CPU of trellis-cli simulate (the supervisor and the\n  simulated ranks) %.1f s, peak RSS %d MB; the PostgreSQL server %.1f CPU s\n' \
    "$engine" "$ranks" "$hz" "$seconds" "$wall" "$(echo "$wall - $seconds" | bc)" "$(echo "$user + $sys" | bc)" $((rss / 1024)) \
    "$(echo "$(server_cpu) - $server0" | bc)"
}

one sqlite "$work/history.sqlite"
verdict sqlite sqlite3 -separator ' ' "$work/history.sqlite"
one postgresql "$url"
verdict postgresql psql -X -A -t -F ' ' -d "$url" -c
echo "PostgreSQL database size: $(psql -X -A -t -d "$url" -c "SELECT pg_size_pretty(pg_database_size(current_database()))");" \
  "SQLite file: $(du -h "$work/history.sqlite" | cut -f1)"
