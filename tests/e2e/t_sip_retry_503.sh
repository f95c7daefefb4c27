#!/usr/bin/env bash
# SIP proxy, retry on 503: region1's first peer answers every INVITE 503, the second answers
# normally. Three calls all complete on the second peer; the first gets each INVITE and the
# hop-by-hop ACK of its 503 from sbcd; the caller never sees the 503.
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.1.11 uas_503.xml
peer 198.18.1.12 uas.xml
call c 3
[ "$CALL_OK" -eq 3 ] && [ "$CALL_FAILED" -eq 0 ] || fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected 3, 0)"
[ "$(received "$DIR/c" '^SIP/2.0 503')" -eq 0 ] || fail "the 503 of the first peer reached the caller"
n=$(received "$DIR/peer-198.18.1.11" '^INVITE '); [ "$n" -ge 3 ] || fail "first peer got $n INVITEs, expected 3 (it is tried first)"
n=$(received "$DIR/peer-198.18.1.11" '^ACK '); [ "$n" -ge 3 ] || fail "first peer got $n ACKs for its 503s, expected 3 (hop by hop from sbcd)"
n=$(received "$DIR/peer-198.18.1.12" '^INVITE '); [ "$n" -eq 3 ] || fail "second peer got $n INVITEs, expected 3"
r=$(sip_stat retries_code); note "retries_code=$r"
[ "$r" = missing ] || [ "$r" -ge 3 ] || fail "retries_code=$r, expected at least 3"
echo "ok: 503 retried on the next peer"
