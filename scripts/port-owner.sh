# Sourced by the scripts that start a test server on a port a test chose
# (placement-api-start.sh, keystone-start.sh).
#
# A port that was free when the test picked it can be taken by another
# test's server before ours binds it. Ours then exits ("Address already in
# use"), but the other server answers the readiness probe first, and the
# test would talk to a stranger: another cloud's Placement, whose answers
# look plausible. So a server counts as up only when the listening socket
# on the port belongs to the process we started (or one of its children:
# uWSGI's master, a shell's exec'd child).

# listen_inodes PORT: the socket inodes listening on PORT (IPv4 and IPv6).
listen_inodes() {
  local hex
  hex=$(printf '%04X' "$1")
  awk -v p="$hex" 'FNR > 1 && $4 == "0A" { split($2, a, ":"); if (toupper(a[length(a)]) == p) print $10 }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# port_owned_by PID PORT: succeeds when PID or a descendant of PID holds a
# socket listening on PORT.
port_owned_by() {
  local pid=$1 port=$2 inode child
  for inode in $(listen_inodes "$port"); do
    if ls -l "/proc/$pid/fd" 2>/dev/null | grep -q "socket:\[$inode\]"; then
      return 0
    fi
  done
  for child in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
    port_owned_by "$child" "$port" && return 0
  done
  return 1
}
