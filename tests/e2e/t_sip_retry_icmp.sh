#!/usr/bin/env bash
# SIP proxy, retry on ICMP: nothing listens on region1's first peer (its host answers ICMP
# port unreachable); two calls complete on the second peer at once, each setup well under
# the 1 s no-response timer (< 500 ms). The first ICMP makes the first peer suspect (issue
# 13): the second call goes to the second peer without trying it.
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.1.12 uas.xml
call c 2
[ "$CALL_OK" -eq 2 ] || fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected 2, 0)"
read -r p50 p99 n < <(sipp_rtt_pcts "$DIR/c"); note "setup p50=$p50 max=$p99 ms over $n calls"
[ "$(received "$DIR/peer-198.18.1.12" '^INVITE ')" -eq 2 ] || fail "the second peer did not get both calls"
awk -v m="$p99" 'BEGIN { exit !(m < 500) }' || fail "setup took up to $p99 ms, expected < 500 ms (ICMP retries at once)"
r=$(sip_stat retries_icmp); note "retries_icmp=$r"
# The first call is retried on ICMP; the second starts 100 ms later and normally skips the
# suspect peer (1 retry in all), unless a loaded control core marked it later than that (2).
[ "$r" = missing ] || { [ "$r" -ge 1 ] && [ "$r" -le 2 ]; } || fail "retries_icmp=$r, expected 1 (2 at most)"
grep -q "peer region1/198.18.1.11:5060 suspect: icmp unreachable" "$DIR/sbcd.log" ||
  fail "the suspect mark is not logged: $(cat "$DIR/sbcd.log")"
u=$(need_stat icmp_unreachable)
[ "$u" -ge 1 ] || fail "icmp_unreachable=$u in sbcctl stats, expected at least 1"
wait_metric '^sbc_icmp_unreachable_total [1-9]' || fail "/metrics does not count ICMP unreachable"
echo "ok: closed port skipped on ICMP in ${p99} ms at most"
