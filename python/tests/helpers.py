"""Shared by the tests: a temporary ipc endpoint, the Trellis environment, a clean slate per test."""

import contextlib
import os
import shutil
import sys
import tempfile
import unittest

import trellis_telemetry

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TRELLIS_VARIABLES = ("TRELLIS_TELEMETRY_ENDPOINT", "TRELLIS_RUN_ID", "TRELLIS_PROTOCOL_VERSION",
                     "TRELLIS_TELEMETRY_KEYS", "TRELLIS_HEARTBEAT_MS", "TRELLIS_RESTART_COUNT",
                     "TRELLIS_CHECKPOINT_DIR", "TRELLIS_TRACK_COLLECTIVES", "TRELLIS_TELEMETRY_OWNER_PID",
                     "TRELLIS_RELAY_FOLDER", "TRELLIS_RELAY_NAME", "TRELLIS_RELAY_UPSTREAM", "TRELLIS_RELAY_UPSTREAM_KEYS",
                     "TRELLIS_RELAY_PROGRAM", "TRELLIS_RELAY_RANKS",
                     "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")


@contextlib.contextmanager
def environment(**values):
    """Sets (value None: unsets) the Trellis variables for the block; every other one is unset."""
    saved = {name: os.environ.get(name) for name in set(TRELLIS_VARIABLES) | set(values)}
    try:
        for name in TRELLIS_VARIABLES:
            os.environ.pop(name, None)
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = str(value)
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def trellis_env(endpoint, run_id="test-run", heartbeat_ms=50, **extra):
    values = dict(TRELLIS_TELEMETRY_ENDPOINT=endpoint, TRELLIS_RUN_ID=run_id, TRELLIS_PROTOCOL_VERSION="3",
                  TRELLIS_HEARTBEAT_MS=heartbeat_ms, RANK=0, WORLD_SIZE=1, LOCAL_RANK=0, LOCAL_WORLD_SIZE=1)
    values.update(extra)
    return environment(**values)


# Where the trellis_telemetry under test comes from (the source folder, or an installation).
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(trellis_telemetry.__file__)))


def subprocess_env(**values):
    """An environment for a child python: this one without the Trellis variables, plus `values`,
    with the same trellis_telemetry importable."""
    env = {k: v for k, v in os.environ.items() if k not in TRELLIS_VARIABLES}
    env["PYTHONPATH"] = PACKAGE_PARENT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update({k: str(v) for k, v in values.items()})
    return env


class TelemetryTestCase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tt-")
        self.endpoint = "ipc://" + os.path.join(self.dir, "telemetry.sock")
        trellis_telemetry._reset_for_tests()
        self.supervisors = []

    def tearDown(self):
        trellis_telemetry._reset_for_tests()
        for s in self.supervisors:
            s.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def supervisor(self, **kwargs):
        from fake_supervisor import FakeSupervisor
        s = FakeSupervisor(kwargs.pop("endpoint", self.endpoint), **kwargs)
        self.supervisors.append(s)
        return s


PYTHON = sys.executable
