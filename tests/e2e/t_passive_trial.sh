#!/usr/bin/env bash
# Passive health of a peer that is never probed (probe = "none"): region1's first peer answers
# every INVITE 503; after 2 such failures in a row (passive_down_after = 2) it is down: the
# next call goes straight to the second peer. The peer is then replaced by one that answers;
# while down it gets nothing; after the retest interval (4 s) it is on trial, one real call
# goes to it, is answered, and the peer is up again. Every flip is logged and counted.
source "$(dirname "$0")/sip_common.sh"
SIP_PASSIVE_DOWN_AFTER=2
SIP_HEALTH='retest_interval_ms = 4000'
sip_up
P1=198.18.1.11
N1="region1/$P1:5060"
peer $P1 uas_503.xml
bad_pid=$SIPP_PID
peer 198.18.1.12 uas.xml

[ "$(peer_field "$N1" probe)" = none ] || fail "$N1 is probed; this test is about probe = \"none\""
call first 2
[ "$CALL_OK" -eq 2 ] || fail "calls while $N1 answers 503: $CALL_OK ok, $CALL_FAILED failed (expected retried on the next peer)"
[ "$(received "$DIR/peer-$P1" '^INVITE ')" -eq 2 ] || fail "$N1 did not get the first two calls"
[ "$(peer_field "$N1" state)" = down ] || fail "$N1 not down after 2 failures in a row: $(ctl peers)"
[ "$(peer_field "$N1" why)" = 503 ] || fail "why: '$(peer_field "$N1" why)', expected 503"
grep -q "peer $N1 down: 2 failures in a row (last: 503)" "$DIR/sbcd.log" || fail "the flip to down is not logged"
wait_metric "^sbc_peer_state\{peer=\"$N1\",state=\"down\"\} 1$" || fail "/metrics does not show $N1 down"

call while_down 1 uac.xml -p 5062
[ "$CALL_OK" -eq 1 ] || fail "the call while $N1 is down failed"
[ "$(received "$DIR/peer-$P1" '^INVITE ')" -eq 2 ] || fail "a call went to $N1 while it was down"

# The peer recovers (a SIPp that answers); after the retest interval one trial call goes to it.
kill "$bad_pid"
SIPP_PEER_DIR=$DIR/peer-good peer $P1 uas.xml
for _ in $(seq 1 160); do [ "$(peer_field "$N1" state)" = trial ] && break; sleep 0.05; done
[ "$(peer_field "$N1" state)" = trial ] || fail "$N1 not on trial 8 s after it went down (retest interval 4 s): $(ctl peers)"
grep -q "peer $N1: trial calls after 4 s down" "$DIR/sbcd.log" || fail "the trial is not logged"
call trial 1 uac.xml -p 5064
[ "$CALL_OK" -eq 1 ] || fail "the trial call failed"
[ "$(received "$DIR/peer-good" '^INVITE ')" -eq 1 ] || fail "the trial call did not go to $N1"
[ "$(peer_field "$N1" state)" = up ] || fail "$N1 not up after answering the trial call: $(ctl peers)"
grep -q "peer $N1 up: answered a call (200)" "$DIR/sbcd.log" || fail "the flip back up is not logged"
wait_metric "^sbc_peer_state_changes_total\{peer=\"$N1\"\} 3$" ||
  fail "/metrics: expected 3 state changes for $N1 (down, trial, up)"
echo "ok: $N1 down after 2 failures, back after one trial call"
