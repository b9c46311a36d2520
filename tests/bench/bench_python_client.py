#!/usr/bin/env python3
"""What trellis_telemetry costs a training script, side by side in one invocation:

  1. a simulated 50 ms step loop without and with telemetry (phase() around the work, step() at
     the end) against a fake supervisor (a real ZeroMQ ROUTER that acknowledges, in a process of
     its own as Trellis's supervisor is): the training
     thread's time in the telemetry calls (median, p99) and the loop's time per step, with minus
     without (blocks interleaved so drift cancels; this one carries the sleep's jitter);
  2. tiny all_reduce calls (1 float) on a 1-process gloo group, tracked vs untracked (the original
     function), interleaved in blocks; plus the wrapper alone around a collective that does nothing.

Targets: run.step (with its phase) <= 500 us per step (1% of 50 ms), <= 20 us per tracked
collective. --check exits 1 when over target (otherwise the figures are only printed).

usage: bench_python_client.py [--steps N] [--step-ms MS] [--busy] [--calls N] [--check]
       (use Debian's /usr/bin/python3: torch, pyzmq and protobuf)
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PYTHON_DIR = os.path.join(ROOT, "python")
sys.path.insert(0, PYTHON_DIR)

SUPERVISOR = """
import sys
from tests.fake_supervisor import FakeSupervisor
supervisor = FakeSupervisor(sys.argv[1], run_id="bench")
sys.stdin.read()
supervisor.wait_for(lambda s: s.has_goodbye(0), 5)
print(len(supervisor.messages(0)), supervisor.lost[0])
supervisor.close()
"""


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def simulate(seconds, busy):
    if busy:  # the GIL held by Python work most of the time: the sender thread competes for it
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass
    else:     # a wait with the GIL free (GPU work, a collective), as most of a real step
        time.sleep(seconds)


def bench_steps(run, steps, step_s, busy, block=5):
    """(per-step loop time without, with) in seconds and the telemetry calls' own times."""
    plain, traced, costs = [], [], []
    step = 0
    for _ in range(max(1, steps // block)):
        for _ in range(block):
            t0 = time.perf_counter()
            simulate(step_s * 0.4, busy)
            simulate(step_s * 0.6, busy)
            plain.append(time.perf_counter() - t0)
        for _ in range(block):
            step += 1
            t0 = time.perf_counter()
            c0 = time.perf_counter()
            forward = run.phase("forward")
            forward.__enter__()
            cost = time.perf_counter() - c0
            simulate(step_s * 0.4, busy)
            c0 = time.perf_counter()
            forward.__exit__(None, None, None)
            backward = run.phase("backward")
            backward.__enter__()
            cost += time.perf_counter() - c0
            simulate(step_s * 0.6, busy)
            c0 = time.perf_counter()
            backward.__exit__(None, None, None)
            run.step(step, loss=1.0 / step, tokens=4096, lr=1e-3, grad_norm=0.7, total_steps=steps)
            cost += time.perf_counter() - c0
            traced.append(time.perf_counter() - t0)
            costs.append(cost)
    return plain, traced, costs


def bench_collectives(calls, block=250):
    import torch
    import torch.distributed as dist
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=0, world_size=1)
    tracked = dist.all_reduce
    untracked = getattr(tracked, "__trellis_original__", None)
    if untracked is None:
        raise SystemExit("all_reduce is not tracked: was init() inside Trellis?")
    x = torch.zeros(1)
    for _ in range(200):  # warm up both
        tracked(x)
        untracked(x)
    deltas, t_tracked, t_untracked = [], [], []
    for _ in range(max(1, calls // block)):
        t0 = time.perf_counter()
        for _ in range(block):
            untracked(x)
        u = (time.perf_counter() - t0) / block
        t0 = time.perf_counter()
        for _ in range(block):
            tracked(x)
        t = (time.perf_counter() - t0) / block
        t_tracked.append(t)
        t_untracked.append(u)
        deltas.append(t - u)
    dist.destroy_process_group()

    # The wrapper alone: the same tracking around a collective that does nothing.
    from trellis_telemetry import _collectives

    def all_reduce(tensor, op=None, group=None, async_op=False):
        return None
    wrapped = _collectives._make_wrapper("all_reduce", all_reduce)
    tracker = _collectives._tracker
    tracker._world_size = 1
    n = 20000
    t0 = time.perf_counter()
    for _ in range(n):
        all_reduce(x)
    bare = (time.perf_counter() - t0) / n
    t0 = time.perf_counter()
    for _ in range(n):
        wrapped(x)
    alone = (time.perf_counter() - t0) / n - bare
    tracker.take_step()
    return t_untracked, t_tracked, deltas, alone


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--step-ms", type=float, default=50.0)
    p.add_argument("--busy", action="store_true", help="simulate the step with a busy loop (GIL held)")
    p.add_argument("--calls", type=int, default=3000)
    p.add_argument("--check", action="store_true", help="exit 1 when over target")
    a = p.parse_args()

    import trellis_telemetry

    tmp = tempfile.mkdtemp(prefix="bench-tt-")
    endpoint = "ipc://" + os.path.join(tmp, "telemetry.sock")
    # The supervisor in a process of its own, as in Trellis (it must not compete for this GIL).
    supervisor = subprocess.Popen([sys.executable, "-c", SUPERVISOR, endpoint], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=PYTHON_DIR))
    time.sleep(0.3)
    os.environ.update(TRELLIS_TELEMETRY_ENDPOINT=endpoint, TRELLIS_RUN_ID="bench", TRELLIS_PROTOCOL_VERSION="3",
                      TRELLIS_HEARTBEAT_MS="500", RANK="0", WORLD_SIZE="1")
    failures = []
    try:
        __import__("torch")  # what a training script has loaded (init() tracks its collectives)
        run = trellis_telemetry.init(handle_exit=False)
        step_s = a.step_ms / 1000.0
        plain, traced, costs = bench_steps(run, a.steps, step_s, a.busy)
        cost_med, cost_p99 = statistics.median(costs) * 1e6, percentile(costs, 0.99) * 1e6
        delta = (statistics.mean(traced) - statistics.mean(plain)) * 1e6
        delta_med = (statistics.median(traced) - statistics.median(plain)) * 1e6
        print("step loop (%d steps of %.0f ms, %s, each way; fake supervisor over ipc)" %
              (len(traced), a.step_ms, "busy loop" if a.busy else "sleep"))
        print("  without telemetry: %.3f ms/step (median %.3f)" % (statistics.mean(plain) * 1e3,
                                                                  statistics.median(plain) * 1e3))
        print("  with telemetry:    %.3f ms/step (median %.3f)" % (statistics.mean(traced) * 1e3,
                                                                  statistics.median(traced) * 1e3))
        print("  telemetry calls on the training thread (2 phases + step): median %.1f us (%.3f%% of %.0f ms), "
              "p99 %.1f us" % (cost_med, cost_med / (a.step_ms * 10), a.step_ms, cost_p99))
        print("  loop time with - without: mean %+.1f us (%+.3f%%), median %+.1f us (includes the sleep's jitter)"
              % (delta, delta / (a.step_ms * 10), delta_med))
        if cost_med > 500:
            failures.append("run.step costs %.0f us a step (target 500)" % cost_med)

        untracked, tracked, deltas, alone = bench_collectives(a.calls)
        over = statistics.median(deltas) * 1e6
        print("all_reduce of 1 float, 1-process gloo (%d calls each way, blocks of 250)" % a.calls)
        print("  untracked: %.2f us/call (median over blocks)" % (statistics.median(untracked) * 1e6))
        print("  tracked:   %.2f us/call (median over blocks)" % (statistics.median(tracked) * 1e6))
        print("  overhead per tracked collective: median %+.2f us (blocks: min %+.2f, max %+.2f); "
              "the wrapper alone: %.2f us" % (over, min(deltas) * 1e6, max(deltas) * 1e6, alone * 1e6))
        if over > 20:
            failures.append("a tracked collective costs %.1f us more (target 20)" % over)
        run.close()
        received, lost = supervisor.communicate("", timeout=30)[0].split()
        supervisor = None
        print("supervisor received %s messages in sequence, lost %s; the sender dropped %d" %
              (received, lost, run.stats()["dropped"]))
    finally:
        if supervisor is not None:
            supervisor.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("OVER TARGET: " + "; ".join(failures))
        if a.check:
            sys.exit(1)
    else:
        print("within target")


if __name__ == "__main__":
    main()
