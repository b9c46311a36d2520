"""CURVE: a rank connects with the run's client keys from a 0600 key file; other files are refused."""

import os
import unittest

import zmq

import trellis_telemetry
from helpers import TelemetryTestCase, trellis_env


@unittest.skipUnless(zmq.has("curve"), "libzmq without CURVE")
class CurveTest(TelemetryTestCase):
    def write_keys(self, mode, lines=None):
        server_public, server_secret = zmq.curve_keypair()
        client_public, client_secret = zmq.curve_keypair()
        path = os.path.join(self.dir, "telemetry.keys")
        if lines is None:
            lines = ["server_public=" + server_public.decode(), "client_public=" + client_public.decode(),
                     "client_secret=" + client_secret.decode()]
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(path, mode)
        return path, server_public, server_secret

    def test_curve_keys_from_a_0600_file(self):
        path, server_public, server_secret = self.write_keys(0o600)
        supervisor = self.supervisor(curve_secret=server_secret, curve_public=server_public)
        with trellis_env(self.endpoint, TRELLIS_TELEMETRY_KEYS=path):
            run = trellis_telemetry.init(track_collectives=False)
            run.step(1, loss=3.0)
            self.assertTrue(supervisor.wait_for(lambda s: "step" in s.payloads(), 5))
            run.close()
        self.assertEqual(supervisor.payloads()[0], "hello")
        self.assertEqual(supervisor.payloads()[-1], "goodbye")

    def test_a_plain_client_gets_nothing_through(self):
        path, server_public, server_secret = self.write_keys(0o600)
        supervisor = self.supervisor(curve_secret=server_secret, curve_public=server_public)
        with trellis_env(self.endpoint):  # no keys
            run = trellis_telemetry.init(track_collectives=False, _close_timeout_ms=300)
            run.step(1)
            self.assertFalse(supervisor.wait_for(lambda s: s.payloads(), 0.5))
            run.close()

    def test_a_file_others_can_read_is_refused(self):
        path, _, _ = self.write_keys(0o644)
        with trellis_env(self.endpoint, TRELLIS_TELEMETRY_KEYS=path):
            with self.assertRaises(trellis_telemetry.TelemetryKeyError) as caught:
                trellis_telemetry.init(track_collectives=False)
        self.assertIn("readable by others", str(caught.exception))
        self.assertIn("0600", str(caught.exception))

    def test_a_malformed_file_is_refused_naming_the_line(self):
        path, _, _ = self.write_keys(0o600, ["server_public=" + "a" * 40, "client_public=short"])
        with trellis_env(self.endpoint, TRELLIS_TELEMETRY_KEYS=path):
            with self.assertRaises(trellis_telemetry.TelemetryKeyError) as caught:
                trellis_telemetry.init(track_collectives=False)
        self.assertIn(path + ":2: client_public is not a 40-character Z85 key", str(caught.exception))

    def test_a_file_without_the_client_keys_is_refused(self):
        path, _, _ = self.write_keys(0o600, ["server_public=" + "a" * 40])
        with trellis_env(self.endpoint, TRELLIS_TELEMETRY_KEYS=path):
            with self.assertRaises(trellis_telemetry.TelemetryKeyError) as caught:
                trellis_telemetry.init(track_collectives=False)
        self.assertIn("client_public", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
