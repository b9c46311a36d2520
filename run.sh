#!/usr/bin/env bash
# Trellis: install what is missing, build, and open the workbench on the quick-start plan
# (a small GPT on this machine's CPU, 4 ranks).
#   ./run.sh              open the workbench
#   ./run.sh --headless   run the same plan with trellis-cli and write an HTML report
set -euo pipefail
cd "$(dirname "$0")"
plan="resources/plans/quickstart.json"

scripts/install-deps.sh
scripts/build.sh

if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

if [ "${1:-}" = "--headless" ]; then
  shift
  report="${TRELLIS_REPORT:-$PWD/trellis-report.html}"
  exec build/bin/trellis-cli "$@" run "$plan" --report "$report"
fi

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
  echo "No display found: starting the workbench under Xvfb (use ./run.sh --headless for the CLI)." >&2
  exec xvfb-run -a -s "-screen 0 1600x1000x24" build/bin/trellis "$plan" "$@"
fi
exec build/bin/trellis "$plan" "$@"
