#!/usr/bin/env bash
# SIP over IPv6, failover on ICMPv6: nothing listens on region1's first peer 2001:2:0:2::11
# (its host answers ICMPv6 port unreachable, not rate limited); three calls over IPv6
# complete on the second peer 2001:2:0:2::12 at once, each setup well under the 1 s
# no-response timer (< 500 ms). The first ICMPv6 error makes the first peer suspect: logged,
# shown by sbcctl peers as region1/[2001:2:0:2::11]:5060, and later calls skip it.
source "$(dirname "$0")/sip_common.sh"
sip6_up
DEAD=${SIP6_PEERS[0]} LIVE=${SIP6_PEERS[1]}
peer6 "$LIVE" uas.xml
call6 c 3
[ "$CALL_OK" -eq 3 ] ||
  { call_trouble "$DIR/c"; fail "caller over IPv6 with [$DEAD]:5060 closed: $CALL_OK completed, $CALL_FAILED failed (expected 3, 0)"; }
n=$(received "$DIR/peer-$LIVE" '^INVITE ')
[ "$n" -eq 3 ] || fail "the second peer [$LIVE]:5060 received $n INVITEs, expected all 3"
read -r p50 p99 cnt < <(sipp_rtt_pcts "$DIR/c"); note "setup p50=$p50 max=$p99 ms over $cnt calls"
awk -v m="$p99" 'BEGIN { exit !(m < 500) }' ||
  fail "setup took up to $p99 ms, expected < 500 ms (a retry on ICMPv6 port unreachable at once, not after the 1 s no-response timer)"
grep -qF "peer region1/[$DEAD]:5060 suspect: icmp unreachable" "$DIR/sbcd.log" ||
  { tail -n 30 "$DIR/sbcd.log" >&2; fail "sbcd.log has no 'peer region1/[$DEAD]:5060 suspect: icmp unreachable'"; }
s=$(peer_field "region1/[$DEAD]:5060" suspect)
[ "$s" = True ] || { ctl peers >&2; fail "sbcctl peers --json: region1/[$DEAD]:5060 suspect is '$s', expected True"; }
r=$(sip_stat retries_icmp); note "retries_icmp=$r"
# The first call is retried on ICMPv6; the later ones normally skip the suspect peer.
[ "$r" = missing ] || { [ "$r" -ge 1 ] && [ "$r" -le 2 ]; } || fail "retries_icmp=$r, expected 1 (2 at most: later calls skip the suspect peer)"
u=$(need_stat icmp_unreachable)
[ "$u" -ge 1 ] || fail "icmp_unreachable=$u in sbcctl stats after the ICMPv6 port unreachable from [$DEAD], expected at least 1"
if [ "$(sip_stat setups_active dialogs_active)" != missing ]; then wait_idle 20; fi
echo "ok: closed IPv6 peer skipped on ICMPv6 in ${p99} ms at most"
