#!/usr/bin/env bash
# Takes a screenshot of the workbench during a quick-start run under Xvfb (for the README).
# Usage: scripts/screenshot.sh [OUT.png] [SECONDS_INTO_RUN] [PLAN] [WORKBENCH OPTIONS...]
#   (needs imagemagick for `import`); default: the quick-start plan, launched; pass "" as the
#   options to only open the plan.
#   scripts/screenshot.sh docs/estimate.png 6 resources/plans/gpu/llama2-70b-dgx-h100.json --search
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/screenshot.png}"
delay="${2:-12}"
plan="${3:-resources/plans/quickstart.json}"
if [ $# -gt 3 ]; then shift 3; options="$*"; else options="--launch"; fi
if ! command -v import >/dev/null || ! command -v xvfb-run >/dev/null; then
  echo "screenshot.sh: needs ImageMagick's import and xvfb-run (apt-get install imagemagick xvfb)" >&2
  exit 2
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -f "$out"
db="$(mktemp -d)/history.sqlite"
xvfb-run -a -s "-screen 0 1280x800x24" bash -c "
  build/bin/trellis --db '$db' $options '$plan' &
  app=\$!
  sleep $delay
  import -window root '$out'
  kill \$app
  wait \$app 2>/dev/null || true
"
# The run belongs to its supervisor and outlives the window: stop it.
if [ -f "$db" ]; then
  run=$(sqlite3 -cmd ".timeout 5000" "$db" "SELECT run_id FROM runs ORDER BY id DESC LIMIT 1" 2>/dev/null || true)
  [ -n "$run" ] && build/bin/trellis-cli stop "$run" >/dev/null 2>&1 || true
fi
if [ ! -s "$out" ]; then
  echo "screenshot.sh: no screenshot was written to $out" >&2
  exit 1
fi
echo "wrote $out"
