#!/usr/bin/env bash
# Call admission, per peer: region1's first peer (.11, priority 10) takes at most 1 call
# (max_calls = 1), its second (.12, priority 20) has no limit. A long call is up on .11;
# while it is, five calls all go to .12 and none fails; .11 shows LIMIT 1 and the times it was
# passed over in `sbcctl peers` and /metrics. When the long call ends, calls go to .11 again.
source "$(dirname "$0")/sip_common.sh"
SIP_REGIONS='[[region]]
name = "region1"
peers = [ { address = "198.18.1.11:5060", priority = 10, max_calls = 1 },
          { address = "198.18.1.12:5060", priority = 20 } ]
probe = "none"

[[region]]
name = "region2"
peers = [ { address = "198.18.2.21:5060", priority = 10 },
          { address = "198.18.2.22:5060", priority = 20 } ]
probe = "none"'
sip_up

A=198.18.1.11; B=198.18.1.12
peer $A uas.xml
peer $B uas.xml
long_call 15000
[ "$(received "$DIR/peer-$A" '^INVITE ')" -eq 1 ] || fail "the long call did not go to $A, the first peer"
# While the long call is up (checked now: on a loaded machine the burst below may outlast it).
p=$(ctl peers)
grep -Eq '^region1/198\.18\.1\.11:5060 .* 1 +1 +[0-9]+ ' <<<"$p" || { echo "$p" >&2; fail "sbcctl peers does not show $A with ACTIVE 1, LIMIT 1"; }

call burst 5 uac.xml -p 5062
[ "$CALL_OK" -eq 5 ] && [ "$CALL_FAILED" -eq 0 ] || fail "while $A was full: $CALL_OK completed, $CALL_FAILED failed (expected 5, 0)"
[ "$(received "$DIR/peer-$A" '^INVITE ')" -eq 1 ] || fail "$A got $(received "$DIR/peer-$A" '^INVITE ') INVITEs while at its limit of 1"
[ "$(received "$DIR/peer-$B" '^INVITE ')" -eq 5 ] || fail "$B got $(received "$DIR/peer-$B" '^INVITE ') INVITEs, expected the 5 calls"
[ "$(need_stat admission_peer_skips)" -ge 5 ] || fail "admission_peer_skips = $(sip_stat admission_peer_skips), expected at least 5"
[ "$(need_stat admission_peers_full)" -eq 0 ] || fail "a call was refused although $B had room"
[ "$(peer_field "region1/$A:5060" max_calls)" = 1 ] || fail "sbcctl peers --json: max_calls of $A is $(peer_field "region1/$A:5060" max_calls)"
[ "$(peer_field "region1/$A:5060" full_skips)" -ge 5 ] || fail "sbcctl peers --json: full_skips of $A is $(peer_field "region1/$A:5060" full_skips)"
wait_metric '^sbc_peer_max_calls\{peer="region1/198.18.1.11:5060"\} 1$' || fail "/metrics has no sbc_peer_max_calls 1 for $A"
wait_metric '^sbc_peer_full_skips_total\{peer="region1/198.18.1.11:5060"\} ([5-9]|[1-9][0-9]+)$' ||
  fail "/metrics has no sbc_peer_full_skips_total of at least 5 for $A"

# The long call ends: the first peer takes calls again.
wait "$long_wrap" || fail "the long call failed"
wait_idle 5
call again 1
[ "$CALL_OK" -eq 1 ] || fail "after the long call: $CALL_OK completed, $CALL_FAILED failed"
[ "$(received "$DIR/peer-$A" '^INVITE ')" -eq 2 ] || fail "after its call ended, $A got no new call"
echo "ok: a peer at max_calls is passed over for the next peer of its region, and takes calls again when one ends"
