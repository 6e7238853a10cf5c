#!/usr/bin/env bash
# `make bench`: every Go benchmark, with a real MariaDB (and the real
# placement-api where a benchmark compares against it), then the tables the
# benchmarks print. Figures vary on shared machines: read ratios and medians.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${RPCTL_TEST_MYSQL:-}" ]; then
  eval "$(scripts/mariadb-start.sh "${TMPDIR:-/tmp}/rpctl-make-mariadb" 33308)"
  export RPCTL_TEST_MYSQL
fi
export RPCTL_INTEGRATION=1 RPCTL_BENCH=1
go test -run '^$' -bench "${BENCH:-.}" -benchmem -count "${COUNT:-1}" -timeout 60m ./... 2>&1 | tee "${TMPDIR:-/tmp}/rpctl-bench.txt"
