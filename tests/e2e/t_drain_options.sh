#!/usr/bin/env bash
# The SBC's own OPTIONS answer follows its state, so that upstream load balancers move away
# during a rolling update: 200 while it takes calls, 503 once `sbcctl drain --timeout 60` has
# started (a call still up keeps sbcd running; the drain's own timeout is the one logged), and
# sbcd still exits 0 when that call ends.
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.1.11 uas.xml
st=$(ask_options 1)
[[ "$st" == "SIP/2.0 200"* ]] || fail "OPTIONS to a running SBC answered '$st', expected 200"

long_call 6000
ctl drain --timeout 60 >/dev/null || fail "drain refused"
st=$(ask_options 2)
[[ "$st" == "SIP/2.0 503"* ]] || fail "OPTIONS to a draining SBC answered '$st', expected 503"
kill -0 "$SBCD_PID" 2>/dev/null || fail "sbcd stopped while a call was still up"
grep -q "draining: no new calls; exit when none is left or in 60 s" "$DIR/sbcd.log" ||
  { grep draining "$DIR/sbcd.log" >&2; fail "sbcctl drain --timeout 60 did not set a 60 s grace period"; }

wait "$long_wrap" || true
read -r ok failed < <(sipp_counts "$DIR/long")
[ "$ok" -eq 1 ] || fail "the call up during the drain did not complete ($ok ok, $failed failed)"
for _ in $(seq 1 50); do kill -0 "$SBCD_PID" 2>/dev/null || break; sleep 0.1; done
wait "$SBCD_PID"; src=$?
SBCD_PID=
[ "$src" -eq 0 ] || fail "sbcd exited $src after draining"
echo "ok: OPTIONS to the SBC answered 200, then 503 while draining; sbcd exited 0 after the last call"
