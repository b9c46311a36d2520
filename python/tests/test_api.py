"""init() outside and inside Trellis, the version check, a missing dependency, exit handling."""

import subprocess
import textwrap
import time

import trellis_telemetry
from helpers import PYTHON, TelemetryTestCase, environment, subprocess_env, trellis_env


class NoOpTest(TelemetryTestCase):
    def exercise(self, run):
        run.step(1)
        run.step(2, loss=0.5, tokens=100, grad_norm=1.0, lr=1e-3, total_steps=10, anything=3.0)
        run.step("not a number", loss=object())
        with run.phase("forward"):
            pass
        with run.phase("backward"):
            with run.phase("comm"):
                pass
        run.event("info", "hello")
        run.event("no such kind", "text", step=4)
        run.checkpoint_saved(2)
        self.assertIs(run.watch(self), self)
        run.close()
        run.close(3, "again")
        run.step(3)

    def test_outside_trellis_everything_is_a_no_op(self):
        with environment(RANK=3, WORLD_SIZE=8, LOCAL_RANK=1, TRELLIS_RESTART_COUNT=2, TRELLIS_CHECKPOINT_DIR="/ckpt"):
            run = trellis_telemetry.init()
            self.assertIsInstance(run, trellis_telemetry.NoOpRun)
            self.assertFalse(run.active)
            self.assertEqual((run.rank, run.world_size, run.local_rank, run.restart_count, run.checkpoint_dir),
                             (3, 8, 1, 2, "/ckpt"))
            self.exercise(run)
            self.assertIs(trellis_telemetry.init(), run)
            self.assertIs(trellis_telemetry.current(), run)

    def test_empty_endpoint_is_outside_trellis(self):
        with environment(TRELLIS_TELEMETRY_ENDPOINT="", TRELLIS_PROTOCOL_VERSION="1"):
            run = trellis_telemetry.init()
            self.assertFalse(run.active)
            self.assertIsNone(run.checkpoint_dir)
            self.exercise(run)

    def test_version_mismatch_names_both_versions(self):
        with trellis_env(self.endpoint, TRELLIS_PROTOCOL_VERSION="2"):
            with self.assertRaises(trellis_telemetry.ProtocolMismatch) as caught:
                trellis_telemetry.init()
        text = str(caught.exception)
        self.assertIn("version 2", text)
        self.assertIn("version 3", text)

    def test_missing_pyzmq_warns_once_and_runs_without_telemetry(self):
        script = textwrap.dedent("""
            import sys
            sys.modules["zmq"] = None   # import zmq fails
            import trellis_telemetry
            run = trellis_telemetry.init()
            run.step(1, loss=1.0)
            with run.phase("forward"):
                pass
            run.close()
            assert trellis_telemetry.init() is run
            print("active", run.active)
        """)
        env = subprocess_env(TRELLIS_TELEMETRY_ENDPOINT=self.endpoint, TRELLIS_PROTOCOL_VERSION="3",
                             TRELLIS_TRACK_COLLECTIVES="0")
        done = subprocess.run([PYTHON, "-c", script], env=env, capture_output=True, text=True, timeout=30)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("active False", done.stdout)
        warnings = [line for line in done.stderr.splitlines() if line.startswith("trellis_telemetry:")]
        self.assertEqual(len(warnings), 1, done.stderr)
        self.assertIn("zmq", warnings[0])


class InsideTrellisTest(TelemetryTestCase):
    def test_init_twice_returns_the_same_run(self):
        supervisor = self.supervisor()
        with trellis_env(self.endpoint, RANK=0, WORLD_SIZE=1, TRELLIS_RESTART_COUNT=1,
                         TRELLIS_CHECKPOINT_DIR=self.dir):
            run = trellis_telemetry.init(track_collectives=False)
            self.assertTrue(run.active)
            self.assertIs(trellis_telemetry.init(track_collectives=False), run)
            self.assertEqual((run.rank, run.world_size, run.restart_count, run.checkpoint_dir), (0, 1, 1, self.dir))
            run.step(1, loss=2.0, tokens=10, extra_metric=7)
            self.assertEqual(run.last_extra, {"extra_metric": 7})
            run.close()
        self.assertTrue(supervisor.has_goodbye())

    def test_watch_before_the_first_step_sends_hello_again_with_the_parameter_count(self):
        class Parameter:
            def __init__(self, n):
                self.n = n

            def numel(self):
                return self.n

        class Model:
            def parameters(self):
                return [Parameter(12), Parameter(30)]

        supervisor = self.supervisor()
        with trellis_env(self.endpoint, heartbeat_ms=60000):
            run = trellis_telemetry.init(track_collectives=False)
            model = Model()
            self.assertIs(run.watch(model), model)
            run.step(1)
            run.step(2)
            run.close()
        hellos = [e.hello for e in supervisor.messages() if e.HasField("hello")]
        self.assertEqual([h.parameters for h in hellos], [0, 42])
        self.assertEqual(supervisor.payloads(), ["hello", "heartbeat", "hello", "step", "step", "goodbye"])

    def test_tracking_can_be_switched_off_by_the_environment(self):
        supervisor = self.supervisor()
        with trellis_env(self.endpoint, TRELLIS_TRACK_COLLECTIVES="0"):
            run = trellis_telemetry.init()
            self.assertIsNone(run._tracker)
            run.close()
        self.assertTrue(supervisor.has_goodbye())

    def test_event_kinds(self):
        supervisor = self.supervisor()
        with trellis_env(self.endpoint, heartbeat_ms=60000):
            run = trellis_telemetry.init(track_collectives=False)
            for kind in ("info", "checkpoint", "failure", "restart", "non_finite", "straggler", "odd", 2):
                run.event(kind, "text", step=7)
            run.close()
        events = [e.event for e in supervisor.messages() if e.HasField("event")]
        self.assertEqual([ev.kind for ev in events], [0, 1, 2, 3, 4, 5, 0, 2])
        self.assertEqual(events[6].message, "[odd] text")
        self.assertTrue(all(ev.step == 7 for ev in events))

    def run_script(self, body, **env):
        supervisor = self.supervisor()
        script = "import trellis_telemetry\nrun = trellis_telemetry.init()\nrun.step(1, loss=1.0)\n" + body
        env = subprocess_env(TRELLIS_TELEMETRY_ENDPOINT=self.endpoint, TRELLIS_RUN_ID="test-run",
                             TRELLIS_PROTOCOL_VERSION="3", TRELLIS_TRACK_COLLECTIVES="0", RANK=0, WORLD_SIZE=1,
                             **env)
        done = subprocess.run([PYTHON, "-c", script], env=env, capture_output=True, text=True, timeout=30)
        self.assertTrue(supervisor.wait_for(lambda s: s.has_goodbye(), 5), done.stderr)
        goodbye = [e for e in supervisor.messages() if e.HasField("goodbye")][0].goodbye
        return done, goodbye

    def test_exit_without_close_says_goodbye_with_0(self):
        done, goodbye = self.run_script("")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual((goodbye.exit_code, goodbye.steps_done), (0, 1))

    def test_uncaught_exception_says_goodbye_with_1_and_the_exception(self):
        started = time.monotonic()
        done, goodbye = self.run_script("raise RuntimeError('boom at step 1')\n")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("RuntimeError: boom at step 1", done.stderr)  # the traceback still printed
        self.assertEqual(goodbye.exit_code, 1)
        self.assertEqual(goodbye.reason, "RuntimeError: boom at step 1")
        self.assertLess(time.monotonic() - started, 20)

    def test_a_child_of_a_reporting_rank_does_not_report(self):
        done, goodbye = self.run_script(textwrap.dedent("""
            import os, subprocess, sys
            code = "import trellis_telemetry; print(trellis_telemetry.init().active)"
            print(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip())
        """))
        self.assertEqual(done.stdout.strip(), "False", done.stderr)
        self.assertEqual(goodbye.exit_code, 0)


if __name__ == "__main__":
    import unittest
    unittest.main()
