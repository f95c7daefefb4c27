#!/usr/bin/env bash
# A peer that is slow, not dead: region1's first peer (198.18.1.11) answers every request
# 100 ms late (a SIPp callee that pauses before each response; this kernel has no netem),
# and is probed with OPTIONS, which it also answers 100 ms late. 30 calls: every one is
# answered by it (none retried on .12, no timeout counted), it is never suspected or marked
# down, and the no-answer timer sbcd learned for it settles above its 100 ms.
source "$(dirname "$0")/sip_common.sh"
SIP_PROBE=options
SIP_HEALTH=$'options_interval_ms = 500\noptions_timeout_ms = 400\ndown_after = 2\nup_after = 2'
sip_up
SLOW=198.18.1.11
# uas.xml with a 100 ms pause before every response it sends.
awk '/^  <send/ { print "  <pause milliseconds=\"100\"/>" } { print }' "$SIPP_SCENARIOS/uas.xml" >"$DIR/uas_slow.xml"
grep -q 'pause milliseconds="100"' "$DIR/uas_slow.xml" || fail "could not write the slow callee's scenario"
peer "$SLOW" "$DIR/uas_slow.xml"
peer 198.18.1.12 uas.xml
for _ in $(seq 1 50); do [ "$(peer_field "region1/$SLOW:5060" state)" = up ] && break; sleep 0.1; done
[ "$(peer_field "region1/$SLOW:5060" state)" = up ] || fail "the slow peer is not up: $(ctl peers)"
log_from=$(( $(wc -l <"$DIR/sbcd.log") + 1 ))  # probes may have failed before SIPp listened
call slow 30
[ "$CALL_OK" -eq 30 ] && [ "$CALL_FAILED" -eq 0 ] || fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected 30, 0)"
setup=$(setup_ms "$DIR/slow"); note "setup of the first call: ${setup} ms"
n_fast=$(received "$DIR/peer-198.18.1.12" '^INVITE ')
[ "$n_fast" -eq 0 ] || fail "$n_fast call(s) were retried on the second peer: the slow peer was treated as silent"
[ "$(need_stat retries_timeout)" -eq 0 ] || fail "retries_timeout=$(need_stat retries_timeout): a late answer was taken for silence"
state=$(peer_field "region1/$SLOW:5060" state); timer=$(peer_field "region1/$SLOW:5060" no_response_ms)
note "slow peer: state=$state no_response_ms=$timer"
[ "$state" = up ] || fail "the slow peer is '$state', not up"
if tail -n +"$log_from" "$DIR/sbcd.log" | grep -E "region1/$SLOW:5060.*(suspect|down)" >&2; then fail "the slow peer was suspected or marked down"; fi
[ "$timer" != missing ] && [ "$timer" != nopeer ] || fail "sbcctl peers --json shows no no_response_ms for the peer"
[ "$timer" -gt 100 ] || fail "the learned no-answer timer ($timer ms) is not above the peer's 100 ms delay"
echo "ok: a peer 100 ms late is never taken for silent (timer $timer ms)"
