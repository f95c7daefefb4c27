# Topology helpers shared by the e2e tests, the demo and the load tests (source this file).
# A "site" is a network namespace joined to the root namespace by a veth pair: sbcd drives the
# root end through net_af_packet, the namespace end carries a test host in 198.18.0.0/15.
# Everything created is recorded and removed by topo_cleanup, which callers put in a trap so
# that it also runs on failure and Ctrl-C. Only processes started here are killed, by PID.

TOPO_ID=${TOPO_ID:-$(( (RANDOM % 9000) + 1000 ))}
TOPO_NAMESPACES=()
TOPO_LINKS=()
TOPO_PIDS=()
TOPO_DIRS=()

topo_log() { printf '%s\n' "$*" >&2; }

# topo_site NAME HOST_CIDR [EXTRA_CIDR...]: namespace sbc-<id>-NAME, veth <id>NAMEa (root
# side, no address, for sbcd) and <id>NAMEb inside the namespace with the given addresses.
# Prints the root-side interface name and sets TOPO_SITE_IF to it. Call it in the current
# shell, never inside $(...): a subshell would lose what it records for topo_cleanup.
topo_site() {
  local name=$1 cidr=$2; shift 2
  local ns="sbc-${TOPO_ID}-${name}"
  local a="s${TOPO_ID}${name:0:4}a" b="s${TOPO_ID}${name:0:4}b"
  ip netns add "$ns" || return 1
  TOPO_NAMESPACES+=("$ns")
  ip link add "$a" type veth peer name "$b" || return 1
  TOPO_LINKS+=("$a")
  ip link set "$b" netns "$ns"
  # The root end belongs to sbcd: no addresses, no IPv6 chatter from the kernel.
  sysctl -qw "net.ipv6.conf.$a.disable_ipv6=1" 2>/dev/null || true
  ip link set "$a" up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "$cidr" dev "$b"
  local extra
  for extra in "$@"; do ip -n "$ns" addr add "$extra" dev "$b"; done
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null || true
  ip -n "$ns" link set "$b" up
  # veth offloads UDP checksums: make the test hosts send real ones (design.md, facts).
  ip netns exec "$ns" ethtool -K "$b" tx off >/dev/null 2>&1 || true
  TOPO_SITE_IF=$a
  echo "$a"
}

# topo_ns NAME: the namespace of site NAME.
topo_ns() { echo "sbc-${TOPO_ID}-$1"; }

# topo_dir: a fresh temporary folder, removed on cleanup.
topo_dir() {
  local d
  d=$(mktemp -d /tmp/sbc-topo.XXXXXX)
  TOPO_DIRS+=("$d")
  echo "$d"
}

# topo_track PID: kill it on cleanup.
topo_track() { TOPO_PIDS+=("$1"); }

topo_cleanup() {
  local pid ns l d
  for pid in "${TOPO_PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  for l in "${TOPO_LINKS[@]}"; do ip link del "$l" 2>/dev/null || true; done
  for ns in "${TOPO_NAMESPACES[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  for d in "${TOPO_DIRS[@]}"; do rm -rf "$d"; done
  TOPO_PIDS=(); TOPO_LINKS=(); TOPO_NAMESPACES=(); TOPO_DIRS=()
}

# topo_free_port: a TCP port on 127.0.0.1 that nothing listens on now, below the kernel's
# ephemeral range (ip_local_port_range), so that no connection made meanwhile takes it as its
# local port before the test's server binds it (a CI run lost t_tls_call to that once).
topo_free_port() {
  local p low
  read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || low=32768
  [ "$low" -gt 11024 ] || low=32768
  for _ in $(seq 1 50); do
    p=$(( (RANDOM % (low - 11024)) + 11024 ))
    if ! ss -Htln "sport = :$p" 2>/dev/null | grep -q .; then echo "$p"; return 0; fi
  done
  return 1
}

# sbc_conf_head NAME WORKERS SOCKET HTTP: prints the [node] and [dpdk] sections every test and
# benchmark config starts with (no hugepages, 512 MB, 8191 mbufs per worker); HTTP "" disables it.
sbc_conf_head() {
  cat <<CONF
[node]
name = "$1"
workers = $2
control_socket = "$3"
management_http = "$4"

[dpdk]
no_huge = true
memory_mb = 512
mbufs_per_worker = 8191
CONF
}

# sbcd_start BUILD CONFIG LOG: starts sbcd in the background; waits until its control socket
# answers (up to 30 s). Sets SBCD_PID. Returns non-zero (with the log shown) if it died.
sbcd_start() {
  local build=$1 cfg=$2 log=$3
  local sock
  sock=$(sed -nE 's/^control_socket *= *"(.*)".*/\1/p' "$cfg" | head -n 1)
  "$build/sbcd" --config "$cfg" >"$log" 2>&1 &
  SBCD_PID=$!
  topo_track "$SBCD_PID"
  # sbcd removes its own namespace (TCP/TLS: "sbcd-<file prefix>") when it exits; one it
  # could not remove (killed, crashed) goes with the test's namespaces.
  local node prefix
  node=$(sed -nE 's/^name *= *"(.*)".*/\1/p' "$cfg" | head -n 1)
  prefix=$(sed -nE 's/^file_prefix *= *"(.*)".*/\1/p' "$cfg" | head -n 1)
  TOPO_NAMESPACES+=("sbcd-${prefix:-sbc-$node}")
  for _ in $(seq 1 300); do
    if ! kill -0 "$SBCD_PID" 2>/dev/null; then
      topo_log "sbcd exited during start:"; cat "$log" >&2; return 1
    fi
    if [ -S "$sock" ] && "$build/sbcctl" --socket "$sock" status >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  topo_log "sbcd did not answer on $sock within 30 s:"; cat "$log" >&2
  return 1
}

# sbcd_stop: SIGTERM and wait (up to 20 s); returns sbcd's exit code (124 on timeout).
sbcd_stop() {
  [ -n "${SBCD_PID:-}" ] || return 0
  kill -TERM "$SBCD_PID" 2>/dev/null
  for _ in $(seq 1 200); do
    if ! kill -0 "$SBCD_PID" 2>/dev/null; then
      wait "$SBCD_PID"; local rc=$?; SBCD_PID=; return $rc
    fi
    sleep 0.1
  done
  return 124
}
