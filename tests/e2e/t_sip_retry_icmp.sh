#!/usr/bin/env bash
# SIP proxy, retry on ICMP: nothing listens on region1's first peer (its host answers ICMP
# port unreachable); two calls complete on the second peer at once, each setup well under
# the 1 s no-response timer (< 500 ms).
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.1.12 uas.xml
call c 2
[ "$CALL_OK" -eq 2 ] || fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected 2, 0)"
read -r p50 p99 n < <(sipp_rtt_pcts "$DIR/c"); note "setup p50=$p50 max=$p99 ms over $n calls"
[ "$(received "$DIR/peer-198.18.1.12" '^INVITE ')" -eq 2 ] || fail "the second peer did not get both calls"
awk -v m="$p99" 'BEGIN { exit !(m < 500) }' || fail "setup took up to $p99 ms, expected < 500 ms (ICMP retries at once)"
r=$(sip_stat retries_icmp); note "retries_icmp=$r"
[ "$r" = missing ] || [ "$r" -ge 2 ] || fail "retries_icmp=$r, expected at least 2"
u=$(need_stat icmp_unreachable)
[ "$u" -ge 2 ] || fail "icmp_unreachable=$u in sbcctl stats, expected at least 2"
wait_metric '^sbc_icmp_unreachable_total [1-9]' || fail "/metrics does not count ICMP unreachable"
echo "ok: closed port skipped on ICMP in ${p99} ms at most"
