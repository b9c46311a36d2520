#!/bin/sh
# Runs a test suite (the command after it) at background CPU priority, so that the suites that judge
# timing, run at normal priority beside it, get a core the moment they want one
# (cmake/TrellisTesting.cmake, TRELLIS_TEST_NICE; docs/benchmarks.md, "The suite's own time").
#
#   tests/support/background.sh COMMAND [ARGUMENT]...
#
# Two steps, each taken where it can be:
# - a CPU cgroup of the lowest weight (cgroup v1 `cpu`, cpu.shares 2; or v2, cpu.weight 1), joined
#   before the exec. Everything the suite starts stays in it, whatever it does: `nice` alone is not
#   enough where the kernel groups tasks by session (autogroup), because every `trellis-cli run`
#   (its supervisor starts in a session of its own), sshd session and daemon would be a group of
#   normal weight again. Needs root and a writable cgroup file system; skipped quietly without.
# - `nice -n 19`, which any user may do: enough without autogroup, and inherited by everything.
set -u
join() { # $1: the cgroup's folder, $2: weight file, $3: weight
  [ -d "$1" ] || mkdir "$1" 2>/dev/null || [ -d "$1" ] || return 1
  [ "$(cat "$1/$2" 2>/dev/null)" = "$3" ] || echo "$3" > "$1/$2" 2>/dev/null || return 1
  echo $$ > "$1/cgroup.procs" 2>/dev/null
}
# Under the cgroup this suite is in (a container's own, or the root).
v1=$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}cpu\(,[^:]*\)\{0,1\}:\(.*\)$/\3/p' /proc/self/cgroup | head -n 1)
v2=$(sed -n 's/^0:://p' /proc/self/cgroup | head -n 1)
if [ -n "$v1" ] && [ -e "/sys/fs/cgroup/cpu$v1/cpu.shares" ]; then
  join "/sys/fs/cgroup/cpu${v1%/}/trellis-test-background" cpu.shares 2 || true
elif [ -n "$v2" ] && grep -qw cpu "/sys/fs/cgroup$v2/cgroup.controllers" 2>/dev/null; then
  here="/sys/fs/cgroup${v2%/}"
  grep -qw cpu "$here/cgroup.subtree_control" || echo +cpu > "$here/cgroup.subtree_control" 2>/dev/null || true
  join "$here/trellis-test-background" cpu.weight 1 || true
fi
exec nice -n 19 "$@"
