#!/bin/sh
# Writes internal/standards/traits-<release>.txt for the releases rpctl
# reads from source only (issue 33): os_traits.get_traits() of the os-traits
# version each release's openstack/requirements upper-constraints.txt pins,
# run from that version's git tag. Zed's and 2025.1's lists come from the
# Debian packages instead (scripts/dump-reference-schema.sh).
#
#   scripts/os-traits-lists.sh OS_TRAITS_GIT_DIR
#
# OS_TRAITS_GIT_DIR is a clone of https://opendev.org/openstack/os-traits
# (a bare one will do). os_traits/__init__.py imports pbr only for its
# version string; a one-class stand-in on PYTHONPATH answers that import.
set -eu
src=$1
out=$(cd "$(dirname "$0")/.." && pwd)/internal/standards
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/pbr"
: >"$tmp/pbr/__init__.py"
printf 'class VersionInfo:\n    def __init__(self, *a):\n        pass\n\n    def version_string(self):\n        return "0"\n' >"$tmp/pbr/version.py"
for pair in 2023.1:2.10.0 2023.2:3.0.0 2024.1:3.0.0 2024.2:3.1.0; do
	rel=${pair%%:*}
	ver=${pair#*:}
	rm -rf "$tmp/src" && mkdir "$tmp/src"
	git -C "$src" archive "$ver" os_traits | tar -x -C "$tmp/src"
	{
		echo "# os-traits $ver ($rel: openstack/requirements upper-constraints.txt of $rel, os_traits.get_traits() of the $ver tag)"
		cd "$tmp/src" && PYTHONPATH="$tmp" python3 -c 'import os_traits; print("\n".join(sorted(os_traits.get_traits())))'
	} >"$out/traits-$rel.txt"
done
