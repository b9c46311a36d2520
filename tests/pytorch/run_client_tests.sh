#!/bin/sh
# tst_python_client: installs python/ the way a user does (pip install), into a fresh virtual
# environment over Debian's Python (which has torch, zmq and protobuf; offline: no build isolation,
# no dependencies fetched), then runs the client's unit tests against that installation.
# usage: run_client_tests.sh PYTHON PACKAGE_DIR VENV_DIR
set -eu
python=$1 package=$2 venv=$3
rm -rf "$venv"
"$python" -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps --no-index "$package"
# The tests import the installed package, not the source folder.
cd "$venv"
"$venv/bin/python" -c "import trellis_telemetry, sys; print('installed', trellis_telemetry.__file__)"
exec "$venv/bin/python" -m unittest discover -s "$package/tests" -t "$package/tests" -v
