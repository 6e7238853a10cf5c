#!/usr/bin/env bash
# Build dist/rpctl_VERSION_ARCH.deb with Debian's own dpkg-deb from a tree
# staged by `make install PREFIX=/usr DESTDIR=…` (static CGO_ENABLED=0
# binary, man pages, completions), plus what Debian policy asks of a binary
# package: DEBIAN/control, /usr/share/doc/rpctl/{copyright,changelog.Debian.gz},
# man pages compressed with gzip -9n, files owned by root.
#
# DEB_VERSION (default: from git, see below) and DEB_MAINTAINER (default:
# git's user.name and user.email) override what goes into the package.
# Prints the path of the .deb on standard output.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}

arch=$(dpkg --print-architecture)
case "$arch" in
amd64 | arm64 | s390x | riscv64) goarch=$arch ;;
i386) goarch=386 ;;
ppc64el) goarch=ppc64le ;;
*) echo "deb.sh: no GOARCH known for Debian architecture $arch" >&2; exit 1 ;;
esac
# The completion files are written by running the binary just built, so
# the package is built for the machine's own architecture.
if [ "$($GO env GOARCH)" != "$goarch" ]; then
	echo "deb.sh: go builds for $($GO env GOARCH), dpkg is $arch" >&2
	exit 1
fi

# Version: a tag vX.Y.Z on HEAD gives X.Y.Z-1; otherwise
# 0~gitYYYYMMDD.HASH-1 from the commit (sorts before any release).
commit=$(git rev-parse HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	echo "deb.sh: warning: uncommitted changes; the package holds them but names commit $commit" >&2
fi
epoch=$(git log -1 --format=%ct HEAD)
if tag=$(git describe --tags --exact-match HEAD 2>/dev/null); then
	upstream=${tag#v}
else
	upstream="0~git$(date -u -d "@$epoch" +%Y%m%d).$(git rev-parse --short=12 HEAD)"
fi
version=${DEB_VERSION:-$upstream-1}
maintainer=${DEB_MAINTAINER:-"$(git config user.name) <$(git config user.email)>"}

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/rpctl
# The build date is the commit's, so that building the same commit twice
# gives the same package contents. Debian ships binaries stripped (-s -w:
# Go's own way; the build info rpctl --version reads stays).
make --no-print-directory -s install PREFIX=/usr DESTDIR="$root" GO="$GO" EXTRA_LDFLAGS="-s -w" \
	BUILD_DATE="$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)" >&2

gzip -9n "$root"/usr/share/man/man1/*.1

doc=$root/usr/share/doc/rpctl
install -d "$doc" "$root/usr/share/lintian/overrides"
{
	echo "rpctl ($version) unstable; urgency=medium"
	echo
	echo "  * Built from git commit $commit."
	echo
	echo " -- $maintainer  $(LC_ALL=C date -u -R -d "@$epoch")"
} | gzip -9n >"$doc/changelog.Debian.gz"
# rpctl-exporter links every module rpctl does, plus the Prometheus client;
# rpctl-chart adds gonum/plot and its fonts.
scripts/deb-copyright.sh "$root/usr/bin/rpctl-exporter" "$root/usr/bin/rpctl-chart" >"$doc/copyright"
# rpctl is one static binary on purpose (CGO_ENABLED=0: it runs on any
# machine without a C library of the right version); lintian only exempts
# Go binaries it sees built from a golang source package.
printf '%s\n' "rpctl: statically-linked-binary [usr/bin/rpctl]" "rpctl: statically-linked-binary [usr/bin/rpctl-exporter]" "rpctl: statically-linked-binary [usr/bin/rpctl-chart]" >"$root/usr/share/lintian/overrides/rpctl"

install -d "$root/DEBIAN"
cat >"$root/DEBIAN/control" <<CONTROL
Package: rpctl
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $(du -s -k --exclude=DEBIAN "$root" | cut -f1)
Section: admin
Priority: optional
Suggests: bash-completion
Description: operator tool for moving OpenStack Nova compute nodes into Placement
 rpctl reads the legacy compute_nodes rows of every Nova cell and creates the
 Placement resource providers and inventories, fixes allocation ratios with
 Nova's own rules, and reports upgrade readiness as nova-status does.
 .
 It also answers GET /allocation_candidates offline with a built-in
 Placement core (and explains the hosts left out), edits providers and
 inventories on the Placement database or API, heals and audits
 allocations, and counts how many more of each flavor fit; rpctl-exporter
 serves the same numbers as Prometheus metrics (rpctl exporter).
CONTROL

(cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
find "$root" -type d -exec chmod 0755 {} +
find "$root" -type f -exec chmod 0644 {} +
chmod 0755 "$root/usr/bin/rpctl" "$root/usr/bin/rpctl-exporter" "$root/usr/bin/rpctl-chart"

mkdir -p dist
out=dist/rpctl_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$out" >&2
echo "$out"
