#!/usr/bin/env bash
# Configures (Ninja, Release, ccache when present) and builds into build/. Shared by run.sh and
# test.sh. Extra arguments go to cmake at configure time.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
elif [ $# -gt 0 ]; then
  cmake -S . -B build "$@"
fi
cmake --build build -j "$jobs"
