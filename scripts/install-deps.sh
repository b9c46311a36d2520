#!/usr/bin/env bash
# Installs the Debian 12 packages Trellis needs to build, test and run — only those missing.
# Usage: scripts/install-deps.sh [--gui-runtime]   (as root, or a user with sudo)
set -euo pipefail

packages=(
  cmake ninja-build ccache g++ pkg-config git
  qt6-base-dev qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools libqt6sql6-sqlite qt6-qpa-plugins
  # charts saved as SVG (ui/workspace/panel_frame.cpp)
  qt6-svg-dev
  libqcustomplot-dev
  libopenmpi-dev openmpi-bin
  libzmq3-dev cppzmq-dev
  libprotobuf-dev protobuf-compiler
  libsqlite3-dev sqlite3 libopenblas-dev nlohmann-json3-dev poppler-utils
  # bf16 GEMMs on CPUs with AVX512-BF16/AMX (kernels/cpu/half_gemm.cpp)
  libdnnl-dev
  xvfb xauth fonts-dejavu-core fonts-wqy-microhei qt6-translations-l10n
  # scripts/screenshot.sh: ImageMagick's import grabs the Xvfb screen
  imagemagick
  prometheus
  # the ssh and slurm launch tests: real sshd hosts in network namespaces, a real Slurm with munge
  openssh-server openssh-client iproute2 munge slurmctld slurmd slurm-client
  # the Debian package: built with cpack, checked with lintian, installed into a debootstrap root
  dpkg-dev fakeroot lintian debootstrap
  # the transformers reference check (ctest label interop): Debian's CPU PyTorch; the rest from
  # PyPI into build/hf-venv (scripts/setup-hf-env.sh)
  python3-torch python3-venv python3-numpy python3-pip
  # the Python telemetry client (python/, trellis_telemetry) and the PyTorch job tests (tests/pytorch)
  python3-zmq python3-protobuf python3-setuptools
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "Installing missing packages: ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo_cmd=(sudo)
  else
    echo "error: need root or sudo to install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
