#!/usr/bin/env bash
# The demo: installs what is missing, builds, and runs real calls through sbcd. A namespace
# "sbc-demo-hosts" holds every SIP endpoint (scripts/lib/sipp.sh): SIPp callers at
# 198.18.0.2, SIPp callees (scripts/sipp/uas.xml) at 198.18.1.11, .12, 198.18.2.21 and .22,
# joined by a veth to sbcd at 198.18.0.1 (config scripts/demo/sbc.toml). sbcd learns its peers
# from DNS SRV records served by a dnsmasq the demo starts on 127.0.0.1:15353:
#   region1  _sip._tls.region1.demo -> a.region1.demo, b.region1.demo port 5061: two Kamailio
#            TLS peers (scripts/lib/kamailio_tls.sh) at 198.18.1.31 and .32, in front of the
#            callees .11 and .12. Their certificates (for those names) and the test CA are
#            made at start (scripts/lib/certs.sh); sbcd verifies them against the CA, which
#            the demo writes to /run/sbc/demo-tls/ca.crt, the path sbc.toml names.
#   region2  _sip._udp.region2.demo -> the callees .21 and .22 over UDP.
# It pings sbcd, shows the TLS connections (sbcctl conns), places calls at DEMO_RATE calls/s
# (default 20) for DEMO_SECONDS (default 20) with 1 s of talk each, kills Kamailio peer b
# (198.18.1.32, SIGKILL) half way and shows sbcd taking it down at once with the reason
# (sbcctl peers), then what the operator sees (sbcctl status, peers, conns, calls, stats,
# calls --media, /metrics) and a summary: calls made, retried (sbcd's counters), failed (0
# expected), apart from those the calls that were ringing or up on the killed peer when it
# died, and the RTP packets sbcd relayed per direction (each call streams 1 s of G.711 that
# the callee echoes; media goes straight between sbcd and the callees, not through Kamailio).
# Removes everything on exit, also on failure or Ctrl-C. Runs without a terminal (CI). Needs
# root (namespaces, veth, raw sockets), SIPp, dnsmasq, Kamailio 5.6 with its TLS module and
# the openssl CLI.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "demo.sh: run as root (it creates network namespaces)" >&2; exit 1; }
RATE=${DEMO_RATE:-20}
SECS=${DEMO_SECONDS:-20}
scripts/build.sh >/dev/null
command -v sipp >/dev/null || { echo "demo.sh: sipp not found (apt-get install sip-tester)" >&2; exit 1; }
[ -x /usr/sbin/kamailio ] || { echo "demo.sh: kamailio not found (apt-get install kamailio kamailio-tls-modules)" >&2; exit 1; }
command -v openssl >/dev/null || { echo "demo.sh: openssl not found (apt-get install openssl)" >&2; exit 1; }

TOPO_ID=demo
source scripts/lib/sipp.sh
source scripts/lib/certs.sh
source scripts/lib/kamailio_tls.sh
# The CA sbcd verifies region1's peers against: sbc.toml's [tls] ca_file names this path.
TLS_DIR=/run/sbc/demo-tls
# A demo killed hard last time may have left its namespaces and veths: remove them first.
for ns in sbc-demo-hosts sbc-demo-core; do ip netns del "$ns" 2>/dev/null || true; done
for l in sdemohosta sdemocorea; do ip link del "$l" 2>/dev/null || true; done
# DEMO_KEEP=DIR keeps the SIPp and sbcd logs there.
demo_exit() { if [ -n "${DEMO_KEEP:-}" ] && [ -n "${dir:-}" ]; then rm -rf "$DEMO_KEEP"; cp -r "$dir" "$DEMO_KEEP" || true; fi; topo_cleanup; rm -rf "$TLS_DIR"; }
trap demo_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -t 1 ]; then step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }; else step() { printf '\n== %s\n' "$*"; }; fi
CTL=(build/sbcctl --socket /run/sbc/demo.sock)
# sip_counter NAME...: sum of sbcd's SIP counters of those names (sbcctl stats --json).
sip_counter() {
  "${CTL[@]}" stats --json | python3 -c '
import json, sys
c = json.load(sys.stdin).get("sip", {}).get("counters", {})
print(sum(int(c.get(k, 0)) for k in sys.argv[1:]))' "$@"
}

step "topology: namespace sbc-demo-hosts (caller 198.18.0.2, callees 198.18.1.11 .12 2.21 .22, Kamailio TLS peers 198.18.1.31 .32) <-veth-> sbcd (198.18.0.1)"
sipp_topology sbcd
dir=$(topo_dir)
KPEER_A=198.18.1.31
KPEER_B=198.18.1.32
for a in "$KPEER_A" "$KPEER_B"; do ip -n "$SIPP_NS_HOSTS" addr add "$a/16" dev "s${TOPO_ID}hostb"; done

step "TLS: a test CA and certificates for a.region1.demo and b.region1.demo; Kamailio TLS peers on $KPEER_A:5061 and $KPEER_B:5061"
# Each certificate names its SRV target only: sbcd checks the target's name (RFC 3263), not
# the domain asked for and not the address.
make_ca "$dir/pki" ca "sbc demo CA"
make_leaf "$dir/pki" a "DNS:a.region1.demo" server ca
make_leaf "$dir/pki" b "DNS:b.region1.demo" server ca
mkdir -p "$TLS_DIR"
cp "$dir/pki/ca.crt" "$TLS_DIR/ca.crt"
echo "CA $TLS_DIR/ca.crt; $(openssl x509 -in "$dir/pki/a.crt" -noout -subject), $(openssl x509 -in "$dir/pki/b.crt" -noout -subject)"
# Kamailio (scripts/kamailio-tls/peer.cfg) answers OPTIONS itself and relays calls statefully,
# record-routed, to its SIPp callee over UDP; the SDP passes untouched, so RTP flows between
# sbcd and the callee directly.
declare -A kam_pid
ktls_peer_start "$SIPP_NS_HOSTS" "$dir/kamailio-a" "$KPEER_A" "sip:${SIPP_REGION1[0]}:5060" cert="$dir/pki/a.crt" key="$dir/pki/a.key" ||
  { echo "demo.sh: Kamailio peer a did not start" >&2; exit 1; }
kam_pid[a]=$KTLS_PID
ktls_peer_start "$SIPP_NS_HOSTS" "$dir/kamailio-b" "$KPEER_B" "sip:${SIPP_REGION1[1]}:5060" cert="$dir/pki/b.crt" key="$dir/pki/b.key" ||
  { echo "demo.sh: Kamailio peer b did not start" >&2; exit 1; }
kam_pid[b]=$KTLS_PID
echo "Kamailio a ($KPEER_A -> ${SIPP_REGION1[0]}): pid ${kam_pid[a]}; Kamailio b ($KPEER_B -> ${SIPP_REGION1[1]}): pid ${kam_pid[b]}"

step "DNS: dnsmasq on 127.0.0.1:15353 serving _sip._tls.region1.demo and _sip._udp.region2.demo (TTL 5 s)"
command -v dnsmasq >/dev/null || { echo "demo.sh: dnsmasq not found (apt-get install dnsmasq-base)" >&2; exit 1; }
dnsmasq --no-daemon --conf-file=/dev/null --no-resolv --no-hosts --port=15353 --listen-address=127.0.0.1 \
  --bind-interfaces --local-ttl=5 \
  --srv-host=_sip._tls.region1.demo,a.region1.demo,5061,10,50 --srv-host=_sip._tls.region1.demo,b.region1.demo,5061,10,50 \
  --srv-host=_sip._udp.region2.demo,a.region2.demo,5060,10,100 --srv-host=_sip._udp.region2.demo,b.region2.demo,5060,10,100 \
  --host-record=a.region1.demo,$KPEER_A --host-record=b.region1.demo,$KPEER_B \
  --host-record=a.region2.demo,198.18.2.21 --host-record=b.region2.demo,198.18.2.22 2>"$dir/dnsmasq.log" &
dns_pid=$!
topo_track "$dns_pid"
for _ in $(seq 50); do ss -Hunl 'src 127.0.0.1:15353' | grep -q . && break; sleep 0.1; done
ss -Hunl 'src 127.0.0.1:15353' | grep -q . || { cat "$dir/dnsmasq.log" >&2; echo "demo.sh: dnsmasq did not start on 127.0.0.1:15353" >&2; exit 1; }
echo "dnsmasq running, pid $dns_pid"

step "starting sbcd --config scripts/demo/sbc.toml"
sbcd_start build scripts/demo/sbc.toml "$dir/sbcd.log"
echo "sbcd running, pid $SBCD_PID"
# sbcd has no peers until DNS answered; wait for the four (at most 5 s).
for _ in $(seq 50); do
  n=$("${CTL[@]}" peers --json | python3 -c 'import json, sys; print(sum(1 for p in json.load(sys.stdin)["sip"]["peers"] if p.get("source")))')
  [ "$n" -ge 4 ] && break
  sleep 0.1
done
echo "peers learned from DNS SRV: $n"
grep 'sbcd: dns:' "$dir/sbcd.log" || true
# sbcd opens one persistent TLS connection to each region1 peer (a first SYN may wait for ARP).
for _ in $(seq 100); do
  n=$("${CTL[@]}" conns --json | python3 -c 'import json, sys; print(sum(1 for c in json.load(sys.stdin)["conns"] if c["state"] == "established"))')
  [ "$n" -ge 2 ] && break
  sleep 0.1
done
[ "$n" -ge 2 ] || { "${CTL[@]}" conns >&2 || true; echo "demo.sh: sbcd has $n established TLS connections to region1's peers, expected 2" >&2; exit 1; }

step "sbcctl conns (one TLS connection per region1 peer, its certificate checked against the SRV target)"
"${CTL[@]}" conns

step "ping 198.18.0.1 from the caller"
ip netns exec "$SIPP_NS_HOSTS" ping -c 5 -i 0.2 -W 2 -I "$SIPP_CALLER" "$SIPP_PROXY_ADDR"
# sbcd sends SIP to the Kamailio peers only, yet region1's RTP goes straight to the callees
# behind them, and sbcd's media relay does not resolve a MAC address itself. sbcd learns a
# host from its ARP request for 198.18.0.1: each callee pings once, its namespace's neighbour
# entry flushed first so that the kernel asks from the callee's address.
for a in "${SIPP_REGION1[@]}"; do
  ip -n "$SIPP_NS_HOSTS" neigh flush dev "s${TOPO_ID}hostb"
  ip netns exec "$SIPP_NS_HOSTS" ping -c 1 -W 2 -I "$a" "$SIPP_PROXY_ADDR" >/dev/null
done
echo "callees ${SIPP_REGION1[*]} (region1's media endpoints) announced to sbcd by ARP"

step "SIPp callees on the four peers (scripts/sipp/uas.xml: 100, 180, 200 after 20 ms; RTP echoed back)"
declare -A peer_pid peer_wrap
for a in "${SIPP_REGION1[@]}" "${SIPP_REGION2[@]}"; do
  sipp_uas_start "$a" uas.xml "$dir/peer-$a" $((SECS + 60)) -rtp_echo -mi "$a" -mp 6000
  peer_pid[$a]=$SIPP_PID
  peer_wrap[$a]=$SIPP_WRAP_PID
  echo "peer $a: SIPp pid $SIPP_PID"
done

calls=$((RATE * SECS))
step "calls: $RATE calls/s for $SECS s ($calls calls, 1 s of talk each); Kamailio peer b ($KPEER_B) is killed after $((SECS / 2)) s"
# Each call streams 1 s of G.711 (scripts/sipp/uac_media.xml plays media.pcmu from its
# directory) to sbcd's media port; the callee echoes it back through sbcd.
mkdir -p "$dir/caller"
python3 -c 'import sys; open(sys.argv[1], "wb").write((b"\x80" * 10 + b"\x00" * 10) * 400)' "$dir/caller/media.pcmu"
sipp_uac_start "$dir/caller" "$RATE" "$calls" $((SECS + 40)) uac_media.xml -s 1000 -d 1200 -mi "$SIPP_CALLER" -mp 6000
sleep $((SECS / 2))
# The whole Kamailio, main process and its workers, as in a crash: the kernel resets its TLS
# connection and closes port 5061.
kill -KILL "${kam_pid[b]}" $(pgrep -P "${kam_pid[b]}" || true)
wait "${kam_pid[b]}" 2>/dev/null || true   # (no "Killed" job notice)
echo "$(date +%T) killed Kamailio peer b ($KPEER_B, pid ${kam_pid[b]} and its workers): its TLS connection is gone"
sleep 0.5
echo "sbcctl peers half a second later (region1):"
"${CTL[@]}" peers | grep -E '^(PEER |region1/)' || true
rc=0
sipp_uac_wait || rc=$?
[ "$rc" -le 1 ] || { tail -n 20 "$dir/caller/sipp.out" >&2; echo "demo.sh: the caller SIPp exited $rc" >&2; exit 1; }

read -r ok failed < <(sipp_counts "$dir/caller")
read -r p50 p99 n < <(sipp_rtt_pcts "$dir/caller")
# Where the failed calls failed (SIPp's error log): waiting for the 200 after a 180
# (uac_media.xml step 3: the call rang on the peer when it died, and a call that rang is never
# retried), or waiting for the answer to the BYE (step 9: the call was up on the killed peer,
# and Kamailio record-routed it: its BYE has nowhere to go).
errs=$(cat "$dir"/caller/*_errors.log 2>/dev/null || true)
# grep -o, not -c: SIPp may write several errors on one line.
rang=$( (grep -o 'receive timeout on message sbc uac media:3 ' <<<"$errs" || true) | wc -l)
bye_timeout=$( (grep -o 'receive timeout on message sbc uac media:9 ' <<<"$errs" || true) | wc -l)
lost=$(( $(sipp_bye_lost "$dir/caller" || true) + bye_timeout ))
new_failed=$((failed - bye_timeout))
r_code=$(sip_counter retries_code); r_silence=$(sip_counter retries_timeout); r_icmp=$(sip_counter retries_icmp)
retried=$((r_code + r_silence + r_icmp))

step "sbcctl status"
"${CTL[@]}" status
step "sbcctl peers"
"${CTL[@]}" peers || true
step "sbcctl conns (peer b's connection gone, its last error)"
"${CTL[@]}" conns || true
step "sbcctl calls"
"${CTL[@]}" calls || true
step "sbcctl stats"
"${CTL[@]}" stats
step "sbcctl calls --media (calls still up: those lost with the killed peer)"
"${CTL[@]}" calls --media | head -n 24 || true
step "curl http://127.0.0.1:19090/metrics (SIP lines)"
curl -sf http://127.0.0.1:19090/metrics | grep -v '^#' | grep -iE 'sip|peer|call' | head -n 20 || true
step "curl http://127.0.0.1:19090/metrics (TCP/TLS lines)"
curl -sf http://127.0.0.1:19090/metrics | grep -E '^sbc_(stream|tls)_' | grep -v ' 0$' | head -n 20 || true

step "summary"
echo "calls made: $((ok + failed)) at $RATE calls/s, $ok completed; setup p50 ${p50} ms, p99 ${p99} ms"
echo "calls retried on another peer: $retried (after an error response $r_code, silence $r_silence, ICMP unreachable $r_icmp)"
echo "calls failed: $((new_failed - rang)) (0 expected: no new call fails while a healthy peer remains)"
echo "  not counted above: $rang call(s) ringing on the killed peer when it died (never retried once it rang: no double ringing)"
echo "  established calls lost with the killed peer: $lost (their BYE went unanswered)"
# Media totals from sbcd (sbcctl stats --json, "media"): A is the caller's side, B the callee's.
read -r m_ab m_ba m_drop < <("${CTL[@]}" stats --json | python3 -c '
import json, sys
m = json.load(sys.stdin).get("media", {})
print(m.get("packets_from_a", 0), m.get("packets_from_b", 0), sum(m.get("drops", {}).values()))')
echo "media relayed by sbcd: $m_ab RTP packets caller->callee, $m_ba callee->caller (echoed); $m_drop dropped (e.g. echoes arriving after the hang-up)"

step "stopping sbcd (SIGTERM)"
sbcd_stop && echo "sbcd exited 0"
