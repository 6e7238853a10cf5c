#!/usr/bin/env bash
# Stop what tests started: every process whose command line names PATH/ (a
# server's datadir, socket or config under PATH; a Galera node still joining
# and its rsync daemon) or whose environment says TMPDIR=PATH (everything a
# `make test` run started: it gives its tests a TMPDIR of their own).
# SIGTERM, up to 60 s to end, then SIGKILL.
#
#   scripts/stop-test-servers.sh PATH...          stop them
#   scripts/stop-test-servers.sh --list PATH...   print them (pid, command); exit 1 if any
set -uo pipefail
list=""
if [ "${1:-}" = --list ]; then list=1; shift; fi

# found PATH...: "pid command" of each such process, never this script's own.
found() {
  local f pid cmd p hit
  for f in /proc/[0-9]*/cmdline; do
    pid=${f#/proc/}; pid=${pid%/cmdline}
    [ "$pid" = $$ ] || [ "$pid" = "$PPID" ] && continue
    cmd=$(tr '\0' ' ' 2>/dev/null <"$f") || continue
    [ -n "$cmd" ] || continue
    case $cmd in *stop-test-servers.sh*) continue ;; esac
    hit=""
    for p in "$@"; do
      p=${p%/}
      case $cmd in *"$p/"*) hit=1 ;; esac
      if [ -z "$hit" ] && tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ" | grep -qxF "TMPDIR=$p"; then hit=1; fi
      [ -n "$hit" ] && break
    done
    [ -n "$hit" ] && echo "$pid $cmd"
  done
  return 0
}

[ $# -gt 0 ] || exit 0
if [ -n "$list" ]; then
  out=$(found "$@")
  [ -z "$out" ] && exit 0
  echo "$out"
  exit 1
fi
pids=$(found "$@" | cut -d' ' -f1)
[ -n "$pids" ] || exit 0
found "$@" | sed 's/^/stop-test-servers: stopping /' | cut -c1-200 >&2
kill $pids 2>/dev/null
for _ in $(seq 1 120); do
  pids=$(found "$@" | cut -d' ' -f1)
  [ -n "$pids" ] || exit 0
  sleep 0.5
done
kill -9 $pids 2>/dev/null
exit 0
