#!/usr/bin/env bash
# Print the Debian copyright file (machine-readable format 1.0) for the
# rpctl binaries BIN...: rpctl itself (Apache-2.0, as LICENSE says), the Go runtime and standard library, and
# every module `go version -m BIN` says is linked into any of them, each with its license
# as its LICENSE file states it (full text, or the /usr/share/common-licenses
# file Debian ships for Apache-2.0 and MPL-2.0).
set -euo pipefail
bins=("$@")
GO=${GO:-go}

# indent turns a license file into a DEP-5 text block.
indent() { sed -e 's/[[:space:]]*$//' -e 's/^$/./' -e 's/^/ /'; }

# licenseOf names the license a LICENSE file holds (SPDX-style short names,
# as Debian's copyright format uses them), or "other".
licenseOf() {
	local f=$1
	if grep -q "Creative Commons Attribution 4.0" "$f"; then echo CC-BY-4.0
	elif grep -q "choice of exactly one of" "$f" && grep -q "FreeType License" "$f"; then echo "FTL or GPL-2+"
	elif grep -q "Apache License" "$f" && grep -q "Permission is hereby granted, free of charge" "$f"; then echo "Apache-2.0 and Expat"
	elif grep -q "Apache License" "$f" && grep -q "Version 2.0" "$f"; then echo Apache-2.0
	elif grep -qi "Mozilla Public License,\? [Vv]ersion 2.0" "$f"; then echo MPL-2.0
	elif grep -q "Permission is hereby granted, free of charge" "$f"; then echo Expat
	elif grep -q "Redistribution and use in source and binary forms" "$f"; then
		if grep -qiE "Neither the name|names of its contributors|name of the copyright holder" "$f"; then echo BSD-3-clause; else echo BSD-2-clause; fi
	elif grep -qE "Permission to use, copy, modify, and(/or)? distribute" "$f"; then echo ISC
	else echo other
	fi
}

# stanza prints a Files paragraph for the files in dir (a module or GOROOT).
stanza() {
	local files=$1 dir=$2 comment=$3 lic
	lic=$(find "$dir" -maxdepth 1 -type f \( -iname 'LICENSE*' -o -iname 'LICENCE*' -o -iname 'COPYING*' \) | sort | head -1)
	if [ -z "$lic" ]; then
		echo "deb-copyright.sh: no license file in $dir" >&2
		exit 1
	fi
	local name holders
	name=$(licenseOf "$lic")
	holders=$(grep -hiE '^[[:space:]]*copyright[[:space:]]+(\(c\)[[:space:]]+)?[0-9]' "$lic" | sed -E 's/^[[:space:]]*[Cc]opyright[[:space:]]+(\([cC]\)[[:space:]]+)?//' | sort -u || true)
	[ -n "$holders" ] || holders="the authors of $comment"
	echo "Files: $files"
	echo "Copyright:"
	printf '%s\n' "$holders" | sed 's/^/ /'
	echo "Comment: $comment, statically linked into /usr/bin/rpctl, rpctl-exporter and rpctl-chart"
	case "$name" in
	Apache-2.0 | MPL-2.0)
		echo "License: $name"
		echo " On Debian systems, the complete text of the license can be found"
		echo " in /usr/share/common-licenses/$name."
		;;
	*)
		echo "License: $name"
		indent <"$lic"
		;;
	esac
	echo
}

cat <<'HEAD'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: rpctl

Files: *
Copyright: 2026 The rpctl developers
License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License"); you may
 not use this file except in compliance with the License. You may obtain
 a copy of the License at
 .
     http://www.apache.org/licenses/LICENSE-2.0
 .
 Unless required by applicable law or agreed to in writing, software
 distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
 WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
 License for the specific language governing permissions and limitations
 under the License.
 .
 On Debian systems, the complete text of the Apache License, Version 2.0
 can be found in /usr/share/common-licenses/Apache-2.0.

HEAD
# The Files patterns name where each part's sources sit in a build tree
# (Go's own under go/, modules as `go mod vendor` places them).
stanza "go/*" "$($GO env GOROOT)" "the Go runtime and standard library ($($GO env GOVERSION))"
for bin in "${bins[@]}"; do $GO version -m "$bin"; done | awk '$1 == "dep" { print $2, $3 }' | sort -u | while read -r path version; do
	dir=$($GO mod download -json "$path@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
	stanza "vendor/$path/*" "$dir" "Go module $path $version"
done
