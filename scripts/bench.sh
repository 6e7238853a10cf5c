#!/usr/bin/env bash
# `make bench`: start-up of the rpctl process (hyperfine), then every Go
# benchmark, with a real MariaDB (and the real placement-api where a
# benchmark compares against it), then the tables the benchmarks print.
# Figures vary on shared machines: read ratios and medians, and the load
# average printed before and after.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${TMPDIR:-/tmp}/rpctl-bench.txt"
: >"$out"
say() { echo "$@" | tee -a "$out"; }
rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || rev="$rev+changes"
say "make bench, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $rev, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

# Start-up, whole process, medians of hyperfine runs against /bin/true as
# the floor: `rpctl --version`, and `rpctl compute-node list` on an empty
# database file (schema, no rows: `rpctl init`).
startup() {
  if ! command -v hyperfine >/dev/null; then
    say "start-up: skipped, hyperfine not installed (apt-get install hyperfine)"
    return
  fi
  make -s build
  local dir
  dir=$(mktemp -d)
  # Timed as `make install` leaves it, not as the linker left bin/rpctl: a
  # linked file's page cache is slower to fault in (internal/testdb.Install
  # says how much); the table still names it bin/rpctl.
  install -m 0755 bin/rpctl "$dir/rpctl"
  "$dir/rpctl" --db "$dir/empty.db" init >/dev/null
  hyperfine -N --warmup 20 --runs "${STARTUP_RUNS:-300}" --export-json "$dir/startup.json" \
    '/bin/true' "$dir/rpctl --version" "$dir/rpctl --db $dir/empty.db compute-node list" >/dev/null 2>&1 ||
    { say "start-up: hyperfine failed"; return; }
  /usr/bin/python3 - "$dir/startup.json" "$dir/rpctl" <<'PY' | tee -a "$out"
import json, sys
rs = json.load(open(sys.argv[1]))["results"]
floor = rs[0]["median"]
print("\n%-52s %10s %10s %10s" % ("start-up (whole process, hyperfine)", "median", "mean", "x /bin/true"))
for r in rs:
    c = r["command"].replace(sys.argv[2], "bin/rpctl")
    cmd = c.split(" --db ")[0] + (" --db EMPTY compute-node list" if " --db " in c else "")
    print("%-52s %8.2fms %8.2fms %9.1fx" % (cmd, r["median"] * 1e3, r["mean"] * 1e3, r["median"] / floor))
PY
  rm -rf "$dir"
}
case "${BENCH:-.}" in
  .) startup ;;
  Startup) startup; say "finished $(date -u '+%H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"; exit 0 ;;
esac

if [ -z "${RPCTL_TEST_MYSQL:-}" ]; then
  mdb="${TMPDIR:-/tmp}/rpctl-make-mariadb"
  # Assigned first: a failed start stops the run (inside eval "$(...)" its
  # exit status was lost, and the benchmarks then started a MariaDB each).
  started=$(scripts/mariadb-start.sh "$mdb" 33308)
  eval "$started"
  export RPCTL_TEST_MYSQL
  # The MariaDB this run started is stopped when it ends, as make test
  # stops its own (one that was already running is left to its owner).
  if [ "${MARIADB_STARTED:-0}" = 1 ]; then
    trap 'scripts/stop-test-servers.sh "$mdb"' EXIT
  fi
fi
export RPCTL_INTEGRATION=1 RPCTL_BENCH=1
go test -run '^$' -bench "${BENCH:-.}" -benchmem -count "${COUNT:-1}" -timeout 60m ./... 2>&1 | tee -a "$out" ||
  say "go test failed (above): the table below lacks what did not run"
say "finished $(date -u '+%H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
# The table of this run, for README.md and docs/benchmarks.md
# (scripts/bench-table.py OUT --update README.md docs/benchmarks.md puts it there).
echo
scripts/bench-table.py "$out" | tee "${out%.txt}.md"
echo "(the output is in $out, the table in ${out%.txt}.md)"
