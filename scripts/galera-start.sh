#!/usr/bin/env bash
# Start (or stop) a throwaway 3-node MariaDB Galera cluster on 127.0.0.1, for
# tests and demos: one datadir, SQL port, gcomm port, IST port and SST port per
# node, the first node bootstrapping the cluster (--wsrep-new-cluster) and the
# others joining it by SST (rsync). Returns when wsrep_cluster_size is 3 and
# every node is Synced.
#
#   scripts/galera-start.sh DIR [BASEPORT]     start (idempotent)
#   scripts/galera-start.sh --stop DIR         stop every node of DIR: every process whose
#                                              command line names DIR (a joining node and
#                                              its rsync daemon too), SIGKILL after 60 s
#   scripts/galera-start.sh --stop-node DIR N  stop node N (1..3) cleanly
#   scripts/galera-start.sh --start-node DIR N start node N again (it rejoins by IST when it can)
#
# Node N (1..3) uses SQL port BASEPORT+N-1, gcomm BASEPORT+10+N-1, IST
# BASEPORT+20+N-1 and SST BASEPORT+30+N-1; BASEPORT defaults to 24400 (below the kernel's ephemeral ports, 32768 on: a client connection cannot take a stopped node's port).
#
# Prints shell assignments: RPCTL_GALERA_DSN1..3 (go-sql-driver DSN prefixes of
# an admin user that may create databases, one per node), RPCTL_GALERA_DIR and
# GALERA_PID1..3.
set -euo pipefail

user=rpctl
pass=rpctl-test-pw

die() { echo "galera-start: $*" >&2; exit 1; }

mariadbd=$(command -v mariadbd || command -v mysqld || ls /usr/sbin/mariadbd 2>/dev/null || true)
[ -n "$mariadbd" ] || die "mariadbd not found; install mariadb-server (apt-get install mariadb-server galera-4)"
installdb=$(command -v mariadb-install-db || command -v mysql_install_db || true)
client=$(command -v mariadb || command -v mysql)
provider=""
for p in /usr/lib/galera/libgalera_smm.so /usr/lib/libgalera_smm.so /usr/lib64/galera-4/libgalera_smm.so; do
  [ -f "$p" ] && { provider=$p; break; }
done
[ -n "$provider" ] || die "libgalera_smm.so not found; install galera-4 (apt-get install galera-4 rsync)"
command -v rsync >/dev/null || die "rsync not found; the joiners' SST needs it (apt-get install rsync)"

mode=start
case "${1:-}" in
  --stop) mode=stop; shift ;;
  --stop-node) mode=stopnode; shift ;;
  --start-node) mode=startnode; shift ;;
esac
dir=${1:?usage: galera-start.sh DIR [BASEPORT]}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# The base port is remembered so that --stop/--start-node need only DIR.
if [ "$mode" = start ]; then
  base=${2:-24400}
  echo "$base" >"$dir/baseport"
else
  base=$(cat "$dir/baseport" 2>/dev/null || echo 24400)
fi

sqlport() { echo $((base + $1 - 1)); }
gport() { echo $((base + 10 + $1 - 1)); }
istport() { echo $((base + 20 + $1 - 1)); }
sstport() { echo $((base + 30 + $1 - 1)); }
ndir() { echo "$dir/node$1"; }
sock() { echo "$(ndir "$1")/mysqld.sock"; }
q() { "$client" --socket="$(sock "$1")" -uroot -N -B -e "$2" 2>/dev/null; }
alive() { [ -S "$(sock "$1")" ] && q "$1" 'SELECT 1' >/dev/null; }
status_of() { q "$1" "SHOW STATUS LIKE '$2'" | awk '{print $2}'; }

# pids_under PATH: every process whose command line names PATH (a node's
# mariadbd by its --datadir, the rsync SST script and its rsync daemon by
# their --datadir and --config in that datadir, a --wsrep-recover run). A
# joining node has written no mysqld.pid yet, so the pid file alone misses it.
pids_under() {
  local f pid cmd
  for f in /proc/[0-9]*/cmdline; do
    pid=${f#/proc/}; pid=${pid%/cmdline}
    cmd=$(tr '\0' ' ' 2>/dev/null <"$f") || continue
    # Not this script (called with DIR/, say) nor its subshells.
    case $cmd in *galera-start.sh*) continue ;; esac
    case $cmd in *"$1/"*) echo "$pid" ;; esac
  done
  return 0
}

# kill_under PATH: SIGTERM to every process of PATH, then up to 60 s for
# them to end, then SIGKILL to what is left.
kill_under() {
  local pids
  pids=$(pids_under "$1")
  [ -n "$pids" ] || return 0
  kill $pids 2>/dev/null || true
  for _ in $(seq 1 120); do
    pids=$(pids_under "$1")
    [ -n "$pids" ] || return 0
    sleep 0.5
  done
  kill -9 $pids 2>/dev/null || true
  sleep 0.2
}

stop_node() {
  local n=$1 pidf pid
  pidf="$(ndir "$n")/mysqld.pid"
  pid=$(cat "$pidf" 2>/dev/null || true)
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  kill_under "$(ndir "$n")"
  rm -f "$pidf"
}

start_node() {
  local n=$1 new=${2:-} d addrs
  d=$(ndir "$n")
  mkdir -p "$d"
  chown mysql:mysql "$dir" "$d" 2>/dev/null || true
  if [ ! -d "$d/data/mysql" ]; then
    # Joiners get their data by SST, but the datadir must exist and belong to mysql.
    "$installdb" --datadir="$d/data" --auth-root-authentication-method=socket \
      --skip-test-db --user=mysql >"$d/install.log" 2>&1 \
      || die "mariadb-install-db failed for node $n, see $d/install.log"
  fi
  chown -R mysql:mysql "$d"
  local startpos=""
  addrs="gcomm://127.0.0.1:$(gport 1),127.0.0.1:$(gport 2),127.0.0.1:$(gport 3)"
  # After a crash grastate.dat says seqno -1: the position is recovered from
  # InnoDB (what Debian's galera_recovery does), so that the node rejoins by
  # IST from the donors' gcache instead of taking a whole SST.
  if grep -q '^seqno: *-1' "$d/data/grastate.dat" 2>/dev/null; then
    # Its own socket and pid file, and no TCP port: another server may own
    # 3306 and the default socket, where a bare --no-defaults run would bind
    # (and fail, recovering nothing).
    "$mariadbd" --no-defaults --datadir="$d/data" --user=mysql --wsrep-on=ON \
      --socket="$d/recover.sock" --skip-networking --pid-file="$d/recover.pid" \
      --wsrep-provider="$provider" --wsrep-cluster-address="$addrs" --wsrep-sst-method=rsync \
      --binlog-format=ROW --innodb-buffer-pool-size=128M --wsrep-recover --log-error="$d/recover.log" >/dev/null 2>&1 || true
    startpos=$(sed -n 's/.*WSREP: Recovered position: *\([^ ]*\).*/\1/p' "$d/recover.log" | tail -1)
    [ -n "$startpos" ] && startpos="--wsrep-start-position=$startpos"
  fi
  # Small gcache and buffer pool: three nodes share a 2-core test machine.
  "$mariadbd" --no-defaults --datadir="$d/data" --socket="$(sock "$n")" --port="$(sqlport "$n")" \
    --bind-address=127.0.0.1 --pid-file="$d/mysqld.pid" --user=mysql \
    --log-error="$d/error.log" --skip-name-resolve \
    --innodb-buffer-pool-size=128M --innodb-flush-log-at-trx-commit=2 \
    --innodb-doublewrite=0 --max-connections=300 \
    --character-set-server=utf8mb3 --collation-server=utf8mb3_general_ci \
    --binlog-format=ROW --default-storage-engine=InnoDB --innodb-autoinc-lock-mode=2 \
    --wsrep-on=ON --wsrep-provider="$provider" --wsrep-cluster-name=rpctl-test \
    --wsrep-cluster-address="$addrs" --wsrep-node-name="node$n" \
    --wsrep-node-address="127.0.0.1:$(gport "$n")" \
    --wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:$(gport "$n");ist.recv_addr=127.0.0.1:$(istport "$n");gcache.size=256M" \
    --wsrep-sst-method=rsync --wsrep-sst-receive-address="127.0.0.1:$(sstport "$n")" \
    --wsrep-slave-threads=2 $startpos $new >>"$d/stdout.log" 2>&1 &
  echo $! >"$d/launcher.pid"
}

wait_synced() {
  local n=$1 want=$2 lpid
  lpid=$(cat "$(ndir "$n")/launcher.pid" 2>/dev/null || true)
  for _ in $(seq 1 240); do
    if alive "$n" && [ "$(status_of "$n" wsrep_local_state_comment)" = Synced ] \
      && [ "$(status_of "$n" wsrep_cluster_size)" -ge "$want" ] 2>/dev/null; then
      return 0
    fi
    # A server that died (a port taken meanwhile, say) is reported at once.
    if [ -n "$lpid" ] && ! kill -0 "$lpid" 2>/dev/null; then
      tail -30 "$(ndir "$n")/error.log" >&2 || true
      die "node $n exited while starting, see $(ndir "$n")/error.log"
    fi
    sleep 0.5
  done
  tail -30 "$(ndir "$n")/error.log" >&2 || true
  die "node $n did not reach Synced in a cluster of $want, see $(ndir "$n")/error.log"
}

emit() {
  local n
  for n in 1 2 3; do echo "RPCTL_GALERA_DSN$n='$user:$pass@tcp(127.0.0.1:$(sqlport "$n"))/'"; done
  echo "RPCTL_GALERA_DIR='$dir'"
  for n in 1 2 3; do echo "GALERA_PID$n='$(cat "$(ndir "$n")/mysqld.pid" 2>/dev/null || true)'"; done
}

case $mode in
  stop)
    for n in 3 2 1; do stop_node "$n"; done
    kill_under "$dir"
    exit 0 ;;
  stopnode)
    stop_node "${2:?node number}"; exit 0 ;;
  startnode)
    n=${2:?node number}
    alive "$n" || start_node "$n"
    wait_synced "$n" 3
    emit; exit 0 ;;
esac

if alive 1 && alive 2 && alive 3 && [ "$(status_of 1 wsrep_cluster_size)" = 3 ]; then
  emit; exit 0
fi
for n in 1 2 3; do alive "$n" && die "node $n of $dir is up but the cluster is not whole; run $0 --stop $dir first"; done
# A cluster is bootstrapped only from a node that may do so: after a clean
# stop the last node down says safe_to_bootstrap: 1; forcing it on node 1 is
# right for a throwaway test cluster.
if [ -f "$(ndir 1)/data/grastate.dat" ]; then
  sed -i 's/^safe_to_bootstrap:.*/safe_to_bootstrap: 1/' "$(ndir 1)/data/grastate.dat"
fi
start_node 1 --wsrep-new-cluster
wait_synced 1 1
q 1 "CREATE USER IF NOT EXISTS '$user'@'127.0.0.1' IDENTIFIED BY '$pass';
CREATE USER IF NOT EXISTS '$user'@'localhost' IDENTIFIED BY '$pass';
GRANT ALL PRIVILEGES ON *.* TO '$user'@'127.0.0.1' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO '$user'@'localhost' WITH GRANT OPTION;" >/dev/null \
  || die "could not create the $user user on node 1"
# Joiners one at a time: two simultaneous SSTs from one donor double the wait.
start_node 2
wait_synced 2 2
start_node 3
wait_synced 3 3
for n in 1 2 3; do wait_synced "$n" 3; done
emit
