#!/usr/bin/env bash
# tls.sh: SIP over TLS through sbcd's stream thread (issue 10), one run. Measures, in order:
#
#  0. the crypto ceiling of full TLS server handshakes on one core for an ECDSA P-256 key
#     with ECDHE P-256 (tls_ceiling_handshakes_per_s of tls_peers.sh, `openssl speed`
#     pinned to the CPU the stream thread gets), and Kamailio 5.6's CPU per call relaying
#     SIPp UDP calls over TLS (kamailio_tls_us_per_call of tls_peers.sh: client Kamailio on
#     PROXY_CPU, SIPp and the peer Kamailio on OTHER_CPU). Kamailio runs first, alone.
#  1. memory per idle TLS connection: sbcd's VmRSS before and after tests/bench/tls_load
#     opens IDLE_CONNS TLS connections to its trunk and keeps them silent (measured first,
#     on a fresh sbcd, after a warm-up of 10 connections opened and closed).
#  2. full handshakes per second that the stream thread completes: tls_load --handshakes
#     (HS_CONNS parallel connections; connect, handshake, close; no resumption; groups P-256),
#     counted by sbcd itself (sbc_stream_handshakes_total{result="ok"}), against the ceiling;
#     also per CPU-second of the stream thread (its /proc/PID/task/TID/stat utime+stime), and
#     the same for OpenSSL's own `openssl s_server` on the same CPU under the same client, on
#     loopback (openssl_server_handshakes_per_cpu_s of tls_peers.sh): what the library itself
#     reaches on this machine, printed as `tls_reference: ...` before the last line.
#  3. SIP messages through the stream thread into a worker and back: tls_load --messages,
#     100 persistent TLS connections each keeping WINDOW OPTIONS to sbcd itself outstanding
#     (the worker answers 200); round trips per second, and per core: round trips / (CPU
#     seconds of the stream thread + seconds the worker was busy (busy_cycles / tsc_hz of
#     `sbcctl stats --json`)).
#  4. CPU per call over TLS, sbcd against Kamailio: the same SIPp UDP caller (uac.xml, hold
#     100 ms) -> sbcd -> TLS -> Kamailio 5.6 TLS peer (scripts/kamailio-tls/peer.cfg) -> SIPp
#     UAS, CALLS calls at RATE calls/s after 20 warm-up calls (which open the connection);
#     sbcd's CPU = the stream thread's utime+stime + the worker's busy seconds.
#
# CPUs (2-CPU machine): sbcd's main lcore (control loop) on CPU 0 and its one worker on CPU 1
# (sbcd's own layout; the worker busy-polls its CPU); the stream thread pinned to STREAM_CPU
# (default 0, beside the mostly idle control loop, not on the worker's polling CPU); tls_load
# pinned to LOAD_CPU (default 0: it shares the stream thread's CPU); SIPp and the Kamailio
# peer on OTHER_CPU (0). Everything runs on the same two CPUs: read the per-CPU-second figures.
#
# Last line:
#   tls: handshakes_per_s=X ceiling_handshakes_per_s=Y msgs_per_s=Z bytes_per_conn=W kamailio_us_per_call=K sbc_us_per_call=S
# ("na" where a part failed). Needs root (namespaces), iproute2, ethtool, taskset, openssl,
# curl, python3, SIPp (sip-tester), kamailio + kamailio-tls-modules; builds build/sbcd,
# build/sbcctl and build/tests/bench/tls_load. Bounded: every client has a time limit; the
# namespaces and every process started here are removed on exit (also on failure or Ctrl-C).
#
# Env: BUILD_DIR (build), SECONDS_PER_PHASE (10), HS_CONNS (16), MSG_CONNS (100), WINDOW (8),
# IDLE_CONNS (1000), CALLS (2000), RATE (200), STREAM_CPU (0), LOAD_CPU (0), PROXY_CPU (1),
# OTHER_CPU (0), OUT (a new folder in /tmp: logs kept there); for trying things out only:
# PHASES (default "idle hs msg call", a subset in any order) and SKIP_REFERENCE=1 (no ceiling,
# no Kamailio run).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
# shellcheck source=lib.sh
. scripts/bench/lib.sh
BUILD=$(readlink -f "$build")
SECS=${SECONDS_PER_PHASE:-10}
HS_CONNS=${HS_CONNS:-16}
MSG_CONNS=${MSG_CONNS:-100}
WINDOW=${WINDOW:-8}
IDLE_CONNS=${IDLE_CONNS:-1000}
CALLS=${CALLS:-2000}
RATE=${RATE:-200}
STREAM_CPU=${STREAM_CPU:-0}
LOAD_CPU=${LOAD_CPU:-0}
PROXY_CPU=${PROXY_CPU:-1}
OTHER_CPU=${OTHER_CPU:-0}
PHASES=${PHASES:-idle hs msg call}
for v in SECS HS_CONNS MSG_CONNS WINDOW IDLE_CONNS CALLS RATE; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "tls: $v must be a positive integer" >&2; exit 2; }
done
[ "$SECS" -le 60 ] && [ "$IDLE_CONNS" -le 4000 ] || { echo "tls: SECONDS_PER_PHASE <= 60, IDLE_CONNS <= 4000" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "tls: needs root (network namespaces)" >&2; exit 2; }
for c in sipp openssl curl taskset python3 ethtool; do
  command -v "$c" >/dev/null || { echo "tls: $c not found" >&2; exit 2; }
done

log() { printf 'tls: %s\n' "$*" >&2; }

# shellcheck source=../lib/sipp.sh
. scripts/lib/sipp.sh
# shellcheck source=../lib/certs.sh
. scripts/lib/certs.sh
# shellcheck source=../lib/kamailio_tls.sh
. scripts/lib/kamailio_tls.sh
# shellcheck source=tls_peers.sh
. scripts/bench/tls_peers.sh

OUT=${OUT:-$(mktemp -d /tmp/bench-tls.XXXXXX)}
mkdir -p "$OUT"; OUT=$(readlink -f "$OUT")
LOAD_PID=
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$LOAD_PID" ]; then kill -TERM "$LOAD_PID" 2>/dev/null || true; wait "$LOAD_PID" 2>/dev/null || true; fi
  if [ -n "${SBCD_PID:-}" ]; then sbcd_stop >/dev/null 2>&1 || true; fi
  topo_cleanup
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

build_bench sbcd sbcctl tests/bench/tls_load
LOAD_BIN=$BUILD/tests/bench/tls_load
CPU_MODEL=$(lscpu | sed -nE 's/^Model name:[[:space:]]+//p' | head -n 1)
log "processor: $CPU_MODEL ($(nproc) CPUs); logs in $OUT"
log "CPUs: sbcd control loop 0, worker 1 (busy-polls), stream thread $STREAM_CPU, tls_load $LOAD_CPU, SIPp and Kamailio peer $OTHER_CPU"

# --- 0. reference figures --------------------------------------------------------------------
CEILING=na KAM_US=na
if [ "${SKIP_REFERENCE:-0}" != 1 ]; then
CEILING=$(tls_ceiling_handshakes_per_s "$STREAM_CPU" 2 2>"$OUT/ceiling.txt") || CEILING=na
cat "$OUT/ceiling.txt" >&2
KAM_US=$(kamailio_tls_us_per_call "$CALLS" "$RATE" "$PROXY_CPU" "$OTHER_CPU" 2>"$OUT/kamailio.txt") || KAM_US=na
grep '^kamailio_tls:' "$OUT/kamailio.txt" >&2 || tail -n 20 "$OUT/kamailio.txt" >&2
fi

# --- sbcd, its trunk with TLS, and a Kamailio TLS peer ---------------------------------------
KPEER=198.18.1.31
UAS=198.18.1.11
sipp_topology sbcd
HOSTS_IF="s${TOPO_ID}hostb"
ip -n "$SIPP_NS_HOSTS" addr add "$KPEER/16" dev "$HOSTS_IF"
# The load client opens and closes tens of thousands of connections from one address.
ip netns exec "$SIPP_NS_HOSTS" sysctl -qw net.ipv4.ip_local_port_range="1024 65000" net.ipv4.tcp_tw_reuse=1
DIR=$OUT/sbcd
mkdir -p "$DIR"
PKI=$DIR/pki
make_test_pki "$PKI" "DNS:sbc.test,IP:$SIPP_PROXY_ADDR"
make_leaf "$PKI" peer "DNS:peer.test,IP:$KPEER" server ca
SOCK=$DIR/sbcd.sock
HTTP=127.0.0.1:$(topo_free_port)
cat >"$DIR/sbc.toml" <<EOF
$(sbc_conf_head "bench-tls-${TOPO_ID}" 1 "$SOCK" "$HTTP")

[[interface]]
name = "hosts"
device = "net_af_packet${TOPO_ID},iface=${SIPP_PROXY_IF}"
address = "$SIPP_PROXY_ADDR/16"

[[trunk]]
name = "carrier"
interface = "hosts"
port = 5060
transports = ["udp", "tls"]
tls_port = 5061
allow = ["$SIPP_CALLER/32"]

[[region]]
name = "region1"
peers = [ { address = "$KPEER:5061", transport = "tls", server_name = "peer.test" } ]
probe = "none"

[[peer_group]]
name = "cloud"
regions = ["region1"]

[[route]]
name = "default"
peer_group = "cloud"

[health]
passive_down_after = 100

[tls]
certificate = "$PKI/server.crt"
private_key = "$PKI/server.key"
ca_file = "$PKI/ca.crt"

# Benchmark limits: one source address opens every connection (defaults: 64 connections and
# 50 handshakes per second per source).
[streams]
cpu = $STREAM_CPU
max_connections = 8192
max_connections_per_source = 8192
max_handshakes_per_s_per_source = 100000
EOF

SIPP_CPUS=$OTHER_CPU
sipp_uas_start "$UAS" uas.xml "$DIR/uas" $((CALLS / RATE + 600))
ktls_peer_start "$SIPP_NS_HOSTS" "$DIR/kamailio" "$KPEER" "sip:$UAS:5060" cert="$PKI/peer.crt" key="$PKI/peer.key" \
  ca="$PKI/ca.crt" cpu="$OTHER_CPU"
KPEER_PID=$KTLS_PID
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true  # sbcd holds a descriptor per connection
sbcd_start "$BUILD" "$DIR/sbc.toml" "$DIR/sbcd.log"
ctl() { "$BUILD/sbcctl" --socket "$SOCK" "$@"; }

# sbcd learns the MAC of each address it must answer (an OPTIONS over UDP from each, resent
# until answered): a SYN-ACK to an unresolved host would be lost and cost a 1 s retransmission.
ip netns exec "$SIPP_NS_HOSTS" python3 - "$SIPP_PROXY_ADDR" "$SIPP_CALLER" "$KPEER" <<'PY'
import socket, sys
dst, addrs = sys.argv[1], sys.argv[2:]
for a in addrs:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((a, 5071)); s.settimeout(0.2)
    for i in range(15):
        m = ("OPTIONS sip:%s:5060 SIP/2.0\r\nVia: SIP/2.0/UDP %s:5071;branch=z9hG4bK-warm-%d\r\n"
             "From: <sip:warm@%s:5071>;tag=w%d\r\nTo: <sip:%s:5060>\r\nCall-ID: warm-%d-%s\r\n"
             "CSeq: 1 OPTIONS\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n") % (dst, a, i, a, i, dst, i, a)
        s.sendto(m.encode(), (dst, 5060))
        try:
            s.recvfrom(65535); break
        except (socket.timeout, ConnectionRefusedError):
            pass
    else:
        sys.exit("no answer to OPTIONS from " + a)
PY
for _ in $(seq 1 100); do ctl conns --json 2>/dev/null | grep -Eq '"state": ?"established"' && break; sleep 0.1; done
ctl conns --json | grep -Eq '"state": ?"established"' || { log "sbcd has no TLS connection to the Kamailio peer"; ctl conns >&2; exit 1; }

STREAM_TID=
for t in /proc/"$SBCD_PID"/task/*; do
  [ "$(cat "$t/comm" 2>/dev/null)" = sbc-streams ] && STREAM_TID=${t##*/}
done
[ -n "$STREAM_TID" ] || { log "no thread named sbc-streams in sbcd ($SBCD_PID)"; exit 1; }
log "sbcd $SBCD_PID, stream thread $STREAM_TID on CPU(s) $(taskset -pc "$STREAM_TID" | sed 's/.*: //')"

HZ=$(getconf CLK_TCK)
# stream_cpu: utime+stime of the stream thread, seconds.
stream_cpu() { awk -v hz="$HZ" '{ sub(/.*\) /, ""); printf "%.3f\n", ($12 + $13) / hz }' "/proc/$SBCD_PID/task/$STREAM_TID/stat"; }
# worker_busy: seconds the worker(s) spent busy (busy_cycles / tsc_hz, as vs_kamailio.sh).
worker_busy() {
  ctl stats --json | python3 -c 'import json, sys; d = json.load(sys.stdin); print("%.4f" % (d["total"]["busy_cycles"] / d["tsc_hz"]))'
}
# metric NAME_AND_LABELS: the value of one /metrics sample (0 when absent).
metric() { curl -sf "http://$HTTP/metrics" | awk -v k="$1" 'index($0, k) == 1 { v = $NF } END { print v + 0 }'; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$SBCD_PID/status"; }
# load LIMIT_S ARGS...: tls_load from the caller's address to the trunk's TLS port, killed after LIMIT_S.
load() {
  local limit=$1; shift
  timeout -k 5 "$limit" ip netns exec "$SIPP_NS_HOSTS" taskset -c "$LOAD_CPU" "$LOAD_BIN" \
    --connect "$SIPP_PROXY_ADDR:5061" --bind "$SIPP_CALLER" "$@"
}
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

HS=na MSGS=na BPC=na SBC_US=na HS_CPU=na OSSL_CPU=na

# --- 1. memory per idle TLS connection -------------------------------------------------------
idle_phase() {
  local line before after opened est
  load 30 --idle 10 --hold 0.5 >"$OUT/idle-warm.txt" 2>&1 || true
  sleep 1
  before=$(rss_kib)
  load 100 --idle "$IDLE_CONNS" --conns 50 --hold 60 --setup-seconds 30 >"$OUT/idle.txt" 2>&1 &
  LOAD_PID=$!
  for _ in $(seq 1 400); do grep -q 'opened=' "$OUT/idle.txt" && break; kill -0 "$LOAD_PID" 2>/dev/null || break; sleep 0.1; done
  line=$(grep 'opened=' "$OUT/idle.txt" || true)
  [ -n "$line" ] || { log "idle: the client did not open its connections"; cat "$OUT/idle.txt" >&2; return 1; }
  sleep 1.5  # the stream thread's report (every 0.5 s) and any deferred frees settle
  after=$(rss_kib)
  est=$(metric 'sbc_stream_connections{state="established"')
  kill -TERM "$LOAD_PID"; wait "$LOAD_PID" 2>/dev/null || true; LOAD_PID=
  opened=$(sed -nE 's/.*opened=([0-9]+).*/\1/p' <<<"$line")
  [ "$opened" -gt 0 ] || return 1
  BPC=$(( (after - before) * 1024 / opened ))
  log "idle: $line; sbcd established connections=$est (incl. 1 to the peer); VmRSS before=${before} KiB after=${after} KiB; bytes_per_conn=$BPC ($(awk -v b="$BPC" 'BEGIN { printf "%.1f", b / 1024 }') KiB)"
}

# --- 2. handshakes per second ----------------------------------------------------------------
hs_phase() {
  local h0 h1 c0 c1 w0 w1 t0 t1 line cpu secs
  sleep 1
  h0=$(metric 'sbc_stream_handshakes_total{result="ok"'); c0=$(stream_cpu); w0=$(worker_busy); t0=$(date +%s.%N)
  line=$(load $((SECS + 30)) --handshakes "$SECS" --conns "$HS_CONNS") || { log "handshakes: client failed: $line"; return 1; }
  t1=$(date +%s.%N); h1=$(metric 'sbc_stream_handshakes_total{result="ok"'); c1=$(stream_cpu); w1=$(worker_busy)
  secs=$(sed -nE 's/.* seconds=([0-9.]+).*/\1/p' <<<"$line")
  cpu=$(sub "$c0" "$c1")
  HS=$(awk -v a="$h0" -v b="$h1" -v s="$secs" 'BEGIN { printf "%.0f", (b - a) / s }')
  log "handshakes: $line"
  log "handshakes: sbcd completed $((h1 - h0)) in ${secs} s = $HS/s; stream thread CPU ${cpu} s ($(awk -v c="$cpu" -v s="$(sub "$t0" "$t1")" 'BEGIN { printf "%.0f", 100 * c / s }') % of its CPU), worker busy $(sub "$w0" "$w1") s; per stream-thread CPU-second: $(awk -v a="$h0" -v b="$h1" -v c="$cpu" 'BEGIN { if (c > 0) printf "%.0f", (b - a) / c; else print "na" }')/s; ratio to ceiling: wall $(awk -v h="$HS" -v c="$CEILING" 'BEGIN { if (c ~ /^[0-9.]+$/ && c > 0) printf "%.2f", h / c; else print "na" }'), per CPU-second $(awk -v a="$h0" -v b="$h1" -v c="$cpu" -v k="$CEILING" 'BEGIN { if (c > 0 && k ~ /^[0-9.]+$/ && k > 0) printf "%.2f", (b - a) / c / k; else print "na" }')"
  HS_CPU=$(awk -v a="$h0" -v b="$h1" -v c="$cpu" 'BEGIN { if (c > 0) printf "%.0f", (b - a) / c; else print "na" }')
  # OpenSSL's own server under the same client, for what the library itself reaches here.
  OSSL_CPU=$(openssl_server_handshakes_per_cpu_s "$STREAM_CPU" "$LOAD_CPU" "$SECS" "$PKI/server.crt" "$PKI/server.key" \
    "$LOAD_BIN" 2>"$OUT/openssl_server.txt") || OSSL_CPU=na
  cat "$OUT/openssl_server.txt" >&2
  log "handshakes: reference, openssl s_server per CPU-second: $OSSL_CPU/s ($(awk -v o="$OSSL_CPU" -v c="$CEILING" 'BEGIN { if (o ~ /^[0-9.]+$/ && c ~ /^[0-9.]+$/ && c > 0) printf "%.2f", o / c; else print "na" }') of the ceiling); sbcd's stream thread / s_server: $(awk -v s="$HS_CPU" -v o="$OSSL_CPU" 'BEGIN { if (s ~ /^[0-9.]+$/ && o ~ /^[0-9.]+$/ && o > 0) printf "%.2f", s / o; else print "na" }')"
  log "handshakes: failed in sbcd: $(curl -sf "http://$HTTP/metrics" | awk '/^sbc_stream_handshakes_total\{result="failed"/ { s += $NF } END { print s + 0 }'), refused: $(metric sbc_stream_refused_total)"
}

# --- 3. messages through the stream thread and a worker --------------------------------------
msg_phase() {
  local m0 m1 c0 c1 w0 w1 t0 t1 line cpu busy n
  sleep 1
  m0=$(metric 'sbc_stream_messages_total{direction="in"'); c0=$(stream_cpu); w0=$(worker_busy); t0=$(date +%s.%N)
  line=$(load $((SECS + 60)) --messages "$SECS" --conns "$MSG_CONNS" --window "$WINDOW") || { log "messages: client failed: $line"; return 1; }
  t1=$(date +%s.%N); m1=$(metric 'sbc_stream_messages_total{direction="in"'); c1=$(stream_cpu); w1=$(worker_busy)
  log "messages: $line"
  MSGS=$(sed -nE 's/.* per_s=([0-9]+).*/\1/p' <<<"$line")
  n=$(sed -nE 's/.* responses_200=([0-9]+).*/\1/p' <<<"$line")
  cpu=$(sub "$c0" "$c1"); busy=$(sub "$w0" "$w1")
  log "messages: sbcd took $((m1 - m0)) requests in (setup included); stream thread CPU ${cpu} s ($(awk -v c="$cpu" -v s="$(sub "$t0" "$t1")" 'BEGIN { printf "%.0f", 100 * c / s }') % of its CPU), worker busy ${busy} s; per core: $n / (${cpu} + ${busy}) = $(awk -v n="$n" -v c="$cpu" -v b="$busy" 'BEGIN { printf "%.0f", n / (c + b) }') round trips per CPU-second (stream thread alone: $(awk -v n="$n" -v c="$cpu" 'BEGIN { printf "%.0f", n / c }'))"
}

# --- 4. CPU per call over TLS ----------------------------------------------------------------
call_phase() {
  local c0 c1 w0 w1 ok failed rc=0 cpu busy
  SIPP_NS_HOSTS=$SIPP_NS_HOSTS SIPP_CPUS=$OTHER_CPU
  sipp_uac_run "$DIR/warm" 20 20 30 uac.xml -d 100 -s service >/dev/null 2>&1 || { log "calls: warm-up failed (logs $DIR/warm)"; return 1; }
  sleep 1
  c0=$(stream_cpu); w0=$(worker_busy)
  sipp_uac_run "$DIR/run" "$RATE" "$CALLS" $((CALLS / RATE + 60)) uac.xml -d 100 -s service -l $((RATE * 2 + 10)) || rc=$?
  c1=$(stream_cpu); w1=$(worker_busy)
  read -r ok failed < <(sipp_counts "$DIR/run")
  [ "$ok" -gt 0 ] || { log "calls: none succeeded (SIPp exit $rc)"; return 1; }
  cpu=$(sub "$c0" "$c1"); busy=$(sub "$w0" "$w1")
  SBC_US=$(awk -v c="$cpu" -v b="$busy" -v n="$ok" 'BEGIN { printf "%.1f", (c + b) * 1e6 / n }')
  log "calls: calls=$CALLS rate=$RATE ok=$ok failed=$failed stream_cpu_s=$cpu worker_busy_s=$busy sbc_us_per_call=$SBC_US (stream thread $(awk -v c="$cpu" -v n="$ok" 'BEGIN { printf "%.1f", c * 1e6 / n }'), worker $(awk -v b="$busy" -v n="$ok" 'BEGIN { printf "%.1f", b * 1e6 / n }')); kamailio_us_per_call=$KAM_US"
}

# What the worker counts as busy with nothing offered (timers, the peer connection's keep-alive).
w0=$(worker_busy); c0=$(stream_cpu); sleep 2; w1=$(worker_busy); c1=$(stream_cpu)
log "at rest (2 s, nothing offered): worker busy $(sub "$w0" "$w1") s, stream thread CPU $(sub "$c0" "$c1") s"
for p in $PHASES; do
  "${p}_phase" || log "$p phase failed"
done
ctl conns >"$OUT/conns.txt" 2>&1 || true
curl -sf "http://$HTTP/metrics" | grep '^sbc_stream' >"$OUT/metrics.txt" || true
log "processor: $CPU_MODEL"
echo "tls_reference: sbc_handshakes_per_cpu_s=$HS_CPU openssl_s_server_handshakes_per_cpu_s=$OSSL_CPU"
echo "tls: handshakes_per_s=$HS ceiling_handshakes_per_s=$CEILING msgs_per_s=$MSGS bytes_per_conn=$BPC kamailio_us_per_call=$KAM_US sbc_us_per_call=$SBC_US"
