#!/usr/bin/env bash
# Start a real Keystone (Debian's keystone package) on 127.0.0.1 with a
# SQLite database, for the Keystone test: bootstrap an admin user, name
# Placement in the service catalog, serve with Python's wsgiref.
#
#   scripts/keystone-start.sh DIR PORT ADMIN_PASSWORD PLACEMENT_URL
#
# Prints KEYSTONE_URL=... (the v3 auth URL) and KEYSTONE_PID=...
# Exit 3: PORT is held by another server (the caller picks another port).
set -euo pipefail
. "$(dirname "$0")/port-owner.sh"
dir=$1 port=$2 pw=$3 placement_url=$4
py=/usr/bin/python3
command -v keystone-manage >/dev/null || { echo "keystone-start: keystone-manage not found; apt-get install keystone" >&2; exit 1; }
mkdir -p "$dir/fernet-keys" "$dir/credential-keys"
url="http://127.0.0.1:$port"
cat >"$dir/keystone.conf" <<CONF
[DEFAULT]
debug = false
log_file = $dir/keystone.log
[database]
connection = sqlite:///$dir/keystone.db
[fernet_tokens]
key_repository = $dir/fernet-keys
[fernet_receipts]
key_repository = $dir/fernet-keys
[credential]
key_repository = $dir/credential-keys
[token]
provider = fernet
CONF
km() { keystone-manage --config-file "$dir/keystone.conf" "$@" >>"$dir/manage.log" 2>&1; }
me=$(id -un) grp=$(id -gn)
km db_sync
km fernet_setup --keystone-user "$me" --keystone-group "$grp"
km credential_setup --keystone-user "$me" --keystone-group "$grp"
km bootstrap --bootstrap-password "$pw" --bootstrap-username admin --bootstrap-project-name admin \
  --bootstrap-role-name admin --bootstrap-service-name keystone --bootstrap-region-id RegionOne \
  --bootstrap-admin-url "$url/v3" --bootstrap-internal-url "$url/v3" --bootstrap-public-url "$url/v3"
# Serve with a templated catalog naming Placement (the SQL catalog's writes
# through the running server hit SQLite's single-writer lock).
cp "$dir/keystone.conf" "$dir/keystone-serve.conf"
cat >>"$dir/keystone-serve.conf" <<CONF
[catalog]
driver = templated
template_file = $dir/catalog.templates
CONF
{
  for iface in publicURL internalURL adminURL; do
    echo "catalog.RegionOne.identity.$iface = $url/v3"
    echo "catalog.RegionOne.placement.$iface = $placement_url"
  done
  echo "catalog.RegionOne.identity.name = Identity Service"
  echo "catalog.RegionOne.placement.name = Placement Service"
} >"$dir/catalog.templates"
cat >"$dir/serve.py" <<'PY'
import os, sys
from wsgiref.simple_server import make_server, WSGIRequestHandler
from keystone.server.flask import core

# One request at a time: SQLite allows one writer, and a test needs no more.
class Quiet(WSGIRequestHandler):
    def log_message(self, *a):
        pass

conf, port = sys.argv[1], int(sys.argv[2])
sys.argv = sys.argv[:1]  # oslo.config would read ours as its own options
app = core.initialize_application(name='public', config_files=[conf])
make_server('127.0.0.1', port, app, handler_class=Quiet).serve_forever()
PY
nohup "$py" "$dir/serve.py" "$dir/keystone-serve.conf" "$port" >"$dir/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 480); do
  if curl -fsS -o /dev/null "$url/v3" 2>/dev/null; then break; fi
  kill -0 "$pid" 2>/dev/null || { echo "keystone-start: keystone exited, see $dir/serve.log" >&2; tail -20 "$dir/serve.log" >&2; exit 1; }
  sleep 0.25
done
curl -fsS -o /dev/null "$url/v3" || { echo "keystone-start: no answer on port $port after 120s" >&2; kill "$pid"; exit 1; }
if ! port_owned_by "$pid" "$port"; then
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  echo "keystone-start: port $port is held by another server, not by keystone $pid" >&2
  exit 3
fi
echo "KEYSTONE_URL='$url/v3'"
echo "KEYSTONE_PID='$pid'"
