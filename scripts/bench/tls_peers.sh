# TLS reference figures for scripts/bench/tls.sh (source this file; run as root for the
# Kamailio measurement). Each function prints its figure on stdout (one number) and the
# detail on stderr.
#
#   tls_ceiling_handshakes_per_s [CPU] [SECONDS]
#       The crypto ceiling of full TLS server handshakes per second on one core for an
#       ECDSA P-256 server key with ECDHE on P-256: `openssl speed -seconds SECONDS
#       ecdsap256 ecdhp256` pinned to CPU (default 1, SECONDS default 2), then
#       1 / (1/sign_per_s + 1/ecdh_per_s): one ECDSA sign (CertificateVerify or
#       ServerKeyExchange) and one ECDH shared-secret computation per handshake on the
#       server. Not counted: the server's ephemeral key generation, HKDF/PRF, the record
#       layer, the kernel; so real handshakes per second stay below this.
#       Detail on stderr: "tls_ceiling: sign_per_s=.. ecdh_per_s=.. handshakes_per_s=.. cpu=.."
#
#   kamailio_tls_us_per_call [CALLS] [RATE] [CPU] [OTHER_CPUS]
#       Kamailio 5.6's CPU per call relaying SIPp UDP calls over TLS: the topology of
#       scripts/lib/kamailio_tls.sh (SIPp UAC -> client.cfg -> TLS -> peer.cfg -> SIPp UAS,
#       three namespaces), server-certificate TLS with chain check, SNI and the name check
#       on; the client instance pinned to CPU (default 1), SIPp and the peer to OTHER_CPUS
#       (default 0). After 20 warm-up calls (which open the TLS connection), CALLS calls
#       (default 2000) at RATE calls/s (default 200), uac.xml with 100 ms hold; the
#       client's CPU = utime+stime of all its processes (/proc/PID/stat, after minus
#       before: ktls_cpu_seconds), divided by the calls that succeeded. Prints microseconds per call.
#       Kamailio runs with the memory managers of vs_kamailio.sh ("-x fm -X fm");
#       KTLS_EXTRA_ARGS overrides that. Bounded: SIPp stops after CALLS/RATE + 60 s.
#       It runs in a subshell that removes its namespaces and stops what it started on
#       exit, failure, INT or TERM. Detail on stderr: "kamailio_tls: calls=.. ok=..
#       failed=.. client_cpu_s=.. (user .. system ..) client_us_per_call=.. peer_us_per_call=.."

TLS_PEERS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

tls_ceiling_handshakes_per_s() {
  local cpu=${1:-1} secs=${2:-2} out pin=()
  command -v openssl >/dev/null || { echo "tls_ceiling: no openssl" >&2; return 1; }
  command -v taskset >/dev/null && pin=(taskset -c "$cpu")
  # -mr: machine-readable results, "+F4:n:256:SIGN_PER_S:VERIFY_PER_S" (ECDSA) and
  # "+F5:n:256:ECDH_PER_S:..." (ECDH).
  out=$("${pin[@]}" openssl speed -seconds "$secs" -mr ecdsap256 ecdhp256 2>&1) ||
    { echo "tls_ceiling: openssl speed failed:" >&2; echo "$out" >&2; return 1; }
  awk -F: -v cpu="$cpu" '
    $1 == "+F4" && $3 == 256 { sign = $4 }
    $1 == "+F5" && $3 == 256 { ecdh = $4 }
    END {
      if (sign <= 0 || ecdh <= 0) { print "tls_ceiling: no ECDSA/ECDH P-256 figures in the openssl speed output" > "/dev/stderr"; exit 1 }
      hs = 1 / (1 / sign + 1 / ecdh)
      printf "tls_ceiling: sign_per_s=%.0f ecdh_per_s=%.0f handshakes_per_s=%.0f cpu=%s\n", sign, ecdh, hs, cpu > "/dev/stderr"
      printf "%.0f\n", hs
    }' <<<"$out" || { echo "$out" >&2; return 1; }
}

# openssl_server_handshakes_per_cpu_s CPU CLIENT_CPU SECS CERT KEY TLS_LOAD: OpenSSL's own
# server as the reference for the stream thread's handshakes: `openssl s_server` (TLS 1.3,
# CERT/KEY) pinned to CPU on a free loopback port (topo_free_port), loaded by
# TLS_LOAD --handshakes SECS --conns 16 pinned to CLIENT_CPU (the client the stream thread
# gets). Prints the server's completed handshakes per CPU-second of its own (utime+stime from
# /proc); a detail line on stderr, "openssl_server: ...". Stops what it started.
openssl_server_handshakes_per_cpu_s() (
  set -euo pipefail
  local cpu=$1 client_cpu=$2 secs=$3 cert=$4 key=$5 load=$6 port line n u0 s0 u1 s1 pid
  # shellcheck source=../lib/topology.sh
  . "$TLS_PEERS_DIR/../lib/topology.sh"
  port=$(topo_free_port) || { echo "openssl_server: no free port on 127.0.0.1" >&2; exit 1; }
  taskset -c "$cpu" openssl s_server -quiet -accept "127.0.0.1:$port" -cert "$cert" -key "$key" -tls1_3 \
    -naccept 100000000 </dev/null >/dev/null 2>&1 &
  pid=$!
  trap 'kill "$pid" 2>/dev/null || true' EXIT
  for _ in $(seq 1 50); do ss -Hltn "sport = :$port" | grep -q . && break; sleep 0.1; done
  read -r u0 s0 < <(awk '{ print $14, $15 }' "/proc/$pid/stat")
  line=$(timeout -k 5 $((secs + 30)) taskset -c "$client_cpu" "$load" --connect "127.0.0.1:$port" --handshakes "$secs" --conns 16 | tail -n 1)
  read -r u1 s1 < <(awk '{ print $14, $15 }' "/proc/$pid/stat")
  n=$(sed -nE 's/.* handshakes=([0-9]+).*/\1/p' <<<"$line")
  [ -n "$n" ] || { echo "openssl_server: no result from the client: $line" >&2; exit 1; }
  awk -v n="$n" -v t=$((u1 - u0 + s1 - s0)) -v hz="$(getconf CLK_TCK)" -v cpu="$cpu" -v v="$(openssl version | cut -d' ' -f1-2)" -v l="$line" 'BEGIN {
    if (t <= 0) { print "openssl_server: no CPU time measured" > "/dev/stderr"; exit 1 }
    printf "openssl_server: %s on CPU %s: %s; server CPU %.2f s\n", v, cpu, l, t / hz > "/dev/stderr"
    printf "%.0f\n", n / (t / hz) }'
)

kamailio_tls_us_per_call() (
  set -euo pipefail
  local calls=${1:-2000} rate=${2:-200} cpu=${3:-1} other=${4:-0}
  [[ $calls =~ ^[1-9][0-9]*$ && $rate =~ ^[1-9][0-9]*$ ]] || { echo "kamailio_tls: CALLS and RATE are positive integers" >&2; exit 2; }
  [ "$(id -u)" -eq 0 ] || { echo "kamailio_tls: needs root (network namespaces)" >&2; exit 2; }
  # shellcheck source=../lib/sipp.sh
  . "$TLS_PEERS_DIR/../lib/sipp.sh"
  # shellcheck source=../lib/certs.sh
  . "$TLS_PEERS_DIR/../lib/certs.sh"
  # shellcheck source=../lib/kamailio_tls.sh
  . "$TLS_PEERS_DIR/../lib/kamailio_tls.sh"
  trap topo_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  export KTLS_EXTRA_ARGS=${KTLS_EXTRA_ARGS--x fm -X fm}
  command -v taskset >/dev/null && SIPP_CPUS=$other

  local dir kc kp c0 c1 cu0 cu1 cs0 cs1 p0 p1 ok failed rc=0
  dir=$(topo_dir)
  ktls_topology
  make_test_pki "$dir/pki" "DNS:peer.test,IP:$KTLS_KP_ADDR"
  SIPP_NS_HOSTS=$KTLS_NS_KP
  sipp_uas_start "$KTLS_UAS_ADDR" uas.xml "$dir/uas" $((calls / rate + 120))
  ktls_peer_start "$KTLS_NS_KP" "$dir/peer" "$KTLS_KP_ADDR" "sip:$KTLS_UAS_ADDR:5060" \
    cert="$dir/pki/server.crt" key="$dir/pki/server.key" cpu="$other"
  kp=$KTLS_PID
  ktls_client_start "$KTLS_NS_KC" "$dir/client" "$KTLS_KC_UDP" "$KTLS_KC_TLS" "$KTLS_KP_ADDR:5061" \
    ca="$dir/pki/ca.crt" verify=1 server_name=peer.test expect_name=peer.test \
    listen_cert="$dir/pki/client.crt" listen_key="$dir/pki/client.key" cpu="$cpu"
  kc=$KTLS_PID
  SIPP_NS_HOSTS=$KTLS_NS_UAC SIPP_PROXY_ADDR=$KTLS_KC_UDP SIPP_CALLER=$KTLS_UAC_ADDR
  # Warm-up: the TLS connection opens here, not in the measurement.
  sipp_uac_run "$dir/warm" 20 20 30 uac.xml -d 100 -s service >/dev/null 2>&1 ||
    { echo "kamailio_tls: warm-up calls failed (logs: $dir)" >&2; tail -n 20 "$dir/client/kamailio.log" >&2; exit 1; }
  sleep 1
  read -r c0 cu0 cs0 < <(ktls_cpu_seconds "$kc"); read -r p0 _ _ < <(ktls_cpu_seconds "$kp")
  sipp_uac_run "$dir/run" "$rate" "$calls" $((calls / rate + 60)) uac.xml -d 100 -s service \
    -l $((rate * 2 + 10)) || rc=$?
  read -r c1 cu1 cs1 < <(ktls_cpu_seconds "$kc"); read -r p1 _ _ < <(ktls_cpu_seconds "$kp")
  read -r ok failed < <(sipp_counts "$dir/run")
  [ "$ok" -gt 0 ] || { echo "kamailio_tls: no call succeeded (SIPp exit $rc)" >&2; tail -n 20 "$dir/client/kamailio.log" >&2; exit 1; }
  ktls_stop "$kc"; ktls_stop "$kp"
  awk -v c0="$c0" -v c1="$c1" -v p0="$p0" -v p1="$p1" -v u="$(awk -v a="$cu0" -v b="$cu1" 'BEGIN { print b - a }')" -v k="$(awk -v a="$cs0" -v b="$cs1" 'BEGIN { print b - a }')" -v n="$ok" -v f="$failed" -v calls="$calls" -v rate="$rate" -v cpu="$cpu" '
    BEGIN {
      printf "kamailio_tls: calls=%d rate=%d ok=%d failed=%d client_cpu_s=%.2f (user %.2f system %.2f) client_us_per_call=%.1f peer_us_per_call=%.1f client_cpu=%s\n",
        calls, rate, n, f, c1 - c0, u, k, (c1 - c0) * 1e6 / n, (p1 - p0) * 1e6 / n, cpu > "/dev/stderr"
      printf "%.1f\n", (c1 - c0) * 1e6 / n
    }'
)
