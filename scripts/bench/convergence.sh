#!/usr/bin/env bash
# Failover convergence: how long after a peer dies does sbcd still send it new calls?
#
# What runs (per mode, in its own topology from tests/e2e/sip_common.sh: sbcd on a veth with
# net_af_packet, SIPp in a namespace): region1's peers 198.18.1.11 (priority 10, the victim)
# and .12 (priority 20) answer calls (scripts/sipp/uas.xml, which also answers OPTIONS); a
# SIPp caller offers RATE calls/s for SECONDS_PER_RUN s. DEATH_AT s in, the victim dies:
#   DEATH=silent (default)  its address is removed and its SIPp killed: nothing answers,
#                           not even ICMP (a host or a link that is gone);
#   DEATH=icmp              only its SIPp is killed: the kernel answers port unreachable.
# tcpdump on the namespace side records every datagram sbcd sends to the victim.
#
# Modes
#   options   probe = "options": OPTIONS every 500 ms (timeout 400 ms), down after 2 failed
#             probes; passive_down_after = 100 (passive detection out of the way).
#   passive   probe = "none": down after passive_down_after = 3 failed calls (no-response timer
#             1000 ms, or ICMP at once); retest interval 10 min (no trial call in the run).
#
# What is reported (one line per mode)
#   convergence: mode=M death=D rate=R converge_ms=X calls_to_dead=N calls_failed=F
#   converge_ms: first INVITE of the last new call sbcd sent to the dead peer (by Call-ID,
#     retransmissions are not new calls) minus the moment of death; 0 when none was sent.
#   healthy_peer_down: times the other peer (.12) was marked down during the run; when it is
#     down too, calls go to every peer marked down (all_down_tried), the victim included,
#     and converge_ms grows: a run with healthy_peer_down > 0 measured a noisy machine.
#   detect_ms: when `sbcctl peers` (polled every 100 ms) first showed the victim not up.
#   calls_to_dead: new calls sent to the peer after its death (each was then retried on .12).
#   calls_failed: calls the caller saw fail (SIPp's count). New calls do not fail (.12 takes
#     them); the calls up on the victim when it dies lose their BYE (sbcd answers it 408, the
#     caller's scenario ends them as "bye_lost", not failed).
#   delayed_over_250ms: calls whose setup (INVITE to 200, SIPp's rtd) took more than 250 ms
#     over the run's median setup: the calls the death delayed beyond what a caller notices;
#     max_delay_ms the largest such excess.
#   timer_ms: the no-answer timer in force (sbcctl peers) for the victim just before its
#     death / for the healthy peer at the end ("na": none learned, no_response_ms applies).
#   Each mode runs RUNS times; the line printed is the median run, with every run's figure.
#
# Usage (root): scripts/bench/convergence.sh [options|passive ...]
#   env: SBC_BUILD (build dir, default build), RATE (50), SECONDS_PER_RUN (12), DEATH_AT (4),
#        DEATH (silent|icmp), RUNS (3), VICTIM_SCENARIO (the victim's SIPp scenario, default
#        uas.xml: 20 ms of ringing, so about one call per run is ringing on the victim when it
#        dies and ends with it; uas_answer.xml answers at once: no such call)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RATE=${RATE:-50}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-12}
DEATH_AT=${DEATH_AT:-4}
DEATH=${DEATH:-silent}
VICTIM_SCENARIO=${VICTIM_SCENARIO:-uas.xml}
export VICTIM_SCENARIO
RUNS=${RUNS:-3}

if [ "$(id -u)" -ne 0 ]; then
  echo "convergence.sh: needs root (namespaces, DPDK EAL)" >&2
  exit 1
fi
case "$DEATH" in silent|icmp) ;; *) echo "convergence.sh: DEATH is silent or icmp" >&2; exit 2;; esac

# One mode in a child process: sip_common.sh installs its own cleanup trap.
if [ "${1:-}" = --one ]; then
  mode=$2
  case "$mode" in
    options)
      SIP_PROBE=options
      SIP_PASSIVE_DOWN_AFTER=100
      SIP_HEALTH=$'options_interval_ms = 500\noptions_timeout_ms = 400\ndown_after = 2\nup_after = 2' ;;
    passive)
      SIP_PROBE=none
      SIP_PASSIVE_DOWN_AFTER=3
      SIP_HEALTH='retest_interval_ms = 600000' ;;
    *) echo "convergence.sh: mode options or passive, not '$mode'" >&2; exit 2 ;;
  esac
  export SIP_PROBE SIP_PASSIVE_DOWN_AFTER SIP_HEALTH
  source "$ROOT/tests/e2e/sip_common.sh"
  # peer_timer NAME: the no-answer timer in force for peer NAME ("na" when none is learned).
  peer_timer() {
    ctl peers --json | python3 -c '
import json, sys
for p in json.load(sys.stdin)["sip"]["peers"]:
    if p["name"] == sys.argv[1]: print(p.get("no_response_ms") or "na"); break
else: print("na")' "$1" 2>/dev/null || echo na
  }
  sip_up
  VICTIM=198.18.1.11
  # No message trace: SIPp on this shared machine must answer probes in time.
  sipp_uas_start "$VICTIM" "$VICTIM_SCENARIO" "$DIR/peer-$VICTIM" "$((SECONDS_PER_RUN + 30))"
  victim_pid=$SIPP_PID
  sipp_uas_start 198.18.1.12 uas.xml "$DIR/peer-198.18.1.12" "$((SECONDS_PER_RUN + 30))"
  # Both peers up before the run (probes may have taken them down before SIPp listened).
  for _ in $(seq 1 200); do
    ctl peers | grep -Eq "^region1/$VICTIM:5060 +region1 +[^ ]+ +up " &&
      ctl peers | grep -Eq "^region1/198.18.1.12:5060 +region1 +[^ ]+ +up " && break
    sleep 0.1
  done
  ctl peers | grep -Eq "^region1/$VICTIM:5060 +region1 +[^ ]+ +up " ||
    fail "the victim is not up 20 s after start: $(ctl peers; curl -s "http://$HTTP/metrics" | grep -E '^sbc_(probe|peer_probe)')"
  log_lines=$(wc -l <"$DIR/sbcd.log")
  pcap=$DIR/to_victim.pcap
  ip netns exec "$SIPP_NS_HOSTS" tcpdump -i "$HOSTS_IF" -U -n -s 2048 -w "$pcap" \
    "udp and dst host $VICTIM and dst port 5060" 2>"$DIR/tcpdump.log" &
  tcpdump_pid=$!
  topo_track "$tcpdump_pid"
  for _ in $(seq 1 50); do grep -q "listening on" "$DIR/tcpdump.log" && break; sleep 0.1; done
  sipp_uac_start "$DIR/callers" "$RATE" "$((RATE * SECONDS_PER_RUN))" "$((SECONDS_PER_RUN + 40))" uac.xml \
    -s 1000 -d 100
  caller_wrap=$SIPP_WRAP_PID
  # The victim's state as sbcctl shows it, every 100 ms (bounded), to tell detection from
  # the calls that were already on their way.
  ( for _ in $(seq 1 $(( (SECONDS_PER_RUN + 5) * 10 ))); do
      st=$(ctl peers 2>/dev/null | awk -v p="region1/$VICTIM:5060" '$1 == p { print $4 }')
      echo "$(date +%s.%N) ${st:-none}"
      sleep 0.1
    done ) >"$DIR/states" 2>/dev/null &
  poll_pid=$!
  topo_track "$poll_pid"
  sleep "$DEATH_AT"
  victim_timer=$(peer_timer "region1/$VICTIM:5060")
  [ "$DEATH" = silent ] && ip -n "$SIPP_NS_HOSTS" addr del "$VICTIM/16" dev "$HOSTS_IF"
  kill -KILL "$victim_pid"
  t_death=$(date +%s.%N)
  wait "$caller_wrap" || true
  sleep 1
  kill "$poll_pid" 2>/dev/null || true
  kill -INT "$tcpdump_pid" 2>/dev/null || true
  wait "$tcpdump_pid" 2>/dev/null || true
  read -r ok failed < <(sipp_counts "$DIR/callers")
  healthy_timer=$(peer_timer "region1/198.18.1.12:5060")
  # What health did, for the log of this run; flips of the healthy peer during the run.
  { ctl peers; ctl stats; grep "peer " "$DIR/sbcd.log"; curl -s "http://$HTTP/metrics" | grep -E "^sbc_(probe|peer_probe)"; } >&2 || true
  flaps=$(tail -n +"$((log_lines + 1))" "$DIR/sbcd.log" | grep -c "peer region1/198.18.1.12:5060: up -> down" || true)
  [ "${failed:-0}" -eq 0 ] || { echo "caller errors (last lines):" >&2; tail -n 40 "$DIR"/callers/*_errors.log >&2 || true; }
  python3 - "$pcap" "$t_death" "$mode" "$DEATH" "$RATE" "$failed" "$DIR/states" "$flaps" "$(sipp_rtt_csv "$DIR/callers")" \
    "$victim_timer/$healthy_timer" <<'PY'
import struct, sys
path, t_death, mode, death, rate, failed, states, flaps, rtt, timers = sys.argv[1], float(sys.argv[2]), *sys.argv[3:]
setups = []
if rtt:
    for line in open(rtt):
        f = line.strip().split(';')
        try:
            setups.append(float(f[1]))
        except (IndexError, ValueError):
            pass  # the header
setups.sort()
normal = setups[len(setups) // 2] if setups else 0.0
excess = [s - normal for s in setups if s - normal > 250]
detect = "na"
for line in open(states):
    t, st = line.split()
    if float(t) >= t_death and st != "up":
        detect = f"{(float(t) - t_death) * 1000:.0f}"
        break
data = open(path, 'rb').read()
magic = struct.unpack('<I', data[:4])[0]
endian, nano = ('<', False) if magic in (0xa1b2c3d4, 0xa1b23c4d) else ('>', False)
nano = magic in (0xa1b23c4d, 0x4d3cb2a1)
link = struct.unpack(endian + 'I', data[20:24])[0]
first_seen = {}
off = 24
while off + 16 <= len(data):
    ts, frac, incl, _ = struct.unpack(endian + 'IIII', data[off:off + 16])
    pkt = data[off + 16:off + 16 + incl]
    off += 16 + incl
    t = ts + frac / (1e9 if nano else 1e6)
    l2 = 14 if link == 1 else 16  # Ethernet, or Linux cooked capture
    if link == 1 and pkt[12:14] == b'\x81\x00': l2 = 18
    ihl = (pkt[l2] & 0x0f) * 4
    payload = pkt[l2 + ihl + 8:]
    if not payload.startswith(b'INVITE '): continue
    for line in payload.split(b'\r\n'):
        if line.lower().startswith(b'call-id:') or line.lower().startswith(b'i:'):
            cid = line.split(b':', 1)[1].strip()
            first_seen.setdefault(cid, t)
            break
after = [t for t in first_seen.values() if t >= t_death]
conv = (max(after) - t_death) * 1000 if after else 0.0
print(f"convergence: mode={mode} death={death} rate={rate} converge_ms={conv:.0f} detect_ms={detect} "
      f"calls_to_dead={len(after)} calls_failed={failed} healthy_peer_down={flaps} "
      f"delayed_over_250ms={len(excess)} max_delay_ms={max(excess, default=0):.0f} median_setup_ms={normal:.1f} "
      f"timer_ms={timers}")
PY
  exit 0
fi

modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(options passive)
# KEEP_LOGS=DIR keeps every run's log (sbcd's health lines, sbcctl peers and stats) there.
logs=${KEEP_LOGS:-$(mktemp -d /tmp/sbc-convergence.XXXXXX)}
mkdir -p "$logs"
[ -n "${KEEP_LOGS:-}" ] || trap 'rm -rf "$logs"' EXIT
for m in "${modes[@]}"; do
  : >"$logs/$m.lines"
  for r in $(seq 1 "$RUNS"); do
    "$0" --one "$m" 2>"$logs/$m.$r.log" | grep '^convergence:' | sed "s/^convergence:/run $r:/" | tee -a "$logs/$m.lines" ||
      { echo "convergence.sh: mode $m run $r failed:" >&2; tail -n 20 "$logs/$m.$r.log" >&2; exit 1; }
  done
  # One line per mode: the median run by converge_ms.
  python3 - "$logs/$m.lines" <<'PY'
import re, sys
runs = [dict(re.findall(r'(\w+)=(\S+)', l)) for l in open(sys.argv[1]) if 'converge_ms=' in l]
runs.sort(key=lambda d: float(d['converge_ms']))
m = runs[len(runs) // 2]
c = [r['converge_ms'] for r in runs]
d = [r['delayed_over_250ms'] for r in runs]
print(f"convergence: mode={m['mode']} death={m['death']} rate={m['rate']} converge_ms={m['converge_ms']} "
      f"(runs: {' '.join(c)}) detect_ms={m['detect_ms']} calls_to_dead={m['calls_to_dead']} calls_failed={m['calls_failed']} "
      f"healthy_peer_down={m['healthy_peer_down']} (runs: {' '.join(r['healthy_peer_down'] for r in runs)}) "
      f"delayed_over_250ms={m['delayed_over_250ms']} (runs: {' '.join(d)}) max_delay_ms={m['max_delay_ms']} "
      f"timer_ms={m['timer_ms']}")
PY
done
