#!/usr/bin/env bash
# SIP proxy, every candidate fails: (1) all four peers answer 503 -> the caller gets a 503
# after each peer got the INVITE once; (2) nothing listens on any peer (ICMP from all) ->
# the caller gets 503 with Retry-After: 30 ([retry] retry_after_s) at once.
source "$(dirname "$0")/sip_common.sh"
sip_up
pids=()
for a in "${SIPP_REGION1[@]}" "${SIPP_REGION2[@]}"; do peer "$a" uas_503.xml; pids+=("$SIPP_PID"); done
call c 1
[ "$CALL_FAILED" -eq 1 ] || fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected 1 failed)"
[ "$(received "$DIR/c" '^SIP/2.0 503')" -ge 1 ] || { msgs "$DIR/c" | tail -n 40 >&2; fail "all peers 503: the caller did not get a 503"; }
for a in "${SIPP_REGION1[@]}" "${SIPP_REGION2[@]}"; do
  n=$(received "$DIR/peer-$a" '^INVITE '); [ "$n" -ge 1 ] || fail "peer $a was not tried ($n INVITEs)"
done
grep -q '^Retry-After:' <<<"$(msgs "$DIR/c")" && note "all 503: the caller's 503 has Retry-After" || note "all 503: the caller's 503 has no Retry-After (a peer's 503 relayed)"

for p in "${pids[@]}"; do sipp_stop "$p"; done
call d 1
[ "$CALL_FAILED" -eq 1 ] || fail "no peer up: $CALL_OK completed, $CALL_FAILED failed (expected 1 failed)"
m=$(msgs "$DIR/d")
[ "$(received "$DIR/d" '^SIP/2.0 503')" -ge 1 ] || { echo "$m" | tail -n 40 >&2; fail "no peer up: the caller did not get a 503"; }
grep -q '^Retry-After: *30' <<<"$m" || { echo "$m" | tail -n 40 >&2; fail "no peer up: the 503 has no Retry-After: 30"; }
r=$(sip_stat exhausted); note "exhausted=$r"
[ "$r" = missing ] || [ "$r" -ge 2 ] || fail "exhausted=$r, expected at least 2"
echo "ok: everything failing -> 503 upstream"
