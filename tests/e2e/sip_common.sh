# Shared by the SIP proxy e2e tests t_sip_*.sh (source it). Builds the SIPp topology of
# scripts/lib/sipp.sh in sbcd mode (namespace "hosts": caller 198.18.0.2, region1 peers
# 198.18.1.11/.12, region2 peers 198.18.2.21/.22), writes a proxy config for sbcd
# (198.18.0.1/16 on the root end of the veth, trunk "carrier" on 5060 allowing 198.18.0.2/32,
# peer group "cloud" = [region1, region2], a default route) and starts sbcd. Everything
# started is killed by PID and the namespaces removed on exit (trap), also on failure.
#
# Peer order is deterministic: in each region the first peer (.11, .21) has priority 10 and
# the second (.12, .22) priority 20, so a call always tries .11, then .12, then .21, then .22.
# Regions use probe = "none": only real calls judge a peer, nothing probes behind a test
# (SIP_PROBE=options makes sbcd probe every peer with OPTIONS; SIP_HEALTH is appended to
# the [health] section, e.g. "options_interval_ms = 200").
#
# Knobs (set before sip_up): SIP_PASSIVE_DOWN_AFTER (default 100: no peer goes down during
# a test unless the test wants it), SIP_NO_RESPONSE_MS (1000), SIP_RETRY_AFTER_S (30),
# SIP_TRANSACTIONS (unset: sbcd's default), SIP_WORKERS (1; more need as many queues:
# SIP_DEVICE_EXTRA=",qpairs=2", appended to the af_packet device), SIP_IFACE_EXTRA (lines of
# the [[interface]] table, e.g. dscp_sip = "CS5"), SIP_EXTRA_CONFIG (appended),
# SIP_TRUNK_EXTRA (more keys of the trunk "carrier", e.g. "trusted = true"),
# SIP_EXTRA_ADDRS (more addresses, /16, on the hosts end of the veth), SIP_WARM_ADDRS (more
# addresses whose MAC sbcd learns before the test; SIP_NO_WARM=1: none), SIP_REGIONS (replaces the two static
# [[region]] tables, e.g. with srv regions; keep the names region1 and region2).
set -euo pipefail
SIP_E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SIP_ROOT=$(cd "$SIP_E2E_DIR/../.." && pwd)
# shellcheck source=../../scripts/lib/sipp.sh
source "$SIP_ROOT/scripts/lib/sipp.sh"
BUILD=${SBC_BUILD:-$SIP_ROOT/build}
trap topo_cleanup EXIT INT TERM

# SIP_KEEP=DIR: on failure, copy the test's logs (SIPp messages, sbcd.log) there.
fail() {
  echo "FAIL: $*" >&2
  if [ -n "${SIP_KEEP:-}" ] && [ -n "${DIR:-}" ]; then
    rm -rf "$SIP_KEEP"; cp -r "$DIR" "$SIP_KEEP" 2>/dev/null || true
    [ -S "${SOCK:-}" ] && "$BUILD/sbcctl" --socket "$SOCK" stats --json >"$SIP_KEEP/stats.json" 2>&1 || true
  fi
  exit 1
}
note() { echo "-- $*" >&2; }
expect_contains() { # HAYSTACK NEEDLE WHAT
  grep -qF -- "$2" <<<"$1" || { echo "$1" | head -n 60 >&2; fail "$3: expected to find '$2'"; }
}

# sip_up: topology, config, sbcd; sbcd has resolved the MAC of every SIP address (sip_warm).
# Sets DIR, CFG, SOCK, HTTP, HOSTS_IF (the namespace end of the veth).
sip_up() {
  sipp_topology sbcd
  HOSTS_IF="s${TOPO_ID}hostb"
  DIR=$(topo_dir)
  SOCK=$DIR/sbcd.sock
  HTTP=127.0.0.1:$(topo_free_port)
  CFG=$DIR/sbc.toml
  local a
  for a in ${SIP_EXTRA_ADDRS:-}; do ip -n "$SIPP_NS_HOSTS" addr add "$a/16" dev "$HOSTS_IF"; done
  sip_write_config "$CFG"
  sbcd_start "$BUILD" "$CFG" "$DIR/sbcd.log"
  # sbcd holds what it sends to a next hop it has not resolved yet while ARP runs (a few ms
  # here); tests that count packets or time calls want none of that in their figures: resolve
  # every SIP address first, an OPTIONS to sbcd from each, resent until it is answered
  # (SIP_NO_WARM=1 skips it, for the tests of first packets to a new neighbour).
  [ "${SIP_NO_WARM:-0}" = 1 ] && return 0
  sip_warm "$SIPP_CALLER" "${SIPP_REGION1[@]}" "${SIPP_REGION2[@]}" ${SIP_WARM_ADDRS:-} ||
    fail "sbcd did not answer OPTIONS from every SIP address within 3 s"
}

# sip_warm ADDR...: from each ADDR (port 5071) in the hosts namespace, OPTIONS to sbcd,
# resent every 200 ms (at most 15 times) until answered. Fails if one never is.
sip_warm() {
  ip netns exec "$SIPP_NS_HOSTS" python3 - "$SIPP_PROXY_ADDR" "$@" <<'PY'
import socket, sys
dst, addrs = sys.argv[1], sys.argv[2:]
bad = []
for a in addrs:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((a, 5071)); s.settimeout(0.2)
    ok = False
    for i in range(15):
        m = ("OPTIONS sip:%s:5060 SIP/2.0\r\nVia: SIP/2.0/UDP %s:5071;branch=z9hG4bK-warm-%d\r\n"
             "From: <sip:warm@%s:5071>;tag=w%d\r\nTo: <sip:%s:5060>\r\nCall-ID: warm-%d-%s\r\n"
             "CSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n") % (dst, a, i, a, i, dst, i, a)
        s.sendto(m.encode(), (dst, 5060))
        try:
            s.recvfrom(65535); ok = True; break
        except (socket.timeout, ConnectionRefusedError):
            pass
    s.close()
    if not ok: bad.append(a)
if bad:
    print("no answer to OPTIONS from " + " ".join(bad), file=sys.stderr); sys.exit(1)
PY
}

# sip_regions: the [[region]] tables of the config: SIP_REGIONS, or the two static regions.
sip_regions() {
  if [ -n "${SIP_REGIONS:-}" ]; then printf '%s\n' "$SIP_REGIONS"; return 0; fi
  cat <<REG
[[region]]
name = "region1"
peers = [ { address = "198.18.1.11:5060", priority = 10 },
          { address = "198.18.1.12:5060", priority = 20 } ]
probe = "${SIP_PROBE:-none}"

[[region]]
name = "region2"
peers = [ { address = "198.18.2.21:5060", priority = 10 },
          { address = "198.18.2.22:5060", priority = 20 } ]
probe = "${SIP_PROBE:-none}"
REG
}

# sip_write_config FILE
sip_write_config() {
  local f=$1
  cat >"$f" <<CONF
$(sbc_conf_head "e2e-sip-${TOPO_ID}" "${SIP_WORKERS:-1}" "$SOCK" "$HTTP")

[[interface]]
name = "hosts"
device = "net_af_packet${TOPO_ID},iface=${SIPP_PROXY_IF}${SIP_DEVICE_EXTRA:-}"
address = "198.18.0.1/16"
${SIP_IFACE_EXTRA:-}

[[trunk]]
name = "carrier"
interface = "hosts"
port = 5060
allow = ["198.18.0.2/32"]
${SIP_TRUNK_EXTRA:-}

$(sip_regions)

[[peer_group]]
name = "cloud"
regions = ["region1", "region2"]

[[route]]
name = "default"
peer_group = "cloud"

[retry]
no_response_ms = ${SIP_NO_RESPONSE_MS:-1000}
retry_after_s = ${SIP_RETRY_AFTER_S:-30}

[health]
passive_down_after = ${SIP_PASSIVE_DOWN_AFTER:-100}
${SIP_HEALTH:-}
CONF
  if [ -n "${SIP_TRANSACTIONS:-}" ]; then
    printf '\n[limits]\ntransactions_per_worker = %s\n' "$SIP_TRANSACTIONS" >>"$f"
  fi
  if [ -n "${SIP_EXTRA_CONFIG:-}" ]; then printf '\n%s\n' "$SIP_EXTRA_CONFIG" >>"$f"; fi
}

ctl() { "$BUILD/sbcctl" --socket "$SOCK" "$@"; }
# ask_options N: one OPTIONS to sbcd from the caller's address (resent every 0.5 s, at most
# 6 times, until answered); prints the status line of the first answer, or nothing.
ask_options() {
  ip netns exec "$SIPP_NS_HOSTS" python3 - "$SIPP_CALLER" "$SIPP_PROXY_ADDR" "$1" <<'PY'
import socket, sys
src, dst, n = sys.argv[1], sys.argv[2], sys.argv[3]
m = ("OPTIONS sip:%s:5060 SIP/2.0\r\nVia: SIP/2.0/UDP %s:5070;branch=z9hG4bK-opt-%s\r\n"
     "Max-Forwards: 70\r\nFrom: <sip:lb@%s:5070>;tag=lb%s\r\nTo: <sip:%s:5060>\r\n"
     "Call-ID: lb-options-%s\r\nCSeq: %s OPTIONS\r\nContent-Length: 0\r\n\r\n") % (dst, src, n, src, n, dst, n, n)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((src, 5070)); s.settimeout(0.5)
for _ in range(6):
    s.sendto(m.encode(), (dst, 5060))
    try:
        d, _ = s.recvfrom(65535)
        print(d.decode('latin-1').split('\r\n', 1)[0]); break
    except (socket.timeout, ConnectionRefusedError):
        pass
PY
}
# peer_field NAME FIELD: FIELD of peer NAME in `sbcctl peers --json`.
peer_field() {
  ctl peers --json | python3 -c '
import json, sys
name, field = sys.argv[1], sys.argv[2]
for p in json.load(sys.stdin)["sip"]["peers"]:
    if p["name"] == name: print(p.get(field, "missing")); break
else: print("nopeer")' "$1" "$2"
}
# long_call MS [N]: N calls (default 1) from the caller that stay up MS ms after they are
# answered, each from its own socket when N > 1 (SPREAD_ARGS); returns once sbcd counts all N
# as dialogs (fails the test after 5 s). Sets long_wrap (wait on it).
long_call() {
  local n=${2:-1}
  local extra=()
  [ "$n" -gt 1 ] && extra=("${SPREAD_ARGS[@]}")
  sipp_uac_start "$DIR/long" 50 "$n" 40 uac.xml -s 1000 -d "$1" "${extra[@]}"
  long_wrap=$SIPP_WRAP_PID
  for _ in $(seq 1 50); do [ "$(sip_stat dialogs_active)" = "$n" ] && break; sleep 0.1; done
  [ "$(sip_stat dialogs_active)" = "$n" ] || fail "the long call(s) did not come up: $(sip_stat dialogs_active) of $n"
}
# wait_job PID SECONDS WHAT: waits at most SECONDS for the background job PID and returns its
# status. Past that, shows what still runs and the end of every SIPp output of the test, and
# fails: a hang is reported with what hung, not ended silently by run.sh's time limit.
wait_job() {
  local pid=$1 max=$2 what=$3 f
  for _ in $(seq 1 $((max * 10))); do
    kill -0 "$pid" 2>/dev/null || { wait "$pid"; return; }
    sleep 0.1
  done
  ps -eo pid,ppid,stat,etimes,args --forest | grep -E 'sipp|sbcd|tcpdump|sbcctl' | grep -v grep >&2 || true
  for f in "$DIR"/*/sipp.out; do [ -f "$f" ] && { echo "== $f" >&2; tail -n 15 "$f" >&2; }; done
  kill "$pid" 2>/dev/null || true
  fail "$what had not finished after $max s"
}
# on_two_workers: true in a run where sbcd has two workers (run.sh's NAME@2w pass).
on_two_workers() { [ "${SIP_WORKERS:-1}" -ge 2 ]; }
# SPREAD_ARGS: SIPp caller arguments that send each call from its own socket, so that on two
# workers the callers' flows hash onto both queues while a peer's one flow lands on one: the
# calls whose INVITE lands on the other queue cross between the workers. With 12 calls, all
# of them land on the peer's queue one run in 4,096.
SPREAD_ARGS=(-t un -max_socket 100)
SPREAD_CALLS=12
# workers_crossed [CALLS_UP]: fails unless sbcctl stats shows two workers that both received
# packets, messages handed off between them (sip_handed_off) and all taken in (sip_handed_in),
# none lost on a full ring, and node totals (packets, handoffs) equal to the workers' sums;
# with CALLS_UP, the established calls the workers own add up to the CALLS_UP the test has up.
# Keeps the stats in $DIR/stats-crossed.json and prints each worker's counts on stderr.
workers_crossed() {
  ctl stats --json >"$DIR/stats-crossed.json"
  python3 - "$DIR/stats-crossed.json" "${1:-}" <<'PY' || fail "per-worker counters (above) do not show calls crossing between the two workers"
import json, sys
s = json.load(open(sys.argv[1]))
ws = s["workers"]
def c(w, k): return w["counters"][k]
for w in ws:
    print(f"worker {w['id']}: rx={c(w, 'rx_packets')} handed_off={c(w, 'sip_handed_off')} "
          f"handed_in={c(w, 'sip_handed_in')} handoff_full={c(w, 'drops')['sip_handoff_full']} "
          f"calls={w['calls']['established']} setups={w['calls']['setting_up']}", file=sys.stderr)
ok = len(ws) == 2
ok &= all(c(w, "rx_packets") > 0 for w in ws)                      # both queues carried traffic
off = sum(c(w, "sip_handed_off") for w in ws)
inn = sum(c(w, "sip_handed_in") for w in ws)
ok &= off > 0 and off == inn                                        # crossed, and all taken in
ok &= sum(c(w, "drops")["sip_handoff_full"] for w in ws) == 0       # none lost on a full ring
ok &= s["total"]["sip_handed_off"] == off and s["total"]["rx_packets"] == sum(c(w, "rx_packets") for w in ws)
if sys.argv[2]:                                                     # the calls the test has up
    ok &= sum(w["calls"]["established"] for w in ws) == int(sys.argv[2])
sys.exit(0 if ok else 1)
PY
}
# wait_metric REGEX: waits up to 3 s for a /metrics line matching REGEX (the control core
# renders the page every 200 ms, so a count can trail sbcctl stats by one render).
wait_metric() {
  local i
  for i in $(seq 30); do
    curl -sf "http://$HTTP/metrics" | grep -qE "$1" && return 0
    sleep 0.1
  done
  return 1
}

# peer ADDR SCENARIO [MAX_S]: a SIPp callee with -trace_msg in $DIR/peer-ADDR (or in
# $SIPP_PEER_DIR), 60 s bound. Sets SIPP_PID.
peer() {
  SIPP_UAS_TRACE=1 sipp_uas_start "$1" "$2" "${SIPP_PEER_DIR:-$DIR/peer-$1}" "${3:-60}"
}

# call NAME CALLS [SCENARIO] [SIPP_ARGS...]: SIPp caller(s) at 10 calls/s with -trace_msg,
# logs in $DIR/NAME, bounded to 40 s. Sets CALL_RC (0 all succeeded, 1 some failed) and
# CALL_OK / CALL_FAILED (SIPp's counts).
call() {
  local name=$1 n=$2 scen=${3:-uac.xml}
  shift $(( $# < 3 ? $# : 3 ))
  CALL_RC=0
  sipp_uac_run "$DIR/$name" 10 "$n" 40 "$scen" -s 1000 -d 200 -trace_msg "$@" || CALL_RC=$?
  read -r CALL_OK CALL_FAILED < <(sipp_counts "$DIR/$name")
  [ "$CALL_RC" -le 1 ] || { tail -n 30 "$DIR/$name/sipp.out" >&2; fail "caller SIPp $name exited $CALL_RC (time bound or error)"; }
}

# msgs DIR: the -trace_msg log(s) of the SIPp run in DIR.
msgs() { cat "$1"/*_messages.log 2>/dev/null || true; }

# received DIR PATTERN: how many messages SIPp in DIR received whose first line matches the
# extended regex PATTERN (e.g. '^INVITE ', '^SIP/2.0 486').
received() {
  msgs "$1" | awk -v pat="$2" '
    /message received/ { want = 1; next }
    want && NF { if ($0 ~ pat) n++; want = 0 }
    END { print n + 0 }'
}

# top_vias DIR PATTERN: the first Via line of every message received by SIPp in DIR whose
# first line matches PATTERN.
top_vias() {
  msgs "$1" | awk -v pat="$2" '
    /message received/ { want = 1; inmsg = 0; next }
    want && NF { want = 0; inmsg = ($0 ~ pat); next }
    inmsg && /^Via:/ { print; inmsg = 0 }
    /^-----/ { inmsg = 0 }'
}

# setup_ms DIR: setup time (INVITE sent -> 200) of the first call in DIR, in ms.
setup_ms() {
  local f
  f=$(sipp_rtt_csv "$1")
  [ -n "$f" ] || { echo na; return 0; }
  awk -F';' 'NR > 1 && $2 ~ /^[0-9.]+$/ { print $2; exit }' "$f"
}

# sip_stat KEY...: sum of every numeric JSON value named KEY (any depth) in
# `sbcctl stats --json`; "missing" when no such key exists.
sip_stat() {
  ctl stats --json | python3 -c '
import json, sys
keys = set(sys.argv[1:])
found = False; total = 0
def walk(x):
    global found, total
    if isinstance(x, dict):
        for k, v in x.items():
            if k in keys and isinstance(v, (int, float)) and not isinstance(v, bool):
                found = True; total += v
            else:
                walk(v)
    elif isinstance(x, list):
        for v in x: walk(v)
walk(json.load(sys.stdin))
print(int(total) if found else "missing")' "$@"
}

# need_stat KEY...: like sip_stat but fails the test when the field is missing.
need_stat() {
  local v
  v=$(sip_stat "$@")
  [ "$v" != missing ] || fail "sbcctl stats --json has no field named $* (needed by this test)"
  echo "$v"
}

# active_calls: setups plus dialogs under way (0 when clean).
active_calls() { need_stat setups_active dialogs_active; }

# wait_idle SECONDS: until no call is active; fails with the counts otherwise.
wait_idle() {
  local max=$1 v
  for _ in $(seq 1 $((max * 5))); do
    v=$(active_calls)
    [ "$v" -eq 0 ] && return 0
    sleep 0.2
  done
  fail "calls still active ${max} s after the last call ended: setups_active=$(sip_stat setups_active) dialogs_active=$(sip_stat dialogs_active)"
}

# udp_exchange SRC_IP FILE [WAIT_S]: sends FILE (LF line ends become CRLF) as one datagram
# from SRC_IP:5070 in the hosts namespace to the proxy, prints what comes back in WAIT_S
# (default 2) seconds, datagrams separated by a line "----".
udp_exchange() {
  ip netns exec "$SIPP_NS_HOSTS" python3 - "$1" "$2" "${3:-2}" "$SIPP_PROXY_ADDR" <<'PY'
import socket, sys, time
src, path, wait, dst = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
data = open(path, 'rb').read().replace(b'\r\n', b'\n').replace(b'\n', b'\r\n')
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((src, 5070))
s.sendto(data, (dst, 5060))
end = time.time() + wait
while True:
    left = end - time.time()
    if left <= 0: break
    s.settimeout(left)
    try:
        d, _ = s.recvfrom(65535)
    except socket.timeout:
        break
    except ConnectionRefusedError:
        continue
    sys.stdout.write(d.decode('latin-1').replace('\r\n', '\n') + '----\n')
PY
}

# ---- SIP over IPv6 (t_sip_ipv6*.sh) ---------------------------------------------------------
# sip6_up: two sites, each on its own veth and its own sbcd interface, IPv6 on both (topo_site
# turns it off; these hosts run it, addresses added with nodad):
#   caller side: namespace "core", caller 198.18.0.2/24 and 2001:2:0:1::10/64; sbcd's
#     interface "core" 198.18.0.1/24 and 2001:2:0:1::1/64, trunk "carrier" on UDP 5060;
#   peer side: namespace "peers", region1's peers 2001:2:0:2::11 (priority 10) and ::12 (20)
#     (and 198.18.2.11/24, .12/24); sbcd's interface "peers" 198.18.2.1/24 and
#     2001:2:0:2::1/64, trunk "cloud" on UDP 5060, the trunk region1's calls leave from.
# One peer group "cloud" = [region1], a default route. ICMPv6 from the peer host is not rate
# limited (a closed port always answers port unreachable). Sets DIR, CFG, SOCK, HTTP,
# SIP6_NS_CORE, SIP6_NS_PEERS, SIP6_CORE_IF, SIP6_PEERS_IF (sbcd's ends of the veths).
# Knobs: SIP6_ALLOW (the entries of trunk "carrier"'s allow, default
# '"198.18.0.2/32", "2001:2:0:1::/64"'), SIP6_EXTRA_CALLERS (more IPv6 addresses, /64, of the
# caller host; not warmed), SIP_NO_RESPONSE_MS, SIP_RETRY_AFTER_S, SIP_PASSIVE_DOWN_AFTER,
# SIP_WORKERS, SIP_DEVICE_EXTRA and SIP_EXTRA_CONFIG as for sip_up.
# call6 and peer6 are call and peer over IPv6 (SIPp caller 2001:2:0:1::10, or SIP6_FROM, to
# [2001:2:0:1::1]:5060 in the core namespace; SIPp callees in the peers namespace).
SIP6_CORE=2001:2:0:1::1
SIP6_EDGE=2001:2:0:2::1
SIP6_CALLER=2001:2:0:1::10
SIP6_PEERS=(2001:2:0:2::11 2001:2:0:2::12)

# sip6_host NS IF CIDR...: IPv6 on in NS and on IF, the addresses added without DAD.
sip6_host() {
  local ns=$1 dev=$2 a; shift 2
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=0
  ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=0"
  ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$dev.accept_ra=0" 2>/dev/null || true
  for a in "$@"; do ip -n "$ns" addr add "$a" dev "$dev" nodad; done
}

# sip6_topology: the two sites of sip6_up, without sbcd.
sip6_topology() {
  local a extra=()
  topo_site core 198.18.0.2/24 >/dev/null || fail "could not create the core site"
  SIP6_CORE_IF=$TOPO_SITE_IF
  SIP6_NS_CORE=$(topo_ns core)
  topo_site peers 198.18.2.11/24 198.18.2.12/24 >/dev/null || fail "could not create the peers site"
  SIP6_PEERS_IF=$TOPO_SITE_IF
  SIP6_NS_PEERS=$(topo_ns peers)
  for a in ${SIP6_EXTRA_CALLERS:-}; do extra+=("$a/64"); done
  sip6_host "$SIP6_NS_CORE" "s${TOPO_ID}coreb" "$SIP6_CALLER/64" "${extra[@]}"
  sip6_host "$SIP6_NS_PEERS" "s${TOPO_ID}peerb" "${SIP6_PEERS[0]}/64" "${SIP6_PEERS[1]}/64"
  ip netns exec "$SIP6_NS_PEERS" sysctl -qw net.ipv6.icmp.ratelimit=0
  local ns
  for ns in "$SIP6_NS_CORE" "$SIP6_NS_PEERS"; do
    ip netns exec "$ns" sysctl -qw net.core.rmem_max=8388608 net.core.wmem_max=8388608 2>/dev/null || true
  done
}

# sip6_write_config FILE
sip6_write_config() {
  local allow=${SIP6_ALLOW:-'"198.18.0.2/32", "2001:2:0:1::/64"'}
  cat >"$1" <<CONF
$(sbc_conf_head "e2e-sip6-${TOPO_ID}" "${SIP_WORKERS:-1}" "$SOCK" "$HTTP")

[[interface]]
name = "core"
device = "net_af_packet${TOPO_ID}0,iface=${SIP6_CORE_IF}${SIP_DEVICE_EXTRA:-}"
address = "198.18.0.1/24"
address6 = "$SIP6_CORE/64"

[[interface]]
name = "peers"
device = "net_af_packet${TOPO_ID}1,iface=${SIP6_PEERS_IF}${SIP_DEVICE_EXTRA:-}"
address = "198.18.2.1/24"
address6 = "$SIP6_EDGE/64"

[[trunk]]
name = "carrier"
interface = "core"
port = 5060
allow = [$allow]

[[trunk]]
name = "cloud"
interface = "peers"
port = 5060
allow = ["198.18.2.0/24", "2001:2:0:2::/64"]

[[region]]
name = "region1"
trunk = "cloud"
peers = [ { address = "[${SIP6_PEERS[0]}]:5060", priority = 10 },
          { address = "[${SIP6_PEERS[1]}]:5060", priority = 20 } ]
probe = "none"

[[peer_group]]
name = "cloud"
regions = ["region1"]

[[route]]
name = "default"
peer_group = "cloud"

[retry]
no_response_ms = ${SIP_NO_RESPONSE_MS:-1000}
retry_after_s = ${SIP_RETRY_AFTER_S:-30}

[health]
passive_down_after = ${SIP_PASSIVE_DOWN_AFTER:-100}
CONF
  if [ -n "${SIP_EXTRA_CONFIG:-}" ]; then printf '\n%s\n' "$SIP_EXTRA_CONFIG" >>"$1"; fi
}

# sip6_up: sip6_topology, the config, sbcd; then sbcd has answered an OPTIONS over IPv6 from
# the caller and from both peers (so it has resolved their MACs by Neighbor Discovery).
sip6_up() {
  sip6_topology
  DIR=$(topo_dir)
  SOCK=$DIR/sbcd.sock
  HTTP=127.0.0.1:$(topo_free_port)
  CFG=$DIR/sbc.toml
  sip6_write_config "$CFG"
  sbcd_start "$BUILD" "$CFG" "$DIR/sbcd.log" || fail "sbcd did not start with the IPv6 config (log above)"
  sip6_warm "$SIP6_NS_CORE" "$SIP6_CORE" "$SIP6_CALLER" ||
    fail "sbcd did not answer OPTIONS over IPv6 from the caller $SIP6_CALLER to [$SIP6_CORE]:5060 within 3 s"
  sip6_warm "$SIP6_NS_PEERS" "$SIP6_EDGE" "${SIP6_PEERS[@]}" ||
    fail "sbcd did not answer OPTIONS over IPv6 from the peers to [$SIP6_EDGE]:5060 within 3 s"
}

# sip6_warm NS DST ADDR...: from each ADDR (port 5071) in NS, OPTIONS to [DST]:5060, resent
# every 200 ms (at most 15 times) until answered. Fails if one never is.
sip6_warm() {
  local ns=$1; shift
  ip netns exec "$ns" python3 - "$@" <<'PY'
import socket, sys
dst, addrs = sys.argv[1], sys.argv[2:]
bad = []
for a in addrs:
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.bind((a, 5071)); s.settimeout(0.2)
    ok = False
    for i in range(15):
        m = ("OPTIONS sip:[%s]:5060 SIP/2.0\r\nVia: SIP/2.0/UDP [%s]:5071;branch=z9hG4bK-warm6-%d\r\n"
             "From: <sip:warm@[%s]:5071>;tag=w%d\r\nTo: <sip:[%s]:5060>\r\nCall-ID: warm6-%d-%s\r\n"
             "CSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n") % (dst, a, i, a, i, dst, i, a)
        s.sendto(m.encode(), (dst, 5060))
        try:
            s.recvfrom(65535); ok = True; break
        except (socket.timeout, ConnectionRefusedError):
            pass
    s.close()
    if not ok: bad.append(a)
if bad:
    print("no answer to OPTIONS over IPv6 from " + " ".join(bad), file=sys.stderr); sys.exit(1)
PY
}

# call6 NAME CALLS [SCENARIO] [SIPP_ARGS...]: call over IPv6 from SIP6_FROM (default the
# caller 2001:2:0:1::10) to sbcd's [2001:2:0:1::1]:5060.
call6() {
  local SIPP_NS_HOSTS=$SIP6_NS_CORE SIPP_PROXY_ADDR="[$SIP6_CORE]" SIPP_CALLER=${SIP6_FROM:-$SIP6_CALLER}
  call "$@"
}

# peer6 ADDR SCENARIO [MAX_S]: peer (a SIPp callee with -trace_msg in $DIR/peer-ADDR) on an
# IPv6 address of the peers namespace. Sets SIPP_PID.
peer6() {
  local SIPP_NS_HOSTS=$SIP6_NS_PEERS
  peer "$@" || fail "SIPp callee on [$1]:5060 did not start"
}

# udp6_exchange SRC_IP FILE [WAIT_S]: udp_exchange over IPv6: FILE as one datagram from
# [SRC_IP]:5070 in the core namespace to [2001:2:0:1::1]:5060, prints what comes back.
udp6_exchange() {
  ip netns exec "$SIP6_NS_CORE" python3 - "$1" "$2" "${3:-2}" "$SIP6_CORE" <<'PY'
import socket, sys, time
src, path, wait, dst = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
data = open(path, 'rb').read().replace(b'\r\n', b'\n').replace(b'\n', b'\r\n')
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind((src, 5070))
s.sendto(data, (dst, 5060))
end = time.time() + wait
while True:
    left = end - time.time()
    if left <= 0: break
    s.settimeout(left)
    try:
        d, _ = s.recvfrom(65535)
    except socket.timeout:
        break
    except ConnectionRefusedError:
        continue
    sys.stdout.write(d.decode('latin-1').replace('\r\n', '\n') + '----\n')
PY
}

# call_trouble DIR: on stderr, why SIPp in DIR failed calls (the first events of its error
# log: the unexpected message it got, first line and headers) and the end of sbcd.log.
call_trouble() {
  local f
  for f in "$1"/*_errors.log; do [ -f "$f" ] && { echo "== $f" >&2; head -n 12 "$f" >&2; }; done
  [ -f "${DIR:-}/sbcd.log" ] && { echo "== sbcd.log" >&2; tail -n 15 "$DIR/sbcd.log" >&2; }
  return 0
}

# ---- Calls that change family through sbcd (t_sip_ipv6_interwork.sh) -------------------------
# On the two sites of sip6_up, over IPv4: the caller 198.18.0.2 in the core namespace to sbcd's
# 198.18.0.1:5060 (trunk "carrier"), callees on 198.18.2.11/.12 in the peers namespace, sbcd's
# 198.18.2.1 (trunk "cloud") on that side.
SIP6_CORE4=198.18.0.1
SIP6_EDGE4=198.18.2.1
SIP6_CALLER4=198.18.0.2

# sip6_warm4 NS DST ADDR...: sip_warm in NS toward DST (IPv4): OPTIONS from each ADDR (port
# 5071) to DST:5060 until answered, so that sbcd has resolved their MACs by ARP.
sip6_warm4() {
  local SIPP_NS_HOSTS=$1 SIPP_PROXY_ADDR=$2
  shift 2
  sip_warm "$@"
}

# sip6_call4 NAME CALLS [SCENARIO] [SIPP_ARGS...]: call over IPv4 from the caller 198.18.0.2
# in the core namespace to sbcd's 198.18.0.1:5060 (logs in $DIR/NAME, as call).
sip6_call4() {
  local SIPP_NS_HOSTS=$SIP6_NS_CORE SIPP_PROXY_ADDR=$SIP6_CORE4 SIPP_CALLER=$SIP6_CALLER4
  call "$@"
}

# sip6_peer4 ADDR SCENARIO [MAX_S]: peer (a SIPp callee with -trace_msg in $DIR/peer-ADDR) on
# an IPv4 address of the peers namespace. Sets SIPP_PID.
sip6_peer4() {
  local SIPP_NS_HOSTS=$SIP6_NS_PEERS
  peer "$@" || fail "SIPp callee on $1:5060 did not start"
}

# uri_hosts DIR PATTERN HEADER [CSEQ_METHOD]: for every message SIPp in DIR received whose
# first line matches the extended regex PATTERN (and, with CSEQ_METHOD, whose CSeq names that
# method), one line: the host:port of every sip: URI of its HEADER values ("Record-Route",
# "Route", "Via" gives nothing: no sip: URIs), in order, top first, over all lines of that
# header and all comma-separated values ("[2001:2:0:2::1]:5060 198.18.0.1:5060"); "-" for a
# message without the header.
uri_hosts() {
  msgs "$1" | awk -v pat="$2" -v hdr="$(tr '[:upper:]' '[:lower:]' <<<"$3")" -v meth="${4:-}" '
    function flush() {
      if (inmsg && (meth == "" || cseq == meth)) print (out == "" ? "-" : substr(out, 2))
      inmsg = 0; out = ""; cseq = ""
    }
    { sub(/\r$/, "") }
    /message received/ { flush(); want = 1; next }
    /^-----/ { flush(); want = 0; next }
    want && NF { want = 0; inmsg = ($0 ~ pat); out = ""; cseq = ""; next }
    inmsg && /^[Cc][Ss][Ee][Qq]:/ { cseq = $3 }
    inmsg {
      name = tolower($0); sub(/[ \t]*:.*/, "", name)
      if (name != hdr) next
      v = $0; sub(/^[^:]*:/, "", v)
      while (match(v, /<sip:[^;>]+/)) { out = out " " substr(v, RSTART + 5, RLENGTH - 5); v = substr(v, RSTART + RLENGTH) }
    }
    END { flush() }'
}

# nth_vias DIR PATTERN N: the Nth Via value (1: the top one) of every message SIPp in DIR
# received whose first line matches PATTERN, one a line, counting comma-separated values of
# one Via line as several ("SIP/2.0/UDP 198.18.2.1:5060;branch=..."; "-" when it has fewer).
nth_vias() {
  msgs "$1" | awk -v pat="$2" -v n="$3" '
    function flush() { if (inmsg) print (got == "" ? "-" : got); inmsg = 0; got = ""; k = 0 }
    { sub(/\r$/, "") }
    /message received/ { flush(); want = 1; next }
    /^-----/ { flush(); want = 0; next }
    want && NF { want = 0; inmsg = ($0 ~ pat); got = ""; k = 0; next }
    inmsg && /^(Via|v):/ {
      v = $0; sub(/^[^:]*:[ \t]*/, "", v)
      m = split(v, parts, /,[ \t]*/)
      for (i = 1; i <= m; i++) if (++k == n) got = parts[i]
    }
    END { flush() }'
}

# conns_lines: `sbcctl conns --json`, one connection per line: DIR PROTO STATE LOCAL REMOTE
# MSGS_IN MSGS_OUT (the stream thread's report, refreshed about once a second).
conns_lines() {
  ctl conns --json | python3 -c '
import json, sys
for c in json.load(sys.stdin).get("conns", []):
    print(c["direction"], c["transport"], c["state"], c["local"], c["remote"], c["msgs_in"], c["msgs_out"])'
}
