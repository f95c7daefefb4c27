#!/usr/bin/env bash
# Draining sbcd for a rolling update: with a call up, `sbcctl drain --wait` makes new calls
# fail with 503 (Retry-After) and /healthz answer 503 (the OPTIONS answer: t_drain_options), lets the
# call up finish, and returns once sbcd has exited 0 by itself after the last call ended.
# On two workers (run.sh's t_drain@2w) twelve calls are up, spread over both workers and
# crossing between them: the drain waits for the node's calls, not one worker's.
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.1.11 uas.xml
# One long call, in the background: 6 s, since the checks below take 2-3 s on a loaded
# machine; on two workers 10 s, since their polling leaves the test's tools little CPU here.
up=1 ms=6000
on_two_workers && { up=$SPREAD_CALLS; ms=10000; }
long_call $ms $up
on_two_workers && workers_crossed "$up"
start=$(date +%s.%N)
"$BUILD/sbcctl" --socket "$SOCK" drain --wait --timeout 60 >"$DIR/drain.out" 2>&1 &
drain_pid=$!
topo_track "$drain_pid"
sleep 0.5
h=$(curl -s -o /dev/null -w '%{http_code}' "http://$HTTP/healthz")
[ "$h" = 503 ] || fail "/healthz answered $h while draining, expected 503"
call refused 1 uac.xml -p 5062
[ "$CALL_OK" -eq 0 ] && [ "$CALL_FAILED" -eq 1 ] || fail "a new call while draining: $CALL_OK completed, $CALL_FAILED failed (expected it refused)"
[ "$(received "$DIR/refused" '^SIP/2.0 503')" -ge 1 ] || fail "the new call did not get a 503"
grep -q '^Retry-After:' <<<"$(msgs "$DIR/refused")" || fail "the 503 has no Retry-After"
kill -0 "$drain_pid" 2>/dev/null || { cat "$DIR/drain.out" >&2; fail "drain --wait returned while a call was still up"; }
wait "$drain_pid"; rc=$?
elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
[ "$rc" -eq 0 ] || { cat "$DIR/drain.out" >&2; fail "drain --wait exited $rc"; }
grep -q "sbcd has stopped" "$DIR/drain.out" || { cat "$DIR/drain.out" >&2; fail "drain --wait did not see sbcd stop"; }
wait "$long_wrap" || true
read -r ok failed < <(sipp_counts "$DIR/long")
[ "$ok" -eq "$up" ] || fail "of the $up call(s) up when the drain started, $ok completed and $failed failed"
for _ in $(seq 1 50); do kill -0 "$SBCD_PID" 2>/dev/null || break; sleep 0.1; done
wait "$SBCD_PID"; src=$?
SBCD_PID=
[ "$src" -eq 0 ] || fail "sbcd exited $src after draining"
grep -q "drained: no call left" "$DIR/sbcd.log" || fail "sbcd's log does not say it drained"
echo "ok: drained in ${elapsed}s with $up call(s) up; new calls refused with 503"
