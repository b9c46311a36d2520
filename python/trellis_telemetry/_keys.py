"""Reads the run's CURVE key file, as backend/protocol/curve_keys.cpp (readCurveKeys) does.

The file (mode 0600, never on a command line) holds lines ``name=<40 Z85 characters>`` with the
names server_public, server_secret, client_public and client_secret. A rank needs server_public,
client_public and client_secret. A file others can read, a malformed line or a key that is not 40
Z85 characters is refused, naming the file and the line.
"""

import os
import stat

_Z85 = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#")
_NAMES = ("server_public", "server_secret", "client_public", "client_secret")


class TelemetryKeyError(ValueError):
    """The CURVE key file named by TRELLIS_TELEMETRY_KEYS cannot be used."""


def _is_z85_key(value):
    return len(value) == 40 and all(ch in _Z85 for ch in value)


def read_curve_keys(path):
    """Returns {name: key} from the key file at `path`; raises TelemetryKeyError."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise TelemetryKeyError("telemetry keys %s: %s" % (path, e.strerror or e)) from None
    if st.st_mode & 0o077:
        raise TelemetryKeyError("telemetry keys %s: readable by others (mode %o); it must be 0600"
                                % (path, stat.S_IMODE(st.st_mode)))
    keys = {}
    try:
        with open(path, "r", encoding="ascii", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise TelemetryKeyError("telemetry keys %s: %s" % (path, e.strerror or e)) from None
    for number, text in enumerate(lines, 1):
        text = text.rstrip("\r")
        if not text:
            continue
        name, eq, value = text.partition("=")
        if not eq or name not in _NAMES:
            raise TelemetryKeyError("telemetry keys %s:%d: expected server_public=, server_secret=, client_public= "
                                    "or client_secret=" % (path, number))
        if not _is_z85_key(value):
            raise TelemetryKeyError("telemetry keys %s:%d: %s is not a 40-character Z85 key" % (path, number, name))
        keys[name] = value
    return keys


def client_keys(path):
    """The keys a rank connects with: (server_public, client_public, client_secret) as bytes."""
    keys = read_curve_keys(path)
    missing = [n for n in ("server_public", "client_public", "client_secret") if n not in keys]
    if missing:
        raise TelemetryKeyError("telemetry keys %s: the file lacks %s" % (path, ", ".join(missing)))
    return (keys["server_public"].encode("ascii"), keys["client_public"].encode("ascii"),
            keys["client_secret"].encode("ascii"))
