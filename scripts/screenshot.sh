#!/usr/bin/env bash
# Screenshots of the workbench under Xvfb, taken with ImageMagick's import.
#
#   scripts/screenshot.sh OUT.png [SECONDS] [PLAN] [WORKBENCH OPTIONS...]
#       one screenshot: the plan opened (and launched, unless options are given: pass "" to only
#       open it), taken SECONDS (default 12) after the start. SIZE=1920x1080 and THEME=dark|light
#       change the screen and the palette.
#         scripts/screenshot.sh docs/estimate.png 6 resources/plans/gpu/llama2-70b-dgx-h100.json --search
#   scripts/screenshot.sh --set DIR
#       every mode (start, plan, run, history) at 1280x800 and 1920x1080, light and dark:
#       DIR/MODE-SIZE-THEME.png. Two short runs of a pipeline-with-experts plan are recorded
#       first (trellis-cli, one tagged, one with a note), so that Run and History have something
#       to show; History shows the newest run selected, with its summary.
#
# Each workbench starts with settings of its own (a fresh XDG_CONFIG_HOME): a person's saved
# layout never changes what the screenshots show.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v import >/dev/null || ! command -v xvfb-run >/dev/null; then
  echo "screenshot.sh: needs ImageMagick's import and xvfb-run (scripts/install-deps.sh installs both)" >&2
  exit 2
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# shot OUT SIZE THEME SECONDS ARGS... : one workbench, one screenshot
shot() {
  local out="$1" size="$2" theme="$3" delay="$4"
  shift 4
  rm -f "$out"
  XDG_CONFIG_HOME="$(mktemp -d -p "$scratch")" xvfb-run -a -s "-screen 0 ${size}x24" \
    bash -c 'build/bin/trellis -qwindowgeometry "$0+0+0" --theme "$1" "${@:3}" & app=$!
             sleep "$2"; import -window root "'"$out"'"; kill $app; wait $app 2>/dev/null || true' \
    "$size" "$theme" "$delay" "$@"
  if [ ! -s "$out" ]; then
    echo "screenshot.sh: no screenshot was written to $out" >&2
    exit 1
  fi
  echo "wrote $out"
}

if [ "${1:-}" = "--set" ]; then
  dir="${2:?usage: scripts/screenshot.sh --set DIR}"
  mkdir -p "$dir"
  db="$scratch/history.sqlite"
  for lr in 0.003 0.001; do
    sed "s/\"lr\": 0.003/\"lr\": $lr/" tests/data/plans/pp2_dp2_experts.json > tests/data/plans/.screenshot-plan.json
    build/bin/trellis-cli --db "$db" run tests/data/plans/.screenshot-plan.json --quiet >/dev/null
  done
  rm -f tests/data/plans/.screenshot-plan.json
  build/bin/trellis-cli --db "$db" runs tag 1 baseline >/dev/null
  build/bin/trellis-cli --db "$db" runs note last "lr 0.001 against the baseline's 0.003" >/dev/null
  for size in 1280x800 1920x1080; do
    for theme in light dark; do
      shot "$dir/start-$size-$theme.png" "$size" "$theme" 4 --db "$db"
      shot "$dir/plan-$size-$theme.png" "$size" "$theme" 4 --db "$db" resources/plans/pipeline-cpu.json
      shot "$dir/run-$size-$theme.png" "$size" "$theme" 5 --db "$db" --run last
      shot "$dir/history-$size-$theme.png" "$size" "$theme" 5 --db "$db" --mode history --run last
    done
  done
  exit 0
fi

out="${1:-docs/screenshot.png}"
delay="${2:-12}"
plan="${3:-resources/plans/quickstart.json}"
if [ $# -gt 3 ]; then shift 3; options=("$@"); else options=(--launch); fi
[ "${options[*]}" = "" ] && options=()
db="$scratch/history.sqlite"
shot "$out" "${SIZE:-1280x800}" "${THEME:-light}" "$delay" --db "$db" "${options[@]}" "$plan"
# The run belongs to its supervisor and outlives the window: stop it.
if [ -f "$db" ]; then
  run=$(sqlite3 -cmd ".timeout 5000" "$db" "SELECT run_id FROM runs ORDER BY id DESC LIMIT 1" 2>/dev/null || true)
  [ -n "$run" ] && build/bin/trellis-cli --db "$db" stop "$run" >/dev/null 2>&1 || true
fi
