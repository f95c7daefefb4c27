#!/usr/bin/env bash
# Canary then promote: `sbcctl peer canary NAME --match ruri:^1555` sends that peer every new
# call whose Request-URI user matches and no other call (not even when the rest of its region is
# drained: those go to the next region); a pattern that does not compile is refused and the
# canary stays; a reload keeps the canary; `sbcctl peer promote NAME` puts it in normal rotation.
# Each change is logged and shown by `sbcctl peers` and /metrics.
source "$(dirname "$0")/sip_common.sh"
sip_up
P1=198.18.1.11 P2=198.18.1.12 P3=198.18.2.21
N1="region1/$P1:5060" N2="region1/$P2:5060"
peer $P1 uas.xml
peer $P2 uas.xml
peer $P3 uas.xml
invites() { received "$DIR/peer-$1" '^INVITE '; }
gen() { ctl status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["snapshot_generation"])'; }

gen0=$(gen)
out=$(ctl peer canary "$N2" --match 'ruri:^1555') || fail "peer canary refused: $out"
line=$(grep "^$N2 " <<<"$out") || { echo "$out" >&2; fail "$N2 missing from the answer"; }
expect_contains "$line" "canary" "the canary's state"
expect_contains "$line" "ruri:^1555" "the canary's pattern"
[ "$(gen)" -gt "$gen0" ] || fail "no new snapshot was published for the canary"
wait_metric "^sbc_peer_canary\{peer=\"$N2\",match=\"ruri:\^1555\"\} 1" || fail "/metrics does not show the canary"

# Matching calls all go to the canary, although P1 comes first by priority; others never do.
call match 3 uac.xml -p 5062 -s 15550100
[ "$CALL_OK" -eq 3 ] || fail "matching calls: $CALL_OK ok, $CALL_FAILED failed"
[ "$(invites $P2)" -eq 3 ] || fail "matching calls: $(invites $P2) of 3 reached the canary $P2"
call plain 3 uac.xml -p 5064 -s 2000
[ "$CALL_OK" -eq 3 ] || fail "other calls: $CALL_OK ok, $CALL_FAILED failed"
[ "$(invites $P1)" -eq 3 ] || fail "other calls: $(invites $P1) of 3 reached $P1"
[ "$(invites $P2)" -eq 3 ] || fail "a call that does not match reached the canary"

# With P1 drained the canary is the only peer of region1 left: other calls still avoid it.
ctl peer drain "$N1" >/dev/null || fail "peer drain refused"
call plain_drained 2 uac.xml -p 5066 -s 2000
[ "$CALL_OK" -eq 2 ] || fail "other calls with $P1 drained: $CALL_OK ok, $CALL_FAILED failed"
[ "$(invites $P3)" -eq 2 ] || fail "other calls with $P1 drained did not go to region2 ($P3 got $(invites $P3))"
[ "$(invites $P2)" -eq 3 ] || fail "with $P1 drained, a call that does not match reached the canary"
ctl peer undrain "$N1" >/dev/null || fail "peer undrain refused"

# A pattern that does not compile: refused with the reason, the canary keeps its pattern.
set +e
out=$(ctl peer canary "$N2" --match 'ruri:^(1555' 2>&1); rc=$?
set -e
[ "$rc" -eq 1 ] || fail "a bad pattern: exit $rc, expected 1 ($out)"
expect_contains "$out" "does not compile" "the refusal of a bad pattern"
expect_contains "$(ctl peers | grep "^$N2 ")" "ruri:^1555" "the canary after a refused pattern"

# A reload keeps the canary.
ctl reload >/dev/null || fail "reload refused"
expect_contains "$(ctl peers | grep "^$N2 ")" "ruri:^1555" "the canary after a reload"
call match_reload 1 uac.xml -p 5068 -s 15550199
[ "$CALL_OK" -eq 1 ] && [ "$(invites $P2)" -eq 4 ] || fail "after a reload the matching call did not reach the canary"

# Promote: normal rotation, by priority (P1 first), and nothing shown as canary.
out=$(ctl peer promote "$N2") || fail "promote refused: $out"
line=$(grep "^$N2 " <<<"$out")
grep -q " up " <<<"$line" || { echo "$out" >&2; fail "$N2 not up after promotion"; }
grep -q "ruri:" <<<"$line" && fail "$N2 still shows a pattern after promotion"
call match_after 2 uac.xml -p 5070 -s 15550100
[ "$CALL_OK" -eq 2 ] || fail "after promotion: $CALL_OK ok, $CALL_FAILED failed"
[ "$(invites $P1)" -eq 5 ] && [ "$(invites $P2)" -eq 4 ] ||
  fail "after promotion matching calls should follow priority ($P1: $(invites $P1), $P2: $(invites $P2))"
ctl peer drain "$N1" >/dev/null
call plain_after 1 uac.xml -p 5072 -s 2000
[ "$CALL_OK" -eq 1 ] && [ "$(invites $P2)" -eq 5 ] || fail "after promotion, other calls do not reach $P2"
set +e
out=$(ctl peer promote "$N2" 2>&1); rc=$?
set -e
[ "$rc" -eq 1 ] || fail "promoting a peer that is no canary: exit $rc"
expect_contains "$out" "is not a canary" "the refusal"
wait_metric "^sbc_peer_canary\{peer=\"$N2\",match=\"\"\} 0" || fail "/metrics still shows the canary"
grep -q "peer $N2: canary by the operator: only new calls matching ruri:^1555" "$DIR/sbcd.log" || fail "the canary is not logged"
grep -q "peer $N2: promoted by the operator" "$DIR/sbcd.log" || fail "the promotion is not logged"
echo "ok: canary took every matching call and nothing else, survived a reload, promoted to rotation"
