#!/usr/bin/env bash
# vs_kamailio.sh: the same SIPp callers and callees (scripts/sipp, one namespace, see
# scripts/lib/sipp.sh) through sbcd and through Kamailio 5.6 (dispatcher + tm, configured
# with sbc's retry rules: scripts/bench/kamailio/kamailio.cfg), on this machine, one core
# for the proxy (Kamailio pinned with taskset; SIPp pinned to the other CPU).
#
# For each target:
#  1. steady run: RATE calls/s for SECONDS s (uac.xml -> uas.xml, hold HOLD_MS) measuring
#     CPU time per completed call (Kamailio: utime+stime of all its processes from /proc,
#     after minus before; sbcd: the worker's busy cycles / TSC Hz, sbcd_cpu_seconds),
#     failed calls, setup latency p50/p99 (INVITE sent -> 200 received, SIPp -trace_rtt).
#  2. failover run: FO_RATE calls/s for FO_SECONDS s with both region1 peers up; the SIPp
#     of peer 198.18.1.12 is killed (SIGKILL) half way: failed new calls, calls delayed by
#     the failover and by how much, established calls lost on the dead peer (not failures
#     of the proxy: their callee is gone). Per-second completed/failed calls and setup
#     latency go to a CSV and to docs/img/failover-<target>.png (kill moment marked).
#  3. (sbcd) the floor under its steady run: the same number of frames, of the same mean size,
#     received and sent on the same veth and af_packet path without SIP work (ICMP echoes from
#     the caller's namespace at the steady run's receive rate; floor_run below), per call.
# Last line: vs_kamailio: sbc_us_per_call=X kamailio_us_per_call=Y ratio=Z
#            sbc_floor_us_per_call=F ratio_above_floor=Y/(X-F)
#            sbc_failover_failed=A kamailio_failover_failed=B    ("na": target not run)
#
# Needs: root (network namespaces), iproute2, ethtool, taskset, SIPp 3.6 (sip-tester),
# kamailio 5.6 (Debian kamailio), python3-matplotlib (/usr/bin/python3), and for sbcd
# build/sbcd and build/sbcctl. Every run is bounded (-m calls and a timeout); everything
# started is killed by PID and the namespaces are removed on exit, also on failure.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TARGET=both
RATE=300
SECONDS_RUN=60
HOLD_MS=1000
FO_RATE=50
FO_SECONDS=30
BUILD="$ROOT/build"
OUT=
PROXY_CPU=1
SIPP_CPU=0
PLOTS="$ROOT/docs/img"

usage() {
  cat <<EOF
usage: $0 [--target kamailio|sbcd|both] [--rate N] [--seconds N] [options]

Compares the CPU cost per call, failed calls, setup latency and failover behaviour of
sbcd and Kamailio 5.6 with the same SIPp callers and callees (see the header of this file).

  --target T             kamailio, sbcd or both (default $TARGET)
  --rate N               steady-run offered load, calls/s (default $RATE)
  --seconds N            steady-run duration, s (default $SECONDS_RUN)
  --hold-ms N            call duration between ACK and BYE, ms (default $HOLD_MS)
  --failover-rate N      failover-run load, calls/s (default $FO_RATE)
  --failover-seconds N   failover-run duration, s; the peer dies half way (default $FO_SECONDS)
  --build DIR            where sbcd and sbcctl are (default build/)
  --out DIR              keep SIPp/Kamailio logs, CSVs here (default: a new folder in /tmp)
  --plots DIR            where failover-<target>.png go (default docs/img)
  --proxy-cpu N          CPU for the proxy (default $PROXY_CPU); SIPp gets --sipp-cpu ($SIPP_CPU)
  -h, --help             this text

environment: FLOOR_SECONDS (default 20), how long the floor run after sbcd's steady run
pings it; SBCD_DEVICE_EXTRA, appended to sbcd's net_af_packet device (",qdisc_bypass=1").
EOF
}

while [ $# -gt 0 ]; do
  case "$1" in
    --target) TARGET=$2; shift 2;;
    --rate) RATE=$2; shift 2;;
    --seconds) SECONDS_RUN=$2; shift 2;;
    --hold-ms) HOLD_MS=$2; shift 2;;
    --failover-rate) FO_RATE=$2; shift 2;;
    --failover-seconds) FO_SECONDS=$2; shift 2;;
    --build) BUILD=$2; shift 2;;
    --out) OUT=$2; shift 2;;
    --plots) PLOTS=$2; shift 2;;
    --proxy-cpu) PROXY_CPU=$2; shift 2;;
    --sipp-cpu) SIPP_CPU=$2; shift 2;;
    -h|--help) usage; exit 0;;
    *) echo "vs_kamailio: unknown argument '$1' (see --help)" >&2; exit 2;;
  esac
done
case "$TARGET" in kamailio|sbcd|both) ;; *) echo "vs_kamailio: --target kamailio, sbcd or both" >&2; exit 2;; esac
for v in RATE SECONDS_RUN HOLD_MS FO_RATE FO_SECONDS; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "vs_kamailio: $v must be a positive integer" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "vs_kamailio: needs root (network namespaces)" >&2; exit 2; }
command -v sipp >/dev/null || { echo "vs_kamailio: sipp not found (apt-get install sip-tester)" >&2; exit 2; }

# shellcheck source=../lib/sipp.sh
. "$ROOT/scripts/lib/sipp.sh"
command -v taskset >/dev/null && SIPP_CPUS=$SIPP_CPU
export SIPP_CPUS
[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/vs_kamailio.XXXXXX)
mkdir -p "$OUT" "$PLOTS"
OUT=$(readlink -f "$OUT")

# Kamailio's fastest memory managers: Debian's default (qm) is the debugging one and costs
# ~15 % more CPU per call here. Override with KAMAILIO_EXTRA_ARGS="" for the default.
export KAMAILIO_EXTRA_ARGS=${KAMAILIO_EXTRA_ARGS--x fm -X fm}

SBCD_SOCK=
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "${KAMAILIO_PID:-}" ]; then kamailio_stop || true; fi
  if [ -n "${SBCD_PID:-}" ]; then sbcd_stop || true; fi
  topo_cleanup
  exit $rc
}
trap cleanup EXIT
trap 'stop_sub 130' INT
trap 'stop_sub 143' TERM

log() { printf 'vs_kamailio: %s\n' "$*" >&2; }

# --- sbcd ----------------------------------------------------------------------------
# sbcd_write_config FILE IFACE SOCK: sbcd config for the benchmark topology, the proxy rules
# of scripts/bench/kamailio/kamailio.cfg: trunk 198.18.0.1:5060 for the caller, region1 =
# 198.18.1.11, .12 (round robin, like the dispatcher's set 1), region2 = 198.18.2.21, .22,
# retry on 408 503 504, no-response timer 1000 ms, no retry after ringing.
sbcd_write_config() {
  local file=$1 iface=$2 sock=$3
  cat >"$file" <<EOF
$(sbc_conf_head vs-kamailio 1 "$sock" "")

[[interface]]
name = "hosts"
device = "net_af_packet0,iface=$iface${SBCD_DEVICE_EXTRA:-}"
address = "$SIPP_PROXY_ADDR/16"
vlan = 0
media_ports = "20000-59999"

[[trunk]]
name = "caller"
interface = "hosts"
port = 5060
allow = ["$SIPP_CALLER/32"]

[[region]]
name = "region1"
peers = [ { address = "${SIPP_REGION1[0]}:5060" }, { address = "${SIPP_REGION1[1]}:5060" } ]
probe = "none"

[[region]]
name = "region2"
peers = [ { address = "${SIPP_REGION2[0]}:5060" }, { address = "${SIPP_REGION2[1]}:5060" } ]
probe = "none"

[[peer_group]]
name = "peers"
regions = ["region1", "region2"]
selector = "round_robin"

[[route]]
name = "default"
peer_group = "peers"

[retry]
codes = [408, 503, 504]
no_response_ms = 1000
after_provisional = false
max_attempts = 4

[health]
passive_down_after = 3
EOF
}

# sbcd_cpu_seconds SOCK: seconds the worker(s) spent busy: .total.busy_cycles / .tsc_hz of
# `sbcctl stats --json` (busy-polling makes the process's own CPU time useless).
sbcd_cpu_seconds() {
  { "$BUILD/sbcctl" --socket "$1" --json stats 2>/dev/null || "$BUILD/sbcctl" --socket "$1" stats --json; } |
    /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
print("%.6f" % (d["total"]["busy_cycles"] / d["tsc_hz"]))'
}

# sbcd_io SOCK: "BUSY_S RX_PACKETS TX_PACKETS RX_BYTES TX_BYTES" of the worker(s), from
# `sbcctl stats --json` (.total and .tsc_hz).
sbcd_io() {
  "$BUILD/sbcctl" --socket "$1" stats --json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin); t = d["total"]
print("%.6f %d %d %d %d" % (t["busy_cycles"] / d["tsc_hz"], t["rx_packets"], t["tx_packets"], t["rx_bytes"], t["tx_bytes"]))'
}

# floor_run IO0 IO1 SECONDS CALLS DIR: the veth and af_packet floor under the steady run just
# measured (sbcd_io before and after it, its length and completed calls). The caller's
# namespace pings sbcd (ICMP echo: received, answered and sent on the same veth and af_packet
# path, without SIP work) at the steady run's receive rate, with its mean frame size, for
# FLOOR_SECONDS. Floor per call = busy time per echo (one frame in, one out) x (frames in +
# frames out per call) / 2. Sets FLOOR_US_PER_CALL; logs and appends to summary.txt.
FLOOR_SECONDS=${FLOOR_SECONDS:-20}
FLOOR_US_PER_CALL=na
floor_run() {
  local io0=$1 io1=$2 secs=$3 calls=$4 dir=$5 a b pps size interval count f0 f1 line
  read -r -a a <<<"$io0"; read -r -a b <<<"$io1"
  local rx=$((b[1] - a[1])) tx=$((b[2] - a[2])) rxb=$((b[3] - a[3]))
  [ "$rx" -gt 0 ] && [ "$calls" -gt 0 ] || { log "sbcd: floor: nothing received in the steady run"; return 0; }
  pps=$((rx / secs)); [ "$pps" -gt 0 ] || pps=1
  # ICMP payload that gives the steady run's mean received frame (Ethernet 14 + IPv4 20 + ICMP 8).
  size=$((rxb / rx - 42)); [ "$size" -ge 16 ] || size=16
  interval=$(awk -v p="$pps" 'BEGIN { printf "%.6f", 1 / p }')
  count=$((pps * FLOOR_SECONDS))
  log "sbcd: floor: $count echoes of $size bytes at $pps/s (the steady run's receive rate and mean frame)"
  f0=$(sbcd_io "$SBCD_SOCK")
  timeout $((FLOOR_SECONDS + 30)) ip netns exec "$SIPP_NS_HOSTS" ping -q -n -i "$interval" -c "$count" -s "$size" -W 1 \
    "$SIPP_PROXY_ADDR" >"$dir/floor-ping.txt" 2>&1 || true
  f1=$(sbcd_io "$SBCD_SOCK")
  line=$(/usr/bin/python3 - "$f0" "$f1" "$rx" "$tx" "$calls" "$(awk -v a="${a[0]}" -v b="${b[0]}" 'BEGIN { print b - a }')" <<'PY'
import sys
f0 = [float(x) for x in sys.argv[1].split()]; f1 = [float(x) for x in sys.argv[2].split()]
rx, tx, calls, cpu = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
echoes = min(f1[1] - f0[1], f1[2] - f0[2])
if echoes <= 0:
    print("na na na na na"); sys.exit(0)
us_per_echo = (f1[0] - f0[0]) * 1e6 / echoes
floor = us_per_echo * (rx + tx) / 2 / calls
sbc = cpu * 1e6 / calls
print("%d %.2f %.1f %.1f %.1f %.1f" % (echoes, us_per_echo, rx / calls, tx / calls, floor, sbc - floor))
PY
)
  local echoes us_echo rxc txc floor above
  read -r echoes us_echo rxc txc floor above <<<"$line"
  FLOOR_US_PER_CALL=$floor
  log "sbcd: floor: echoes=$echoes us_per_echo=$us_echo frames_per_call in=$rxc out=$txc floor_us_per_call=$floor above_floor_us_per_call=$above"
  echo "sbcd floor echoes=$echoes us_per_echo=$us_echo rx_per_call=$rxc tx_per_call=$txc floor_us_per_call=$floor above_floor_us_per_call=$above" >>"$OUT/summary.txt"
}

# --- one proxy under test ------------------------------------------------------------
# proxy_up TARGET DIR: topology for TARGET, then the proxy.
proxy_up() {
  local target=$1 dir=$2
  mkdir -p "$dir"
  if [ "$target" = kamailio ]; then
    sipp_topology kamailio
    kamailio_start "$ROOT/scripts/bench/kamailio/kamailio.cfg" "$dir/kamailio" "$PROXY_CPU"
  else
    [ -x "$BUILD/sbcd" ] && [ -x "$BUILD/sbcctl" ] || { log "no $BUILD/sbcd or sbcctl: build first"; return 1; }
    sipp_topology sbcd
    SBCD_SOCK="$dir/sbcd.sock"
    sbcd_write_config "$dir/sbc.toml" "$SIPP_PROXY_IF" "$SBCD_SOCK"
    sbcd_start "$BUILD" "$dir/sbc.toml" "$dir/sbcd.log"
  fi
}

proxy_down() {
  local target=$1
  if [ "$target" = kamailio ]; then kamailio_stop; else sbcd_stop || true; fi
  topo_cleanup
}

proxy_cpu_seconds() {
  if [ "$1" = kamailio ]; then proc_tree_cpu_seconds "$KAMAILIO_PID"; else sbcd_cpu_seconds "$SBCD_SOCK"; fi
}

# peers_up DIR: uas.xml on the four peers; UAS_PIDS[addr] = sipp PID.
declare -A UAS_PIDS UAS_WRAP_PIDS
peers_up() {
  local dir=$1 max=$2 a
  for a in "${SIPP_REGION1[@]}" "${SIPP_REGION2[@]}"; do
    sipp_uas_start "$a" uas.xml "$dir/uas-$a" "$max"
    UAS_PIDS[$a]=$SIPP_PID
    UAS_WRAP_PIDS[$a]=$SIPP_WRAP_PID
  done
}

# rtt_summary DIR: "P50 P99 MAX SLOW" (ms; SLOW = setups over 500 ms) of the run in DIR.
rtt_summary() {
  local f
  f=$(sipp_rtt_csv "$1")
  [ -n "$f" ] || { echo "na na na 0"; return 0; }
  awk -F';' 'NR > 1 && $2 ~ /^[0-9.]+$/ { print $2 }' "$f" | sort -g | awk '
    { v[NR] = $1; if ($1 > 500) slow++ } END {
      if (NR == 0) { print "na na na 0"; exit }
      i50 = int(0.50 * NR + 0.999999); i99 = int(0.99 * NR + 0.999999)
      printf "%.1f %.1f %.1f %d\n", v[i50], v[i99], v[NR], slow + 0 }'
}

# bye_timeouts DIR: calls whose BYE got no answer at all (uac.xml step 8 timed out): the
# call was up on a peer that died and the proxy forwarded the BYE without answering it
# itself (sbcd: in-dialog requests go on statelessly; Kamailio's tm answers 408 instead,
# which uac.xml counts as bye_lost). SIPp counts these as failed calls; they are lost
# established calls, not failed new calls, so they move to bye_lost.
bye_timeouts() { cat "$1"/*_errors.log 2>/dev/null | grep -o 'receive timeout on message sbc uac:8 ' | wc -l || true; }

declare -A US_PER_CALL FO_FAILED
US_PER_CALL[sbcd]=na; US_PER_CALL[kamailio]=na; FO_FAILED[sbcd]=na; FO_FAILED[kamailio]=na

steady_run() {
  local target=$1 dir="$OUT/$1/steady" calls rc=0 cpu0 cpu1 split0= split1= ok failed p50 p99 max slow lost bt io0= io1= t0 secs
  calls=$((RATE * SECONDS_RUN))
  log "$target: steady run, $RATE calls/s for $SECONDS_RUN s ($calls calls, hold $HOLD_MS ms)"
  proxy_up "$target" "$dir"
  peers_up "$dir" $((SECONDS_RUN + 120))
  sleep 1
  cpu0=$(proxy_cpu_seconds "$target")
  [ "$target" != kamailio ] || split0=$(proc_tree_cpu_split "$KAMAILIO_PID")
  [ "$target" = kamailio ] || io0=$(sbcd_io "$SBCD_SOCK")
  t0=$(date +%s.%N)
  sipp_uac_run "$dir/uac" "$RATE" "$calls" $((SECONDS_RUN + HOLD_MS / 1000 + 60)) uac.xml \
    -s 1000 -d "$HOLD_MS" -l $((RATE * (HOLD_MS / 1000 + 3))) || rc=$?
  cpu1=$(proxy_cpu_seconds "$target")
  [ "$target" = kamailio ] || io1=$(sbcd_io "$SBCD_SOCK")
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%d", b - a + 0.5 }')
  if [ "$target" = kamailio ]; then
    split1=$(proc_tree_cpu_split "$KAMAILIO_PID")
    log "kamailio: CPU user/system s: $(awk -v a="$split0" -v b="$split1" 'BEGIN { split(a, x, " "); split(b, y, " "); printf "%.2f / %.2f", y[1] - x[1], y[2] - x[2] }')"
  fi
  read -r ok failed < <(sipp_counts "$dir/uac")
  read -r p50 p99 max slow < <(rtt_summary "$dir/uac")
  lost=$(sipp_bye_lost "$dir/uac" || true)
  bt=$(bye_timeouts "$dir/uac"); failed=$((failed - bt)); lost=$((lost + bt))
  [ "$target" = kamailio ] || floor_run "$io0" "$io1" "$secs" "$ok" "$dir"
  proxy_down "$target"
  [ "$rc" -le 1 ] || log "$target: SIPp exited with $rc (see $dir/uac/sipp.out)"
  if [ "$ok" -gt 0 ]; then
    US_PER_CALL[$target]=$(awk -v a="$cpu0" -v b="$cpu1" -v n="$ok" 'BEGIN { printf "%.1f", (b - a) * 1e6 / n }')
  fi
  log "$target: steady: completed=$ok failed=$failed bye_lost=$lost cpu_s=$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN{printf "%.2f", b-a}') us_per_call=${US_PER_CALL[$target]} setup_ms p50=$p50 p99=$p99 max=$max"
  echo "$target steady rate=$RATE seconds=$SECONDS_RUN completed=$ok failed=$failed bye_lost=$lost us_per_call=${US_PER_CALL[$target]} p50_ms=$p50 p99_ms=$p99 max_ms=$max" >>"$OUT/summary.txt"
}

failover_run() {
  local target=$1 dir="$OUT/$1/failover" calls rc=0 t0 tk kill_at ok failed p50 p99 max slow lost rang bt
  calls=$((FO_RATE * FO_SECONDS))
  log "$target: failover run, $FO_RATE calls/s for $FO_SECONDS s, peer 198.18.1.12 killed at $((FO_SECONDS / 2)) s"
  proxy_up "$target" "$dir"
  peers_up "$dir" $((FO_SECONDS + 120))
  sleep 1
  sipp_uac_start "$dir/uac" "$FO_RATE" "$calls" $((FO_SECONDS + HOLD_MS / 1000 + 60)) uac.xml \
    -s 1000 -d "$HOLD_MS"
  t0=$(date +%s.%N)
  sleep $((FO_SECONDS / 2))
  kill -KILL "${UAS_PIDS[198.18.1.12]}"
  tk=$(date +%s.%N)
  wait "${UAS_WRAP_PIDS[198.18.1.12]}" 2>/dev/null || true
  kill_at=$(awk -v a="$t0" -v b="$tk" 'BEGIN { printf "%.2f", b - a }')
  log "$target: killed the SIPp of 198.18.1.12 (PID ${UAS_PIDS[198.18.1.12]}) at ${kill_at} s"
  sipp_uac_wait || rc=$?
  read -r ok failed < <(sipp_counts "$dir/uac")
  read -r p50 p99 max slow < <(rtt_summary "$dir/uac")
  lost=$(sipp_bye_lost "$dir/uac" || true)
  # Calls that rang (180) on the peer when it died and were never answered: the rule "no
  # retry after a provisional other than 100" makes them fail (SIPp gives up after its
  # 10 s receive timeout while waiting for the 200, scenario step 3).
  rang=$(cat "$dir"/uac/*_errors.log 2>/dev/null | grep -o 'receive timeout on message sbc uac:3 ' | wc -l || true)
  bt=$(bye_timeouts "$dir/uac"); failed=$((failed - bt)); lost=$((lost + bt))
  proxy_down "$target"
  [ "$rc" -le 1 ] || log "$target: SIPp exited with $rc (see $dir/uac/sipp.out)"
  FO_FAILED[$target]=$failed
  # Per-second series: completed and failed calls (SIPp stats), setup latency (rtt file).
  local csv="$OUT/failover-$target.csv"
  sipp_series "$dir/uac" >"$dir/series.txt" || true
  /usr/bin/python3 - "$dir/series.txt" "$(sipp_rtt_csv "$dir/uac")" "$csv" "$(sipp_stat_csv "$dir/uac")" "$dir"/uac/*_errors.log <<'PY'
import sys, collections, re
series, rtt, out, stat = sys.argv[1:5]
errlogs = sys.argv[5:]
done = collections.Counter(); fail = collections.Counter(); lat = collections.defaultdict(list)
for line in open(series):
    t, s, f = line.split()
    sec = int(float(t))
    done[sec] += int(s); fail[sec] += int(f)
if rtt:
    for i, line in enumerate(open(rtt)):
        p = line.strip().split(';')
        if i == 0 or len(p) < 2:
            continue
        try:
            lat[int(float(p[0]) / 1000.0)].append(float(p[1]))
        except ValueError:
            pass
# Unanswered BYEs (step 8 timeouts) are lost established calls, not failed calls: each moves
# from "failed" to "bye_lost" in the second of the stat line that counted it (the first
# line written at or after the timeout; SIPp's error log and the stat file's CurrentTime
# are both epoch times).
lost = collections.Counter()
written = []  # (epoch the stat line was written, its second)
if stat:
    hdr = None
    for line in open(stat):
        p = line.rstrip('\n').split(';')
        if hdr is None:
            hdr = p; continue
        if len(p) < len(hdr) // 2:
            continue
        try:
            when = float(p[hdr.index('CurrentTime')].split('\t')[-1])
            e = p[hdr.index('ElapsedTime(C)')].split(':')
            sec = int(e[0]) * 3600 + int(e[1]) * 60 + int(e[2])
        except (ValueError, IndexError):
            continue
        written.append((when, sec))
for path in errlogs:
    try:
        text = open(path, errors='replace').read()
    except OSError:
        continue
    for m in re.finditer(r'\t(\d+\.\d+): Call-Id: \S+, receive timeout on message sbc uac:8 ', text):
        x = float(m.group(1))
        sec = next((sec for when, sec in written if when >= x), written[-1][1] if written else 0)
        lost[sec] += 1
last = max(list(done) + list(fail) + list(lat) + list(lost) + [0])
with open(out, 'w') as o:
    o.write('second,completed,failed,setups,setup_ms_median,setup_ms_max,bye_lost\n')
    # failed = SIPp's failed calls less the unanswered BYEs, cumulatively (never negative).
    cf = cl = adj = 0
    for sec in range(last + 1):
        cf += fail[sec]; cl += lost[sec]
        new = max(adj, cf - cl); nf = new - adj; adj = new
        l = sorted(lat.get(sec, []))
        med = l[len(l) // 2] if l else ''
        mx = l[-1] if l else ''
        o.write('%d,%d,%d,%d,%s,%s,%d\n' % (sec, done[sec], nf, len(l), med, mx, lost[sec]))
PY
  plot_failover "$target" "$csv" "$kill_at"
  log "$target: failover: completed=$ok failed=$failed (of which ringing on the dead peer: $rang) delayed_over_500ms=$slow setup_ms p50=$p50 p99=$p99 max=$max bye_lost=$lost (established calls on the dead peer)"
  echo "$target failover rate=$FO_RATE seconds=$FO_SECONDS kill_at_s=$kill_at completed=$ok failed=$failed failed_ringing_on_dead_peer=$rang delayed_over_500ms=$slow p50_ms=$p50 p99_ms=$p99 max_ms=$max bye_lost=$lost" >>"$OUT/summary.txt"
}

plot_failover() {
  local target=$1 csv=$2 kill_at=$3
  /usr/bin/python3 - "$target" "$csv" "$kill_at" "$PLOTS/failover-$target.png" "$FO_RATE" <<'PY' || log "$1: plot failed"
import sys, csv
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
target, path, kill_at, png, rate = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
rows = list(csv.DictReader(open(path)))
t = [int(r['second']) for r in rows]
done = [int(r['completed']) for r in rows]
fail = [int(r['failed']) for r in rows]
lost = [int(r.get('bye_lost') or 0) for r in rows]
setups = [int(r['setups']) for r in rows]
mt = [int(r['second']) for r in rows if r['setup_ms_max']]
med = [float(r['setup_ms_median']) for r in rows if r['setup_ms_max']]
mx = [float(r['setup_ms_max']) for r in rows if r['setup_ms_max']]
name = {'sbcd': 'sbcd', 'kamailio': 'Kamailio 5.6'}.get(target, target)
fig, (a1, a2) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
a1.step(t, setups, where='post', label='calls answered (200 received)', color='tab:green')
a1.step(t, done, where='post', label='calls completed (after BYE)', color='tab:gray', alpha=0.6)
a1.step(t, fail, where='post', label='calls failed', color='tab:red')
if any(lost):
    a1.step(t, lost, where='post', label='calls up on the dead peer, BYE unanswered', color='tab:purple', linestyle=':')
a1.axvline(kill_at, color='black', linestyle='--', label='peer killed (%.1f s)' % kill_at)
a1.set_ylabel('calls per second')
a1.set_title('%s: failover, %s calls/s over two region1 peers, one killed (SIGKILL)' % (name, rate))
a1.legend(loc='lower left'); a1.grid(alpha=0.3)
a2.plot(mt, mx, label='setup time, max in the second', color='tab:orange')
a2.plot(mt, med, label='setup time, median', color='tab:blue')
a2.axvline(kill_at, color='black', linestyle='--')
if mx: a2.set_yscale('log')
a2.set_ylabel('INVITE -> 200 (ms)'); a2.set_xlabel('seconds since the first call')
a2.legend(loc='upper left'); a2.grid(alpha=0.3)
fig.tight_layout(); fig.savefig(png, dpi=100)
PY
  log "$target: plot $PLOTS/failover-$target.png, series $csv"
}

# run_isolated FUNC ARGS: FUNC in a subshell that cleans up its own processes and
# namespaces when it ends, fails or is stopped. It runs in the background and is waited
# for, so that INT/TERM to this script are handled at once (forwarded as TERM). errexit is
# on inside it; the status comes back through $?.
SUB_PID=
stop_sub() {
  if [ -n "$SUB_PID" ]; then kill -TERM "$SUB_PID" 2>/dev/null || true; wait "$SUB_PID" 2>/dev/null || true; fi
  exit "$1"
}
run_isolated() {
  local rc=0
  ( set -e; trap cleanup EXIT; trap 'exit 143' TERM; "$@" ) &
  SUB_PID=$!
  wait "$SUB_PID" || rc=$?
  SUB_PID=
  if [ "$rc" -ne 0 ]; then log "$1 $2 failed (exit $rc); its figures are na"; fi
  return 0
}

targets=()
case "$TARGET" in both) targets=(sbcd kamailio);; *) targets=("$TARGET");; esac
: >"$OUT/summary.txt"
log "results in $OUT"
for t in "${targets[@]}"; do
  run_isolated steady_run "$t"
  # Each run is a subshell (own cleanup of its processes and namespaces); read its figure back.
  US_PER_CALL[$t]=$(sed -nE "s/^$t steady .* us_per_call=([^ ]+) .*/\1/p" "$OUT/summary.txt" | tail -n 1)
  US_PER_CALL[$t]=${US_PER_CALL[$t]:-na}
  run_isolated failover_run "$t"
  FO_FAILED[$t]=$(sed -nE "s/^$t failover .* failed=([^ ]+) .*/\1/p" "$OUT/summary.txt" | tail -n 1)
  FO_FAILED[$t]=${FO_FAILED[$t]:-na}
done

FLOOR_US_PER_CALL=$(sed -nE "s/^sbcd floor .* floor_us_per_call=([^ ]+) .*/\1/p" "$OUT/summary.txt" | tail -n 1)
FLOOR_US_PER_CALL=${FLOOR_US_PER_CALL:-na}
ratio=na ratio_above=na
if [[ ${US_PER_CALL[sbcd]} =~ ^[0-9.]+$ && ${US_PER_CALL[kamailio]} =~ ^[0-9.]+$ ]]; then
  ratio=$(awk -v s="${US_PER_CALL[sbcd]}" -v k="${US_PER_CALL[kamailio]}" 'BEGIN { if (s > 0) printf "%.1f", k / s; else print "na" }')
fi
if [[ $ratio != na && $FLOOR_US_PER_CALL =~ ^[0-9.]+$ ]]; then
  ratio_above=$(awk -v s="${US_PER_CALL[sbcd]}" -v f="$FLOOR_US_PER_CALL" -v k="${US_PER_CALL[kamailio]}" 'BEGIN { if (s > f) printf "%.1f", k / (s - f); else print "na" }')
fi
cat "$OUT/summary.txt" >&2
echo "vs_kamailio: sbc_us_per_call=${US_PER_CALL[sbcd]} kamailio_us_per_call=${US_PER_CALL[kamailio]} ratio=$ratio sbc_floor_us_per_call=$FLOOR_US_PER_CALL ratio_above_floor=$ratio_above sbc_failover_failed=${FO_FAILED[sbcd]} kamailio_failover_failed=${FO_FAILED[kamailio]}"
