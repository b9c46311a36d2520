#!/usr/bin/env bash
# Builds trellis-trainer_<version>_amd64.deb (the trainer and trellis-cli, no Qt Widgets) and, in a
# build with the workbench, trellis_<version>_amd64.deb; checks them with lintian; with
# --install-test installs them with apt-get into a fresh Debian 12 root made by debootstrap:
# trellis-trainer alone first (the quick-start plan run there by its trellis-cli, and no Qt Widgets
# library pulled in), then trellis (the workbench answers --help).
#   packaging/build-deb.sh [--install-test] [BUILD_DIR]     (default BUILD_DIR: build-deb; an existing
#                                                          build folder is used as it is configured)
# Needs: the build dependencies (scripts/install-deps.sh), dpkg-dev, lintian; for --install-test
# root, debootstrap and a Debian mirror.
set -euo pipefail
install_test=0
if [ "${1:-}" = "--install-test" ]; then install_test=1; shift; fi
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then sed -n '2,10p' "$0"; exit 0; fi
# A BUILD_DIR given is taken relative to where the script was called from.
build=build-deb
if [ -n "${1:-}" ]; then build=$(realpath -m -- "$1"); fi
cd "$(dirname "$0")/.."
for tool in cpack dpkg-shlibdeps lintian; do
  command -v $tool >/dev/null || { echo "skipped: no $tool here (scripts/install-deps.sh installs it)"; exit 77; }
done
if [ $install_test -eq 1 ]; then
  [ "$(id -u)" -eq 0 ] || { echo "skipped: --install-test needs root (debootstrap, chroot)"; exit 77; }
  command -v debootstrap >/dev/null || { echo "skipped: no debootstrap here"; exit 77; }
fi

[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr -DTRELLIS_BUILD_TESTS=OFF -DTRELLIS_BUILD_BENCH=OFF >/dev/null
gui=$(sed -n 's/^TRELLIS_BUILD_GUI:BOOL=//p' "$build/CMakeCache.txt")
targets=(trellis-cli trellis-trainer trellis_changelog)
case "$gui" in ON|1|TRUE|YES) targets+=(trellis) ;; *) gui=OFF ;; esac
cmake --build "$build" --target "${targets[@]}"
rm -f "$build"/trellis_*_amd64.deb "$build"/trellis-trainer_*_amd64.deb
(cd "$build" && cpack -G DEB)
trainer_deb=$(ls "$build"/trellis-trainer_*_amd64.deb)
debs=("$trainer_deb")
if [ "$gui" != OFF ]; then
  workbench_deb=$(ls "$build"/trellis_*_amd64.deb)
  debs+=("$workbench_deb")
fi
for deb in "${debs[@]}"; do
  echo "built $deb"
  dpkg-deb -f "$deb"
  dpkg-deb --contents "$deb" | awk '{print $6}'
  echo "lintian:"
  # Once a package (lintian takes about ten seconds a run here): shown whole, then judged.
  findings=$(lintian --tag-display-limit 0 "$deb" 2>&1 || true)
  [ -z "$findings" ] || printf '%s\n' "$findings"
  if grep -q '^E:' <<<"$findings"; then echo "lintian reports errors in $deb" >&2; exit 1; fi
done
if dpkg-deb --info "$trainer_deb" | grep -q 'libqt6widgets'; then
  echo "$trainer_deb depends on Qt Widgets" >&2; exit 1
fi

[ $install_test -eq 1 ] || exit 0
root=$(mktemp -d /tmp/trellis-deb-root-XXXXXX)
cleanup() {
  for m in proc dev/pts dev sys; do umount -l "$root/$m" 2>/dev/null || true; done
  rm -rf --one-file-system "$root"
}
trap cleanup EXIT
debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
mount -t sysfs sys "$root/sys"
cp "${debs[@]}" "$root/tmp/"
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# The trainer package alone: trellis-cli runs the quick-start plan, and no Qt Widgets came with it.
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "/tmp/$(basename "$trainer_deb")"
chroot "$root" trellis-cli --help >/dev/null
chroot "$root" trellis-cli --version
chroot "$root" trellis-trainer --help >/dev/null
if chroot "$root" dpkg-query -W -f='${Status}\n' libqt6widgets6 2>/dev/null | grep -q "install ok installed"; then
  echo "installing trellis-trainer pulled in Qt Widgets" >&2; exit 1
fi
chroot "$root" env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
  trellis-cli --db /tmp/history.sqlite run /usr/share/trellis/plans/quickstart.json --quiet
chroot "$root" trellis-cli --db /tmp/history.sqlite runs
echo "trellis-trainer installed alone and ran in a fresh Debian 12 root: ok"
if [ "$gui" != OFF ]; then
  chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "/tmp/$(basename "$workbench_deb")"
  chroot "$root" env QT_QPA_PLATFORM=offscreen trellis --help >/dev/null
  echo "trellis (the workbench) installed beside it: ok"
fi
