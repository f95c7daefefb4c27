#!/usr/bin/env bash
# The demo: installs what is missing, builds, and runs real calls through sbcd. A namespace
# "sbc-demo-hosts" holds every SIP endpoint (scripts/lib/sipp.sh): SIPp callers at
# 198.18.0.2, region1 peers 198.18.1.11 and .12, region2 peers 198.18.2.21 and .22 (SIPp
# callees, scripts/sipp/uas.xml), joined by a veth to sbcd at 198.18.0.1 (config
# scripts/demo/sbc.toml). sbcd learns the peers from DNS SRV records served by a dnsmasq
# the demo starts on 127.0.0.1:15353. It pings sbcd, places calls at DEMO_RATE calls/s (default 20) for
# DEMO_SECONDS (default 20) with 1 s of talk each, kills peer 198.18.1.12 (SIGKILL) half way,
# shows what the operator sees (sbcctl status, peers, calls, stats, calls --media, /metrics)
# and a summary: calls made, retried (sbcd's counters), failed (0 expected), apart from those
# the calls that were ringing or up on the killed peer when it died, and the RTP packets sbcd
# relayed per direction (each call streams 1 s of G.711 that the callee echoes). Removes everything on exit, also on failure or Ctrl-C. Runs
# without a terminal (CI). Needs root (namespaces, veth, raw sockets) and SIPp.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "demo.sh: run as root (it creates network namespaces)" >&2; exit 1; }
RATE=${DEMO_RATE:-20}
SECS=${DEMO_SECONDS:-20}
scripts/build.sh >/dev/null
command -v sipp >/dev/null || { echo "demo.sh: sipp not found (apt-get install sip-tester)" >&2; exit 1; }

TOPO_ID=demo
source scripts/lib/sipp.sh
# A demo killed hard last time may have left its namespaces and veths: remove them first.
for ns in sbc-demo-hosts sbc-demo-core; do ip netns del "$ns" 2>/dev/null || true; done
for l in sdemohosta sdemocorea; do ip link del "$l" 2>/dev/null || true; done
# DEMO_KEEP=DIR keeps the SIPp and sbcd logs there.
demo_exit() { if [ -n "${DEMO_KEEP:-}" ] && [ -n "${dir:-}" ]; then rm -rf "$DEMO_KEEP"; cp -r "$dir" "$DEMO_KEEP" || true; fi; topo_cleanup; }
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

step "topology: namespace sbc-demo-hosts (caller 198.18.0.2, peers 198.18.1.11 .12, 198.18.2.21 .22) <-veth-> sbcd (198.18.0.1)"
sipp_topology sbcd
dir=$(topo_dir)
step "DNS: dnsmasq on 127.0.0.1:15353 serving _sip._udp.region1.demo and _sip._udp.region2.demo (TTL 5 s)"
command -v dnsmasq >/dev/null || { echo "demo.sh: dnsmasq not found (apt-get install dnsmasq-base)" >&2; exit 1; }
dnsmasq --no-daemon --conf-file=/dev/null --no-resolv --no-hosts --port=15353 --listen-address=127.0.0.1 \
  --bind-interfaces --local-ttl=5 \
  --srv-host=_sip._udp.region1.demo,a.region1.demo,5060,10,50 --srv-host=_sip._udp.region1.demo,b.region1.demo,5060,10,50 \
  --srv-host=_sip._udp.region2.demo,a.region2.demo,5060,10,100 --srv-host=_sip._udp.region2.demo,b.region2.demo,5060,10,100 \
  --host-record=a.region1.demo,198.18.1.11 --host-record=b.region1.demo,198.18.1.12 \
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

step "ping 198.18.0.1 from the caller"
ip netns exec "$SIPP_NS_HOSTS" ping -c 5 -i 0.2 -W 2 -I "$SIPP_CALLER" "$SIPP_PROXY_ADDR"

step "SIPp callees on the four peers (scripts/sipp/uas.xml: 100, 180, 200 after 20 ms; RTP echoed back)"
declare -A peer_pid peer_wrap
for a in "${SIPP_REGION1[@]}" "${SIPP_REGION2[@]}"; do
  sipp_uas_start "$a" uas.xml "$dir/peer-$a" $((SECS + 60)) -rtp_echo -mi "$a" -mp 6000
  peer_pid[$a]=$SIPP_PID
  peer_wrap[$a]=$SIPP_WRAP_PID
  echo "peer $a: SIPp pid $SIPP_PID"
done

calls=$((RATE * SECS))
step "calls: $RATE calls/s for $SECS s ($calls calls, 1 s of talk each); peer 198.18.1.12 is killed after $((SECS / 2)) s"
# Each call streams 1 s of G.711 (scripts/sipp/uac_media.xml plays media.pcmu from its
# directory) to sbcd's media port; the callee echoes it back through sbcd.
mkdir -p "$dir/caller"
python3 -c 'import sys; open(sys.argv[1], "wb").write((b"\x80" * 10 + b"\x00" * 10) * 400)' "$dir/caller/media.pcmu"
sipp_uac_start "$dir/caller" "$RATE" "$calls" $((SECS + 40)) uac_media.xml -s 1000 -d 1200 -mi "$SIPP_CALLER" -mp 6000
sleep $((SECS / 2))
kill -KILL "${peer_pid[198.18.1.12]}"
wait "${peer_wrap[198.18.1.12]}" 2>/dev/null || true   # (no "Killed" job notice)
echo "$(date +%T) killed the SIPp of peer 198.18.1.12 (pid ${peer_pid[198.18.1.12]}): its port is closed now"
rc=0
sipp_uac_wait || rc=$?
[ "$rc" -le 1 ] || { tail -n 20 "$dir/caller/sipp.out" >&2; echo "demo.sh: the caller SIPp exited $rc" >&2; exit 1; }

read -r ok failed < <(sipp_counts "$dir/caller")
read -r p50 p99 n < <(sipp_rtt_pcts "$dir/caller")
# Where the failed calls failed (SIPp's error log): waiting for the 200 after a 180
# (uac_media.xml step 3: the call rang on the peer when it died, and a call that rang is never
# retried), or waiting for the answer to the BYE (step 9: the call was up on the killed peer).
errs=$(cat "$dir"/caller/*_errors.log 2>/dev/null || true)
rang=$(grep -c 'receive timeout on message sbc uac media:3 ' <<<"$errs" || true)
bye_timeout=$(grep -c 'receive timeout on message sbc uac media:9 ' <<<"$errs" || true)
lost=$(( $(sipp_bye_lost "$dir/caller" || true) + bye_timeout ))
new_failed=$((failed - bye_timeout))
r_code=$(sip_counter retries_code); r_silence=$(sip_counter retries_timeout); r_icmp=$(sip_counter retries_icmp)
retried=$((r_code + r_silence + r_icmp))

step "sbcctl status"
"${CTL[@]}" status
step "sbcctl peers"
"${CTL[@]}" peers || true
step "sbcctl calls"
"${CTL[@]}" calls || true
step "sbcctl stats"
"${CTL[@]}" stats
step "sbcctl calls --media (calls still up: those lost with the killed peer)"
"${CTL[@]}" calls --media | head -n 24 || true
step "curl http://127.0.0.1:19090/metrics (SIP lines)"
curl -sf http://127.0.0.1:19090/metrics | grep -v '^#' | grep -iE 'sip|peer|call' | head -n 20 || true

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
