#!/usr/bin/env bash
# SIP proxy, failover to the next region: both region1 peers answer 503; the call completes
# on region2's first peer after both region1 peers were tried.
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.1.11 uas_503.xml
peer 198.18.1.12 uas_503.xml
peer 198.18.2.21 uas.xml
peer 198.18.2.22 uas.xml
call c 2
[ "$CALL_OK" -eq 2 ] || fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected 2, 0)"
for a in 198.18.1.11 198.18.1.12; do
  n=$(received "$DIR/peer-$a" '^INVITE '); [ "$n" -ge 2 ] || fail "region1 peer $a got $n INVITEs, expected 2 (local region first)"
done
n=$(received "$DIR/peer-198.18.2.21" '^INVITE '); [ "$n" -eq 2 ] || fail "region2's first peer got $n INVITEs, expected 2"
n=$(received "$DIR/peer-198.18.2.22" '^INVITE '); [ "$n" -eq 0 ] || fail "region2's second peer got $n INVITEs, expected 0 (priority 20)"
r=$(sip_stat failover_region); note "failover_region=$r"
[ "$r" = missing ] || [ "$r" -ge 2 ] || fail "failover_region=$r, expected at least 2"
echo "ok: region1 failing -> region2"
