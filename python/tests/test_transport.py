"""The acknowledged protocol against a fake supervisor: sequence, heartbeats, resends, drops."""

import os
import shutil
import statistics
import tempfile
import time

import zmq

import trellis_telemetry
from helpers import TelemetryTestCase, trellis_env


def seqs(messages):
    return [e.seq for e in messages]


def steps(messages):
    return [e.step.step for e in messages if e.HasField("step")]


class SequenceTest(TelemetryTestCase):
    def test_hello_steps_heartbeats_goodbye_in_sequence_with_acks(self):
        supervisor = self.supervisor()
        with trellis_env(self.endpoint, RANK=0, WORLD_SIZE=1, heartbeat_ms=50):
            run = trellis_telemetry.init(track_collectives=False, precision="bf16")
            time.sleep(0.12)  # heartbeats in "init"
            for step in (1, 2, 3):
                with run.phase("forward"):
                    time.sleep(0.01 if step > 1 else 0.15)  # step 1: long enough for a heartbeat
                with run.phase("backward"):
                    pass
                run.step(step, loss=1.0 / step, tokens=1000, grad_norm=0.5, lr=1e-3, total_steps=3)
            run.event("info", "hello there")
            run.checkpoint_saved(3)
            # acknowledged messages are forgotten (the latest heartbeat may still wait for its ack)
            self.assertTrue(supervisor.wait_for(lambda s: run.stats()["held"] <= 1, 5), run.stats())
            run.close(0, "done")
        messages = supervisor.messages()
        self.assertEqual(seqs(messages), list(range(len(messages))))  # nothing lost, in order
        kinds = [e.WhichOneof("payload") for e in messages]
        self.assertEqual(kinds[0], "hello")
        self.assertEqual(kinds[-1], "goodbye")
        for e in messages:
            self.assertEqual((e.run_id, e.rank, e.protocol_version, e.dropped), ("test-run", 0, 3, 0))
            self.assertGreater(e.sent_ns, 1_600_000_000 * 10**9)
        hello = messages[0].hello
        self.assertEqual((hello.pid > 0, hello.world_size, hello.coords.dp, hello.precision), (True, 1, 0, "bf16"))
        self.assertIn("trellis_telemetry 0.1.0", hello.trainer_version)
        self.assertTrue(hello.host)
        self.assertEqual(hello.device, "cpu")

        reports = [e.step for e in messages if e.HasField("step")]
        self.assertEqual([r.step for r in reports], [1, 2, 3])
        for r in reports:
            self.assertGreater(r.step_ms, 5)
            self.assertAlmostEqual(r.compute_ms, r.step_ms - r.comm_exposed_ms, places=6)
            self.assertAlmostEqual(r.tokens_per_s, 1000 / (r.step_ms / 1000), delta=1e-6 * r.tokens_per_s)
            self.assertEqual((r.tokens, r.grad_norm, r.lr, r.total_steps), (1000, 0.5, 1e-3, 3))
            self.assertGreater(r.memory.peak_rss, 1 << 20)
        self.assertAlmostEqual(reports[1].loss, 0.5)
        self.assertGreater(reports[0].step_ms, 150)

        spans = [e.spans for e in messages if e.HasField("spans")]
        self.assertEqual([s.step for s in spans], [1, 2, 3])
        forward, backward = spans[0].spans
        self.assertEqual((forward.name, backward.name, forward.micro_batch, forward.stage),
                         ("forward", "backward", -1, 0))
        self.assertGreater(forward.end_ns - forward.start_ns, 140 * 10**6)
        self.assertLessEqual(forward.end_ns, backward.start_ns)

        events = [e.event for e in messages if e.HasField("event")]
        self.assertEqual([(ev.kind, ev.step) for ev in events], [(0, 3), (1, 3)])
        goodbye = messages[-1].goodbye
        self.assertEqual((goodbye.exit_code, goodbye.reason, goodbye.steps_done), (0, "done", 3))

        beats = [(e.heartbeat.step, e.heartbeat.phase) for e in messages if e.HasField("heartbeat")]
        self.assertIn((0, "init"), beats)
        self.assertIn((0, "forward"), beats)  # during step 1's long forward
        self.assertTrue(all(not e.heartbeat.collective for e in messages if e.HasField("heartbeat")))
        self.assertGreater(supervisor.acks_sent, 0)
        self.assertGreater(supervisor.frames["batch"], 0)
        stats = run.stats()
        self.assertEqual((stats["held"], stats["dropped"], stats["sent"]), (0, 0, len(messages)))

    def test_heartbeats_only_when_nothing_else_was_sent(self):
        # A tick with a step report since the last one sends no heartbeat (as trellis-trainer's
        # ranks do): none among 100 steps 5 ms apart (heartbeat 50 ms), then, idle, they come again.
        supervisor = self.supervisor()
        with trellis_env(self.endpoint, RANK=0, WORLD_SIZE=1, heartbeat_ms=50):
            run = trellis_telemetry.init(track_collectives=False)
            for step in range(1, 101):
                time.sleep(0.005)
                run.step(step, loss=1.0, tokens=10)
            time.sleep(0.4)
            run.close(0, "done")
        messages = supervisor.messages()
        self.assertEqual(seqs(messages), list(range(len(messages))))
        kinds = [e.WhichOneof("payload") for e in messages]
        first, last = kinds.index("step"), len(kinds) - 1 - kinds[::-1].index("step")
        self.assertLessEqual(kinds[first:last].count("heartbeat"), 2, kinds)
        self.assertGreaterEqual(kinds[last:].count("heartbeat"), 3, kinds)

    def test_a_gap_is_resent_after_a_skip(self):
        supervisor = self.supervisor(lose_once={(0, 3)})
        with trellis_env(self.endpoint, heartbeat_ms=5000):
            run = trellis_telemetry.init(track_collectives=False)
            for i in range(1, 9):
                run.event("info", "event %d" % i)
                time.sleep(0.02)  # separate frames: the loss is a gap the next frame shows
            self.assertTrue(supervisor.wait_for(lambda s: len(s.messages()) >= 9, 5), supervisor.payloads())
            run.close()
        messages = supervisor.messages()
        self.assertEqual(seqs(messages), list(range(len(messages))))
        self.assertEqual([e.event.message for e in messages if e.HasField("event")],
                         ["event %d" % i for i in range(1, 9)])
        self.assertEqual(supervisor.resend_requests[0], (0, 3))
        self.assertEqual(dict(supervisor.lost), {})
        skips = [e for e in supervisor.arrivals if e.HasField("skip")]
        self.assertTrue(skips)
        self.assertEqual(skips[0].seq, 0)
        self.assertLessEqual(skips[0].skip.next_seq, 3)
        self.assertGreater(run.stats()["resent"], 0)


class RecoveryTest(TelemetryTestCase):
    def test_a_relay_that_does_not_start_again_leaves_the_rank_to_the_supervisor(self):
        # Sent through a node relay (as trellis-trainer --exec --node-relay sets it up) that is gone
        # and cannot be started (its program missing): once acknowledgements stall, the rank sends
        # to the supervisor itself, everything from the first message, in sequence.
        supervisor = self.supervisor()
        folder = tempfile.mkdtemp(prefix="trellis-relay-")
        try:
            with trellis_env("ipc://" + os.path.join(folder, "relay.sock"), heartbeat_ms=100, TRELLIS_RELAY_FOLDER=folder,
                             TRELLIS_RELAY_NAME="node0", TRELLIS_RELAY_UPSTREAM=self.endpoint, TRELLIS_RELAY_RANKS="0",
                             TRELLIS_RELAY_PROGRAM=os.path.join(folder, "no-such-relay")):
                run = trellis_telemetry.init(track_collectives=False, _resend_after_ms=200)
                for step in (1, 2, 3):
                    run.step(step, loss=1.0, tokens=10)
                self.assertTrue(supervisor.wait_for(lambda s: len(steps(s.messages())) >= 3, 10), supervisor.payloads())
                run.close(0, "done")
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        messages = supervisor.messages()
        self.assertEqual(seqs(messages), list(range(len(messages))))
        self.assertEqual(messages[0].hello.relay, "node0")
        self.assertEqual(steps(messages), [1, 2, 3])
        self.assertEqual(messages[-1].WhichOneof("payload"), "goodbye")

    def test_a_supervisor_that_starts_late_gets_everything(self):
        with trellis_env(self.endpoint, heartbeat_ms=100):
            run = trellis_telemetry.init(track_collectives=False)
            for step in range(1, 6):
                run.step(step, loss=float(step))
            time.sleep(0.3)
            supervisor = self.supervisor()
            self.assertTrue(supervisor.wait_for(lambda s: 5 in steps(s.messages()), 5))
            run.close()
        messages = supervisor.messages()
        self.assertEqual(seqs(messages), list(range(len(messages))))
        self.assertEqual(messages[0].WhichOneof("payload"), "hello")
        self.assertEqual(steps(messages), [1, 2, 3, 4, 5])
        self.assertTrue(messages[-1].HasField("goodbye"))

    def test_a_restarted_supervisor_loses_nothing(self):
        first = self.supervisor()
        with trellis_env(self.endpoint, heartbeat_ms=60000):  # nothing but steps: held can be 0
            run = trellis_telemetry.init(track_collectives=False)
            for step in (1, 2, 3):
                run.step(step)
            self.assertTrue(first.wait_for(lambda s: run.stats()["held"] == 0, 5))
            first.close()
            self.supervisors.remove(first)
            for step in (4, 5, 6):
                run.step(step)
                time.sleep(0.05)
            time.sleep(0.3)  # heartbeats and steps go to the dead connection
            # The restarted supervisor resumes where the history store says it was.
            second = self.supervisor(expected=dict(first.expected))
            for step in (7, 8):
                run.step(step)
            self.assertTrue(second.wait_for(lambda s: 8 in steps(s.messages()), 8))
            run.close()
        both = first.messages() + second.messages()
        self.assertEqual(seqs(both), list(range(len(both))))
        self.assertEqual(steps(both), list(range(1, 9)))
        self.assertEqual(dict(second.lost), {})
        self.assertTrue(both[-1].HasField("goodbye"))

    def test_stalled_acknowledgements_make_the_rank_send_again(self):
        supervisor = self.supervisor()
        supervisor.discard = True  # frames arrive and are lost, no acknowledgement
        with trellis_env(self.endpoint, heartbeat_ms=60000):  # nothing new is sent meanwhile
            run = trellis_telemetry.init(track_collectives=False, _resend_after_ms=1000)
            for step in (1, 2, 3):
                run.step(step)
            time.sleep(0.3)
            self.assertEqual(supervisor.messages(), [])
            supervisor.discard = False
            started = time.monotonic()
            self.assertTrue(supervisor.wait_for(lambda s: len(s.messages()) == 5, 5), supervisor.payloads())
            self.assertLess(time.monotonic() - started, 3)
            self.assertEqual(supervisor.resend_requests, [])  # not a gap: the rank noticed the stall
            self.assertGreaterEqual(run.stats()["resent"], 4)
            run.close()
        self.assertEqual(supervisor.payloads(), ["hello", "heartbeat", "step", "step", "step", "goodbye"])


class DropTest(TelemetryTestCase):
    def test_a_full_queue_drops_and_counts(self):
        supervisor = self.supervisor()
        with trellis_env(self.endpoint, heartbeat_ms=60000):
            run = trellis_telemetry.init(track_collectives=False, _queue_capacity=4)
            # the thread's first wake-up sends Hello and the first heartbeat
            self.assertTrue(supervisor.wait_for(lambda s: s.payloads() == ["hello", "heartbeat"], 5))
            with run._publisher._cond:  # the sender thread cannot take the queue meanwhile
                for i in range(20):
                    run.event("info", "event %d" % i)
                self.assertEqual(run.stats()["dropped"], 16)
            self.assertTrue(supervisor.wait_for(lambda s: len(s.messages()) == 6, 5))
            run.step(1)
            run.close()
        messages = supervisor.messages()
        self.assertEqual(seqs(messages), list(range(len(messages))))
        self.assertEqual([e.event.message for e in messages if e.HasField("event")],
                         ["event %d" % i for i in range(4)])
        # hello, heartbeat, 4 events, step, goodbye
        self.assertEqual([e.dropped for e in messages], [0, 0, 0, 0, 0, 0, 16, 16])
        self.assertEqual(run.stats()["dropped"], 16)

    def test_a_supervisor_that_never_answers_costs_nothing(self):
        context = zmq.Context()
        silent = context.socket(zmq.ROUTER)  # bound, never read
        silent.bind(self.endpoint)
        try:
            with trellis_env(self.endpoint, heartbeat_ms=20):
                run = trellis_telemetry.init(track_collectives=False)
                times = []
                for step in range(1, 301):
                    with run.phase("forward"):
                        pass
                    t0 = time.perf_counter()
                    run.step(step, loss=1.0, tokens=10)
                    times.append(time.perf_counter() - t0)
                self.assertLess(statistics.median(times), 0.0005)
                started = time.monotonic()
                run.close(0, "")
                self.assertLess(time.monotonic() - started, 4.5)
                self.assertGreater(time.monotonic() - started, 2.5)  # it waited for acknowledgements
                stats = run.stats()
                self.assertEqual(stats["held"], stats["seq"])  # nothing acknowledged
                self.assertEqual(stats["dropped"], stats["seq"])  # given up at close, counted
        finally:
            silent.close(linger=0)
            context.term()

    def test_a_bad_endpoint_drops_everything_quietly(self):
        with trellis_env("nonsense://nowhere"):
            run = trellis_telemetry.init(track_collectives=False)
            run.step(1)
            run.event("info", "x")
            started = time.monotonic()
            run.close()
            self.assertLess(time.monotonic() - started, 1.5)
            self.assertEqual(run.stats()["dropped"], run.stats()["seq"])


if __name__ == "__main__":
    import unittest
    unittest.main()
