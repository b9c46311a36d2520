#!/usr/bin/env bash
# Restart from memory against restart from disk (issue #70): the quick start (4 ranks) under
# trellis-cli run with launch.restart (1 restart, 1 s back-off), disk checkpoints every 10 steps,
# one run with in-memory checkpoints every step beside it — the same plan otherwise, side by side
# in one invocation. Each run's rank (the highest pid of the job's trainers) is killed with
# SIGKILL KILL_AFTER seconds after the run's first step, from outside; the supervisor restarts
# the job, which resumes from the newest complete checkpoint. Prints per run: where it resumed
# from (the trainer's own restart event), the steps repeated (the supervisor's restart note), the
# time from the kill to the resume (the trainer's event) and to the end of the first step after it
# (that plus the step's own time), and whether the run completed with every step in the history.
# MODEL=medium: a GPT of 4 layers of 512 (12.9 M parameters, a 155 MB checkpoint) in the quick
# start's layout, 40 steps, instead of the quick start's model (a 5 MB checkpoint, which reads
# from the page cache as fast as from memory). DROP_CACHES=1 (root): the page cache dropped right
# after the kill, so the disk path really reads the disk.
# TARGET=ssh (root): the same plan over two ssh hosts made here (tests/support/netns_hosts.sh: network
# namespaces, each its own sshd), two ranks each, and instead of one rank a node lost whole: host2's
# ranks stopped, its memory store's holder killed and its store removed, then its ranks killed —
# the in-memory run resumes with host2's shards from their copy on host1.
# Steps repeated: the steps done before the failure (the supervisor's "in step F": F - 1) less the
# step resumed from.
# Usage: [MODEL=quick|medium] [DROP_CACHES=1] [TARGET=local|ssh] [KEEP=DIR] tests/bench/bench_memory_restart.sh [BUILD_DIR] [KILL_AFTER_S] [REPEATS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
kill_after=${2:-4}
repeats=${3:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/trellis-bench-memrestart.XXXXXX"); trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
grep -m1 "model name" /proc/cpuinfo || true
model=${MODEL:-quick}
target=${TARGET:-local}
if [ "$target" = ssh ]; then
  bash "$root/tests/support/netns_hosts.sh" up "$work/hosts" 2 > /dev/null
  trap 'bash "$root/tests/support/netns_hosts.sh" down "$work/hosts" > /dev/null; rm -rf "$work"' EXIT
  mkdir -p "$work/h1" "$work/h2"
fi
echo "cores: $(nproc); target: $target; model: $model; kill ${kill_after} s after the first step; ${repeats} times each; page cache dropped after the kill: ${DROP_CACHES:-0}"
plan() { # name, memory (0|1)
  /usr/bin/python3 - "$root" "$work" "$@" "$model" "$target" <<'PY'
import json, sys
root, work, name, memory, model, target = sys.argv[1:7]
plan = json.load(open(f"{root}/resources/plans/quickstart.json"))
plan["name"] = name
plan["training"]["data"]["path"] = f"{root}/resources/corpus/licenses.txt"
plan["training"]["steps"] = 400
if model == "medium":
    plan["model"] = {"arch": "gpt", "layers": 4, "hidden": 512, "heads": 8, "ffn": 2048, "seq_len": 128, "vocab": 256}
    plan["training"]["steps"] = 40
plan["training"]["checkpoint"] = {"every": 10, "dir": f"{work}/{name}-ckpt", "keep": 2}
if memory == "1":
    plan["training"]["checkpoint"]["memory"] = {"every": 1, "keep": 2}
plan.setdefault("launch", {})["restart"] = {"max_restarts": 1, "backoff_s": 1}
if target == "ssh":  # the two test hosts, two ranks each
    hosts = [line.split()[1] for line in open(f"{work}/hosts/hosts") if line.strip()]
    plan["cluster"]["nodes"] = [{"host": h, "slots": 2, "remote_dir": f"{work}/h{i + 1}"} for i, h in enumerate(hosts)]
    net = ".".join(hosts[0].split(".")[:3]) + ".0/24"
    plan["launch"].update({"target": "ssh", "ssh": {"port": 2222, "identity_file": f"{work}/hosts/client_key",
                                                     "known_hosts": f"{work}/hosts/known_hosts", "mpi_interface": net}})
json.dump(plan, open(f"{work}/{name}.json", "w"))
PY
}
first_step_seen() { # db, run: whether rank 0 reported a step
  "$build/bin/trellis-cli" --db "$1" export "$2" --format csv --table steps 2>/dev/null | awk -F, 'NR>1 && $2==0 {f=1} END {exit !f}'
}
one() { # name, memory, repeat
  local name=$1-$3 db="$work/$1-$3.sqlite"
  plan "$name" "$2"
  "$build/bin/trellis-cli" --db "$db" run "$work/$name.json" --quiet --run-id "$name" > "$work/$name.out" 2>&1 &
  local cli=$!
  for _ in $(seq 1 600); do first_step_seen "$db" "$name" && break; sleep 0.1; done
  sleep "$kill_after"
  local victim="" host2=()
  for pid in $(pgrep -f -- "$name" || true); do # a rank: the trainer with --plan (the run folder's frozen plan)
    [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = trellis-trainer ] || continue
    tr '\0' ' ' < /proc/"$pid"/cmdline 2>/dev/null | grep -q -- "--plan " || continue
    victim=$pid
    [ "$target" = ssh ] && [ "$(nsenter -t "$pid" -u hostname 2>/dev/null)" = host2 ] && host2+=("$pid")
  done
  local t_kill; t_kill=$(date -u +%s.%N)
  if [ "$target" = ssh ]; then # host2 lost: its ranks stopped, its holder and store gone, its ranks killed
    kill -STOP "${host2[@]}"
    for h in $(pgrep -f -- "--hold-checkpoints" || true); do
      [ "$(nsenter -t "$h" -u hostname 2>/dev/null)" = host2 ] || continue
      store=$(tr '\0' '\n' < /proc/"$h"/cmdline | sed -n '/^--store$/{n;p}')
      kill -9 "$h"; sleep 0.2; rm -rf "$store"
    done
    kill -9 "${host2[@]}"
    victim="${host2[*]}"; victim=${victim// /+}
  else
    [ -n "$victim" ] && kill -9 "$victim"
  fi
  if [ "${DROP_CACHES:-0}" = 1 ]; then sync; echo 3 > /proc/sys/vm/drop_caches; fi
  wait "$cli" || true
  "$build/bin/trellis-cli" --db "$db" export "$name" --format csv --table events --out "$work/$name.events.csv"
  "$build/bin/trellis-cli" --db "$db" export "$name" --format csv --table steps --out "$work/$name.steps.csv"
  echo "$name $2 $t_kill $victim" >> "$work/kills"
}
for r in $(seq 1 "$repeats"); do
  one disk 0 "$r"
  one memory 1 "$r"
done
[ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$work"/*.csv "$work"/*.out "$work/kills" "$KEEP"/ # KEEP=DIR: each run's events, steps and output
/usr/bin/python3 - "$work" <<'PY'
import csv, datetime, os, re, sys
work = sys.argv[1]
def at(text):
    return datetime.datetime.strptime(text.rstrip("Z"), "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc).timestamp()
print(f"{'run':<10} {'resumed from':<34} {'repeated':>8} {'kill->resume s':>15} {'kill->1st step s':>17} {'steps':>6}")
sums = {}
for line in open(os.path.join(work, "kills")):
    name, memory, t_kill, victim = (line.split() + [""])[:4]
    events = list(csv.DictReader(open(os.path.join(work, name + ".events.csv"))))
    steps = [r for r in csv.DictReader(open(os.path.join(work, name + ".steps.csv"))) if r["rank"] == "0"]
    resumed = [e for e in events if e["kind"] == "restart" and e["rank"] == "0" and e["message"].startswith("resumed from")]
    note = [e for e in events if e["kind"] == "restart" and e["message"].startswith("restart ")]
    if not resumed or not note:
        print(f"{name:<10} no restart recorded (victim {victim or 'none'})"); continue
    r = resumed[-1]
    step = int(r["step"])
    m = re.search(r" in step (\d+):", note[-1]["message"])
    repeated = int(m.group(1)) - 1 - step if m else -1
    first = [float(x["step_ms"]) for x in steps if int(x["step"]) == step + 1]
    t_resume = at(r["at"]) - float(t_kill)
    t_first = t_resume + (first[-1] / 1000 if first else float("nan"))
    where = ("memory " if "memory:" in r["message"] else "disk ") + f"step {step}"
    done = len({int(x['step']) for x in steps})
    print(f"{name:<10} {where:<34} {repeated:>8} {t_resume:>15.2f} {t_first:>17.2f} {done:>6}")
    sums.setdefault(memory, []).append((repeated, t_resume, t_first))
for memory, label in (("0", "disk"), ("1", "memory")):
    xs = sums.get(memory, [])
    if xs:
        n = len(xs)
        print(f"mean {label:<6}: {sum(x[0] for x in xs) / n:.1f} steps repeated, kill->resume {sum(x[1] for x in xs) / n:.2f} s, "
              f"kill->first step {sum(x[2] for x in xs) / n:.2f} s ({n} runs)")
PY
