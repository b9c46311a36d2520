#!/usr/bin/env python3
"""Each ctest entry run alone, one after another, with the CPU time it took (user + system of the
test and everything it started: mpirun, ranks, sshd, slurmd steps started for it), heaviest first.

    scripts/suite-cpu.py BUILD_DIR [-R REGEX] [-E REGEX] [--json FILE]

On two cores the suite can not end before (sum of CPU seconds) / 2: this is the floor that
`ctest -j` works against, and the list of what to make cheaper. Wall seconds alone are printed
beside (a suite that waits has wall >> CPU). Runs the entries as ctest would (command, working
folder, environment from the test's properties); takes as long as the suites' times summed.
Each entry runs in a CPU-accounting cgroup of its own (root: cgroup v1 cpuacct or v2), which counts
mpirun's ranks and any daemon the test starts; without one, only the processes the test reaped.
docs/benchmarks.md ("The suite's own time") keeps its figures. Standard library only.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time


def entries(build, include, exclude):
    out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, check=True,
                         capture_output=True, text=True).stdout
    for test in json.loads(out)["tests"]:
        name = test["name"]
        if include and not re.search(include, name):
            continue
        if exclude and re.search(exclude, name):
            continue
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        if props.get("DISABLED"):
            continue
        yield name, test["command"], props


CGROUP_ROOTS = ("/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup")  # cgroup v1's cpuacct, else v2


def make_cgroup(name):
    """A CPU-accounting cgroup for one test (everything it starts, daemons included, stays in it),
    or None where none can be made (then the test's reaped children are counted: mpirun's ranks
    and daemons are missed)."""
    for root in CGROUP_ROOTS:
        usage = "cpuacct.usage" if root.endswith("cpuacct") else "cpu.stat"
        if not os.path.exists(os.path.join(root, usage)) and not os.path.exists(os.path.join(root, "cgroup.controllers")):
            continue
        path = os.path.join(root, "trellis-suite-cpu-" + re.sub(r"[^A-Za-z0-9_]", "_", name))
        try:
            os.makedirs(path, exist_ok=True)
            if os.path.exists(os.path.join(path, usage)):
                return path, usage
            os.rmdir(path)
        except OSError:
            continue
    return None


def cgroup_seconds(group):
    path, usage = group
    with open(os.path.join(path, usage)) as f:
        text = f.read()
    if usage == "cpuacct.usage":
        return int(text) / 1e9
    for line in text.splitlines():
        if line.startswith("usage_usec "):
            return int(line.split()[1]) / 1e6
    return 0.0


def remove_cgroup(group):
    path, _ = group
    for _ in range(50):  # processes left behind (killed daemons) leave it within a moment
        try:
            os.rmdir(path)
            return
        except OSError:
            time.sleep(0.1)


def run(command, props, name):
    env = dict(os.environ)
    for item in props.get("ENVIRONMENT", []):
        key, _, value = item.partition("=")
        env[key] = value
    cwd = props.get("WORKING_DIRECTORY") or None
    timeout = float(props.get("TIMEOUT", 1500))
    start = time.monotonic()
    before = os.times()
    group = make_cgroup(name)
    join = None
    if group:
        procs = os.path.join(group[0], "cgroup.procs")

        def join():
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, preexec_fn=join)
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        code = proc.wait()
    wall = time.monotonic() - start
    if group:
        time.sleep(0.5)  # what the test left to end on its own (a daemon told to stop)
        cpu = cgroup_seconds(group)
        remove_cgroup(group)
        return code, wall, cpu
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return code, wall, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("-R", dest="include")
    parser.add_argument("-E", dest="exclude")
    parser.add_argument("--json", help="also write the figures to FILE")
    args = parser.parse_args()
    rows = []
    for name, command, props in entries(args.build, args.include, args.exclude):
        code, wall, cpu = run(command, props, name)
        skip = props.get("SKIP_RETURN_CODE")
        status = "skipped" if skip is not None and code == int(skip) else ("ok" if code == 0 else f"exit {code}")
        rows.append({"name": name, "wall": wall, "cpu": cpu, "status": status})
        print(f"{cpu:8.1f} cpu-s {wall:8.1f} s  {name}  {status}", file=sys.stderr, flush=True)
    rows.sort(key=lambda r: -r["cpu"])
    print(f"{'suite':50s} {'cpu-s':>8s} {'wall s':>8s}")
    for r in rows:
        print(f"{r['name']:50s} {r['cpu']:8.1f} {r['wall']:8.1f}  {r['status'] if r['status'] != 'ok' else ''}")
    total_cpu = sum(r["cpu"] for r in rows)
    print(f"{'sum':50s} {total_cpu:8.1f} {sum(r['wall'] for r in rows):8.1f}")
    print(f"floor on {os.cpu_count()} cores: {total_cpu / os.cpu_count():.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
