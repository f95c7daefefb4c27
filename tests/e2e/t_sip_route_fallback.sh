#!/usr/bin/env bash
# SIP proxy, route fallback on failure classes: calls to 1000 take route "mobile" to group
# "mcp" (region1: its first peer 198.18.1.11 answers every INVITE 500, the second .12 would
# answer) with fallback_group "direct" (region2) for 5xx. Three calls all complete on
# region2's first peer: the 500 is ACKed by sbcd and never reaches the caller, region1's second
# peer never sees the calls (a fallback, not a retry), and the fallbacks are counted per route
# in sbcctl stats and /metrics. A call to 2000 takes the default route, which has no fallback:
# its caller gets the 500.
SIP_EXTRA_CONFIG='[[peer_group]]
name = "mcp"
regions = ["region1"]

[[peer_group]]
name = "direct"
regions = ["region2"]

[[route]]
name = "mobile"
match = { field = "ruri_user", pattern = "^1000$" }
peer_group = "mcp"
fallback_group = "direct"
fallback_codes = ["5xx"]'
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.1.11 uas_500.xml
peer 198.18.1.12 uas.xml
peer 198.18.2.21 uas.xml
call c 3
[ "$CALL_OK" -eq 3 ] && [ "$CALL_FAILED" -eq 0 ] || {
  msgs "$DIR/c" | tail -n 40 >&2; fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected 3, 0)"; }
[ "$(received "$DIR/c" '^SIP/2.0 500')" -eq 0 ] || fail "the 500 of the primary group reached the caller"
n=$(received "$DIR/peer-198.18.1.11" '^INVITE '); [ "$n" -ge 3 ] || fail "mcp's first peer got $n INVITEs, expected 3"
n=$(received "$DIR/peer-198.18.1.11" '^ACK '); [ "$n" -ge 3 ] || fail "mcp's first peer got $n ACKs for its 500s, expected 3"
n=$(received "$DIR/peer-198.18.1.12" '^INVITE '); [ "$n" -eq 0 ] || fail "mcp's second peer got $n INVITEs: the 500 was retried in the group"
n=$(received "$DIR/peer-198.18.2.21" '^INVITE '); [ "$n" -eq 3 ] || fail "the fallback group's peer got $n INVITEs, expected 3"
n=$(received "$DIR/peer-198.18.2.21" '^BYE '); [ "$n" -eq 3 ] || fail "the fallback group's peer got $n BYEs, expected 3 (calls up there)"

[ "$(need_stat fallbacks)" -eq 3 ] || fail "fallbacks=$(sip_stat fallbacks), expected 3"
by_route=$(ctl stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["sip"]["fallbacks_by_route"].get("mobile", "missing"))')
[ "$by_route" = 3 ] || fail "fallbacks_by_route.mobile=$by_route, expected 3"
text=$(ctl stats)
expect_contains "$text" "calls fallen back by route mobile" "sbcctl stats"
wait_metric '^sbc_route_fallbacks_total\{route="mobile"\} 3$' || fail "/metrics has no sbc_route_fallbacks_total{route=\"mobile\"} 3"
wait_metric '^sbc_sip_fallbacks_total 3$' || fail "/metrics has no sbc_sip_fallbacks_total 3"

# The default route has no fallback: the 500 goes to the caller.
rc=0
sipp_uac_run "$DIR/d" 10 1 40 uac.xml -s 2000 -d 200 -trace_msg || rc=$?
[ "$rc" -le 1 ] || { tail -n 30 "$DIR/d/sipp.out" >&2; fail "caller SIPp d exited $rc"; }
[ "$(received "$DIR/d" '^SIP/2.0 500')" -ge 1 ] || { msgs "$DIR/d" | tail -n 40 >&2; fail "a call on the default route did not get the 500"; }
[ "$(need_stat fallbacks)" -eq 3 ] || fail "fallbacks=$(sip_stat fallbacks) after the default route's call, expected still 3"
wait_idle 5
echo "ok: 5xx from the primary group fell back to the fallback group"
