#!/usr/bin/env bash
# SIP over UDP on IPv6 (sip6_up in sip_common.sh: the caller 2001:2:0:1::10 on sbcd's
# interface "core" [2001:2:0:1::1], region1's peers 2001:2:0:2::11 and ::12 on its interface
# "peers" [2001:2:0:2::1], a veth each): three calls from a SIPp caller over IPv6 (uac.xml)
# through sbcd to a SIPp callee on 2001:2:0:2::11 (uas.xml) all complete. The callee got the
# three INVITEs with sbcd's Via on top naming [2001:2:0:2::1]:5060 (brackets, RFC 5118) above
# the caller's own, and a Record-Route naming sbcd on its side; the caller got a Record-Route
# naming sbcd on its side, and its ACKs and BYEs reached the callee through sbcd. sbcctl
# peers names the peers "region1/[2001:2:0:2::11]:5060".
source "$(dirname "$0")/sip_common.sh"
sip6_up
PEER=${SIP6_PEERS[0]}
peer6 "$PEER" uas.xml
call6 basic 3
[ "$CALL_OK" -eq 3 ] && [ "$CALL_FAILED" -eq 0 ] ||
  { call_trouble "$DIR/basic"; fail "caller over IPv6: $CALL_OK calls completed, $CALL_FAILED failed (expected 3, 0)"; }

c=$(msgs "$DIR/basic"); p=$(msgs "$DIR/peer-$PEER")
n=$(received "$DIR/peer-$PEER" '^INVITE ')
[ "$n" -eq 3 ] || fail "the callee on [$PEER]:5060 received $n INVITEs, expected 3"
# The top Via of every INVITE the callee got is sbcd's, its host in brackets (RFC 5118).
v=$(top_vias "$DIR/peer-$PEER" '^INVITE ')
if [ -z "$v" ] || grep -qvF 'Via: SIP/2.0/UDP [2001:2:0:2::1]:5060;' <<<"$v"; then
  echo "$v" >&2; fail "the callee's INVITEs do not all carry sbcd's Via 'SIP/2.0/UDP [2001:2:0:2::1]:5060;...' on top"
fi
# Below it, the caller's own Via, unchanged: the second Via of each INVITE received.
v2=$(msgs "$DIR/peer-$PEER" | awk '
  /message received/ { want = 1; inmsg = 0; next }
  want && NF { want = 0; inmsg = ($0 ~ /^INVITE /); nv = 0; next }
  inmsg && /^Via:/ { if (++nv == 2) print }
  /^-----/ { inmsg = 0 }')
[ "$(grep -cF 'Via: SIP/2.0/UDP [2001:2:0:1::10]:5060;branch=' <<<"$v2")" -eq 3 ] ||
  { echo "$v2" >&2; fail "the callee's INVITEs do not carry the caller's Via [2001:2:0:1::10]:5060 below sbcd's"; }
grep -q '^Record-Route: .*<sip:\[2001:2:0:2::1\]:5060;' <<<"$p" ||
  { echo "$p" | head -n 40 >&2; fail "the callee's INVITE has no Record-Route naming sbcd's [2001:2:0:2::1]:5060"; }
grep -q '^Record-Route: .*<sip:\[2001:2:0:1::1\]:5060;' <<<"$c" ||
  { echo "$c" | head -n 80 >&2; fail "the caller's 200 has no Record-Route naming sbcd's [2001:2:0:1::1]:5060"; }
[ "$(grep -c '^Route: .*<sip:\[2001:2:0:1::1\]:5060;' <<<"$c")" -ge 6 ] ||
  { echo "$c" | tail -n 60 >&2; fail "the caller did not send its ACKs and BYEs with a Route to sbcd's [2001:2:0:1::1]:5060 (3 calls)"; }
a=$(received "$DIR/peer-$PEER" '^ACK ')
[ "$a" -ge 3 ] || fail "the callee got $a ACKs through sbcd, expected 3"
b=$(received "$DIR/peer-$PEER" '^BYE ')
[ "$b" -eq 3 ] || fail "the callee got $b BYEs through sbcd, expected 3"
note "3 calls over IPv6 through sbcd; callee's top Via: $(head -n 1 <<<"$v")"

out=$(ctl peers)
expect_contains "$out" "region1/[$PEER]:5060" "sbcctl peers names the IPv6 peer"
expect_contains "$out" "region1/[${SIP6_PEERS[1]}]:5060" "sbcctl peers names the second IPv6 peer"
if [ "$(sip_stat setups_active dialogs_active)" != missing ]; then wait_idle 20; fi
echo "ok: SIP over UDP on IPv6: 3 calls, Via [2001:2:0:2::1]:5060, Record-Route both sides"
