#!/usr/bin/env bash
# Runs one packed command on the GPU machine (docs/gpu.md): unpacks pack.tar.xz beside this script
# once, points the loader at the packed libraries and the machine's own CUDA libraries, Qt at the
# packed plugins, Python at the packed wheels (installed once under unpacked/site), and runs the
# command from the unpacked folder (bin/PROGRAM, files/... as packed). cuDNN and NCCL come from
# PyTorch's wheels there when present (cuDNN 9.19 and NCCL 2.28.9, the versions whose headers the
# build used; the system's own are 9.14 and 2.28.3). Open MPI there is the system's 4.1.6; running
# as root is allowed by the variables set here.
# Usage: DIR/run.sh COMMAND [ARGS...]      (also works here, on the machine that packed it)
set -uo pipefail
if [[ ${1:-} == --help || ${1:-} == -h || $# -lt 1 ]]; then sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; [[ $# -ge 1 ]]; exit $?; fi
here=$(cd "$(dirname "$0")" && pwd)
if [[ ! -d $here/unpacked ]]; then
  mkdir -p "$here/unpacked.tmp" && tar -C "$here/unpacked.tmp" -xJf "$here/pack.tar.xz" && mv "$here/unpacked.tmp" "$here/unpacked" ||
    { echo "run.sh: cannot unpack $here/pack.tar.xz" >&2; exit 1; }
fi
if [[ -d $here/wheels && ! -d $here/unpacked/site ]] && compgen -G "$here/wheels/*.whl" > /dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$here/unpacked/site" "$here"/wheels/*.whl \
    > "$here/unpacked/wheels.log" 2>&1 ||
    echo "run.sh: the packed wheels did not install for $(python3 --version 2>&1) (unpacked/wheels.log); Python steps will miss them" >&2
  mkdir -p "$here/unpacked/site" # tried once
fi
dirs="$here/unpacked/lib"
for lib in 'nvidia/cudnn/lib/libcudnn.so.9' 'nvidia/nccl/lib/libnccl.so.2'; do
  f=$(find / -xdev -path "*/site-packages/$lib" 2>/dev/null | head -1)
  [[ -n $f ]] && dirs="$dirs:$(dirname "$f")"
done
cublas=$(find /usr/local /usr/lib -name 'libcublasLt.so.13' 2>/dev/null | head -1)
[[ -n $cublas ]] && dirs="$dirs:$(dirname "$cublas")"
export LD_LIBRARY_PATH="$dirs:/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export QT_PLUGIN_PATH="$here/unpacked/plugins" QT_QPA_PLATFORM=offscreen
export PYTHONPATH="$here/unpacked/site:$here/unpacked/files/python${PYTHONPATH:+:$PYTHONPATH}"
export PATH="$here/unpacked/bin:$PATH"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$here/unpacked" && exec "$@"
