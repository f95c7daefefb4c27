# SIPp and Kamailio helpers for the e2e tests, the demo and the benchmarks (source this file;
# it sources topology.sh). Needs root, iproute2, ethtool, SIPp 3.6 (sip-tester), coreutils
# timeout; kamailio (5.6) for the kamailio proxy mode.
#
# Topology (sipp_topology): one namespace "hosts" holds every SIP endpoint as addresses on
# one veth: caller 198.18.0.2, region1 peers 198.18.1.11 and .12, region2 peers 198.18.2.21
# and .22, all in 198.18.0.0/16. The proxy under test is 198.18.0.1:5060 on the other end:
#   sbcd      the other end stays in the root namespace without an address; sbcd drives it
#             with net_af_packet (SIPP_PROXY_IF names it).
#   kamailio  the other end moves into a namespace "proxy" with 198.18.0.1/16, where
#             kamailio_start runs Kamailio.
# Everything started here is tracked (topo_track) and removed by topo_cleanup: put
# `trap topo_cleanup EXIT INT TERM` in the calling script.
#
# Background processes are returned through variables, not through $(...) (a subshell would
# lose the tracking). SIPP_CPUS (e.g. 0) pins every SIPp to those CPUs with taskset.
# sipp_uas_start and sipp_uac_start set SIPP_PID (the sipp process
# itself) and SIPP_WRAP_PID (its `timeout` wrapper); kamailio_start sets KAMAILIO_PID.

SIPP_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=topology.sh
. "$SIPP_LIB_DIR/topology.sh"
SIPP_SCENARIOS=${SIPP_SCENARIOS:-$(cd "$SIPP_LIB_DIR/../sipp" && pwd)}
SIPP_BIN=${SIPP_BIN:-sipp}
KAMAILIO_BIN=${KAMAILIO_BIN:-/usr/sbin/kamailio}

SIPP_PROXY_ADDR=198.18.0.1
SIPP_CALLER=198.18.0.2
SIPP_REGION1=(198.18.1.11 198.18.1.12)
SIPP_REGION2=(198.18.2.21 198.18.2.22)
SIPP_NS_HOSTS=
SIPP_NS_PROXY=
SIPP_PROXY_IF=
SIPP_PID=
SIPP_WRAP_PID=
KAMAILIO_PID=

# sipp_topology MODE: MODE is sbcd or kamailio (see above). Sets SIPP_NS_HOSTS,
# SIPP_PROXY_IF and, for kamailio, SIPP_NS_PROXY.
sipp_topology() {
  local mode=$1
  case "$mode" in sbcd|kamailio) ;; *) topo_log "sipp_topology: mode sbcd or kamailio, not '$mode'"; return 2;; esac
  # topo_site runs in this shell (not in $(...), where what it records for topo_cleanup
  # would be lost); its output, the root-side interface, goes through a file.
  local out
  out=$(mktemp /tmp/sbc-sipp-if.XXXXXX)
  if ! topo_site hosts "$SIPP_CALLER/16" "${SIPP_REGION1[0]}/16" "${SIPP_REGION1[1]}/16" \
      "${SIPP_REGION2[0]}/16" "${SIPP_REGION2[1]}/16" >"$out"; then
    rm -f "$out"; topo_log "sipp_topology: could not create the hosts site"; return 1
  fi
  SIPP_PROXY_IF=$(cat "$out"); rm -f "$out"
  SIPP_NS_HOSTS=$(topo_ns hosts)
  # topo_site runs the site's own tx-checksum change; make sure it took (real UDP checksums).
  ip netns exec "$SIPP_NS_HOSTS" ethtool -K "s${TOPO_ID}hostb" tx off >/dev/null 2>&1 || true
  if [ "$mode" = kamailio ]; then
    SIPP_NS_PROXY="sbc-${TOPO_ID}-proxy"
    ip netns add "$SIPP_NS_PROXY" || return 1
    TOPO_NAMESPACES+=("$SIPP_NS_PROXY")
    ip link set "$SIPP_PROXY_IF" netns "$SIPP_NS_PROXY" || return 1
    ip -n "$SIPP_NS_PROXY" link set lo up || return 1
    ip -n "$SIPP_NS_PROXY" addr add "$SIPP_PROXY_ADDR/16" dev "$SIPP_PROXY_IF" || return 1
    ip netns exec "$SIPP_NS_PROXY" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null || true
    ip -n "$SIPP_NS_PROXY" link set "$SIPP_PROXY_IF" up || return 1
    ip netns exec "$SIPP_NS_PROXY" ethtool -K "$SIPP_PROXY_IF" tx off >/dev/null 2>&1 || true
  fi
  # Room for bursts at a few hundred calls/s (namespace-local socket buffer limits).
  ip netns exec "$SIPP_NS_HOSTS" sysctl -qw net.core.rmem_max=8388608 net.core.wmem_max=8388608 2>/dev/null || true
  return 0
}

# sipp_wait_port NS ADDR PORT [TRIES]: until something listens on ADDR:PORT/udp in NS.
sipp_wait_port() {
  local ns=$1 addr=$2 port=$3 tries=${4:-100}
  for _ in $(seq 1 "$tries"); do
    ip netns exec "$ns" ss -Hunl "src $addr:$port" 2>/dev/null | grep -q . && return 0
    sleep 0.05
  done
  topo_log "nothing listens on $addr:$port in $ns"
  return 1
}

# sipp_uas_start ADDR SCENARIO DIR [MAX_SECONDS] [SIPP_ARGS...]: a callee on ADDR:5060 in
# the hosts namespace running SCENARIO (a name in scripts/sipp or a path), logs and stats
# in DIR (created). Stops by itself after MAX_SECONDS (default 600). Sets SIPP_PID.
# SIPP_UAS_TRACE=1 adds -trace_err -trace_msg (off by default: uas.xml logs every
# ringing timeout as an "error", which costs SIPp time under load).
sipp_uas_start() {
  local addr=$1 scen=$2 dir=$3 max=${4:-600}
  shift $(( $# < 4 ? $# : 4 ))
  [ -f "$scen" ] || scen="$SIPP_SCENARIOS/$scen"
  [ -f "$scen" ] || { topo_log "sipp_uas_start: no scenario $scen"; return 2; }
  mkdir -p "$dir"
  scen=$(readlink -f "$scen")
  ( cd "$dir" && exec timeout -s TERM -k 5 "$max" ip netns exec "$SIPP_NS_HOSTS" \
      ${SIPP_CPUS:+taskset -c $SIPP_CPUS} "$SIPP_BIN" -sf "$scen" -i "$addr" -p 5060 -nostdin -trace_stat -fd 1 \
      ${SIPP_UAS_TRACE:+-trace_err -trace_msg} \
      -max_recv_loops 10000 -max_sched_loops 10000 "$@" >"$dir/sipp.out" 2>&1 ) &
  SIPP_WRAP_PID=$!
  topo_track "$SIPP_WRAP_PID"
  sipp__child "$SIPP_WRAP_PID" || { cat "$dir/sipp.out" >&2; return 1; }
  sipp_wait_port "$SIPP_NS_HOSTS" "$addr" 5060 || { cat "$dir/sipp.out" >&2; return 1; }
}

# sipp__child WRAPPER_PID: sets SIPP_PID to the sipp process under the timeout wrapper.
sipp__child() {
  local w=$1 c
  SIPP_PID=
  for _ in $(seq 1 100); do
    c=$(pgrep -P "$w" 2>/dev/null | head -n 1 || true)
    if [ -n "$c" ] && [ "$(cat "/proc/$c/comm" 2>/dev/null)" = sipp ]; then
      SIPP_PID=$c; topo_track "$c"; return 0
    fi
    kill -0 "$w" 2>/dev/null || break
    sleep 0.02
  done
  topo_log "sipp did not start (wrapper $w)"
  return 1
}

# sipp_uac_start DIR RATE CALLS MAX_SECONDS [SCENARIO] [SIPP_ARGS...]: callers from
# 198.18.0.2 to the proxy at RATE calls/s, CALLS calls in all (-m), killed after
# MAX_SECONDS; -trace_stat (1 s periods), -trace_rtt (every call), -trace_err,
# -trace_counts (messages per scenario step) and -trace_logs (scenario log actions) in DIR.
# SCENARIO defaults to uac.xml; add e.g. -s SERVICE -d HOLD_MS. Sets SIPP_PID and
# SIPP_WRAP_PID (wait for the latter: sipp_uac_wait).
sipp_uac_start() {
  local dir=$1 rate=$2 calls=$3 max=$4 scen=${5:-uac.xml}
  shift $(( $# < 5 ? $# : 5 ))
  [ -f "$scen" ] || scen="$SIPP_SCENARIOS/$scen"
  [ -f "$scen" ] || { topo_log "sipp_uac_start: no scenario $scen"; return 2; }
  mkdir -p "$dir"
  scen=$(readlink -f "$scen")
  ( cd "$dir" && exec timeout -s TERM -k 5 "$max" ip netns exec "$SIPP_NS_HOSTS" \
      ${SIPP_CPUS:+taskset -c $SIPP_CPUS} "$SIPP_BIN" "$SIPP_PROXY_ADDR:5060" -sf "$scen" -i "$SIPP_CALLER" -p 5060 \
      -r "$rate" -m "$calls" -nostdin -recv_timeout 10000 \
      -trace_stat -fd 1 -trace_rtt -rtt_freq 1 -trace_err -trace_counts -trace_logs \
      -max_recv_loops 10000 -max_sched_loops 10000 "$@" >"$dir/sipp.out" 2>&1 ) &
  SIPP_WRAP_PID=$!
  SIPP_UAC_DIR=$dir
  topo_track "$SIPP_WRAP_PID"
  sipp__child "$SIPP_WRAP_PID" || { cat "$dir/sipp.out" >&2; return 1; }
}

# sipp_uac_wait: waits for the UAC started last; returns SIPp's exit code (0 all calls
# succeeded, 1 some failed, 124 killed by the time bound).
# SIPp has been seen (once in many CI runs) to print its final screen ("Test Terminated", every
# call done) and then not exit until its time bound: 10 s after that screen it is ended here and
# judged by its stat file (0 when no call failed, 1 otherwise), and the hang is logged.
sipp_uac_wait() {
  local rc=0 screen_at=""
  while kill -0 "$SIPP_WRAP_PID" 2>/dev/null; do
    if [ -z "$screen_at" ]; then
      grep -q 'Test Terminated' "$SIPP_UAC_DIR/sipp.out" 2>/dev/null && screen_at=$SECONDS
    elif [ $((SECONDS - screen_at)) -ge 10 ]; then
      topo_log "sipp_uac_wait: SIPp printed its final screen 10 s ago and has not exited: ending it (PID $SIPP_PID)"
      [ -n "$SIPP_PID" ] && kill -TERM "$SIPP_PID" 2>/dev/null
      sleep 1
      [ -n "$SIPP_PID" ] && kill -KILL "$SIPP_PID" 2>/dev/null
      wait "$SIPP_WRAP_PID" 2>/dev/null || true
      local ok failed
      read -r ok failed < <(sipp_counts "$SIPP_UAC_DIR")
      [ "${failed:-1}" -eq 0 ] && [ "${ok:-0}" -gt 0 ] && return 0
      return 1
    fi
    sleep 0.2
  done
  wait "$SIPP_WRAP_PID" || rc=$?
  return $rc
}

# sipp_uac_run DIR RATE CALLS MAX_SECONDS [SCENARIO] [SIPP_ARGS...]: start and wait.
sipp_uac_run() {
  sipp_uac_start "$@" || return 1
  sipp_uac_wait
}

# sipp_stop PID: SIGTERM, then SIGKILL after 5 s (a process started here).
sipp_stop() {
  local pid=$1
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

# sipp_stat_csv DIR: the -trace_stat file of the SIPp run in DIR.
sipp_stat_csv() { local f; for f in "$1"/*_.csv; do [ -f "$f" ] && echo "$f"; break; done; return 0; }
# sipp_rtt_csv DIR: the -trace_rtt file of the SIPp run in DIR.
sipp_rtt_csv() { local f; for f in "$1"/*_rtt.csv; do [ -f "$f" ] && echo "$f"; break; done; return 0; }

# sipp_counts DIR: prints "SUCCESSFUL FAILED" (cumulative, final stats line of the run).
sipp_counts() {
  local f
  f=$(sipp_stat_csv "$1")
  [ -n "$f" ] || { echo "0 0"; return 1; }
  awk -F';' 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "SuccessfulCall(C)") s = i; if ($i == "FailedCall(C)") f = i } next }
             NF > 1 { ls = $s; lf = $f } END { printf "%d %d\n", ls, lf }' "$f"
}

# sipp_series DIR: per-period (1 s) "ELAPSED_S SUCCESSFUL FAILED" lines (calls completed and
# failed in that second), from the stat file.
sipp_series() {
  local f
  f=$(sipp_stat_csv "$1")
  [ -n "$f" ] || return 1
  awk -F';' 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == "SuccessfulCall(C)") s = i; if ($i == "FailedCall(C)") f = i; if ($i == "ElapsedTime(C)") e = i } next }
             NF > 1 { split($e, t, ":"); sec = t[1] * 3600 + t[2] * 60 + t[3]
                      if (4 in t) sec += t[4] / 1e6
                      printf "%.3f %d %d\n", sec, $s - ps, $f - pf; ps = $s; pf = $f }' "$f"
}

# sipp_bye_lost DIR: established calls whose BYE got 408/481/500/503 (uac.xml's "bye_lost"
# path: the callee died during the call). They are not in FailedCall; see uac.xml.
sipp_bye_lost() {
  local f
  for f in "$1"/*_counts.csv; do break; done
  [ -f "$f" ] || { echo 0; return 1; }
  awk -F';' 'NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+_(408|481|500|503)_Recv$/) c[i] = 1; next }
             NF > 1 { n = 0; for (i in c) n += $i; last = n } END { print last + 0 }' "$f"
}

# sipp_rtt_pcts DIR: prints "P50_MS P99_MS COUNT" of the setup times in the rtt file.
sipp_rtt_pcts() {
  local f
  f=$(sipp_rtt_csv "$1")
  [ -n "$f" ] || { echo "na na 0"; return 1; }
  awk -F';' 'NR > 1 && $2 ~ /^[0-9.]+$/ { print $2 }' "$f" | sort -g | awk '
    { v[NR] = $1 } END {
      if (NR == 0) { print "na na 0"; exit }
      i50 = int(0.50 * NR + 0.999999); i99 = int(0.99 * NR + 0.999999)
      if (i50 < 1) i50 = 1; if (i99 < 1) i99 = 1
      printf "%.3f %.3f %d\n", v[i50], v[i99], NR }'
}

# kamailio_start CFG DIR [CPU]: runs Kamailio in the proxy namespace with CFG (its
# dispatcher.list beside it), log in DIR/kamailio.log, all processes pinned to CPU (default
# 1) when taskset exists. Waits until it listens. Sets KAMAILIO_PID (the main process).
# KAMAILIO_EXTRA_ARGS adds options (e.g. "-x tlsf -X tlsf" for other memory managers).
kamailio_start() {
  local cfg=$1 dir=$2 cpu=${3:-1} list pin=()
  [ -n "$SIPP_NS_PROXY" ] || { topo_log "kamailio_start: topology is not in kamailio mode"; return 2; }
  [ -x "$KAMAILIO_BIN" ] || { topo_log "kamailio_start: no $KAMAILIO_BIN (apt-get install kamailio)"; return 2; }
  cfg=$(readlink -f "$cfg")
  list="$(dirname "$cfg")/dispatcher.list"
  mkdir -p "$dir/run"
  command -v taskset >/dev/null && [ "$cpu" != none ] && pin=(taskset -c "$cpu")
  ( cd "$dir" && exec ip netns exec "$SIPP_NS_PROXY" "${pin[@]}" "$KAMAILIO_BIN" -f "$cfg" -DD -E \
      -A "DISPATCHER_LIST=\"$list\"" -A "LISTEN_ADDR=\"$SIPP_PROXY_ADDR\"" \
      -m 256 -M 16 -Y "$dir/run" -w "$dir" ${KAMAILIO_EXTRA_ARGS:-} >"$dir/kamailio.log" 2>&1 ) &
  KAMAILIO_PID=$!
  topo_track "$KAMAILIO_PID"
  sipp_wait_port "$SIPP_NS_PROXY" "$SIPP_PROXY_ADDR" 5060 200 || { cat "$dir/kamailio.log" >&2; return 1; }
  # Let the children finish their start-up before anyone measures them.
  sleep 0.5
  kill -0 "$KAMAILIO_PID" 2>/dev/null || { cat "$dir/kamailio.log" >&2; return 1; }
}

# kamailio_stop: SIGTERM the main process (it stops its children), wait up to 10 s.
kamailio_stop() {
  [ -n "$KAMAILIO_PID" ] || return 0
  kill -TERM "$KAMAILIO_PID" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$KAMAILIO_PID" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$KAMAILIO_PID" 2>/dev/null || true
  wait "$KAMAILIO_PID" 2>/dev/null || true
  KAMAILIO_PID=
}

# proc_tree_cpu_seconds PID: utime+stime (seconds) of PID and all its descendants now.
proc_tree_cpu_seconds() { proc_tree_cpu_split "$1" | awk '{ printf "%.2f\n", $1 + $2 }'; }

# proc_tree_cpu_split PID: "USER_S SYSTEM_S" of PID and all its descendants now.
proc_tree_cpu_split() {
  local root=$1 hz s line
  hz=$(getconf CLK_TCK)
  # /proc/P/stat: field 2 (comm) may hold spaces; strip up to the last ')' first. After
  # that and with the PID put in front: $3 = ppid, $13 = utime, $14 = stime (ticks).
  for s in /proc/[0-9]*/stat; do
    line=$(cat "$s" 2>/dev/null) || continue
    echo "${s//[^0-9]/} ${line##*) }"
  done | awk -v root="$root" -v hz="$hz" '
    { pid = $1; ppid[pid] = $3; ut[pid] = $13; st[pid] = $14 }
    END {
      u = 0; k = 0
      for (p in ut) {
        q = p
        for (depth = 0; depth < 64 && q != "" && q != 0; depth++) {
          if (q == root) { u += ut[p]; k += st[p]; break }
          q = ppid[q]
        }
      }
      printf "%.2f %.2f\n", u / hz, k / hz }'
}
