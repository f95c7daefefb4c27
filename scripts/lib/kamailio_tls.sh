# Kamailio 5.6 TLS instances for sbcd's TLS tests and benchmarks (source this file; it sources
# topology.sh unless that is loaded already). Needs root, iproute2, kamailio with
# kamailio-tls-modules; taskset for cpu=.
#
# Two modes (configs in scripts/kamailio-tls/, see their headers):
#   peer    TLS server on ADDR:5061 (+ UDP ADDR:5060): answers OPTIONS 200 itself and relays
#           calls statefully to a SIPp UAS on UDP.
#   client  takes calls from a SIPp UAC on UDP_ADDR:5060 and relays them over TLS (from
#           TLS_ADDR) to TARGET; client certificate, SNI and server checks are options.
#
#   ktls_peer_start NS DIR ADDR UAS_URI cert=F key=F [ca=F] [mtls=0|1|optional] [cpu=N] [debug=1]
#       [tls_port=5061] [udp_port=5060]
#       mtls=1: the client must present a certificate that verifies against ca= (required
#       then); optional: asked for, verified when presented. Listens on ADDR:5061/tls and
#       ADDR:5060/udp. UAS_URI: "sip:IP:PORT".
#   ktls_client_start NS DIR UDP_ADDR TLS_ADDR TARGET [ca=F] [verify=1|0] [cert=F key=F]
#       [listen_cert=F listen_key=F] [server_name=NAME] [expect_name=NAME] [fr_ms=N] [cpu=N] [debug=1]
#       [udp_port=5060] [tls_port=5061]
#       TARGET: "sip:IP:5061;transport=tls" (or IP:PORT, made into that). verify=1 (default)
#       checks the server's chain against ca= (required then); cert/key: the client
#       certificate presented when the server asks (mutual TLS); listen_cert/listen_key: the
#       certificate of the client's own TLS socket (Kamailio sends TLS only from a listening
#       TLS socket; default cert/key; one of the two pairs is required). server_name: SNI.
#       expect_name: the server certificate must name it (its first DNS or first IP
#       subjectAltName), checked on every reply after the handshake (Kamailio 5.6 does not check names in the
#       handshake; see client.cfg). fr_ms: tm's no-response timer (default 2000).
#       udp_port: where the UAC sends; tls_port: the port of its own TLS socket.
#   Both write DIR/tls.cfg and DIR/kamailio.log (stderr, -E), run in the foreground (-DD)
#   inside NS (ip netns exec) with -Y DIR/run -P DIR/run/kamailio.pid, -m 64 -M 8, wait
#   (at most 10 s) until they listen, and set KTLS_PID to the main process (tracked for
#   topo_cleanup too). They return non-zero with the log shown if Kamailio did not come up.
#   KTLS_EXTRA_ARGS adds kamailio options (e.g. "-x fm -X fm").
#
#   ktls_topology              three namespaces joined by veths (addresses in 198.18.0.0/15),
#                              recorded for topo_cleanup (put it in a trap):
#       KTLS_NS_UAC  198.18.10.2 (KTLS_UAC_ADDR)   the SIPp UAC
#       KTLS_NS_KC   198.18.10.1 (KTLS_KC_UDP)     the client Kamailio, UDP side
#                    198.18.20.1 (KTLS_KC_TLS)     its TLS side
#       KTLS_NS_KP   198.18.20.2 (KTLS_KP_ADDR)    the peer Kamailio (tls 5061, udp 5060)
#                    198.18.20.3 (KTLS_UAS_ADDR)   the SIPp UAS
#   ktls_stop PID              SIGTERM, then SIGKILL after 10 s; only a PID started here
#   ktls_wait_listen NS PROTO ADDR PORT [TRIES]
#                              until something listens (PROTO udp or tcp; TLS is tcp);
#                              TRIES x 0.05 s (default 200)
#   ktls_cpu_seconds PID       "TOTAL USER SYSTEM" CPU seconds of PID and its descendants
#                              (utime, stime of /proc/P/stat; Kamailio forks every worker
#                              from its main process)
#   ktls_tls_cfg FILE peer|client key=value...   the tls.cfg of a mode (the starts call it)
#   tls_probe NS ADDR:PORT CA NAME [CERT KEY]
#                              openssl s_client inside NS: succeeds only if the server's
#                              certificate chain verifies against CA and names NAME (a host
#                              name or IP address), with an optional client certificate.
#                              Quiet; the s_client output goes to stderr on failure.

KTLS_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KTLS_CFG_DIR=${KTLS_CFG_DIR:-$(cd "$KTLS_LIB_DIR/../kamailio-tls" && pwd)}
KAMAILIO_BIN=${KAMAILIO_BIN:-/usr/sbin/kamailio}
if ! declare -F topo_track >/dev/null; then
  # shellcheck source=topology.sh
  . "$KTLS_LIB_DIR/topology.sh"
fi
KTLS_PID=
KTLS_PIDS=()

ktls_log() { printf 'kamailio_tls: %s\n' "$*" >&2; }

# ktls__opts KEY=VALUE...: sets KTLS_OPT[KEY]=VALUE (an associative array of the caller).
ktls__opts() {
  local kv
  for kv in "$@"; do
    [[ $kv == *=* ]] || { ktls_log "option '$kv' is not KEY=VALUE"; return 2; }
    KTLS_OPT[${kv%%=*}]=${kv#*=}
  done
}

# ktls__file PATH WHAT: PATH must be a readable file; prints its absolute path.
ktls__file() {
  [ -r "$1" ] || { ktls_log "$2: no readable file '$1'"; return 1; }
  readlink -f "$1"
}

ktls_tls_cfg() {
  local file=$1 mode=$2; shift 2
  local -A KTLS_OPT=()
  ktls__opts "$@" || return 2
  local ca='' cert key
  if [ -n "${KTLS_OPT[ca]:-}" ]; then ca=$(ktls__file "${KTLS_OPT[ca]}" ca) || return 1; fi
  case "$mode" in
    peer)
      cert=$(ktls__file "${KTLS_OPT[cert]:-}" cert) || return 1
      key=$(ktls__file "${KTLS_OPT[key]:-}" key) || return 1
      local verify=no require=no
      case "${KTLS_OPT[mtls]:-0}" in
        0|no|off) ;;
        1|yes|on) verify=yes; require=yes;;
        optional) verify=yes;;
        *) ktls_log "mtls=0, 1 or optional, not '${KTLS_OPT[mtls]}'"; return 2;;
      esac
      if [ "$verify" = yes ] && [ -z "$ca" ]; then ktls_log "peer: mtls needs ca="; return 2; fi
      {
        echo "# written by kamailio_tls.sh (peer)"
        echo "[server:default]"
        echo "method = TLSv1.2+"
        echo "certificate = $cert"
        echo "private_key = $key"
        [ -z "$ca" ] || echo "ca_list = $ca"
        echo "verify_certificate = $verify"
        echo "require_certificate = $require"
        echo "verify_depth = 3"
        echo
        echo "[client:default]"
        echo "method = TLSv1.2+"
        echo "verify_certificate = no"
        echo "require_certificate = no"
      } >"$file"
      ;;
    client)
      local ccert='' ckey='' lcert lkey verify
      if [ -n "${KTLS_OPT[cert]:-}" ]; then
        ccert=$(ktls__file "${KTLS_OPT[cert]}" cert) || return 1
        ckey=$(ktls__file "${KTLS_OPT[key]:-}" key) || return 1
      fi
      lcert=${KTLS_OPT[listen_cert]:-$ccert}; lkey=${KTLS_OPT[listen_key]:-$ckey}
      [ -n "$lcert" ] && [ -n "$lkey" ] ||
        { ktls_log "client: needs listen_cert=/listen_key= or cert=/key= (for its own TLS socket)"; return 2; }
      lcert=$(ktls__file "$lcert" listen_cert) || return 1
      lkey=$(ktls__file "$lkey" listen_key) || return 1
      case "${KTLS_OPT[verify]:-1}" in
        1|yes|on) verify=yes;;
        0|no|off) verify=no;;
        *) ktls_log "verify=1 or 0, not '${KTLS_OPT[verify]}'"; return 2;;
      esac
      if [ "$verify" = yes ] && [ -z "$ca" ]; then ktls_log "client: verify=1 needs ca="; return 2; fi
      {
        echo "# written by kamailio_tls.sh (client)"
        echo "# The client's own TLS socket (nothing is expected to connect to it)."
        echo "[server:default]"
        echo "method = TLSv1.2+"
        echo "certificate = $lcert"
        echo "private_key = $lkey"
        echo "verify_certificate = no"
        echo "require_certificate = no"
        echo
        echo "# Connections this instance opens."
        echo "[client:default]"
        echo "method = TLSv1.2+"
        [ -z "$ca" ] || echo "ca_list = $ca"
        echo "verify_certificate = $verify"
        echo "require_certificate = $verify"
        echo "verify_depth = 3"
        if [ -n "$ccert" ]; then
          echo "certificate = $ccert"
          echo "private_key = $ckey"
        fi
        [ -z "${KTLS_OPT[server_name]:-}" ] || echo "server_name = ${KTLS_OPT[server_name]}"
      } >"$file"
      ;;
    *) ktls_log "ktls_tls_cfg: mode peer or client, not '$mode'"; return 2;;
  esac
}

ktls_wait_listen() {
  local ns=$1 proto=$2 addr=$3 port=$4 tries=${5:-200} flag
  case "$proto" in udp) flag=-Hunl;; tcp|tls) flag=-Htnl;; *) ktls_log "ktls_wait_listen: udp or tcp"; return 2;; esac
  for _ in $(seq 1 "$tries"); do
    ip netns exec "$ns" ss "$flag" "src $addr:$port" 2>/dev/null | grep -q . && return 0
    sleep 0.05
  done
  ktls_log "nothing listens on $proto $addr:$port in $ns"
  return 1
}

# ktls__run NS DIR CFG CPU LISTEN... -- DEFINES...: starts Kamailio, waits for each LISTEN
# ("udp ADDR PORT" triples), sets KTLS_PID.
ktls__run() {
  local ns=$1 dir=$2 cfg=$3 cpu=$4; shift 4
  local listens=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do listens+=("$1"); shift; done
  shift
  local pin=()
  [ -x "$KAMAILIO_BIN" ] || { ktls_log "no $KAMAILIO_BIN (apt-get install kamailio kamailio-tls-modules)"; return 2; }
  [ -z "$cpu" ] || pin=(taskset -c "$cpu")
  mkdir -p "$dir/run"
  # shellcheck disable=SC2086  # KTLS_EXTRA_ARGS is a list of options
  ( cd "$dir" && exec ip netns exec "$ns" "${pin[@]}" "$KAMAILIO_BIN" -f "$cfg" -DD -E --atexit=no \
      -m 64 -M 8 -Y "$dir/run" -P "$dir/run/kamailio.pid" -w "$dir" "$@" ${KTLS_EXTRA_ARGS:-} \
      >"$dir/kamailio.log" 2>&1 ) &
  KTLS_PID=$!
  KTLS_PIDS+=("$KTLS_PID")
  topo_track "$KTLS_PID"
  local i
  for ((i = 0; i < ${#listens[@]}; i += 3)); do
    if ! ktls_wait_listen "$ns" "${listens[i]}" "${listens[i + 1]}" "${listens[i + 2]}"; then
      cat "$dir/kamailio.log" >&2; return 1
    fi
  done
  # Let the children finish their start-up.
  sleep 0.3
  kill -0 "$KTLS_PID" 2>/dev/null || { ktls_log "kamailio exited:"; cat "$dir/kamailio.log" >&2; return 1; }
}

ktls_peer_start() {
  local ns=$1 dir=$2 addr=$3 uas=$4; shift 4
  local -A KTLS_OPT=()
  ktls__opts "$@" || return 2
  mkdir -p "$dir" && dir=$(readlink -f "$dir")
  ktls_tls_cfg "$dir/tls.cfg" peer "$@" || return 1
  local up=${KTLS_OPT[udp_port]:-5060} tp=${KTLS_OPT[tls_port]:-5061}
  local defs=(-A "LISTEN_ADDR=\"$addr\"" -A "UAS_URI=\"$uas\"" -A "TLS_CFG=\"$dir/tls.cfg\""
              -A "UDP_PORT=$up" -A "TLS_PORT=$tp")
  [ -z "${KTLS_OPT[debug]:-}" ] || defs+=(-A WITH_DEBUG)
  ktls__run "$ns" "$dir" "$KTLS_CFG_DIR/peer.cfg" "${KTLS_OPT[cpu]:-}" \
    udp "$addr" "$up" tcp "$addr" "$tp" -- "${defs[@]}"
}

ktls_client_start() {
  local ns=$1 dir=$2 uaddr=$3 taddr=$4 target=$5; shift 5
  local -A KTLS_OPT=()
  ktls__opts "$@" || return 2
  [[ $target == sip:* ]] || target="sip:$target;transport=tls"
  mkdir -p "$dir" && dir=$(readlink -f "$dir")
  ktls_tls_cfg "$dir/tls.cfg" client "$@" || return 1
  local defs=(-A "UDP_ADDR=\"$uaddr\"" -A "TLS_ADDR=\"$taddr\"" -A "TARGET=\"$target\""
              -A "TLS_CFG=\"$dir/tls.cfg\"" -A "FR_TIMER=${KTLS_OPT[fr_ms]:-2000}")
  [ -z "${KTLS_OPT[server_name]:-}" ] || defs+=(-A "SERVER_NAME=\"${KTLS_OPT[server_name]}\"")
  [ -z "${KTLS_OPT[expect_name]:-}" ] || defs+=(-A "EXPECT_NAME=\"${KTLS_OPT[expect_name]}\"")
  [ -z "${KTLS_OPT[debug]:-}" ] || defs+=(-A WITH_DEBUG)
  local up=${KTLS_OPT[udp_port]:-5060} tp=${KTLS_OPT[tls_port]:-5061}
  defs+=(-A "UDP_PORT=$up" -A "TLS_PORT=$tp")
  local udp=(udp "$uaddr" "$up") tls=(tcp "$taddr" "$tp")
  ktls__run "$ns" "$dir" "$KTLS_CFG_DIR/client.cfg" "${KTLS_OPT[cpu]:-}" "${udp[@]}" "${tls[@]}" -- "${defs[@]}"
}

ktls_stop() {
  local pid=$1 p found=0
  [ -n "$pid" ] || return 0
  for p in "${KTLS_PIDS[@]}"; do [ "$p" = "$pid" ] && found=1; done
  [ "$found" = 1 ] || { ktls_log "ktls_stop: $pid was not started here"; return 2; }
  kill -TERM "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  [ "$KTLS_PID" != "$pid" ] || KTLS_PID=
  return 0
}

tls_probe() {
  local ns=$1 hostport=$2 ca=$3 name=$4 cert=${5:-} key=${6:-} opt out rc=0
  if [[ $name =~ ^[0-9.]+$ || $name == *:* ]]; then opt=(-verify_ip "$name"); else opt=(-verify_hostname "$name" -servername "$name"); fi
  out=$(timeout 10 ip netns exec "$ns" openssl s_client -connect "$hostport" -CAfile "$ca" "${opt[@]}" \
          -verify_return_error ${cert:+-cert "$cert" -key "$key"} -brief </dev/null 2>&1) || rc=$?
  if [ "$rc" -ne 0 ] || ! grep -q '^Verification: OK' <<<"$out"; then
    printf '%s\n' "$out" >&2
    return 1
  fi
}

ktls_topology() {
  KTLS_NS_UAC="sbc-${TOPO_ID}-uac"; KTLS_NS_KC="sbc-${TOPO_ID}-kc"; KTLS_NS_KP="sbc-${TOPO_ID}-kp"
  KTLS_UAC_ADDR=198.18.10.2; KTLS_KC_UDP=198.18.10.1; KTLS_KC_TLS=198.18.20.1
  KTLS_KP_ADDR=198.18.20.2; KTLS_UAS_ADDR=198.18.20.3
  local ns
  for ns in "$KTLS_NS_UAC" "$KTLS_NS_KC" "$KTLS_NS_KP"; do
    ip netns add "$ns" || return 1
    TOPO_NAMESPACES+=("$ns")
    ip -n "$ns" link set lo up || return 1
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null || true
  done
  ktls__link "$KTLS_NS_UAC" "t${TOPO_ID}ua" "$KTLS_UAC_ADDR/24" "$KTLS_NS_KC" "t${TOPO_ID}ka" "$KTLS_KC_UDP/24" || return 1
  ktls__link "$KTLS_NS_KC" "t${TOPO_ID}kb" "$KTLS_KC_TLS/24" "$KTLS_NS_KP" "t${TOPO_ID}pa" "$KTLS_KP_ADDR/24" "$KTLS_UAS_ADDR/24" || return 1
  ip netns exec "$KTLS_NS_UAC" sysctl -qw net.core.rmem_max=8388608 net.core.wmem_max=8388608 2>/dev/null || true
}

# ktls__link NS_A IF_A CIDR_A NS_B IF_B CIDR_B...: a veth pair between two namespaces (it
# goes away with them); real UDP checksums from both ends (design.md, facts).
ktls__link() {
  local na=$1 ia=$2 ca=$3 nb=$4 ib=$5; shift 5
  ip link add "$ia" netns "$na" type veth peer name "$ib" netns "$nb" || return 1
  ip -n "$na" addr add "$ca" dev "$ia" || return 1
  local c; for c in "$@"; do ip -n "$nb" addr add "$c" dev "$ib" || return 1; done
  ip -n "$na" link set "$ia" up && ip -n "$nb" link set "$ib" up || return 1
  ip netns exec "$na" ethtool -K "$ia" tx off >/dev/null 2>&1 || true
  ip netns exec "$nb" ethtool -K "$ib" tx off >/dev/null 2>&1 || true
}

ktls_cpu_seconds() {
  local root=$1 pids=() level=("$1") next p line hz
  hz=$(getconf CLK_TCK)
  for _ in 1 2 3 4; do
    [ ${#level[@]} -gt 0 ] || break
    pids+=("${level[@]}")
    next=()
    for p in "${level[@]}"; do
      while read -r line; do [ -n "$line" ] && next+=("$line"); done < <(pgrep -P "$p" 2>/dev/null || true)
    done
    level=("${next[@]}")
  done
  for p in "${pids[@]}"; do
    line=$(cat "/proc/$p/stat" 2>/dev/null) || continue
    # After the last ')' (comm may hold spaces): $12 utime, $13 stime, in clock ticks.
    echo "${line##*) }"
  done | awk -v hz="$hz" '{ u += $12; s += $13 } END { printf "%.3f %.3f %.3f\n", (u + s) / hz, u / hz, s / hz }'
  [ -n "$root" ]
}
