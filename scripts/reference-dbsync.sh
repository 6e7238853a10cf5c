#!/usr/bin/env bash
# Create the reference schemas with Nova's and Placement's own tools, so that
# rpctl's schema can be compared with them (and so operators can reproduce the
# comparison). Needs Debian's python3-nova, python3-placement, python3-pymysql.
#
#   scripts/reference-dbsync.sh URL_PREFIX CELL_DB API_DB PLACEMENT_DB
#
# URL_PREFIX is a SQLAlchemy URL without the database name, e.g.
# mysql+pymysql://rpctl:pw@127.0.0.1:33306 ; use "sqlite:///" with file paths
# as database names for SQLite.
set -euo pipefail
prefix=$1 cell=$2 api=$3 placement=$4
py=/usr/bin/python3  # Debian's python: another python3 on PATH lacks the packages
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sep=/
case "$prefix" in sqlite:*) sep="" ;; esac
cat >"$work/nova.conf" <<CONF
[DEFAULT]
transport_url = fake://
[database]
connection = $prefix$sep$cell
[api_database]
connection = $prefix$sep$api
CONF
cat >"$work/placement.conf" <<CONF
[api]
auth_strategy = noauth2
[placement_database]
connection = $prefix$sep$placement
CONF
nova_manage() {
  "$py" -c "import sys; from nova.cmd import manage; sys.argv=['nova-manage','--config-file','$work/nova.conf']+sys.argv[1:]; sys.exit(manage.main())" "$@"
}
nova_manage api_db sync >"$work/api.log" 2>&1 || { cat "$work/api.log" >&2; exit 1; }
nova_manage db sync >"$work/db.log" 2>&1 || { cat "$work/db.log" >&2; exit 1; }
placement-manage --config-file "$work/placement.conf" db sync >"$work/pl.log" 2>&1 || { cat "$work/pl.log" >&2; exit 1; }
echo "reference schemas created: $cell $api $placement"
