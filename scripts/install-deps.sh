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
  # the collective between data-parallel replica groups (backend/trainer/comm/replica_link.h)
  libgloo-dev
  # the team history on PostgreSQL: libpq (COPY), Qt's QPSQL driver, and the server the tests start
  # privately (tests/support/postgres_cluster.sh; no system cluster is used)
  libpq-dev libqt6sql6-psql postgresql
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
  # the transformers reference check (ctest label transformers): Debian's CPU PyTorch; the rest from
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
install_missing() {
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "Installing missing packages: ${missing[*]}"
  local sudo_cmd=()
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
}

# cuDNN's C++ front end, header-only, for the fused attention of the CUDA build
# (kernels/cuda/attention_cudnn.cpp): a pinned release of the PyPI wheel nvidia-cudnn-frontend, its
# include/ unpacked under ~/.cache/trellis, where kernels/CMakeLists.txt looks. Only where the CUDA
# toolkit with cuDNN is installed; without it the CUDA build refuses bf16 attention by name.
fetch_cudnn_frontend() {
  local version=1.32.0
  local dest="$HOME/.cache/trellis/cudnn-frontend-$version"
  [ -e /usr/local/cuda/include/cudnn.h ] || return 0
  [ -f "$dest/include/cudnn_frontend.h" ] && return 0
  local tmp
  tmp=$(mktemp -d)
  if python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: -d "$tmp" \
      "nvidia-cudnn-frontend==$version"; then
    mkdir -p "$dest"
    python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("include/")])' "$(ls "$tmp"/*.whl | head -1)" "$dest"
  else
    echo "warning: could not fetch nvidia-cudnn-frontend $version; the CUDA build will have no fused attention" >&2
  fi
  rm -rf "$tmp"
}

install_missing
fetch_cudnn_frontend
