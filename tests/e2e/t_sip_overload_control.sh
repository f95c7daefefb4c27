#!/usr/bin/env bash
# RFC 7339 overload control, sbcd as the client: region1's first peer (priority 10, tried
# first) answers the first INVITE with oc=100 in sbcd's Via ("no new requests for a minute");
# every later call goes to the second peer, none fails, and the reduction shows in
# `sbcctl peers` and /metrics. sbcd's Via toward the peers advertises oc;oc-algo="loss".
source "$(dirname "$0")/sip_common.sh"
sip_up
P1=198.18.1.11
N1="region1/$P1:5060"
peer $P1 uas_oc.xml
peer 198.18.1.12 uas.xml
call first 1
[ "$CALL_OK" -eq 1 ] || fail "first call: $CALL_OK completed, $CALL_FAILED failed"
[ "$(received "$DIR/peer-$P1" '^INVITE ')" -eq 1 ] || fail "the first call did not go to $P1 (priority 10)"
top_vias "$DIR/peer-$P1" '^INVITE ' | head -n 1 | grep -q ';oc;oc-algo="loss"' ||
  fail "sbcd's Via does not advertise oc: $(top_vias "$DIR/peer-$P1" '^INVITE ' | head -n 1)"
for _ in $(seq 1 30); do [ "$(peer_field "$N1" oc_reduction)" = 100 ] && break; sleep 0.1; done
[ "$(peer_field "$N1" oc_reduction)" = 100 ] || fail "peer $N1: oc_reduction $(peer_field "$N1" oc_reduction), expected 100"
call more 6
[ "$CALL_OK" -eq 6 ] && [ "$CALL_FAILED" -eq 0 ] || fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected 6, 0)"
n=$(received "$DIR/peer-$P1" '^INVITE '); [ "$n" -eq 1 ] || fail "$P1 got $n INVITEs in all, expected only the first"
n=$(received "$DIR/peer-198.18.1.12" '^INVITE '); [ "$n" -eq 6 ] || fail "198.18.1.12 got $n INVITEs, expected 6"
ctl peers | grep -F "$N1" | grep -q '100%/' || fail "sbcctl peers shows no OC for $N1: $(ctl peers | grep -F "$N1")"
wait_metric "^sbc_peer_oc_reduction_percent\{peer=\"$N1\"\} 100" || fail "no sbc_peer_oc_reduction_percent 100 for $N1"
r=$(sip_stat oc_diverted); note "oc_diverted=$r oc_feedback=$(sip_stat oc_feedback)"
[ "$r" -eq 6 ] || fail "oc_diverted=$r, expected 6"
echo "ok: a peer's oc=100 moved the new calls to the other peer, none lost"
