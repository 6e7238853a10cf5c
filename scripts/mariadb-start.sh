#!/usr/bin/env bash
# Start a throwaway MariaDB server on a private datadir, socket and port, for
# tests and demos. Idempotent: if the server in DIR is already up, it only
# prints how to reach it.
#
#   scripts/mariadb-start.sh [DIR] [PORT]
#
# Prints shell assignments: RPCTL_TEST_MYSQL (a go-sql-driver DSN for an admin
# user that may create databases), MARIADB_SOCKET, MARIADB_PORT, MARIADB_PID,
# MARIADB_STARTED (1: this call started it, 0: it was up already).
# Stop it with scripts/stop-test-servers.sh DIR.
set -euo pipefail
dir=${1:-${TMPDIR:-/tmp}/rpctl-mariadb}
port=${2:-33306}
user=rpctl
pass=rpctl-test-pw

mariadbd=$(command -v mariadbd || command -v mysqld || ls /usr/sbin/mariadbd 2>/dev/null || true)
[ -n "$mariadbd" ] || { echo "mariadb-start: mariadbd not found; install mariadb-server (apt-get install mariadb-server)" >&2; exit 1; }
installdb=$(command -v mariadb-install-db || command -v mysql_install_db || true)
client=$(command -v mariadb || command -v mysql)

mkdir -p "$dir"
sock="$dir/mysqld.sock"
emit() {
  echo "RPCTL_TEST_MYSQL='$user:$pass@tcp(127.0.0.1:$port)/'"
  echo "MARIADB_SOCKET='$sock'"
  echo "MARIADB_PORT='$port'"
  echo "MARIADB_PID='$(cat "$dir/mysqld.pid" 2>/dev/null || true)'"
  echo "MARIADB_STARTED='${1:-0}'"
}
if [ -S "$sock" ] && "$client" --socket="$sock" -uroot -e 'SELECT 1' >/dev/null 2>&1; then
  emit; exit 0
fi
if [ ! -d "$dir/data/mysql" ]; then
  "$installdb" --datadir="$dir/data" --auth-root-authentication-method=socket \
    --skip-test-db --user="$(id -un)" >"$dir/install.log" 2>&1 \
    || { echo "mariadb-start: mariadb-install-db failed, see $dir/install.log" >&2; exit 1; }
fi
# The server refuses to run as root unless told to; tests run as root in CI.
"$mariadbd" --no-defaults --datadir="$dir/data" --socket="$sock" --port="$port" \
  --bind-address=127.0.0.1 --pid-file="$dir/mysqld.pid" --user="$(id -un)" \
  --log-error="$dir/error.log" --skip-name-resolve \
  --innodb-buffer-pool-size=512M --innodb-flush-log-at-trx-commit=2 \
  --innodb-doublewrite=0 --max-connections=500 \
  --character-set-server=utf8mb3 --collation-server=utf8mb3_general_ci >/dev/null 2>&1 &
for _ in $(seq 1 120); do
  "$client" --socket="$sock" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break
  sleep 0.5
done
"$client" --socket="$sock" -uroot -e 'SELECT 1' >/dev/null 2>&1 \
  || { echo "mariadb-start: server did not come up, see $dir/error.log" >&2; tail -20 "$dir/error.log" >&2; exit 1; }
"$client" --socket="$sock" -uroot <<SQL
CREATE USER IF NOT EXISTS '$user'@'127.0.0.1' IDENTIFIED BY '$pass';
CREATE USER IF NOT EXISTS '$user'@'localhost' IDENTIFIED BY '$pass';
GRANT ALL PRIVILEGES ON *.* TO '$user'@'127.0.0.1' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO '$user'@'localhost' WITH GRANT OPTION;
FLUSH PRIVILEGES;
SQL
emit 1
