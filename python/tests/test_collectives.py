"""Collective tracking with two processes over gloo (tests/dist_worker.py) and the tracker itself."""

import json
import os
import socket
import subprocess
import unittest

import shutil
import tempfile

import trellis_telemetry
from fake_supervisor import FakeSupervisor
from helpers import PYTHON, subprocess_env

try:
    import torch
    import torch.distributed as dist
    HAVE_GLOO = dist.is_available() and dist.is_gloo_available()
except ImportError:  # pragma: no cover
    torch = None
    HAVE_GLOO = False

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dist_worker.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@unittest.skipUnless(HAVE_GLOO, "torch with gloo needed")
class TwoRanksTest(unittest.TestCase):
    """One run of two workers (a few seconds); the tests read what it left."""

    @classmethod
    def setUpClass(cls):
        trellis_telemetry._reset_for_tests()
        cls.dir = tempfile.mkdtemp(prefix="tt-")
        endpoint = "ipc://" + os.path.join(cls.dir, "telemetry.sock")
        cls.supervisor_ = FakeSupervisor(endpoint)
        port = free_port()
        procs = []
        for rank in (0, 1):
            env = subprocess_env(TRELLIS_TELEMETRY_ENDPOINT=endpoint, TRELLIS_RUN_ID="test-run",
                                 TRELLIS_PROTOCOL_VERSION="3", TRELLIS_HEARTBEAT_MS="50", RANK=rank, WORLD_SIZE=2,
                                 LOCAL_RANK=rank, LOCAL_WORLD_SIZE=2, MASTER_ADDR="127.0.0.1", MASTER_PORT=port,
                                 OMP_NUM_THREADS=1)
            out = os.path.join(cls.dir, "rank%d.json" % rank)
            procs.append((subprocess.Popen([PYTHON, WORKER, out], env=env, stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT, text=True), out))
        cls.results = []
        cls.logs = []
        for proc, out in procs:
            try:
                log, _ = proc.communicate(timeout=90)
            except subprocess.TimeoutExpired:
                proc.kill()
                log, _ = proc.communicate()
            cls.logs.append(log)
            result = None
            if proc.returncode == 0 and os.path.exists(out):
                with open(out) as f:
                    result = json.load(f)
            cls.results.append(result)
        cls.supervisor_.wait_for(lambda s: s.has_goodbye(0) and s.has_goodbye(1), 5)

    @classmethod
    def tearDownClass(cls):
        cls.supervisor_.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def local(self, rank):
        self.assertIsNotNone(self.results[rank], self.logs[rank])
        return self.results[rank]

    def collectives(self, rank, step):
        return {(e.collective.group, e.collective.op): e.collective for e in self.supervisor_.messages(rank)
                if e.HasField("collective") and e.collective.step == step}

    def report(self, rank, step):
        return [e.step for e in self.supervisor_.messages(rank) if e.HasField("step") and e.step.step == step][0]

    def test_both_ranks_reported_everything_in_sequence(self):
        for rank in (0, 1):
            self.local(rank)
            messages = self.supervisor_.messages(rank)
            self.assertEqual([e.seq for e in messages], list(range(len(messages))))
            self.assertEqual(messages[0].hello.world_size, 2)
            self.assertEqual(messages[0].hello.coords.dp, rank)
            self.assertIn("torch " + torch.__version__, messages[0].hello.trainer_version)
            self.assertTrue(messages[-1].HasField("goodbye"))
            self.assertEqual(messages[-1].goodbye.steps_done, 5)
            self.assertEqual(self.supervisor_.lost[rank], 0)

    def test_all_reduce_bytes_counts_and_bandwidth(self):
        for rank in (0, 1):
            self.assertEqual(self.local(rank)["all_reduce_sum"], 3.0)
            self.assertEqual(self.local(rank)["async_proxy"], "TrackedWork")
            self.assertEqual(self.local(rank)["objects"], [{"rank": 0}, {"rank": 1}])
            stats = self.collectives(rank, 1)
            ar = stats[("world", "all_reduce")]
            self.assertEqual((ar.bytes, ar.count), (1000 * 4 + 256 * 8, 2))
            self.assertGreater(ar.ms, 0)
            self.assertAlmostEqual(ar.bus_gbps, ar.bytes / (ar.ms * 1e6) * 2 * (2 - 1) / 2, places=9)
            p2p = stats[("p2p", "send" if rank == 0 else "recv")]
            self.assertEqual((p2p.bytes, p2p.count), (40, 1))
            self.assertEqual(stats[("world", "all_gather_object")].count, 1)
            # all_gather_object's own all_gather calls are inside it: not counted again
            self.assertNotIn(("world", "all_gather"), stats)
            report = self.report(rank, 1)
            self.assertAlmostEqual(report.comm_ms, sum(c.ms for c in stats.values()), places=3)
            # the synchronous calls are waited for whole, the asynchronous one from its wait() on
            self.assertLessEqual(report.comm_exposed_ms, report.comm_ms + 1e-6)
            self.assertGreater(report.comm_exposed_ms, stats[("world", "all_gather_object")].ms)
            self.assertAlmostEqual(report.compute_ms, report.step_ms - report.comm_exposed_ms, places=6)

    def test_heartbeat_names_the_call_a_rank_waits_in(self):
        # Rank 0 waits in world all_reduce #4 (#1 and #2 in step 1, #3 all_gather_object) while rank 1
        # is in "forward" of step 1 (it reported step 1 and sleeps).
        waiting = [e.heartbeat for e in self.supervisor_.messages(0)
                   if e.HasField("heartbeat") and e.heartbeat.collective_op]
        self.assertGreaterEqual(len(waiting), 10, [e.heartbeat for e in self.supervisor_.messages(0)
                                                   if e.HasField("heartbeat")])
        hb = waiting[len(waiting) // 2]
        self.assertEqual(hb.collective, "world all_reduce")
        self.assertEqual((hb.collective_group, hb.collective_op, hb.collective_call, hb.collective_bytes),
                         ("world", "all_reduce", 4, 400))
        self.assertEqual(hb.step, 1)
        self.assertEqual(hb.phase, "comm")
        self.assertTrue(all(h.collective_since_ns == hb.collective_since_ns for h in waiting
                            if h.collective_call == 4))
        sleeper = [e.heartbeat for e in self.supervisor_.messages(1)
                   if e.HasField("heartbeat") and e.heartbeat.phase == "forward"]
        self.assertGreaterEqual(len(sleeper), 10)
        self.assertTrue(all(h.step == 1 and not h.collective_op for h in sleeper))
        # the same call, with the same number, on rank 1 once it got there: step 2's all_reduce
        self.assertEqual(self.collectives(1, 2)[("world", "all_reduce")].bytes, 400)
        self.assertGreater(self.report(0, 2).comm_exposed_ms, 1000)
        self.assertLess(self.report(1, 2).comm_exposed_ms, 500)

    def test_ddp_gets_the_tracking_hook_and_the_same_gradients(self):
        for rank in (0, 1):
            local = self.local(rank)
            self.assertFalse(local["reference_has_trampoline"])
            self.assertTrue(local["tracked_has_trampoline"])
            self.assertTrue(local["tracked_grads_close"])
            self.assertTrue(local["tracked_grads_equal"])  # dividing by 2 first is exact
            bucket = self.collectives(rank, 3)[("world", "all_reduce")]
            self.assertEqual((bucket.bytes, bucket.count), (local["parameters"] * 4, 1))
            report = self.report(rank, 3)
            self.assertLessEqual(report.comm_exposed_ms, report.comm_ms + 1e-6)

    def test_a_user_hook_is_wrapped_still_called_and_tracked(self):
        for rank in (0, 1):
            local = self.local(rank)
            self.assertEqual(local["user_hook_calls"], [local["parameters"]])
            self.assertTrue(local["second_hook_refused"])  # DDP's own rule: one hook per model
            self.assertTrue(local["user_grads_equal"])
            bucket = self.collectives(rank, 4)[("world", "all_reduce")]
            self.assertEqual((bucket.bytes, bucket.count), (local["parameters"] * 4, 1))

    def test_a_builtin_hook_becomes_the_python_one_and_is_tracked(self):
        for rank in (0, 1):
            local = self.local(rank)
            self.assertEqual(local["builtin_inner_hook"], "allreduce_hook")
            self.assertTrue(local["builtin_grads_equal"])
            bucket = self.collectives(rank, 5)[("world", "all_reduce")]
            self.assertEqual((bucket.bytes, bucket.count), (local["parameters"] * 4, 1))


@unittest.skipUnless(HAVE_GLOO, "torch with gloo needed")
class TrackerTest(unittest.TestCase):
    """The tracker's bookkeeping, without processes."""

    def setUp(self):
        from trellis_telemetry import _collectives
        self.c = _collectives
        self.tracker = _collectives.Tracker()
        self.tracker._world_size = 4

    def test_call_numbers_in_flight_and_exposed_time(self):
        t = self.tracker
        a = t.begin("world", "all_reduce", 100, 4, True)
        b = t.begin("world", "broadcast", 8, 4, False)
        p = t.begin("p2p", "send", 4, 1, True)
        self.assertEqual((a[2], b[2], p[2]), (1, 2, 1))
        self.assertEqual(t.oldest()[:4], ("world", "all_reduce", 1, 100))
        self.assertEqual(t.blocking, 2)
        t.end(a, True)
        t.end(p, True)
        self.assertEqual(t.oldest()[:3], ("world", "broadcast", 2))
        t.end(b, False, exposed_ns=0)
        t.end(b, False, exposed_ns=0)  # a second completion is ignored
        self.assertIsNone(t.oldest())
        self.assertEqual(t.blocking, 0)
        stats, comm, exposed = t.take_step()
        self.assertEqual(stats[("world", "all_reduce")][:1] + stats[("world", "all_reduce")][2:], [100, 1, 4])
        self.assertEqual(stats[("world", "broadcast")][2], 1)
        self.assertEqual(comm, sum(s[1] for s in stats.values()))
        self.assertEqual(exposed, stats[("world", "all_reduce")][1] + stats[("p2p", "send")][1])
        self.assertEqual(t.take_step()[0], {})

    def test_ddp_buckets_expose_only_what_follows_the_last_one(self):
        t = self.tracker
        first = t.begin("world", "all_reduce", 10, 4, False, ddp=True)
        last = t.begin("world", "all_reduce", 10, 4, False, ddp=True)
        t.end(first, False, ddp=True)
        t.end(last, False, ddp=True)
        _, comm, exposed = t.take_step()
        self.assertLess(exposed, comm)
        self.assertGreater(exposed, 0)

    def test_bus_factors(self):
        f = self.c.bus_factor
        self.assertEqual((f("all_reduce", 4), f("all_gather", 4), f("reduce_scatter", 4), f("all_to_all", 4)),
                         (1.5, 0.75, 0.75, 0.75))
        self.assertEqual((f("broadcast", 4), f("send", 2), f("reduce", 8), f("all_reduce", 1)), (1, 1, 1, 1))

    def test_bytes_of_tensors_and_lists(self):
        self.assertEqual(self.c.tensor_bytes(torch.zeros(3, 5, dtype=torch.float16)), 30)
        self.assertEqual(self.c.tensor_bytes([torch.zeros(2), torch.zeros(3, dtype=torch.int64)]), 8 + 24)
        self.assertEqual(self.c.tensor_bytes(None), 0)

    def test_a_dropped_unfinished_handle_leaves_no_call_in_flight(self):
        t = self.tracker

        class Work:
            def wait(self):
                return True

            def is_completed(self):
                return False

        call = t.begin("world", "all_reduce", 4, 4, False)
        work = self.c.TrackedWork(Work(), call, t)
        self.assertFalse(work.is_completed())
        self.assertIsNotNone(t.oldest())
        del work
        self.assertIsNone(t.oldest())
        call = t.begin("world", "all_reduce", 4, 4, False)
        work = self.c.TrackedWork(Work(), call, t)
        self.assertTrue(work.wait())
        self.assertIsNone(t.oldest())
        self.assertEqual(t.take_step()[0][("world", "all_reduce")][2], 1)


if __name__ == "__main__":
    unittest.main()
