#!/usr/bin/env bash
# Packs programs built here for a bare GPU machine (docs/gpu.md): the programs, every shared library
# they need that such a machine lacks — Qt, ZeroMQ, protobuf, OpenBLAS, oneDNN and their own needs —,
# Qt's SQLite driver (for trellis-cli's history), any Python wheels in scripts/gpu/wheels.txt already
# downloaded to DIR/wheels, and extra files, into DIR/pack.tar.xz beside run.sh and verify.sh.
# What the GPU machine has of its own is never packed: glibc, libstdc++, CUDA 13 with cuBLAS(Lt),
# cuDNN 9, NCCL 2 and Open MPI 4.1.
# Usage: scripts/gpu/pack.sh DIR PROGRAM... [-- EXTRA_FILE_OR_DIR...]
#   DIR must be ignored by git (echo /.gpu-carry/ >> .git/info/exclude) and is what a device run carries.
set -euo pipefail
if [[ ${1:-} == --help || ${1:-} == -h || $# -lt 2 ]]; then sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; [[ $# -ge 2 ]]; exit $?; fi
out=$1; shift
progs=(); extras=()
while [[ $# -gt 0 ]]; do
  if [[ $1 == -- ]]; then shift; extras=("$@"); break; fi
  progs+=("$1"); shift
done
for p in "${progs[@]}"; do [[ -x $p ]] || { echo "pack.sh: '$p' is not an executable program" >&2; exit 2; }; done
here=$(cd "$(dirname "$0")" && pwd)
stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/files" "$stage/plugins" "$out"
for p in "${progs[@]}"; do cp -L "$p" "$stage/bin/"; done
# Qt's SQLite driver is loaded at run time, not linked: pack it (and what it needs) when Qt is in.
libs=("${progs[@]}")
qtsql=$(ldd "${progs[@]}" 2>/dev/null | awk '/libQt6Sql/ {print $3}' | sort -u) || true
if [[ -n $qtsql ]]; then
  plugin=$(find /usr/lib/x86_64-linux-gnu/qt6/plugins/sqldrivers -name 'libqsqlite.so' 2>/dev/null | head -1)
  if [[ -n $plugin ]]; then mkdir -p "$stage/plugins/sqldrivers"; cp -L "$plugin" "$stage/plugins/sqldrivers/"; libs+=("$plugin"); fi
fi
for p in "${libs[@]}"; do
  if ldd "$p" | grep -q 'not found'; then echo "pack.sh: $p needs libraries this machine lacks:" >&2; ldd "$p" | grep 'not found' >&2; exit 1; fi
  ldd "$p" | awk '/=>/ {print $3}'
done | sort -u | while read -r l; do
  case $(basename "$l") in
    libc.so*|libm.so*|libdl.so*|libpthread*|librt.so*|libresolv*|libstdc++*|libgcc_s*|libz.so*|libudev*) ;;
    libcuda.so*|libcudart*|libcublas*|libcudnn*|libnccl*|libnvrtc*|libnvJitLink*) ;;
    libmpi*|libopen-pal*|libopen-rte*|libhwloc*|libevent*|libpmix*|libfabric*|libucp*|libucs*|libuct*|libibverbs*|librdmacm*) ;;
    *) cp -L "$l" "$stage/lib/" ;;
  esac
done
for e in "${extras[@]}"; do cp -rL "$e" "$stage/files/"; done
tar -C "$stage" -cJf "$out/pack.tar.xz" bin lib files plugins
cp "$here/run.sh" "$here/verify.sh" "$out/"
rm -rf "$out/unpacked"
size=$(du -sh "$out" | cut -f1)
echo "packed $(ls "$stage/bin" | wc -l) programs, $(ls "$stage/lib" | wc -l) libraries into $out ($size; a device run carries 64 MiB at most)"
