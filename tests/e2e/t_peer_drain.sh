#!/usr/bin/env bash
# Draining one peer: `sbcctl peer drain NAME` sends no new calls to it while its call in
# progress completes; `undrain` puts it back in rotation; an unknown name is refused.
source "$(dirname "$0")/sip_common.sh"
sip_up
P1=198.18.1.11
N1="region1/$P1:5060"
peer $P1 uas.xml
peer 198.18.1.12 uas.xml
long_call 3000
out=$(ctl peer drain "$N1") || fail "peer drain refused: $out"
grep -E "^$N1 .* draining" <<<"$out" >/dev/null || { echo "$out" >&2; fail "peer $N1 not shown draining"; }
call during 2 uac.xml -p 5062
[ "$CALL_OK" -eq 2 ] || fail "calls while $P1 drains: $CALL_OK ok, $CALL_FAILED failed"
[ "$(received "$DIR/peer-198.18.1.12" '^INVITE ')" -eq 2 ] || fail "new calls did not go to 198.18.1.12 while $P1 drains"
wait "$long_wrap" || true
read -r ok failed < <(sipp_counts "$DIR/long")
[ "$ok" -eq 1 ] || fail "the call up on the drained peer did not complete ($ok ok, $failed failed)"
ctl peer undrain "$N1" >/dev/null || fail "undrain refused"
call after 1 uac.xml -p 5064
[ "$(received "$DIR/peer-$P1" '^INVITE ')" -eq 2 ] || fail "after undrain, new calls did not go back to $P1"
set +e
out=$(ctl peer drain region9/203.0.113.1:5060 2>&1); rc=$?
set -e
[ "$rc" -eq 1 ] || fail "an unknown peer name: exit $rc, expected 1"
expect_contains "$out" "no peer named" "the refusal"
grep -q "peer $N1: drain by the operator" "$DIR/sbcd.log" || fail "the drain is not logged"
echo "ok: peer drained with a call up, calls moved and came back"
