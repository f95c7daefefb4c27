# Shared by the SIP-over-TLS e2e tests t_tls_*.sh (source it after sip_common.sh): the test
# PKI, Kamailio 5.6 TLS peers at K1 (198.18.1.31) and K2 (198.18.1.32) in the hosts
# namespace in front of the SIPp callees .11 and .12, the config pieces every such test
# writes, and what they read back (established connections, the Vias the callee saw).
# shellcheck source=../../scripts/lib/certs.sh
source "$SIP_ROOT/scripts/lib/certs.sh"
# shellcheck source=../../scripts/lib/kamailio_tls.sh
source "$SIP_ROOT/scripts/lib/kamailio_tls.sh"
K1=198.18.1.31
K2=198.18.1.32

# tls_pki NAME...: the test PKI (make_test_pki: ca, server, wrongname, expired, client, ...)
# in a test folder, plus a server certificate NAME.crt for DNS:NAME for each NAME. Sets PKI.
tls_pki() {
  PKI=$(topo_dir)
  make_test_pki "$PKI" || fail "cannot make the test PKI"
  local n
  for n in "$@"; do make_leaf "$PKI" "$n" "DNS:$n" server ca || fail "certificate for $n"; done
}

# tls_hosts_region NAME: a [[region]] of the SIPp hosts as UDP peers, so that sbcd takes their
# OPTIONS (sip_warm); a call that fell back to them would reach a callee without our TLS Via.
tls_hosts_region() {
  cat <<REG
[[region]]
name = "$1"
peers = [ { address = "198.18.1.11:5060" }, { address = "198.18.1.12:5060" },
          { address = "198.18.2.21:5060" }, { address = "198.18.2.22:5060" } ]
probe = "none"
REG
}

# tls_trunk NAME PORT ALLOW [EXTRA]: a [[trunk]] on the hosts interface taking TLS on PORT
# from ALLOW (a TOML list), with EXTRA lines.
tls_trunk() {
  printf '[[trunk]]\nname = "%s"\ninterface = "hosts"\ntransports = ["tls"]\ntls_port = %s\nallow = %s\n%s\n' \
    "$1" "$2" "$3" "${4:-}"
}

# tls_server_config: [tls] with the test PKI's server certificate (sbc.test) and CA, and a
# handshake timeout that a loaded 2-core machine does not outlast (a refused handshake fails at
# once whatever it is), for tests with TLS trunks.
tls_server_config() {
  printf '[tls]\ncertificate = "%s"\nprivate_key = "%s"\nca_file = "%s"\n\n[streams]\nhandshake_timeout_ms = 15000\n' \
    "$PKI/server.crt" "$PKI/server.key" "$PKI/ca.crt"
}

# tls_config [EXTRA]: [tls] trusting the test CA, reconnects within 100-500 ms, then EXTRA.
tls_config() {
  printf '[tls]\nca_file = "%s"\n\n[streams]\nreconnect_min_ms = 100\nreconnect_max_ms = 500\n%s\n' "$PKI/ca.crt" "${1:-}"
}

# tls_peers_before_sbcd FUNCTION: runs FUNCTION (which starts the peers) once sip_up has
# written the config and before it starts sbcd, so that sbcd's first handshakes meet them.
tls_peers_before_sbcd() {
  eval "orig_$(declare -f sip_write_config)"
  eval "sip_write_config() { orig_sip_write_config \"\$@\"; $1; }"
}

# kamailio_peer N CERT [OPTION...]: Kamailio TLS peer N (1: K1 in front of 198.18.1.11, 2: K2
# in front of .12) presenting $PKI/CERT.crt, with its SIPp callee; options as ktls_peer_start.
# Sets KP<N> to its PID.
kamailio_peer() {
  local n=$1 cert=$2; shift 2
  local addr callee
  if [ "$n" = 1 ]; then addr=$K1 callee=198.18.1.11; else addr=$K2 callee=198.18.1.12; fi
  peer "$callee" uas.xml
  ktls_peer_start "$SIPP_NS_HOSTS" "$DIR/kamailio$n" "$addr" "sip:$callee:5060" cert="$PKI/$cert.crt" \
    key="$PKI/$cert.key" "$@" || { tail -n 20 "$DIR/kamailio$n/kamailio.log" >&2; fail "Kamailio peer $n did not start"; }
  printf -v "KP$n" '%s' "$KTLS_PID"
}

# est_count: established connections in `sbcctl conns`.
est_count() { ctl conns --json | grep -Eo '"state": ?"established"' | wc -l; }

# invite_vias DIR: the two top Vias of every INVITE SIPp in DIR received (Kamailio's, then ours).
invite_vias() {
  msgs "$1" | awk '/message received/{m=1;next} m&&NF{inv=($0 ~ /^INVITE /);m=0;next} inv&&/^Via:/{print;n++} inv&&/^Via:/&&n%2==0{inv=0}'
}
