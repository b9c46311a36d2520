"""Trellis telemetry for PyTorch training scripts.

    import trellis_telemetry
    run = trellis_telemetry.init()          # a no-op run outside Trellis
    for step in range(1, steps + 1):
        with run.phase("forward"):
            loss = model(batch)
        ...
        run.step(step, loss=loss, tokens=tokens)
    run.close()                             # also done at exit (1 and the exception on a crash)

Inside Trellis (TRELLIS_TELEMETRY_ENDPOINT set by the launcher) the run speaks protocol version 3
(backend/protocol/telemetry.proto) to the supervisor from a background thread; see README.md.
"""

import atexit
import os
import sys
import threading

from ._keys import TelemetryKeyError
from ._run import NoOpRun, RankInfo

__version__ = "0.1.0"
PROTOCOL_VERSION = 3

__all__ = ["init", "current", "ProtocolMismatch", "TelemetryKeyError", "NoOpRun", "PROTOCOL_VERSION",
           "__version__"]

_OWNER = "TRELLIS_TELEMETRY_OWNER_PID"  # set while a process reports; its children must not
_lock = threading.Lock()
_current = None
_previous_excepthook = None


class ProtocolMismatch(RuntimeError):
    """The supervisor speaks another telemetry protocol version than this client."""


def current():
    """The run init() returned, or None before init()."""
    return _current


def init(**options):
    """Returns the process's run (the same one on every call).

    Outside Trellis (TRELLIS_TELEMETRY_ENDPOINT absent or empty) a no-op run. Inside, a Run that
    reports to the supervisor; raises ProtocolMismatch when TRELLIS_PROTOCOL_VERSION is not this
    client's version, TelemetryKeyError when TRELLIS_TELEMETRY_KEYS names an unusable key file.

    Options: track_collectives=True (env TRELLIS_TRACK_COLLECTIVES=0 switches it off),
    cuda_events=False, precision="", model=None (counts its parameters for Hello),
    heartbeat_ms (default TRELLIS_HEARTBEAT_MS or 500), handle_exit=True (atexit and
    sys.excepthook close the run).
    """
    global _current
    with _lock:
        if _current is None:
            _current = _make_run(options)
        return _current


_OPTIONS = {"track_collectives", "cuda_events", "precision", "model", "heartbeat_ms", "handle_exit",
            "_queue_capacity", "_spool_capacity", "_close_timeout_ms", "_resend_after_ms"}  # _: tests only


def _make_run(options):
    environ = os.environ
    info = RankInfo(environ)
    endpoint = environ.get("TRELLIS_TELEMETRY_ENDPOINT", "").strip()
    collector = not endpoint and environ.get("TRELLIS_COLLECTOR", "").strip() != ""
    if not endpoint and not collector:
        return NoOpRun(info)
    owner = environ.get(_OWNER, "")
    if owner and owner != str(os.getpid()):
        # A process started by a rank that already reports (a spawned DataLoader worker that
        # re-ran the script's top level): the rank is that process, not this one.
        return NoOpRun(info)
    theirs = environ.get("TRELLIS_PROTOCOL_VERSION", "").strip()
    if theirs and theirs != str(PROTOCOL_VERSION):
        raise ProtocolMismatch("Trellis supervisor speaks telemetry protocol version %s; this trellis_telemetry "
                               "%s speaks version %d: install the trellis_telemetry that comes with that Trellis"
                               % (theirs, __version__, PROTOCOL_VERSION))
    try:
        from ._transport import Publisher  # imports zmq and telemetry_pb2 (google.protobuf)
    except Exception as e:  # ImportError, or a protobuf too old for the generated module
        print("trellis_telemetry: inside Trellis but %s; telemetry is off for this process "
              "(pip install pyzmq protobuf)" % (e,), file=sys.stderr)
        return NoOpRun(info)
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        print("trellis_telemetry: init() ignores unknown option(s) %s" % ", ".join(unknown), file=sys.stderr)
    from ._transport import NodeRelay
    relay = NodeRelay.from_environment(environ)  # set by trellis-trainer --exec with --node-relay
    curve = None
    keys_path = environ.get("TRELLIS_TELEMETRY_KEYS", "").strip()
    if collector:
        # A job Trellis did not launch: the collector says which run and where (docs/collector.md).
        from ._collector import join
        joined = join(environ, info, "trellis_telemetry %s" % __version__)
        if joined is None:
            return NoOpRun(info)
        endpoint, info.run_id, curve = joined
    elif keys_path:
        from ._keys import client_keys
        curve = client_keys(keys_path)
    heartbeat_ms = options.get("heartbeat_ms")
    if heartbeat_ms is None:
        text = environ.get("TRELLIS_HEARTBEAT_MS", "").strip()
        try:
            heartbeat_ms = int(text) if text else 500
        except ValueError:
            heartbeat_ms = 500
    heartbeat_ms = heartbeat_ms if heartbeat_ms > 0 else 500

    tracker = None
    track = options.get("track_collectives", True) and environ.get("TRELLIS_TRACK_COLLECTIVES", "1").strip() != "0"
    if track:
        tracker = _install_tracking()

    def publisher(heartbeat_source):
        return Publisher(endpoint, info.run_id, max(0, info.rank), heartbeat_ms=heartbeat_ms,
                         queue_capacity=options.get("_queue_capacity", 4096),
                         spool_capacity=options.get("_spool_capacity", 65536),
                         close_timeout_ms=options.get("_close_timeout_ms", 3000),
                         resend_after_ms=options.get("_resend_after_ms", 2000),
                         curve=curve, heartbeat_source=heartbeat_source, relay=relay)

    from ._run import Run
    run = Run(info, publisher, tracker=tracker, precision=options.get("precision", ""),
              cuda_events=options.get("cuda_events", False), model=options.get("model"),
              relay_name=relay.name if relay is not None else "")
    os.environ[_OWNER] = str(os.getpid())
    if options.get("handle_exit", True):
        _install_exit_handlers()
    return run


def _install_tracking():
    """A Tracker with torch.distributed wrapped, or None (no torch)."""
    import importlib.util
    if "torch" not in sys.modules and importlib.util.find_spec("torch") is None:
        return None
    try:
        from . import _collectives
        tracker = _collectives.Tracker()
        return tracker if _collectives.install(tracker) else None
    except Exception as e:  # tracking is an extra: never stop the run for it
        print("trellis_telemetry: collective tracking is off: %r" % (e,), file=sys.stderr)
        return None


# --- exit -----------------------------------------------------------------------------------

def _at_exit():
    run = _current
    if run is not None and run.active and not run.closed:
        run.close(0, "")


def _excepthook(exc_type, exc, tb):
    try:
        (_previous_excepthook or sys.__excepthook__)(exc_type, exc, tb)
    finally:
        run = _current
        if run is not None and run.active and not run.closed:
            import traceback
            reason = "".join(traceback.format_exception_only(exc_type, exc)).strip()
            run.close(1, reason)


def _install_exit_handlers():
    global _previous_excepthook
    atexit.register(_at_exit)
    if sys.excepthook is not _excepthook:
        _previous_excepthook = sys.excepthook
        sys.excepthook = _excepthook


def _after_fork_in_child():
    run = _current
    if run is not None and run.active:
        run._forked()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _reset_for_tests():
    """Closes and forgets the run and undoes what init() installed (tests only)."""
    global _current, _previous_excepthook
    with _lock:
        run, _current = _current, None
    if run is not None and run.active and not run.closed:
        run.close(0, "reset")
    if "trellis_telemetry._collectives" in sys.modules:
        sys.modules["trellis_telemetry._collectives"].uninstall()
    atexit.unregister(_at_exit)
    if sys.excepthook is _excepthook:
        sys.excepthook = _previous_excepthook or sys.__excepthook__
    _previous_excepthook = None
    os.environ.pop(_OWNER, None)
