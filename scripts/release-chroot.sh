#!/usr/bin/env bash
# Build a chroot holding one OpenStack release's own Nova and Placement code,
# from Debian's packages, so that rpctl can be compared with that release's
# tools (nova-manage, nova-status, placement-manage, osc-placement) on the
# host's MariaDB (over TCP 127.0.0.1, which a chroot reaches without mounts).
#
#   scripts/release-chroot.sh RELEASE DIR         build (idempotent)
#   scripts/release-chroot.sh --run DIR -- CMD…   run CMD inside DIR
#   scripts/release-chroot.sh --versions DIR      the versions it holds
#
# RELEASE is an OpenStack release Debian ships as its stable release:
#   2025.1  Debian 13 "trixie" (Nova 31, Placement 13)
#   zed     Debian 12 "bookworm" (Nova 26, Placement 8; the host's own release)
#
# Building runs debootstrap (installed on the host with apt-get when missing)
# from the Debian archive the host's apt uses (deb.debian.org unless
# RPCTL_DEBIAN_MIRROR says otherwise), then installs python3-nova,
# python3-placement, python3-pymysql and python3-osc-placement inside with
# --no-install-recommends. A finished chroot holds DIR/.rpctl-release-chroot;
# running the script again on it does nothing. Needs root.
#
# Nothing stays mounted: --run (and the package installation) mounts /proc,
# /dev (bind) and the host's /tmp (bind, so that tests can hand the tools
# config files and read their output under one path) in a private mount
# namespace (unshare -m) that ends with the command, whatever way it ends.
set -euo pipefail

usage() {
  sed -n '7,10p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# run_in DIR CMD…: CMD inside DIR with /proc, /dev and /tmp mounted in a
# private mount namespace.
run_in() {
  local dir=$1
  shift
  [ -x "$dir/usr/bin/env" ] || { echo "release-chroot: $dir is not a chroot" >&2; exit 1; }
  unshare --mount --propagation private -- /bin/sh -ec '
    dir=$1; shift
    mount -t proc proc "$dir/proc"
    mount --rbind /dev "$dir/dev"
    mount --bind /tmp "$dir/tmp"
    exec chroot "$dir" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      HOME=/root LANG=C.UTF-8 TMPDIR=/tmp "$@"
  ' run_in "$dir" "$@"
}

versions() {
  run_in "$1" dpkg-query -W -f '${Package} ${Version}\n' \
    python3-nova python3-placement python3-osc-placement python3-os-traits python3-pymysql
}

case "${1:-}" in
  --run)
    [ $# -ge 3 ] && [ "$3" = "--" ] || usage
    dir=$2
    shift 3
    [ $# -ge 1 ] || usage
    run_in "$dir" "$@"
    exit
    ;;
  --versions)
    [ $# -eq 2 ] || usage
    versions "$2"
    exit
    ;;
  -h | --help | "") usage ;;
esac
[ $# -eq 2 ] || usage
release=$1 dir=$2

case "$release" in
  2025.1) suite=trixie ;;
  zed) suite=bookworm ;;
  *) echo "release-chroot: no Debian release ships OpenStack $release as its stable release (know: 2025.1, zed)" >&2; exit 2 ;;
esac
packages="python3-nova python3-placement python3-pymysql python3-osc-placement"
stamp="$dir/.rpctl-release-chroot"
want="release=$release suite=$suite packages=$packages"
if [ -f "$stamp" ] && [ "$(head -1 "$stamp")" = "$want" ]; then
  echo "release-chroot: $dir already holds $release ($suite)"
  exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "release-chroot: building a chroot needs root" >&2; exit 1; }

# The mirror the host's apt uses (deb.debian.org on these machines).
mirror=${RPCTL_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
  mirror=$(grep -rhoE '(URIs:[[:space:]]*|^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?)https?://[^[:space:]]+/debian/?([[:space:]]|$)' \
    /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | grep -oE 'https?://[^[:space:]]+' | head -1 || true)
  mirror=${mirror:-http://deb.debian.org/debian}
fi
mirror=${mirror%/}

if ! command -v debootstrap >/dev/null; then
  echo "release-chroot: installing debootstrap on the host" >&2
  apt-get install -y --no-install-recommends debootstrap >/dev/null
fi
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

mkdir -p "$dir"
if [ ! -x "$dir/usr/bin/apt-get" ] || [ ! -f "$dir/.rpctl-debootstrap-done" ]; then
  echo "release-chroot: debootstrap $suite from $mirror into $dir" >&2
  debootstrap --variant=minbase --keyring="$keyring" "$suite" "$dir" "$mirror" >"$dir.debootstrap.log" 2>&1 \
    || { echo "release-chroot: debootstrap failed, see $dir.debootstrap.log" >&2; tail -20 "$dir.debootstrap.log" >&2; exit 1; }
  touch "$dir/.rpctl-debootstrap-done"
fi

# Sources: the release, its updates and its security fixes.
sec=${mirror%/debian}/debian-security
cat >"$dir/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb $sec $suite-security main
EOF
# No daemon may start inside: the packages' postinst scripts would try.
printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
chmod 755 "$dir/usr/sbin/policy-rc.d"
cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true

echo "release-chroot: installing $packages" >&2
run_in "$dir" /bin/sh -ec "
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends $packages
  apt-get clean
" >"$dir.install.log" 2>&1 \
  || { echo "release-chroot: package installation failed, see $dir.install.log" >&2; tail -20 "$dir.install.log" >&2; exit 1; }

{
  echo "$want"
  versions "$dir"
} >"$stamp"
echo "release-chroot: $dir holds $release ($suite):" >&2
tail -n +2 "$stamp" >&2
