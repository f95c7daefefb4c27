#!/usr/bin/env bash
# Reload: a config with a mistake is refused with file, line and key, and the running config
# still routes calls; a good one is published without a restart and new calls follow it.
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.1.11 uas.xml
peer 198.18.1.12 uas.xml
cp "$CFG" "$DIR/good.toml"

# A broken file: refused, the old config goes on.
sed -i 's/^peer_group = "cloud"/peer_group = "nowhere"/' "$CFG"
set +e
out=$(ctl reload 2>&1); rc=$?
set -e
[ "$rc" -ne 0 ] || fail "a broken config was accepted: $out"
expect_contains "$out" "$CFG:" "the refusal names the file"
expect_contains "$out" "peer_group" "the refusal names the key"
call before 2
[ "$CALL_OK" -eq 2 ] || fail "after a refused reload the old config should still route: $CALL_OK ok, $CALL_FAILED failed"
[ "$(received "$DIR/peer-198.18.1.11" '^INVITE ')" -eq 2 ] || fail "calls did not go to the first peer of region1"

# A good change (region1's first peer taken out) through SIGHUP: new calls follow it.
cp "$DIR/good.toml" "$CFG"
sed -i 's/^peers = \[ { address = "198.18.1.11:5060", priority = 10 },/peers = [/' "$CFG"
gen_before=$(ctl status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["snapshot_generation"])')
kill -HUP "$SBCD_PID"
for _ in $(seq 1 50); do
  gen=$(ctl status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["snapshot_generation"])')
  [ "$gen" -gt "$gen_before" ] && break
  sleep 0.1
done
[ "$gen" -gt "$gen_before" ] || { tail -5 "$DIR/sbcd.log" >&2; fail "SIGHUP did not publish a new snapshot"; }
grep -q "reloaded" "$DIR/sbcd.log" || fail "the reload is not logged"
call after 2 uac.xml -p 5064
[ "$CALL_OK" -eq 2 ] || fail "after the reload: $CALL_OK ok, $CALL_FAILED failed"
[ "$(received "$DIR/peer-198.18.1.12" '^INVITE ')" -eq 2 ] || fail "calls after the reload did not go to 198.18.1.12"
[ "$(received "$DIR/peer-198.18.1.11" '^INVITE ')" -eq 2 ] || fail "198.18.1.11 got calls after it was taken out"
echo "ok: bad reload refused, good reload (SIGHUP) followed by new calls"
