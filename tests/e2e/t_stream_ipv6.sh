#!/usr/bin/env bash
# SIP over TCP and TLS on IPv6, on the two sites of sip6_up (caller side "core": sbcd
# [2001:2:0:1::1], whose trunk "carrier" takes UDP and TCP on 5060; peer side "peers": sbcd
# [2001:2:0:2::1]). The kernel side of sbcd's exception port carries the IPv6 addresses; the
# fast path stays the only Neighbor Discovery speaker.
#  1. TCP caller over IPv6: a SIPp caller on one TCP connection (-t t1) from [2001:2:0:1::10]
#     makes three calls to the UDP callee on [2001:2:0:2::11]: all complete; the callee sees
#     sbcd's Via `SIP/2.0/UDP [2001:2:0:2::1]:5060` over the caller's TCP Via, and sbcd's
#     Record-Route doubled (RFC 5658: TCP on the caller's side); `sbcctl conns` shows the one
#     inbound connection [2001:2:0:1::1]:5060 <- [2001:2:0:1::10]:PORT that carried them.
#  2. TLS peer over IPv6: region "tls6" has one peer, a Kamailio 5.6 with its tls module
#     listening on [2001:2:0:2::31]:5061 (certificate for peer.test, checked by name) in front
#     of the SIPp callee on [2001:2:0:2::12]. Three UDP calls with Request-URI user tls* reach
#     that callee through one persistent TLS connection from sbcd's [2001:2:0:2::1]; the
#     callee sees sbcd's Via `SIP/2.0/TLS [2001:2:0:2::1]:5060` under Kamailio's.
source "$(dirname "$0")/sip_common.sh"
source "$SIP_ROOT/tests/e2e/tls_common.sh"
tls_pki peer.test
K6=2001:2:0:2::31
SIP_EXTRA_CONFIG=$(cat <<CONF
[[region]]
name = "tls6"
trunk = "cloud"
peers = [ { address = "[$K6]:5061", transport = "tls", server_name = "peer.test" } ]
probe = "none"

[[peer_group]]
name = "tls6"
regions = ["tls6"]

[[route]]
name = "to-tls6"
match = { field = "ruri_user", pattern = "^tls" }
peer_group = "tls6"

$(tls_config)
CONF
)
# The carrier trunk takes TCP too; Kamailio (and its callee) start once the peers site has
# K6, before sbcd, so that sbcd's first handshake meets it (a refused connection would put a
# probe = "none" peer down for its retest interval).
eval "orig_$(declare -f sip6_write_config)"
sip6_write_config() {
  orig_sip6_write_config "$@"
  sed -i '/^name = "carrier"$/a transports = ["udp", "tcp"]' "$1"
  sip6_host "$SIP6_NS_PEERS" "s${TOPO_ID}peerb" "$K6/64"
  peer6 "${SIP6_PEERS[1]}" uas.xml
  ktls_peer_start "$SIP6_NS_PEERS" "$DIR/kamailio6" "[$K6]" "sip:[${SIP6_PEERS[1]}]:5060" \
    cert="$PKI/peer.test.crt" key="$PKI/peer.test.key" ||
    { tail -n 20 "$DIR/kamailio6/kamailio.log" >&2; fail "Kamailio did not start on [$K6]:5061"; }
}
sip6_up
note "sbcd up (${SECONDS} s)"


# --- 1. TCP caller over IPv6 -> sbcd -> UDP callee over IPv6 ---
UDP_PEER=${SIP6_PEERS[0]}
peer6 "$UDP_PEER" uas.xml
# Held 3 s once answered, so that sbcctl conns shows the connection while it carries the calls
# (its figures are the stream thread's report, refreshed about once a second).
SIPP_NS_HOSTS=$SIP6_NS_CORE SIPP_PROXY_ADDR="[$SIP6_CORE]" SIPP_CALLER=$SIP6_CALLER \
  sipp_uac_start "$DIR/from-tcp" 10 3 40 uac.xml -s 1000 -d 3000 -trace_msg -t t1 ||
  fail "the SIPp TCP caller did not start"
inbound() { awk '$1 == "in" && $2 == "tcp" && $4 == "[2001:2:0:1::1]:5060" && $5 ~ /^\[2001:2:0:1::10\]:/ && $7 >= 9' <<<"$1"; }
c=
for _ in $(seq 1 40); do c=$(conns_lines); [ -n "$(inbound "$c")" ] && break; sleep 0.1; done
[ -n "$(inbound "$c")" ] ||
  { echo "$c" >&2; fail "sbcctl conns never showed the caller's inbound TCP connection over IPv6 with the 9 responses (100, 180, 200 of 3 calls) it carried"; }
[ "$(grep -c '^in tcp .* \[2001:2:0:1::10\]:' <<<"$c")" -eq 1 ] ||
  { echo "$c" >&2; fail "expected exactly one connection with the caller (every response on its own connection)"; }
rc=0; sipp_uac_wait || rc=$?
read -r CALL_OK CALL_FAILED < <(sipp_counts "$DIR/from-tcp")
[ "$rc" -eq 0 ] && [ "$CALL_OK" -eq 3 ] && [ "$CALL_FAILED" -eq 0 ] ||
  { call_trouble "$DIR/from-tcp"; fail "TCP caller over IPv6: SIPp exited $rc, $CALL_OK calls completed, $CALL_FAILED failed (expected 0, 3, 0)"; }
[ "$(msgs "$DIR/from-tcp" | grep -c 'TCP message received')" -ge 12 ] ||
  fail "the caller logged fewer than 12 messages received over TCP (100, 180, 200 and the BYE's 200, 3 calls)"
v=$(top_vias "$DIR/peer-$UDP_PEER" '^INVITE ')
[ "$(grep -cF 'Via: SIP/2.0/UDP [2001:2:0:2::1]:5060;' <<<"$v")" -eq 3 ] ||
  { echo "$v" >&2; fail "the UDP callee did not see sbcd's Via [2001:2:0:2::1]:5060 on all 3 INVITEs"; }
p=$(msgs "$DIR/peer-$UDP_PEER")
grep -q '^Via: SIP/2.0/TCP \[2001:2:0:1::10\]:' <<<"$p" ||
  { echo "$p" | grep '^Via' | head >&2; fail "the callee's INVITEs lack the caller's own TCP Via below sbcd's"; }
grep -q '^Record-Route: .*<sip:\[2001:2:0:1::1\]:5060;transport=tcp;lr[;>]' <<<"$p" &&
  grep -q '^Record-Route: .*<sip:\[2001:2:0:2::1\]:5060;lr[;>]' <<<"$p" ||
  { echo "$p" | grep -i '^record-route' | head >&2; fail "the callee's INVITE lacks sbcd's doubled Record-Route (TCP on the caller's IPv6 side, UDP on the callee's)"; }
[ "$(received "$DIR/peer-$UDP_PEER" '^BYE ')" -eq 3 ] || fail "the UDP callee received $(received "$DIR/peer-$UDP_PEER" '^BYE ') BYEs, expected 3"
note "TCP over IPv6: 3 calls on one inbound connection (${SECONDS} s)"

# --- 2. UDP caller over IPv6 -> sbcd -> TLS peer over IPv6 ---
for _ in $(seq 1 100); do conns_lines | grep -q "^out tls established .* \[$K6\]:5061 " && break; sleep 0.1; done
c=$(conns_lines)
grep -q "^out tls established \[2001:2:0:2::1\]:[0-9]* \[$K6\]:5061 " <<<"$c" ||
  { echo "$c" >&2; tail -n 20 "$DIR/kamailio6/kamailio.log" >&2; fail "sbcd has no established TLS connection from [2001:2:0:2::1] to the peer [$K6]:5061"; }
TLS_CALLEE=${SIP6_PEERS[1]}
call6 to-tls 3 uac.xml -s tls1000
[ "$CALL_OK" -eq 3 ] && [ "$CALL_FAILED" -eq 0 ] ||
  { tail -n 30 "$DIR/kamailio6/kamailio.log" >&2; call_trouble "$DIR/to-tls"; fail "UDP caller -> TLS peer over IPv6: $CALL_OK completed, $CALL_FAILED failed (expected 3, 0)"; }
v=$(invite_vias "$DIR/peer-$TLS_CALLEE")
[ "$(grep -cF 'Via: SIP/2.0/TLS [2001:2:0:2::1]:5060;branch=' <<<"$v")" -eq 3 ] ||
  { echo "$v" >&2; fail "not every INVITE reached the callee behind Kamailio with sbcd's TLS Via [2001:2:0:2::1]:5060"; }
[ "$(received "$DIR/peer-$TLS_CALLEE" '^BYE ')" -eq 3 ] || fail "the callee behind Kamailio received $(received "$DIR/peer-$TLS_CALLEE" '^BYE ') BYEs, expected 3"
[ "$(received "$DIR/peer-$UDP_PEER" '^INVITE ')" -eq 3 ] || fail "a tls* call reached the UDP callee"
n=$(conns_lines | grep -c "^out tls established .* \[$K6\]:5061 ")
[ "$n" -eq 1 ] || fail "$n TLS connections to the peer after 3 calls, expected the one persistent connection"
m=$(curl -sf "http://$HTTP/metrics" | awk '$1 ~ /^sbc_exception_port_/ && /other/ { print $2 }')
note "exception port frames of the kernel's own kept inside: ${m:-0}"
if [ "$(sip_stat setups_active dialogs_active)" != missing ]; then wait_idle 20; fi
echo "ok: 3 calls from a TCP caller over IPv6, 3 calls to a Kamailio TLS peer over IPv6 on one connection"
