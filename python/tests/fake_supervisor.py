"""A fake Trellis supervisor for the tests (and the bench): a real ZeroMQ ROUTER socket that takes
frames apart as launcher/ingest/telemetry_receiver.cpp does (a Batch, or one bare Envelope), accepts
each rank's messages in sequence, asks for a resend on a gap (at most once per 300 ms per rank),
counts what a Skip gives up as lost, and acknowledges what it accepted after every frame."""

import collections
import threading
import time

import zmq

from trellis_telemetry import telemetry_pb2 as pb

BATCH_TAG = b"\xa2\x06"


def split_frame(frame):
    """The encoded envelopes of a frame (a Batch's parts, or the frame itself) and whether it was a batch."""
    if len(frame) < 2 or frame[:2] != BATCH_TAG:
        return [frame], False
    batch = pb.Batch()
    batch.ParseFromString(frame)
    return list(batch.envelopes), True


class FakeSupervisor:
    def __init__(self, endpoint, run_id="test-run", ack=True, curve_secret=None, curve_public=None,
                 expected=None, lose_once=()):
        self.endpoint = endpoint
        self.run_id = run_id
        self.ack = ack               # False: receive and accept, never acknowledge
        self.discard = False         # True: read frames and forget them (as if lost), no acks
        self.lose_once = set(lose_once)  # (rank, seq) to lose the first time they arrive
        self.lock = threading.Lock()
        self.accepted = collections.defaultdict(list)  # rank -> [Envelope] in sequence
        self.arrivals = []           # every decoded envelope, as it came (duplicates, skips included)
        self.frames = {"batch": 0, "bare": 0}
        self.expected = collections.defaultdict(int, expected or {})
        self.lost = collections.defaultdict(int)
        self.duplicates = 0
        self.resend_requests = []    # (rank, resend_from)
        self.acks_sent = 0
        self._asked_at = {}
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.ROUTER)
        self._socket.setsockopt(zmq.LINGER, 0)
        if curve_secret is not None:
            self._socket.setsockopt(zmq.CURVE_SERVER, 1)
            self._socket.setsockopt(zmq.CURVE_SECRETKEY, curve_secret)
            if curve_public is not None:
                self._socket.setsockopt(zmq.CURVE_PUBLICKEY, curve_public)
        self._socket.bind(endpoint)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="fake-supervisor", daemon=True)
        self._thread.start()

    # --- reading ---------------------------------------------------------------------------

    def _loop(self):
        poller = zmq.Poller()
        poller.register(self._socket, zmq.POLLIN)
        while not self._stop.is_set():
            if not poller.poll(20):
                continue
            while True:
                try:
                    parts = self._socket.recv_multipart(zmq.NOBLOCK)
                except zmq.ZMQError:
                    break
                if len(parts) != 2:
                    continue
                self._frame(parts[0], parts[1])

    def _frame(self, identity, frame):
        if self.discard:
            return
        envelopes, is_batch = split_frame(frame)
        resend = {}
        with self.lock:
            self.frames["batch" if is_batch else "bare"] += 1
            ranks = set()
            for data in envelopes:
                e = pb.Envelope()
                e.ParseFromString(data)
                self.arrivals.append(e)
                rank = e.rank
                ranks.add(rank)
                if (rank, e.seq) in self.lose_once and not e.HasField("skip"):
                    self.lose_once.discard((rank, e.seq))
                    continue
                expected = self.expected[rank]
                if e.HasField("skip"):
                    if e.skip.next_seq > expected:
                        self.lost[rank] += e.skip.next_seq - expected
                        self.expected[rank] = e.skip.next_seq
                    continue
                if e.seq < expected:
                    self.duplicates += 1
                    continue
                if e.seq > expected:
                    resend.setdefault(rank, expected)
                    continue
                self.expected[rank] = e.seq + 1
                self.accepted[rank].append(e)
            now = time.monotonic()
            replies = []
            for rank in ranks:
                if rank in resend:
                    if now - self._asked_at.get(rank, -1.0) >= 0.3:
                        self._asked_at[rank] = now
                        self.resend_requests.append((rank, resend[rank]))
                        replies.append(self._ack(self.expected[rank], True, resend[rank]))
                elif self.ack:
                    replies.append(self._ack(self.expected[rank], False, 0))
        for reply in replies:
            if self.ack or reply.resend:
                try:
                    self._socket.send_multipart([identity, reply.SerializeToString()], zmq.NOBLOCK)
                    self.acks_sent += 1
                except zmq.ZMQError:
                    pass

    def _ack(self, next_seq, resend, resend_from):
        a = pb.Ack()
        a.run_id = self.run_id
        a.next_seq = next_seq
        a.resend = resend
        a.resend_from = resend_from
        return a

    # --- for the tests -----------------------------------------------------------------------

    def messages(self, rank=0):
        with self.lock:
            return list(self.accepted[rank])

    def payloads(self, rank=0):
        return [e.WhichOneof("payload") for e in self.messages(rank)]

    def wait_for(self, predicate, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate(self):
                return True
            time.sleep(0.02)
        return predicate(self)

    def has_goodbye(self, rank=0):
        return any(e.HasField("goodbye") for e in self.messages(rank))

    def close(self):
        self._stop.set()
        self._thread.join(2)
        self._socket.close(linger=0)
        self._context.term()
