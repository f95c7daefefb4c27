#!/usr/bin/env bash
# SIP calls that change IP family through sbcd (signalling only, SIPp without RTP), on the two
# sites of sip6_up (caller side "core": sbcd 198.18.0.1 and [2001:2:0:1::1]; peer side
# "peers": sbcd 198.18.2.1 and [2001:2:0:2::1]). The default route goes to region1, whose
# first peer is 2001:2:0:2::11; a route for Request-URI user 2000 goes to a region "v4" of its
# own with the IPv4 peer 198.18.2.11 (trunk "cloud").
#  1. IPv4 to IPv6: three calls from the IPv4 caller 198.18.0.2 to the SIPp callee on
#     [2001:2:0:2::11] complete. Each INVITE the callee got has sbcd's Via
#     `SIP/2.0/UDP [2001:2:0:2::1]:5060;...` on top, the caller's IPv4 Via below it, and two
#     Record-Routes (RFC 5658): sbcd on the IPv6 leg [2001:2:0:2::1]:5060 on top, sbcd on the
#     caller's IPv4 leg 198.18.0.1:5060 below; the caller's 200s carry the same route set.
#     The ACKs and BYEs reach the callee from sbcd's IPv6 address, with both of sbcd's Routes
#     taken off.
#  2. IPv6 to IPv4: three calls from [2001:2:0:1::10] with user 2000 reach the SIPp callee on
#     198.18.2.11: Via on top `SIP/2.0/UDP 198.18.2.1:5060;...`, Record-Route 198.18.2.1:5060
#     on top of [2001:2:0:1::1]:5060, the same in the caller's 200s, ACKs and BYEs through
#     sbcd; none of these calls went to region1.
SIP_EXTRA_CONFIG='[[region]]
name = "v4"
trunk = "cloud"
peers = [ { address = "198.18.2.11:5060", priority = 10 } ]
probe = "none"

[[peer_group]]
name = "v4"
regions = ["v4"]

[[route]]
name = "to-v4"
match = { field = "ruri_user", pattern = "^2000$" }
peer_group = "v4"'
source "$(dirname "$0")/sip_common.sh"
sip6_up
P6=${SIP6_PEERS[0]} P4=198.18.2.11
# sbcd resolves the IPv4 hosts by ARP too before the calls (sip6_up warmed the IPv6 ones).
sip6_warm4 "$SIP6_NS_CORE" "$SIP6_CORE4" "$SIP6_CALLER4" ||
  fail "sbcd did not answer OPTIONS over IPv4 from the caller $SIP6_CALLER4 to $SIP6_CORE4:5060 within 3 s"
sip6_warm4 "$SIP6_NS_PEERS" "$SIP6_EDGE4" "$P4" ||
  fail "sbcd did not answer OPTIONS over IPv4 from the peer $P4 to $SIP6_EDGE4:5060 within 3 s"
peer6 "$P6" uas.xml
sip6_peer4 "$P4" uas.xml

# same_lines LINES WANT N WHAT: LINES are N lines, each exactly WANT.
same_lines() {
  local got=$1 want=$2 n=$3 what=$4 c
  c=$(grep -cxF -- "$want" <<<"$got" || true)
  [ "$c" -eq "$n" ] && [ "$(grep -c . <<<"$got")" -eq "$n" ] ||
    { echo "$got" >&2; fail "$what: expected $n times '$want', got the $(grep -c . <<<"$got") line(s) above"; }
}

# leg CALLER_DIR CALLEE_DIR TOP_VIA CALLER_VIA RR WHAT: the checks of one direction, 3 calls.
leg() {
  local cd=$1 pd=$2 via=$3 cvia=$4 rr=$5 what=$6 v n
  n=$(received "$pd" '^INVITE ')
  [ "$n" -eq 3 ] || fail "$what: the callee received $n INVITEs, expected 3"
  v=$(nth_vias "$pd" '^INVITE ' 1)
  [ "$(grep -c "^SIP/2.0/UDP $via;branch=" <<<"$v")" -eq 3 ] ||
    { echo "$v" >&2; fail "$what: the callee's INVITEs do not all carry sbcd's Via 'SIP/2.0/UDP $via;...' on top"; }
  v=$(nth_vias "$pd" '^INVITE ' 2)
  [ "$(grep -c "^SIP/2.0/UDP $cvia;branch=" <<<"$v")" -eq 3 ] ||
    { echo "$v" >&2; fail "$what: the callee's INVITEs do not carry the caller's Via $cvia below sbcd's"; }
  same_lines "$(uri_hosts "$pd" '^INVITE ' Record-Route)" "$rr" 3 \
    "$what: Record-Route of the callee's INVITEs (sbcd on the callee's leg, then on the caller's: RFC 5658)"
  same_lines "$(uri_hosts "$cd" '^SIP/2.0 200' Record-Route INVITE)" "$rr" 3 \
    "$what: Record-Route of the 200 OKs the caller got"
  n=$(received "$pd" '^ACK ')
  [ "$n" -eq 3 ] || fail "$what: the callee got $n ACKs through sbcd, expected 3"
  n=$(received "$pd" '^BYE ')
  [ "$n" -eq 3 ] || fail "$what: the callee got $n BYEs through sbcd, expected 3"
  v=$(nth_vias "$pd" '^(ACK|BYE) ' 1)
  [ "$(grep -c "^SIP/2.0/UDP $via;branch=" <<<"$v")" -eq 6 ] ||
    { echo "$v" >&2; fail "$what: the callee's ACKs and BYEs do not all come with sbcd's Via 'SIP/2.0/UDP $via;...' on top"; }
  # Both Routes the caller put in (sbcd's two Record-Routes) are sbcd's: none is left.
  same_lines "$(uri_hosts "$pd" '^(ACK|BYE) ' Route)" "-" 6 \
    "$what: Route of the callee's ACKs and BYEs (both of sbcd's entries taken off)"
}

# 1. IPv4 caller -> IPv6 callee.
sip6_call4 v4to6 3
[ "$CALL_OK" -eq 3 ] && [ "$CALL_FAILED" -eq 0 ] ||
  { call_trouble "$DIR/v4to6"; fail "IPv4 caller to the IPv6 callee: $CALL_OK calls completed, $CALL_FAILED failed (expected 3, 0)"; }
leg "$DIR/v4to6" "$DIR/peer-$P6" "\\[2001:2:0:2::1\\]:5060" "198\\.18\\.0\\.2:5060" \
  "[2001:2:0:2::1]:5060 198.18.0.1:5060" "IPv4 to IPv6"
note "IPv4 -> IPv6: 3 calls; callee's Record-Route: $(uri_hosts "$DIR/peer-$P6" '^INVITE ' Record-Route | head -n 1)"

# 2. IPv6 caller -> IPv4 callee (route to-v4).
call6 v6to4 3 uac.xml -s 2000
[ "$CALL_OK" -eq 3 ] && [ "$CALL_FAILED" -eq 0 ] ||
  { call_trouble "$DIR/v6to4"; fail "IPv6 caller to the IPv4 callee: $CALL_OK calls completed, $CALL_FAILED failed (expected 3, 0)"; }
leg "$DIR/v6to4" "$DIR/peer-$P4" "198\\.18\\.2\\.1:5060" "\\[2001:2:0:1::10\\]:5060" \
  "198.18.2.1:5060 [2001:2:0:1::1]:5060" "IPv6 to IPv4"
n=$(received "$DIR/peer-$P6" '^INVITE ')
[ "$n" -eq 3 ] || fail "the IPv6 callee got $n INVITEs in all, expected 3 (the calls to user 2000 belong to region v4)"
note "IPv6 -> IPv4: 3 calls; callee's Record-Route: $(uri_hosts "$DIR/peer-$P4" '^INVITE ' Record-Route | head -n 1)"

out=$(ctl peers)
expect_contains "$out" "v4/$P4:5060" "sbcctl peers names the IPv4 peer of region v4"
if [ "$(sip_stat setups_active dialogs_active)" != missing ]; then wait_idle 20; fi
echo "ok: calls across families through sbcd: IPv4->IPv6 and IPv6->IPv4, 3 each, Via of the callee's family, Record-Route doubled"
