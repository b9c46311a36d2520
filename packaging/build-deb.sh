#!/usr/bin/env bash
# Builds trellis_<version>_amd64.deb, checks it with lintian, and (with --install-test) installs it
# with apt-get into a fresh Debian 12 root made by debootstrap and runs the quick-start plan there
# with the installed trellis-cli.
#   packaging/build-deb.sh [--install-test] [BUILD_DIR]     (default BUILD_DIR: build-deb; an existing
#                                                          build folder is used as it is configured)
# Needs: the build dependencies (scripts/install-deps.sh), dpkg-dev, lintian; for --install-test
# root, debootstrap and a Debian mirror.
set -euo pipefail
cd "$(dirname "$0")/.."
install_test=0
if [ "${1:-}" = "--install-test" ]; then install_test=1; shift; fi
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then sed -n '2,9p' "$0"; exit 0; fi
build=${1:-build-deb}
for tool in cpack dpkg-shlibdeps lintian; do
  command -v $tool >/dev/null || { echo "skipped: no $tool here (scripts/install-deps.sh installs it)"; exit 77; }
done
if [ $install_test -eq 1 ]; then
  [ "$(id -u)" -eq 0 ] || { echo "skipped: --install-test needs root (debootstrap, chroot)"; exit 77; }
  command -v debootstrap >/dev/null || { echo "skipped: no debootstrap here"; exit 77; }
fi

[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr -DTRELLIS_BUILD_TESTS=OFF -DTRELLIS_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" --target trellis trellis-cli trellis-trainer trellis_changelog
(cd "$build" && cpack -G DEB)
deb=$(ls -t "$build"/trellis_*_amd64.deb | head -1)
echo "built $deb"
dpkg-deb --info "$deb" | sed -n '/Package:/,$p'
dpkg-deb --contents "$deb" | awk '{print $6}'
echo "lintian:"
lintian --no-tag-display-limit "$deb" || true
if lintian "$deb" 2>&1 | grep -q '^E:'; then echo "lintian reports errors" >&2; exit 1; fi

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
cp "$deb" "$root/tmp/"
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "/tmp/$(basename "$deb")"
chroot "$root" trellis-cli --help >/dev/null
chroot "$root" trellis-cli --version
chroot "$root" env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
  trellis-cli --db /tmp/history.sqlite run /usr/share/trellis/plans/quickstart.json --quiet
chroot "$root" trellis-cli --db /tmp/history.sqlite runs
echo "installed and ran in a fresh Debian 12 root: ok"
