#!/usr/bin/env bash
# SIP over TLS toward a peer: region1's only peer is a Kamailio 5.6 with its tls module
# (scripts/kamailio-tls/peer.cfg) at 198.18.1.31:5061, presenting a certificate for
# peer.test from a CA made here, in front of a SIPp callee at 198.18.1.11. Calls from the
# SIPp caller (UDP) go through sbcd, which opens one persistent TLS connection to the peer
# (TLS 1.3, the name peer.test checked; the peer starts after sbcd, so the first attempt is
# refused and the connection comes with a reconnect), and complete end to end: the callee
# sees our Via with SIP/2.0/TLS and a doubled Record-Route (RFC 5658, UDP on one side, TLS on
# the other).
# sbcctl conns shows the connection with its TLS version and the peer's certificate subject.
source "$(dirname "$0")/sip_common.sh"
source "$SIP_ROOT/tests/e2e/tls_common.sh"
tls_pki peer.test
SIP_EXTRA_ADDRS="$K1"
SIP_REGIONS=$(cat <<REG
[[region]]
name = "region1"
peers = [ { address = "$K1:5061", transport = "tls", server_name = "peer.test" } ]
probe = "none"

$(tls_hosts_region region2)
REG
)
SIP_EXTRA_CONFIG=$(tls_config)
sip_up

PEER=198.18.1.11
# Started after sbcd: its first connection meets a closed port.
kamailio_peer 1 peer.test
for _ in $(seq 1 50); do [ "$(est_count)" -ge 1 ] && break; sleep 0.1; done
conns=$(ctl conns --json)
grep -Eq '"state": ?"established"' <<<"$conns" || { echo "$conns" >&2; tail -n 20 "$DIR/kamailio1/kamailio.log" >&2; fail "sbcd has no established TLS connection to the peer"; }
grep -Eq '"tls_version": ?"TLSv1.3"' <<<"$conns" || { echo "$conns" >&2; fail "the connection is not TLS 1.3"; }
grep -q 'peer.test' <<<"$conns" || { echo "$conns" >&2; fail "sbcctl conns does not show the peer certificate's subject"; }

call tls 5
[ "$CALL_OK" -eq 5 ] && [ "$CALL_FAILED" -eq 0 ] || { tail -n 30 "$DIR/kamailio1/kamailio.log" >&2; fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected 5, 0)"; }
p=$(msgs "$DIR/peer-$PEER")
v=$(invite_vias "$DIR/peer-$PEER")
[ "$(grep -c '^Via: SIP/2.0/TLS 198.18.0.1:5060;branch=z9hG4bKsT' <<<"$v")" -eq 5 ] ||
  { echo "$v" >&2; fail "not every INVITE reached the callee with our Via over TLS (a fallback to UDP?)"; }
[ "$(grep -c '^Record-Route: .*198.18.0.1:5060;transport=tls;lr' <<<"$p")" -ge 1 ] && grep -q '^Record-Route: .*198.18.0.1:5060;lr' <<<"$p" ||
  { echo "$p" | grep -i record-route | head >&2; fail "the callee's INVITE lacks our doubled Record-Route (TLS side and UDP side)"; }
[ "$(received "$DIR/peer-$PEER" '^BYE ')" -eq 5 ] || fail "callee received $(received "$DIR/peer-$PEER" '^BYE ') BYEs through the TLS leg, expected 5"
n=$(est_count)
[ "$n" -eq 1 ] || fail "$n connections to the peer after 5 calls, expected the one persistent connection"
# With two workers (run.sh's t_tls_call@2w), the responses and the peer's in-dialog requests
# name their worker: the stream thread gives them straight to it (at least the 5 INVITEs'
# final responses and the 5 BYEs' 200s).
owner=$(curl -sf "http://$HTTP/metrics" | awk '$1 == "sbc_stream_to_owner_total" { print $2 }')
if [ "${SIP_WORKERS:-1}" -gt 1 ]; then
  [ "${owner:-0}" -ge 10 ] || fail "two workers: sbc_stream_to_owner_total is ${owner:-absent}, expected at least 10"
  note "two workers: $owner stream messages given straight to their owner"
else
  [ "${owner:-0}" -eq 0 ] || fail "one worker: sbc_stream_to_owner_total is $owner, expected 0 (nothing to choose)"
fi
echo "PASS: 5 calls over TLS to a Kamailio peer on one persistent TLS 1.3 connection"
