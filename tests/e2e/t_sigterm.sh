# SIGTERM stops sbcd cleanly: exit code 0, control socket removed, port released.
source "$(dirname "$0")/common.sh"
e2e_up
sbcd_stop; rc=$?
[ "$rc" -eq 0 ] || { cat "$DIR/sbcd.log" >&2; fail "sbcd exited $rc on SIGTERM"; }
[ ! -e "$SOCK" ] || fail "control socket left behind"
grep -q "stopped" "$DIR/sbcd.log" || fail "no clean stop in the log"
