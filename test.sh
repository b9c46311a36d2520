#!/usr/bin/env bash
# Trellis: install what is missing, build, run every test with ctest. Exits non-zero on failure.
#   ./test.sh                 all tests
#   ./test.sh -L unit         only a label (unit, mpi, gui, integration, slow, transformers, ssh, slurm,
#                             package, gpu, pytorch, postgresql)
#   TRELLIS_TEST_JOBS=1 ./test.sh   one suite at a time (the default: cores + 3 beside each other)
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
scripts/build.sh
scripts/setup-hf-env.sh build
export QT_QPA_PLATFORM=offscreen
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
cd build
# Suites run beside each other: most of the suite's time is waiting (sshd, Slurm, mpirun, servers),
# not computing. Three more than the cores by default (TRELLIS_TEST_JOBS sets it); how much of the
# machine each suite may take is ctest's resource groups (tests/ctest-resources.json, LOAD in
# cmake/TrellisTesting.cmake): at most four suites that train at once; the cases that judge timing
# one at a time at normal CPU priority, every other suite at background priority
# (tests/support/background.sh: a cgroup of the lowest CPU weight where one can be made, and nice 19),
# so a timing case gets a core the moment it wants one (docs/benchmarks.md "The suite's own time").
jobs=${TRELLIS_TEST_JOBS:-$(( $(nproc 2>/dev/null || echo 2) + 3 ))}
# ctest decides; the summary after it lists what was skipped and why (a skip is never a pass).
status=0
ctest --output-on-failure --timeout 900 -j "$jobs" --output-junit ctest-junit.xml "$@" || status=$?
python3 ../scripts/test-summary.py . ctest-junit.xml
# Say how the background suites were held back: with nice alone (no cgroup could be made: not root,
# or a read-only cgroup file system) the kernel's session groups can still starve a timing case.
background=$(find /sys/fs/cgroup -maxdepth 6 -type d -name trellis-test-background 2>/dev/null | head -n 1)
if [ -n "$background" ]; then
  echo "background suites ran in the CPU cgroup $background (lowest weight) and at nice 19"
  rmdir "$background" 2>/dev/null || true
else
  echo "background suites ran at nice 19 only (no CPU cgroup could be made here): if a timing case named a false straggler, configure with -DTRELLIS_TIMING_SERIAL=ON"
fi
exit "$status"
