#!/usr/bin/env bash
# Start the real OpenStack Placement API (Debian python3-placement) on
# 127.0.0.1 against a given database, with noauth2, for tests and benchmarks.
#
#   scripts/placement-api-start.sh DIR PORT SQLALCHEMY_URL [EXTRA_CONF]
#
# EXTRA_CONF, if given, is a file appended to placement.conf (e.g. an [api]
# auth_strategy = keystone with its [keystone_authtoken] section).
# Writes DIR/placement.conf, starts placement-api in the background, waits
# until GET / answers, and prints PLACEMENT_URL=... and PLACEMENT_PID=...
# Requests need "X-Auth-Token: admin" and "OpenStack-API-Version: placement 1.39".
# Exit 3: PORT is held by another server (the caller picks another port).
#
# PLACEMENT_UWSGI_PROCESSES=N serves it under uWSGI with N worker processes
# and HTTP/1.1 keep-alive, as operators deploy it (apt-get install uwsgi
# uwsgi-plugin-python3), instead of placement-api's single-threaded
# wsgiref test server.
set -euo pipefail
. "$(dirname "$0")/port-owner.sh"
dir=$1 port=$2 url=$3 extra=${4:-}
mkdir -p "$dir"
auth=noauth2
if [ -n "$extra" ]; then auth=keystone; fi
cat >"$dir/placement.conf" <<CONF
[DEFAULT]
debug = false
[api]
auth_strategy = $auth
[placement_database]
connection = $url
[placement]
randomize_allocation_candidates = false
CONF
if [ -n "$extra" ]; then cat "$extra" >>"$dir/placement.conf"; fi
command -v placement-api >/dev/null || { echo "placement-api-start: placement-api not found; apt-get install python3-placement" >&2; exit 1; }
if [ -n "${PLACEMENT_UWSGI_PROCESSES:-}" ]; then
  command -v uwsgi >/dev/null || { echo "placement-api-start: uwsgi not found; apt-get install uwsgi uwsgi-plugin-python3" >&2; exit 1; }
  OS_PLACEMENT_CONFIG_DIR="$dir" nohup uwsgi --plugin python3 --http11-socket "127.0.0.1:$port" \
    --wsgi-file "$(command -v placement-api)" --processes "$PLACEMENT_UWSGI_PROCESSES" --master \
    --die-on-term --lazy-apps --need-app --disable-logging >"$dir/api.log" 2>&1 &
else
  OS_PLACEMENT_CONFIG_DIR="$dir" nohup placement-api --host 127.0.0.1 --port "$port" >"$dir/api.log" 2>&1 &
fi
pid=$!
for _ in $(seq 1 480); do
  if curl -fsS -o /dev/null -H 'X-Auth-Token: admin' "http://127.0.0.1:$port/" 2>/dev/null; then
    if ! port_owned_by "$pid" "$port"; then
      # Another server answered: ours cannot bind (or has not yet, and
      # then it will fail to). Stop ours; the caller picks another port.
      kill "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      echo "placement-api-start: port $port is held by another server, not by placement-api $pid" >&2
      exit 3
    fi
    echo "PLACEMENT_URL='http://127.0.0.1:$port'"
    echo "PLACEMENT_PID='$pid'"
    exit 0
  fi
  kill -0 "$pid" 2>/dev/null || { echo "placement-api-start: placement-api exited, see $dir/api.log" >&2; tail -20 "$dir/api.log" >&2; exit 1; }
  sleep 0.25
done
echo "placement-api-start: no answer on port $port after 120s, see $dir/api.log" >&2
kill "$pid" 2>/dev/null || true
exit 1
