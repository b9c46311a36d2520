#!/usr/bin/env python3
"""PyTorch jobs launched and watched by Trellis (docs/pytorch.md), with Debian's real torch (CPU,
gloo), the real trellis-cli, mpirun, sockets and history file. examples/pytorch/train_ddp.py is the
job: a 4-process DDP run equals the same script launched the way torchrun does; a SIGSTOP'd rank
is named with the collective the others wait in, in the world or in a process group of the job's
own; a slowed rank is flagged as a straggler; kill -9
of a rank restarts the job, which resumes from its checkpoint; a command that cannot run fails the
run naming it and its exit code.

usage: test_pytorch_jobs.py TRELLIS_CLI [--timing | --not-timing | unittest's arguments]
       (PYTHONPATH must reach python/, the trellis_telemetry package; --timing: only the cases that
       judge timing, which ctest runs alone; --not-timing: the others)
"""
import json
import re
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE = os.path.join(ROOT, "examples", "pytorch", "train_ddp.py")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
CLI = None
RANKS = 4


def environment():
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + env.get("PYTHONPATH", "")
    for name in list(env):  # what an outer launcher set must not leak into these jobs
        if name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT") or (
                name.startswith("TRELLIS_") and name != "TRELLIS_TRACK_COLLECTIVES"):
            del env[name]
    return env


def read_losses(path):
    """{step: loss} from the example's --losses file (the last line of a step wins)."""
    out = {}
    with open(path) as f:
        for line in f:
            step, loss = line.split()
            out[int(step)] = float(loss)
    return out


class Job:
    """`trellis-cli run ...` in the background, with its history file."""

    def __init__(self, workdir, args):
        self.db = os.path.join(workdir, "history.db")
        self.out = open(os.path.join(workdir, "cli.out"), "w+")
        self.proc = subprocess.Popen([CLI, "--db", self.db, "run"] + args, cwd=workdir, env=environment(),
                                     stdout=self.out, stderr=subprocess.STDOUT)

    def query(self, sql, *params):
        if not os.path.exists(self.db):
            return []
        con = sqlite3.connect(self.db, timeout=5)
        try:
            return con.execute(sql, params).fetchall()
        except sqlite3.OperationalError:
            return []  # the schema is not there yet
        finally:
            con.close()

    def wait_for(self, sql, *params, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            ended = self.proc.poll() is not None  # the history holds what the run wrote before it ended
            rows = self.query(sql, *params)
            if rows and rows[0][0] is not None:
                return rows
            if ended:
                break
            time.sleep(0.1)
        self.fail_with(f"timed out waiting for: {sql}")

    def wait_for_step(self, losses, step, timeout=60):
        """Until rank 0 has written `step` to the example's --losses file."""
        deadline = time.time() + timeout
        while time.time() < deadline and self.proc.poll() is None:
            if os.path.exists(losses) and max(read_losses(losses) or {0: 0}) >= step:
                return
            time.sleep(0.1)
        self.fail_with(f"timed out waiting for step {step}")

    def finish(self, timeout=120):
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.fail_with("trellis-cli did not finish")
        self.out.seek(0)
        text = self.out.read()
        self.out.close()
        return code, text

    def fail_with(self, message):
        self.out.seek(0)
        raise AssertionError(message + "\n--- trellis-cli output ---\n" + self.out.read()[-4000:])


class PyTorchJobs(unittest.TestCase):
    steps = 12
    _plain = None  # {step: loss} of the job launched without Trellis, run once when first asked for

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="trellis-pytorch-")

    @property
    def plain(self):
        # The reference: the script started as torchrun starts it (RANK, WORLD_SIZE, MASTER_* per
        # process), no Trellis anywhere (trellis_telemetry.init() is a no-op there).
        cls = type(self)
        if cls._plain is not None:
            return cls._plain
        losses = os.path.join(cls.tmp, "plain.txt")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        procs = []
        for rank in range(RANKS):
            env = environment()
            env.update(RANK=str(rank), WORLD_SIZE=str(RANKS), LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE=str(RANKS),
                       MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
            procs.append(subprocess.Popen([PYTHON, EXAMPLE, "--steps", str(cls.steps), "--losses", losses], env=env))
        for p in procs:
            assert p.wait(timeout=300) == 0, "the plain DDP run failed"
        cls._plain = read_losses(losses)
        return cls._plain

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def workdir(self, name):
        d = os.path.join(self.tmp, name)
        os.makedirs(d)
        return d

    def test_ddp_run_equals_plain_launch_and_history_has_every_step(self):
        d = self.workdir("parity")
        losses = os.path.join(d, "losses.txt")
        job = Job(d, ["--command", "--ranks", str(RANKS), "--quiet", "--", PYTHON, EXAMPLE, "--steps", str(self.steps),
                      "--losses", losses])
        code, out = job.finish()
        self.assertEqual(code, 0, out)
        self.assertEqual(read_losses(losses), self.plain, "losses differ from the run without Trellis")
        exported = os.path.join(d, "steps.csv")
        run_id = job.query("select run_id from runs")[0][0]
        subprocess.run([CLI, "--db", job.db, "export", run_id, "--format", "csv", "--table", "steps", "--out", exported],
                       check=True, env=environment(), stdout=subprocess.DEVNULL)
        with open(exported) as f:
            header = f.readline().strip().split(",")
            table = [dict(zip(header, line.strip().split(","))) for line in f]
        seen = {(int(r["rank"]), int(r["step"])) for r in table}
        self.assertEqual(seen, {(r, s) for r in range(RANKS) for s in range(1, self.steps + 1)})
        for r in table:  # every rank reports the mean loss over ranks, as rank 0 wrote it
            self.assertAlmostEqual(float(r["loss"]), self.plain[int(r["step"])], places=5)
            self.assertGreater(int(r["tokens"]), 0)
        # The run's record takes its step count from the script (run.step(total_steps=...)).
        self.assertEqual(job.query("select total_steps from runs")[0][0], self.steps)
        exported = os.path.join(d, "collectives.csv")
        subprocess.run([CLI, "--db", job.db, "export", run_id, "--format", "csv", "--table", "collectives", "--out", exported],
                       check=True, env=environment(), stdout=subprocess.DEVNULL)
        with open(exported) as f:
            header = f.readline().strip().split(",")
            collectives = [dict(zip(header, line.strip().split(","))) for line in f]
        self.assertTrue(any(c["group"] == "world" and c["op"] == "all_reduce" and int(c["count"]) > 0 for c in collectives),
                        collectives[:8])

    def test_stopped_rank_is_a_stall_at_once_and_a_hang_once_confirmed(self):
        d = self.workdir("hang")
        losses = os.path.join(d, "losses.txt")
        job = Job(d, ["--command", "--ranks", str(RANKS), "--quiet", "--hang-confirm", "4", "--", PYTHON, EXAMPLE,
                      "--steps", "100000", "--losses", losses])
        pid = job.wait_for("select pid from ranks where rank = 2 and pid > 0")[0][0]
        job.wait_for_step(losses, 5)
        os.kill(pid, signal.SIGSTOP)
        stopped = time.time()
        try:
            stall = job.wait_for("select message from events where kind = 'stall'", timeout=30)[0][0]
            named = time.time()
            hang = job.wait_for("select message from events where kind = 'hang'", timeout=30)[0][0]
            decided = time.time()
        finally:
            os.kill(pid, signal.SIGCONT)
        code, out = job.finish()
        self.assertNotEqual(code, 0)
        for message in (stall, hang):
            self.assertIn("rank 2", message)
            self.assertIn("stopped responding", message)
            # The others wait in a tracked all_reduce: DDP's bucket (its comm hook) or the loss's mean.
            # Those that had reached it when the stall was named: 1.5 s after rank 2's last
            # heartbeat a busy machine may still have one of them on its way there.
            waiting = re.search(r"ranks? ([0-9,]+) wait in world all_reduce #\d+", message)
            self.assertIsNotNone(waiting, message)
            self.assertTrue(set(waiting.group(1).split(",")) <= {"0", "1", "3"}, message)
            self.assertIn("[rank 2's process is stopped]", message)
        self.assertIn("the run goes on", stall)
        self.assertRegex(hang, r"rank 2's process has been stopped for \d+\.\d s \(launch.hang_confirm_s 4.0 s\)")
        # Heartbeats every 500 ms; silent after 3 intervals; the check runs four times a second.
        self.assertLess(named - stopped, 4.0, f"stall named {named - stopped:.1f} s after SIGSTOP")
        self.assertGreaterEqual(decided - named, 3.0, f"hang decided {decided - named:.1f} s after the stall was named")

    def test_paused_rank_is_a_stall_and_the_run_completes(self):
        d = self.workdir("pause")
        losses = os.path.join(d, "losses.txt")
        job = Job(d, ["--command", "--ranks", str(RANKS), "--quiet", "--", PYTHON, EXAMPLE, "--steps", "40",
                      "--losses", losses])
        pid = job.wait_for("select pid from ranks where rank = 1 and pid > 0")[0][0]
        job.wait_for_step(losses, 5)
        os.kill(pid, signal.SIGSTOP)
        time.sleep(2.5)
        os.kill(pid, signal.SIGCONT)
        code, out = job.finish()
        self.assertEqual(code, 0, out)
        self.assertFalse(job.query("select message from events where kind = 'hang'"))
        stalls = job.query("select holders, outcome, duration_ms from stalls")
        self.assertEqual(len(stalls), 1, out[-2000:])
        self.assertEqual(stalls[0][0], "1")
        self.assertEqual(stalls[0][1], "cleared")
        self.assertGreaterEqual(stalls[0][2], 2000)

    def test_a_rank_holding_up_its_own_process_group_is_named(self):
        """Torch's own groups (no plan names them): the client sends a group's members with a wait, so
        rank 1 staying in forward while rank 0 waits in their pair's all_reduce is named its holder."""
        d = self.workdir("pairs")
        script = os.path.join(ROOT, "tests", "pytorch", "pair_groups.py")
        job = Job(d, ["--command", "--ranks", str(RANKS), "--quiet", "--", PYTHON, script, "--steps", "10",
                      "--hold-rank", "1", "--hold-step", "4", "--hold-s", "6"])
        code, out = job.finish()
        self.assertEqual(code, 0, out)
        stalls = job.query("select holders, waiting, outcome from stalls")
        self.assertEqual([(h, w) for h, w, _ in stalls], [("1", "0")], out[-2000:])
        self.assertEqual(stalls[0][2], "cleared")
        named = job.query("select message from events where kind = 'stall'")
        self.assertTrue(named, out[-2000:])
        self.assertIn("rank 1 on", named[0][0])
        self.assertRegex(named[0][0], r"rank 0 waits in group\d+ all_reduce")

    def test_slowed_rank_is_flagged_within_ten_steps(self):
        d = self.workdir("straggler")
        job = Job(d, ["--command", "--ranks", str(RANKS), "--quiet", "--", PYTHON, EXAMPLE, "--steps", "14",
                      "--step-delay-ms", "150", "--delay-rank", "1"])
        code, out = job.finish()
        self.assertEqual(code, 0, out)
        flagged = job.query("select rank, step, message from events where kind = 'straggler'")
        self.assertTrue(flagged, "no straggler event\n" + out[-2000:])
        self.assertEqual([r for r, _, _ in flagged], [1], flagged)
        self.assertLessEqual(flagged[0][1], 10, flagged)

    def test_killed_rank_restarts_the_job_which_resumes_from_its_checkpoint(self):
        d = self.workdir("restart")
        losses = os.path.join(d, "losses.txt")
        plan = {
            "schema": "trellis.plan/1",
            "name": "ddp with restarts",
            # The script named relative to `dir`, itself relative to the plan's folder.
            "trainer": {"command": [PYTHON, "train_ddp.py", "--steps", "20", "--checkpoint-every", "5", "--losses", losses],
                        "env": {"OMP_NUM_THREADS": "1"}, "dir": os.path.relpath(os.path.dirname(EXAMPLE), d)},
            "cluster": {"nodes": [{"host": "localhost", "slots": RANKS}]},
            "launch": {"restart": {"max_restarts": 1, "backoff_s": 0.5}},
        }
        with open(os.path.join(d, "plan.json"), "w") as f:
            json.dump(plan, f)
        job = Job(d, ["plan.json", "--quiet"])
        pid = job.wait_for("select pid from ranks where rank = 3 and pid > 0")[0][0]
        job.wait_for_step(losses, 12)
        os.kill(pid, signal.SIGKILL)
        code, out = job.finish(timeout=180)
        self.assertEqual(code, 0, out)
        restarts = job.query("select message from events where kind = 'restart'")
        self.assertEqual(len(restarts), 1, restarts)
        self.assertIn("rank 3", restarts[0][0])
        checkpoints = {s for (s,) in job.query("select step from events where kind = 'checkpoint'")}
        self.assertTrue({5, 10} <= checkpoints, checkpoints)
        # The second attempt resumed from the checkpoint, not from step 1, and repeated the same
        # steps exactly: step 12's loss is the uninterrupted run's.
        with open(losses) as f:
            steps = [int(line.split()[0]) for line in f]
        self.assertEqual(steps[-1], 20)
        self.assertEqual(steps.count(1), 1, "the restarted job began again from step 1")
        self.assertEqual(read_losses(losses)[12], self.plain[12])
        run_dir = os.path.join(d, "runs")
        self.assertTrue(any(os.path.exists(os.path.join(run_dir, r, "checkpoints", "checkpoint.pt")) for r in os.listdir(run_dir)))

    def test_ranks_send_through_their_node_relay_which_they_start_again(self):
        # telemetry.relay on: the ranks' shim starts the node's relay and points the client at it
        # (Hello.relay names it); kill -9 of the relay mid-run: a rank starts it again, everything
        # held is sent again through it, and the history ends complete, nothing lost.
        d = self.workdir("relay")
        steps = 40
        losses = os.path.join(d, "losses.txt")
        plan = {
            "schema": "trellis.plan/1",
            "name": "ddp through a relay",
            "trainer": {"command": [PYTHON, EXAMPLE, "--steps", str(steps), "--step-delay-ms", "250", "--losses", losses],
                        "env": {"OMP_NUM_THREADS": "1"}},
            "cluster": {"nodes": [{"host": "localhost", "slots": RANKS}]},
            "telemetry": {"relay": "on"},
        }
        with open(os.path.join(d, "plan.json"), "w") as f:
            json.dump(plan, f)
        job = Job(d, ["plan.json", "--quiet"])
        run_id = job.wait_for("select run_id from runs")[0][0]
        folder = os.path.join(os.environ.get("TMPDIR") or "/tmp", "trellis-%d" % os.getuid(), run_id + "-node0")
        job.wait_for_step(losses, 5, timeout=90)
        with open(os.path.join(folder, "relay.pid")) as f:
            relay_pid = int(f.read())
        os.kill(relay_pid, signal.SIGKILL)
        code, out = job.finish(timeout=180)
        self.assertEqual(code, 0, out)
        with open(os.path.join(folder, "relay.log")) as f:
            log = f.read()
        self.assertEqual(log.count("relay: run %s, ranks 0,1,2,3:" % run_id), 2, log)  # started, then again
        self.assertIn("relay: ended (every rank said goodbye)", log)
        with open(os.path.join(d, "runs", run_id, "job.err")) as f:
            self.assertIn("the node's telemetry relay was gone; started it again", f.read())
        self.assertEqual(job.query("select count(*) from ranks where lost = 0 and dropped = 0 and received_seq = goodbye_seq + 1")[0][0],
                         RANKS, job.query("select * from ranks"))
        exported = os.path.join(d, "steps.csv")
        subprocess.run([CLI, "--db", job.db, "export", run_id, "--format", "csv", "--table", "steps", "--out", exported],
                       check=True, env=environment(), stdout=subprocess.DEVNULL)
        with open(exported) as f:
            header = f.readline().strip().split(",")
            stored = {(int(row["rank"]), int(row["step"])) for row in (dict(zip(header, line.strip().split(","))) for line in f)}
        self.assertEqual(stored, {(r, s) for r in range(RANKS) for s in range(1, steps + 1)})

    def test_command_that_cannot_run_fails_the_run_naming_it(self):
        d = self.workdir("missing")
        job = Job(d, ["--command", "--quiet", "--", os.path.join(d, "no-such-train.py"), "--steps", "3"])
        code, out = job.finish()
        self.assertNotEqual(code, 0)
        self.assertIn("no-such-train.py", out)
        self.assertIn("code 127", out)
        d = self.workdir("exits")
        job = Job(d, ["--command", "--ranks", "2", "--quiet", "--", PYTHON, "-c", "import sys; sys.exit(3)"])
        code, out = job.finish()
        self.assertNotEqual(code, 0)
        self.assertIn("exited with code 3", out)
        self.assertIn("sys.exit(3)", out)


# The cases that judge timing (which rule names a stopped, paused, slowed or blocking rank first):
# ctest runs them alone (tst_pytorch_jobs_timing, --timing), the others beside other suites
# (--not-timing). A case is in exactly one group: a new one is in --not-timing unless named here.
TIMING = {
    "test_stopped_rank_is_a_stall_at_once_and_a_hang_once_confirmed",
    "test_paused_rank_is_a_stall_and_the_run_completes",
    "test_a_rank_holding_up_its_own_process_group_is_named",
    "test_slowed_rank_is_flagged_within_ten_steps",
}


def group(timing):
    names = unittest.TestLoader().getTestCaseNames(PyTorchJobs)
    unknown = TIMING - set(names)
    if unknown:
        sys.exit(f"TIMING names cases that do not exist: {sorted(unknown)}")
    return unittest.TestSuite(PyTorchJobs(n) for n in names if (n in TIMING) == timing)


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        sys.exit(__doc__)
    CLI = os.path.abspath(sys.argv.pop(1))
    if len(sys.argv) > 1 and sys.argv[1] in ("--timing", "--not-timing"):
        result = unittest.TextTestRunner(verbosity=2).run(group(sys.argv[1] == "--timing"))
        sys.exit(0 if result.wasSuccessful() else 1)
    unittest.main(verbosity=2)
