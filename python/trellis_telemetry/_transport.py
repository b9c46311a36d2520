"""The rank's side of the telemetry protocol (backend/protocol/telemetry.proto, version 3).

_Link mirrors backend/protocol/rank_link.cpp: a ZeroMQ DEALER socket to the supervisor's ROUTER,
what waits sent in Batch frames of at most 64 KiB, every message held until an Ack covers it, a
Skip and a resend when the receiver asks (a gap) or when acknowledgements stall (then again after
twice as long each time while they stay stalled, at most 30 s).

Publisher mirrors backend/trainer/telemetry/telemetry_publisher.cpp: the training thread only numbers and
appends to a bounded queue under a lock (never waits for the network); one daemon thread owns the
socket (created, used and closed there), builds and encodes the queued messages, moves them into the
link, pumps it and sends a Heartbeat at each heartbeat tick at which nothing else was sent since the
last one. Through a node relay (NodeRelay, set up by trellis-trainer --exec) it also starts a relay
that is gone again, or moves its link to the supervisor itself, as the trainer's publisher does.
"""

import collections
import itertools
import sys
import threading
import time

import zmq

from . import telemetry_pb2 as pb

PROTOCOL_VERSION = 3
BATCH_BYTES = 64 * 1024
_BATCH_TAG = b"\xa2\x06"  # Batch field 100, length-delimited


def _same(envelope):
    return envelope


def _failed(why):
    envelope = pb.Envelope()
    envelope.event.kind = pb.Event.INFO
    envelope.event.message = "trellis_telemetry could not encode a message: " + why[:500]
    return envelope


def _varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def append_to_batch(parts, envelope):
    """Appends one encoded envelope (tag, length, bytes) to a list of frame parts; returns its size."""
    header = _BATCH_TAG + _varint(len(envelope))
    parts.append(header)
    parts.append(envelope)
    return len(header) + len(envelope)


class _Link:
    """One connection to the supervisor; used by one thread; nothing here blocks."""

    def __init__(self, context, endpoint, run_id, rank, spool_capacity=65536, resend_after_ms=2000,
                 curve=None, dropped_total=None):
        self.run_id = run_id
        self.rank = rank
        self.spool_capacity = spool_capacity
        self.stall_s = resend_after_ms / 1000.0
        self._dropped_total = dropped_total or (lambda: self.dropped)
        self.held = collections.deque()  # (seq, bytes), oldest first; [0, sent_index) went out
        self.sent_index = 0
        self.next_seq = 0
        self.dropped = self.sent = self.resent = 0
        self.last_ack_progress = time.monotonic()
        self.last_resend = float("-inf")
        self.last_resend_from = None
        self.stall_backoff_s = self.stall_s  # doubles while acknowledgements stay stalled (at most 30 s)
        self.connected = False
        self.socket = None
        self._open(context, endpoint, curve)

    def _open(self, context, endpoint, curve):
        self.socket = context.socket(zmq.DEALER)
        s = self.socket
        s.setsockopt(zmq.SNDHWM, 10000)
        s.setsockopt(zmq.RCVHWM, 10000)
        s.setsockopt(zmq.LINGER, 0)  # delivery is judged by acknowledgements, not by the socket
        s.setsockopt(zmq.IMMEDIATE, 0)
        s.setsockopt(zmq.RECONNECT_IVL, 100)
        s.setsockopt(zmq.RECONNECT_IVL_MAX, 1000)
        s.setsockopt(zmq.MAXMSGSIZE, 1024)
        try:
            if curve is not None:
                server_public, client_public, client_secret = curve
                s.setsockopt(zmq.CURVE_SERVERKEY, server_public)
                s.setsockopt(zmq.CURVE_PUBLICKEY, client_public)
                s.setsockopt(zmq.CURVE_SECRETKEY, client_secret)
            s.connect(endpoint)
            self.connected = True
        except zmq.ZMQError:
            self.connected = False

    def close(self):
        try:
            self.socket.close(linger=0)
        except zmq.ZMQError:
            pass

    def reconnect(self, context, endpoint, curve):
        """Its connection moves to `endpoint` (a node's relay gone: straight to the supervisor):
        everything held is sent again there, after a Skip. False (nothing changed) when unusable."""
        old = self.socket
        self._open(context, endpoint, curve)
        if not self.connected:
            try:
                self.socket.close(linger=0)
            except zmq.ZMQError:
                pass
            self.socket, self.connected = old, True
            return False
        try:
            old.close(linger=0)
        except zmq.ZMQError:
            pass
        self.last_ack_progress = time.monotonic()
        if self.held:
            self._resend_from(0)
        return True

    def resend_all(self):
        """Everything held sent again now, after a Skip (a relay started again in place of a dead one)."""
        if self.held:
            self._resend_from(0)

    def _try_send(self, data):
        try:
            self.socket.send(data, zmq.NOBLOCK, copy=len(data) < 8192)
            return True
        except zmq.ZMQError:  # EAGAIN (high-water mark) or a closed socket
            return False

    def push(self, seq, data):
        """A stamped, encoded message of sequence number `seq`; a full spool gives up the oldest."""
        if not self.connected:
            self.dropped += 1
            return
        self.next_seq = seq + 1
        if len(self.held) >= self.spool_capacity:
            self.held.popleft()  # keep the newest: the latest state (and Goodbye) matter most
            self.sent_index = self.sent_index - 1 if self.sent_index > 0 else 0
            self.dropped += 1
        self.held.append((seq, data))

    def _resend_from(self, start):
        """Sends everything held from `start` on again, after a Skip naming the oldest message held."""
        skip = pb.Envelope()
        skip.run_id = self.run_id
        skip.rank = self.rank
        skip.protocol_version = PROTOCOL_VERSION
        skip.sent_ns = time.time_ns()
        skip.dropped = self._dropped_total()
        skip.skip.next_seq = self.held[0][0] if self.held else self.next_seq
        self._try_send(skip.SerializeToString())
        index = 0
        for seq, _ in self.held:
            if seq >= start:
                break
            index += 1
        if index < self.sent_index:
            self.resent += self.sent_index - index
        self.sent_index = min(self.sent_index, index)
        self.last_resend = time.monotonic()
        self.last_resend_from = start

    def _read_acks(self):
        for _ in range(1000):
            try:
                data = self.socket.recv(zmq.NOBLOCK)
            except zmq.ZMQError:
                return
            if len(data) > 1024:
                continue
            ack = pb.Ack()
            try:
                ack.ParseFromString(data)
            except Exception:  # not a valid Ack: ignore
                continue
            if ack.run_id != self.run_id:
                continue  # not ours: ignore
            if ack.busy:  # the supervisor is alive and behind: what is held is not lost
                self.last_ack_progress = time.monotonic()
            acked = 0
            for seq, _ in self.held:
                if seq >= ack.next_seq:
                    break
                acked += 1
            if acked:
                for _ in range(acked):
                    self.held.popleft()
                self.sent_index = self.sent_index - acked if self.sent_index > acked else 0
                self.last_ack_progress = time.monotonic()
                self.stall_backoff_s = self.stall_s
            if ack.resend:
                # One resend per gap: the same request repeated within 300 ms is the same gap.
                repeated = (ack.resend_from == self.last_resend_from
                            and time.monotonic() - self.last_resend < 0.3)
                if not repeated:
                    self._resend_from(ack.resend_from)

    def pump(self):
        """Reads acknowledgements, resends what they ask for (or what stalled), sends what is unsent."""
        if not self.connected:
            return
        self._read_acks()
        # Acknowledgements stalled (the supervisor restarted, or a message was lost on a dead
        # connection): send again what is held; while they stay stalled (a supervisor that is
        # behind), again only after twice as long each time.
        now = time.monotonic()
        if (self.held and self.sent_index == len(self.held) and now - self.last_ack_progress > self.stall_s
                and now - self.last_resend > self.stall_backoff_s):
            self._resend_from(0)
            self.stall_backoff_s = min(2 * self.stall_backoff_s, 30.0)
        while self.sent_index < len(self.held):
            parts = []
            size = 0
            n = 0
            for _, data in itertools.islice(self.held, self.sent_index, None):
                if n > 0 and size + len(data) + 12 > BATCH_BYTES:
                    break
                size += append_to_batch(parts, data)
                n += 1
            if not self._try_send(b"".join(parts)):
                break
            self.sent_index += n
            self.sent += n


class Publisher:
    """Per-rank sender; see the module docstring for the threading contract.

    `heartbeat_source()` is called on the sender thread and returns (step, phase, collective) where
    collective is None or (group, op, call, bytes, since_ns).
    """

    def __init__(self, endpoint, run_id, rank, heartbeat_ms=500, queue_capacity=4096, spool_capacity=65536,
                 close_timeout_ms=3000, resend_after_ms=2000, curve=None, heartbeat_source=None, relay=None):
        self.endpoint = endpoint
        self.relay = relay  # a NodeRelay when the rank sends through its node's relay
        self.run_id = run_id
        self.rank = rank
        self.heartbeat_s = max(1, int(heartbeat_ms)) / 1000.0
        self.queue_capacity = queue_capacity
        self.spool_capacity = spool_capacity
        self.close_timeout_s = close_timeout_ms / 1000.0
        self.resend_after_ms = resend_after_ms
        self.curve = curve
        self.heartbeat_source = heartbeat_source or (lambda: (0, "init", None))
        self._cond = threading.Condition()  # an RLock: guards the fields below
        self._queue = collections.deque()   # (seq, encoded envelope)
        self._seq = 0
        self._goodbye_queued = False
        self._stopping = False
        self.dropped = 0  # messages that could be neither queued nor kept (queue or spool full)
        self.sent = self.resent = self.held = 0
        self.connected = None  # known once the thread made its socket
        self._thread = threading.Thread(target=self._main, name="trellis-publish", daemon=True)

    # --- training thread -------------------------------------------------------------------

    def start(self):
        """Starts the sender thread (after the first messages, Hello, are queued)."""
        self._thread.start()

    def publish(self, entries):
        """Thread-safe, never blocks on the network. Each entry is (build, arg): build(arg) returns the
        Envelope, on the sender thread, so the training thread only numbers and queues. The sequence
        number, sent_ns and dropped count are taken here, in the order of publishing; a full queue
        drops the entry (counted, no sequence number spent)."""
        with self._cond:
            queue = self._queue
            now = time.time_ns()
            for entry in entries:
                if self._stopping or len(queue) >= self.queue_capacity:
                    self.dropped += 1  # the count travels in later envelopes
                    continue
                queue.append((self._seq, now, self.dropped, entry))
                self._seq += 1
            self._cond.notify()

    def publish_envelopes(self, envelopes):
        self.publish([(_same, e) for e in envelopes])

    def close(self, goodbye=None):
        """Queues `goodbye` (an Envelope), delivers what it can within close_timeout and stops."""
        with self._cond:
            if goodbye is not None:
                self.publish_envelopes([goodbye])
            self._goodbye_queued = True
            self._stopping = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(self.close_timeout_s + 1.0)

    @property
    def running(self):
        return self._thread.is_alive()

    def _encode(self, item):
        """The bytes of a queued (seq, sent_ns, dropped, (build, arg)), stamped."""
        seq, sent_ns, dropped, (build, arg) = item
        envelope = build(arg)
        envelope.run_id = self.run_id
        envelope.rank = self.rank
        envelope.seq = seq
        envelope.sent_ns = sent_ns
        envelope.protocol_version = PROTOCOL_VERSION
        envelope.dropped = dropped
        return seq, envelope.SerializeToString()

    # --- sender thread ---------------------------------------------------------------------

    def _heartbeat(self):
        step, phase, collective = self.heartbeat_source()
        envelope = pb.Envelope()
        hb = envelope.heartbeat
        hb.step = step
        hb.phase = phase
        if collective is not None:
            group, op, call, nbytes, since_ns = collective[:5]
            hb.collective_members.extend(collective[5] if len(collective) > 5 else ())
            hb.collective = group + " " + op
            hb.collective_since_ns = since_ns
            hb.collective_group = group
            hb.collective_op = op
            hb.collective_call = call
            hb.collective_bytes = nbytes
        return envelope

    def _main(self):
        context = zmq.Context()
        self._context = context
        link = None
        try:
            link = _Link(context, self.endpoint, self.run_id, self.rank, self.spool_capacity,
                         self.resend_after_ms, self.curve, dropped_total=lambda: self.dropped)
            self.connected = link.connected
            if link.connected:
                self._loop(link)
        except Exception as e:  # never let the sender die silently: count what it cannot send
            print("trellis_telemetry: the telemetry thread stopped: %r" % (e,), file=sys.stderr)
        finally:
            if link is None or not link.connected or self._thread_failed(link):
                self._drain_as_dropped()
            if link is not None:
                link.close()
            try:
                context.term()
            except zmq.ZMQError:
                pass

    def _thread_failed(self, link):
        with self._cond:
            return not self._stopping

    def _drain_as_dropped(self):
        # A bad endpoint (or a failed thread) must not stop training: what is published is counted
        # as dropped.
        with self._cond:
            while True:
                self.dropped += len(self._queue)
                self._queue.clear()
                if self._stopping:
                    return
                self._cond.wait(self.heartbeat_s)

    def _check_relay(self, link, stopping):
        """Through a relay and acknowledgements stalled: a relay that is gone is started again (at
        most 3 times) and sent everything held; failing that, the rank sends to the supervisor
        itself. A relay that is there means the supervisor is what is slow or away, as without one."""
        relay = self.relay
        now = time.monotonic()
        stall = 0.5 if stopping else 2 * link.stall_s
        if not link.held or now - link.last_ack_progress < stall or now - relay.last_check < stall / 2:
            return
        relay.last_check = now
        if relay.running():
            return
        if relay.starts < relay.MAX_STARTS and relay.start():
            relay.starts += 1
            link.resend_all()
            print("trellis_telemetry: rank %d: the node's telemetry relay was gone; started it again" % self.rank,
                  file=sys.stderr)
            return
        if link.reconnect(self._context, relay.upstream, relay.upstream_curve):
            self.relay = None
            print("trellis_telemetry: rank %d: the node's telemetry relay is gone and does not start again; "
                  "this rank now sends to the supervisor directly" % self.rank, file=sys.stderr)

    def _loop(self, link):
        monotonic = time.monotonic
        next_heartbeat = monotonic()
        # A heartbeat goes out at a tick only when nothing else was sent since the last one: any
        # message proves the rank alive (the same rule as trellis-trainer's, docs/protocol.md).
        sent_since_beat = False
        close_deadline = None
        link_dropped = 0
        cond = self._cond
        while True:
            with cond:
                # Wake for new messages and the next heartbeat; while anything is held also at half
                # the resend delay (a stalled supervisor is noticed in time) and, once closing,
                # every 100 ms to see the last acknowledgements.
                wake_at = next_heartbeat
                if link.held:
                    wake_at = min(wake_at, monotonic() + (0.1 if self._stopping
                                                          else max(0.05, self.resend_after_ms / 2000.0)))
                ready = lambda: self._queue or (self._stopping and not link.held)
                if not ready():
                    timeout = wake_at - monotonic()
                    if timeout > 0:
                        cond.wait_for(ready, timeout)
                batch = self._queue
                self._queue = collections.deque()
                stopping = self._stopping
                tick = monotonic() >= next_heartbeat and not stopping and not self._goodbye_queued
                if tick:
                    next_heartbeat = monotonic() + self.heartbeat_s
                quiet = not sent_since_beat
                # What this wake-up sends counts for the next tick.
                sent_since_beat = (sent_since_beat and not tick) or bool(batch)
                if tick and quiet:
                    try:
                        hb = self._heartbeat()
                    except Exception:
                        hb = pb.Envelope()
                        hb.heartbeat.phase = "?"
                    batch.append((self._seq, time.time_ns(), self.dropped, (_same, hb)))
                    self._seq += 1
            for item in batch:
                try:
                    seq, data = self._encode(item)
                except Exception as e:  # a message that cannot be built: its number still goes out
                    seq, data = self._encode(item[:3] + ((_failed, repr(e)),))
                link.push(seq, data)
            link.pump()
            if self.relay is not None:
                self._check_relay(link, stopping)
            with cond:
                # What the link gave up (its spool full) counts as dropped, like a full queue.
                self.dropped += link.dropped - link_dropped
                link_dropped = link.dropped
                self.sent = link.sent
                self.resent = link.resent
                self.held = len(link.held)
                if stopping:
                    if close_deadline is None:
                        close_deadline = monotonic() + self.close_timeout_s
                    if (not link.held and not self._queue) or monotonic() >= close_deadline:
                        self.dropped += len(link.held) + len(self._queue)
                        self._queue.clear()
                        return


class NodeRelay:
    """The node's telemetry relay this rank sends through, as trellis-trainer --exec set it up
    (TRELLIS_RELAY_*): how to tell whether it runs (its folder's lock), how to start it again
    (detached, its output to relay.log) and where the supervisor is, should it not start."""

    MAX_STARTS = 3

    def __init__(self, environ):
        self.folder = environ.get("TRELLIS_RELAY_FOLDER", "")
        self.name = environ.get("TRELLIS_RELAY_NAME", "")
        self.program = environ.get("TRELLIS_RELAY_PROGRAM", "")
        self.ranks = environ.get("TRELLIS_RELAY_RANKS", "")
        self.run_id = environ.get("TRELLIS_RUN_ID", "")
        self.upstream = environ.get("TRELLIS_RELAY_UPSTREAM", "")
        self.upstream_keys = environ.get("TRELLIS_RELAY_UPSTREAM_KEYS", "")
        self.upstream_curve = None
        if self.upstream_keys:
            from ._keys import client_keys
            self.upstream_curve = client_keys(self.upstream_keys)
        self.starts = 0
        self.last_check = float("-inf")

    @staticmethod
    def from_environment(environ):
        relay = NodeRelay(environ)
        return relay if relay.folder and relay.upstream else None

    def running(self):
        """Whether a relay holds the folder's lock now."""
        import fcntl
        import os
        try:
            fd = os.open(os.path.join(self.folder, "relay.lock"), os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return False
        except OSError:
            return True
        finally:
            os.close(fd)

    def start(self):
        """Starts a relay (it detaches at once) and waits up to a second for it to hold the lock."""
        import os
        import subprocess
        if not self.program or not self.ranks:
            return False
        command = [self.program, "--relay", "--run-id", self.run_id, "--folder", self.folder, "--endpoint",
                   self.upstream, "--ranks", self.ranks, "--detach"]
        if self.upstream_keys:
            command += ["--telemetry-keys", self.upstream_keys]
        try:
            with open(os.path.join(self.folder, "relay.log"), "ab") as log:
                subprocess.run(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, close_fds=True,
                               timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            return False
        for _ in range(50):
            if self.running():
                return True
            time.sleep(0.02)
        return False
