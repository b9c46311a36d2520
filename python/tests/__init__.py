# The tests import their helpers (helpers.py, fake_supervisor.py) as top-level modules, so that they
# run both as the package "tests" (unittest discover -s python/tests -t python: the source package)
# and as plain modules (-s python/tests -t python/tests: against an installed trellis_telemetry).
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
if _here not in sys.path:
    sys.path.insert(0, _here)
