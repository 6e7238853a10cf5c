#!/usr/bin/env bash
# make deb-check (as root, on Debian): build the package (scripts/deb.sh),
# lint it (lintian errors fail), install it with dpkg -i, check that what an
# operator gets works — every man page found by `man`, bash completion
# completing, rpctl --version naming this commit — and purge it again.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	echo "deb-check.sh: run as root: it installs and removes the rpctl package" >&2
	exit 1
fi
for tool in dpkg-deb lintian man; do
	command -v "$tool" >/dev/null || { echo "deb-check.sh: $tool is missing (apt-get install lintian man-db)" >&2; exit 1; }
done
# Completion files under /usr/share/bash-completion are loaded by the
# bash-completion package, whose helpers cobra's script calls.
if [ ! -f /usr/share/bash-completion/bash_completion ]; then
	echo "deb-check.sh: bash-completion is missing (apt-get install bash-completion)" >&2
	exit 1
fi
if dpkg-query -W -f '${Status}' rpctl 2>/dev/null | grep -q installed; then
	echo "deb-check.sh: a package rpctl is installed already; remove it first (dpkg -P rpctl)" >&2
	exit 1
fi
if [ -e /usr/bin/rpctl ]; then
	echo "deb-check.sh: /usr/bin/rpctl exists and belongs to no package; the check would overwrite it" >&2
	exit 1
fi

deb=$(scripts/deb.sh)
echo "== lintian $deb"
# Warnings and information tags are shown; errors fail the check. (With
# --show-overrides lintian counts overridden errors too, so the override
# shipped in the package is printed separately.)
lintian --fail-on error --display-info "$deb"
echo "overridden: $(dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/share/lintian/overrides/rpctl)"

echo "== dpkg -i"
installed=
cleanup() { if [ -n "$installed" ]; then dpkg -P rpctl >/dev/null; fi; }
trap cleanup EXIT
dpkg -i "$deb"
installed=1

fail() { echo "deb-check.sh: $*" >&2; exit 1; }

echo "== copyright"
# rpctl's own paragraph (the first Files: * one) names LICENSE's license.
cr=/usr/share/doc/rpctl/copyright
awk '/^Files: \*$/ {f=1} f && /^License:/ {print; exit}' "$cr" | grep -qx "License: Apache-2.0" ||
	fail "$cr does not license rpctl under Apache-2.0: $(grep -m1 -A3 '^Files: \*$' "$cr")"
grep -q "Apache License" LICENSE && grep -q "Version 2.0" LICENSE || fail "LICENSE is not the Apache License 2.0"
echo "rpctl: Apache-2.0, as LICENSE"
# Every module linked into the installed binaries has its paragraph, with a
# license deb-copyright.sh recognised (issue 39 brought tablewriter and its
# olekukonko/*, fatih/color and go-colorable dependencies back: Expat).
mods=$(for bin in /usr/bin/rpctl /usr/bin/rpctl-exporter /usr/bin/rpctl-chart; do ${GO:-go} version -m "$bin"; done | awk '$1 == "dep" { print $2 }' | sort -u)
for path in $mods; do
	grep -qxF "Files: vendor/$path/*" "$cr" || fail "$cr has no paragraph for the linked module $path"
done
if grep -qx "License: other" "$cr"; then
	fail "$cr names a license deb-copyright.sh does not recognise: $(grep -B4 -x 'License: other' "$cr" | grep '^Comment:')"
fi
echo "$(echo "$mods" | wc -l) linked modules, each with its license"

echo "== man pages"
[ "$(man -w rpctl-migrate-inventory)" = /usr/share/man/man1/rpctl-migrate-inventory.1.gz ] ||
	fail "man -w rpctl-migrate-inventory: $(man -w rpctl-migrate-inventory 2>&1)"
for page in docs/man/*.1; do
	name=$(basename "$page" .1)
	man -w "$name" >/dev/null 2>&1 || fail "man cannot find $name"
done
MANPAGER=cat MANWIDTH=80 man rpctl-migrate-inventory 2>/dev/null | grep -q "rpctl migrate inventory \[flags\]" ||
	fail "man rpctl-migrate-inventory does not show its synopsis"
echo "$(ls docs/man/*.1 | wc -l) pages found by man"

echo "== bash completion"
comp=/usr/share/bash-completion/completions/rpctl
[ -f "$comp" ] || fail "$comp is missing"
# Complete "rpctl mig<TAB>" and "rpctl migrate <TAB>" as an interactive
# bash would: bash-completion loaded, which finds rpctl's file by name.
complete_words() {
	bash -c '
		. /usr/share/bash-completion/bash_completion
		_completion_loader rpctl
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		$(complete -p rpctl | sed -n "s/.*-F \([^ ]*\) .*/\1/p") rpctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"' _ "$@" 2> >(grep -v "compopt: not currently executing" >&2)
}
complete_words rpctl mig | grep -qx "migrate" || fail "bash: rpctl mig<TAB> does not give migrate"
# Read whole first: grep -q stops reading at its match, and under pipefail
# rpctl's SIGPIPE would fail the check.
compl=$(rpctl __complete migrate '' 2>/dev/null)
grep -q '^inventory' <<<"$compl" || fail "rpctl __complete migrate '' does not list inventory"
grep -q '^all' <<<"$compl" || fail "rpctl __complete migrate '' does not list all"
# bash through the packaged script must offer exactly what the binary
# itself completes (its words, without cobra's ":directive" line and the
# descriptions after a tab): the subcommand list is the binary's to change,
# the script's job is to deliver it.
want=$(grep -v '^:' <<<"$compl" | cut -f1 | sort | tr '\n' ' ')
got=$(complete_words rpctl migrate "" | sort | tr '\n' ' ')
[ "$got" = "$want" ] || fail "bash: rpctl migrate <TAB> gives '$got', the binary completes '$want'"
echo "bash: rpctl migrate <TAB> -> $got"
[ -s /usr/share/zsh/vendor-completions/_rpctl ] || fail "zsh completion missing"
[ -s /usr/share/fish/vendor_completions.d/rpctl.fish ] || fail "fish completion missing"

echo "== rpctl --version"
version=$(rpctl --version)
echo "$version"
case "$version" in
*"commit $(git rev-parse HEAD)"*) ;;
*) fail "rpctl --version does not name commit $(git rev-parse HEAD)" ;;
esac

echo "== rpctl exporter"
[ -x /usr/bin/rpctl-exporter ] || fail "/usr/bin/rpctl-exporter is missing"
rpctl exporter --help >/dev/null || fail "rpctl exporter --help failed"
[ -x /usr/bin/rpctl-chart ] || fail "/usr/bin/rpctl-chart is missing"

echo "== dpkg -P"
dpkg -P rpctl
installed=
[ ! -e /usr/bin/rpctl ] && [ ! -e /usr/bin/rpctl-exporter ] && [ ! -e /usr/bin/rpctl-chart ] && [ ! -e /usr/share/man/man1/rpctl.1.gz ] || fail "files left after dpkg -P rpctl"
echo "deb-check: ok"
