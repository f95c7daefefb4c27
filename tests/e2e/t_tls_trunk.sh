#!/usr/bin/env bash
# Inbound SIP over TLS on trunks. The SIPp caller (UDP, 198.18.0.2) sends to a Kamailio 5.6
# (scripts/kamailio-tls/client.cfg) that relays over TLS to sbcd, checking sbcd's certificate
# (chain from the test CA, name sbc.test); sbcd relays over UDP to the SIPp callee 198.18.1.11.
# Each Kamailio has its own address (UDP 5060 and its TLS socket 5061 there), allowed by both
# TLS trunks:
#   tls-in   TLS on 5061, no client certificate asked: from 198.18.0.3, 5 calls complete;
#            sbcctl conns shows the inbound TLS connection with TLSv1.3.
#   mtls-in  TLS on 5062, require_client_certificate with client_name "client.test":
#            198.18.0.4 presents client.test (signed by the test CA): 5 calls complete;
#            198.18.0.5 presents no certificate: the handshake fails, no call reaches the
#            callee, sbc_stream_handshakes_total{result="failed",reason="no_client_cert"} > 0;
#            198.18.0.6 presents client.test signed by an untrusted CA: likewise, with
#            reason "untrusted"; 198.18.0.7 presents other.test from the test CA: likewise,
#            reason "name_mismatch".
source "$(dirname "$0")/sip_common.sh"
source "$(dirname "$0")/tls_common.sh"
K_PLAIN=198.18.0.3 K_MTLS=198.18.0.4 K_NOCERT=198.18.0.5 K_UNTRUSTED=198.18.0.6 K_WRONG=198.18.0.7
PKI=$(mktemp -d /tmp/sbc-tls-pki.XXXXXX)
trap 'topo_cleanup; rm -rf "$PKI"' EXIT INT TERM
make_test_pki "$PKI" || { echo "FAIL: cannot make the test PKI" >&2; exit 1; }
make_leaf "$PKI" other "DNS:other.test" client ca || { echo "FAIL: other.test client certificate" >&2; exit 1; }
SIP_EXTRA_ADDRS="$K_PLAIN $K_MTLS $K_NOCERT $K_UNTRUSTED $K_WRONG"
ALLOW="[\"$K_PLAIN/32\", \"$K_MTLS/32\", \"$K_NOCERT/32\", \"$K_UNTRUSTED/32\", \"$K_WRONG/32\"]"
SIP_EXTRA_CONFIG=$(cat <<CONF
$(tls_trunk tls-in 5061 "$ALLOW")
$(tls_trunk mtls-in 5062 "$ALLOW" 'tls = { require_client_certificate = true, client_name = "client.test" }')

$(tls_server_config)
CONF
)
sip_up
note "sbcd up (${SECONDS} s)"
trap 'topo_cleanup; rm -rf "$PKI"' EXIT INT TERM

PEER=198.18.1.11; peer $PEER uas.xml
# kamailio ADDR PORT [OPTS...]: a client.cfg Kamailio on ADDR toward sbcd's TLS port PORT,
# verifying sbcd's certificate for sbc.test (SNI sbc.test); logs in $DIR/k-ADDR. Its no-response
# timer (fr_ms) is 5 s where calls must complete (a TLS handshake on a loaded machine), 1 s where
# they must not. Kamailio does
# not bind its outgoing TCP connections to its TLS socket's address: the kernel would pick the
# namespace's first address (the caller's), so a host route to sbcd names ADDR as the source
# (the SIPp and Python clients here all bind their own address).
kamailio() {
  local addr=$1 port=$2; shift 2
  ip -n "$SIPP_NS_HOSTS" route replace "$SIPP_PROXY_ADDR/32" dev "$HOSTS_IF" src "$addr"
  ktls_client_start "$SIPP_NS_HOSTS" "$DIR/k-$addr" "$addr" "$addr" "sip:$SIPP_PROXY_ADDR:$port;transport=tls" \
    ca="$PKI/ca.crt" server_name=sbc.test expect_name=sbc.test "$@" ||
    { tail -n 30 "$DIR/k-$addr/kamailio.log" >&2; fail "Kamailio on $addr did not start"; }
}
# calls_via ADDR NAME N: N SIPp calls (UDP) from the caller to the Kamailio on ADDR.
calls_via() { SIPP_PROXY_ADDR=$1 call "$2" "$3"; }
# conn_field REMOTE_IP FIELD: FIELD of the established inbound connection from REMOTE_IP in
# `sbcctl conns --json` ("none" without one).
conn_field() {
  ctl conns --json | python3 -c '
import json, sys
ip, field = sys.argv[1], sys.argv[2]
for c in json.load(sys.stdin).get("conns", []):
    if c["direction"] == "in" and c["state"] == "established" and c["remote"].split(":")[0] == ip:
        print(c.get(field, "missing")); break
else: print("none")' "$1" "$2"
}
handshakes_failed() { # REASON: sbc_stream_handshakes_total{result="failed",reason=REASON}, 0 if absent
  curl -sf "http://$HTTP/metrics" | awk -v r="reason=\"$1\"" '/^sbc_stream_handshakes_total\{/ && /result="failed"/ && index($0, r) { v = $NF } END { print v + 0 }'
}
invites() { received "$DIR/peer-$PEER" '^INVITE '; }

# --- TLS, no client certificate ---
kamailio "$K_PLAIN" 5061 fr_ms=5000 listen_cert="$PKI/client.crt" listen_key="$PKI/client.key"
calls_via "$K_PLAIN" tls 5
[ "$CALL_OK" -eq 5 ] && [ "$CALL_FAILED" -eq 0 ] ||
  { tail -n 20 "$DIR/k-$K_PLAIN/kamailio.log" >&2; tail -n 10 "$DIR/sbcd.log" >&2; fail "TLS trunk: $CALL_OK completed, $CALL_FAILED failed (expected 5, 0)"; }
[ "$(invites)" -eq 5 ] || fail "the callee received $(invites) INVITEs, expected 5"
[ "$(received "$DIR/peer-$PEER" '^BYE ')" -eq 5 ] || fail "the callee received $(received "$DIR/peer-$PEER" '^BYE ') BYEs, expected 5"
v=$(conn_field "$K_PLAIN" tls_version)
[ "$v" = TLSv1.3 ] || { ctl conns >&2; fail "sbcctl conns: inbound TLS connection from $K_PLAIN has tls_version '$v', expected TLSv1.3"; }
[ "$(conn_field "$K_PLAIN" transport)" = tls ] || { ctl conns >&2; fail "sbcctl conns: the connection from $K_PLAIN is not shown as tls"; }
ctl conns | grep -E "^ *[0-9]+ +in +tls +established .*$K_PLAIN:.*TLSv1.3" >/dev/null ||
  { ctl conns >&2; fail "sbcctl conns (text) does not show the inbound TLS 1.3 connection from $K_PLAIN"; }
note "TLS trunk: 5 calls, inbound TLSv1.3 connection shown (${SECONDS} s)"

# --- mutual TLS, client.test presented ---
kamailio "$K_MTLS" 5062 fr_ms=5000 cert="$PKI/client.crt" key="$PKI/client.key"
calls_via "$K_MTLS" mtls 5
[ "$CALL_OK" -eq 5 ] && [ "$CALL_FAILED" -eq 0 ] ||
  { tail -n 20 "$DIR/k-$K_MTLS/kamailio.log" >&2; tail -n 10 "$DIR/sbcd.log" >&2; fail "mutual TLS with client.test: $CALL_OK completed, $CALL_FAILED failed (expected 5, 0)"; }
[ "$(invites)" -eq 10 ] || fail "the callee received $(invites) INVITEs in all, expected 10"
s=$(conn_field "$K_MTLS" peer_subject)
grep -q client.test <<<"$s" || { ctl conns >&2; fail "sbcctl conns: the mutual TLS connection from $K_MTLS shows subject '$s', expected client.test"; }
note "mutual TLS: 5 calls with the client certificate ($s) (${SECONDS} s)"

# --- mutual TLS refused: no certificate, then an untrusted one ---
for case in "$K_NOCERT no_client_cert" "$K_UNTRUSTED untrusted" "$K_WRONG name_mismatch"; do
  read -r addr reason <<<"$case"
  before=$(handshakes_failed "$reason")
  case "$reason" in
    untrusted) kamailio "$addr" 5062 fr_ms=1000 cert="$PKI/untrusted-client.crt" key="$PKI/untrusted-client.key";;
    name_mismatch) kamailio "$addr" 5062 fr_ms=1000 cert="$PKI/other.crt" key="$PKI/other.key";;
    *) kamailio "$addr" 5062 fr_ms=1000 listen_cert="$PKI/client.crt" listen_key="$PKI/client.key";;
  esac
  n0=$(invites)
  calls_via "$addr" "refused-$reason" 1
  [ "$CALL_OK" -eq 0 ] || fail "mutual TLS, $reason: $CALL_OK calls completed, expected none"
  [ "$(invites)" -eq "$n0" ] || fail "mutual TLS, $reason: $(( $(invites) - n0 )) INVITEs reached the callee, expected none"
  [ "$(conn_field "$addr" state)" = none ] || { ctl conns >&2; fail "mutual TLS, $reason: sbcd shows an established connection from $addr"; }
  for _ in $(seq 30); do [ "$(handshakes_failed "$reason")" -gt "$before" ] && break; sleep 0.1; done
  after=$(handshakes_failed "$reason")
  [ "$after" -gt "$before" ] ||
    fail "sbc_stream_handshakes_total{result=\"failed\",reason=\"$reason\"} stayed at $after: $(curl -sf "http://$HTTP/metrics" | grep '^sbc_stream_handshakes_total' | tr '\n' ' ')"
  note "mutual TLS, $reason: handshake refused ($before -> $after), no call reached the callee (${SECONDS} s)"
done
echo "PASS: inbound TLS 1.3 trunk (5 calls), mutual TLS with client.test (5 calls), no, untrusted and wrongly named client certificates refused in the handshake"
