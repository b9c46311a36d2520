"""telemetry_pb2.py is what protoc makes of backend/protocol/telemetry.proto, and speaks version 3."""

import os
import shutil
import subprocess
import tempfile
import unittest

from helpers import PYTHON_DIR
from trellis_telemetry import telemetry_pb2 as pb

SCRIPT = os.path.join(PYTHON_DIR, "regenerate_proto.sh")
PROTO = os.path.join(PYTHON_DIR, "..", "backend", "protocol", "telemetry.proto")


class ProtoTest(unittest.TestCase):
    @unittest.skipUnless(shutil.which("protoc") and os.path.exists(PROTO), "protoc or the repository's proto missing")
    def test_regenerating_gives_the_committed_module(self):
        out = tempfile.mkdtemp(prefix="tt-proto-")
        try:
            subprocess.run(["sh", SCRIPT, out], check=True, capture_output=True, timeout=60)
            with open(os.path.join(out, "telemetry_pb2.py"), "rb") as f:
                fresh = f.read()
            with open(os.path.join(PYTHON_DIR, "trellis_telemetry", "telemetry_pb2.py"), "rb") as f:
                committed = f.read()
            self.assertEqual(fresh, committed, "run python/regenerate_proto.sh: telemetry.proto changed")
        finally:
            shutil.rmtree(out, ignore_errors=True)

    def test_the_module_is_the_package_s_and_speaks_version_3(self):
        self.assertEqual(pb.Envelope.__module__, "trellis_telemetry.telemetry_pb2")
        if os.path.exists(PROTO):
            with open(PROTO) as f:
                self.assertIn("version 3", f.readline())

    def test_batch_framing_is_protobuf_s(self):
        from trellis_telemetry._transport import append_to_batch
        envelopes = [b"x", b"y" * 200, b"z" * 70000]  # 1-, 2- and 3-byte lengths
        parts = []
        size = sum(append_to_batch(parts, e) for e in envelopes)
        frame = b"".join(parts)
        self.assertEqual(size, len(frame))
        batch = pb.Batch()
        batch.envelopes.extend(envelopes)
        self.assertEqual(frame, batch.SerializeToString())
        self.assertEqual(frame[:2], b"\xa2\x06")  # field 100: how a receiver tells a batch


if __name__ == "__main__":
    unittest.main()
