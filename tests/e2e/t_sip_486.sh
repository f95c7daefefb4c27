#!/usr/bin/env bash
# SIP proxy, non-retryable final: region1's first peer answers 486 Busy Here. The caller gets
# the 486; the second peer (which would answer) never sees the call; sbcd ACKs the 486.
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.1.11 uas_486.xml
peer 198.18.1.12 uas.xml
call c 1
[ "$CALL_FAILED" -eq 1 ] || fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected the call to fail with 486)"
[ "$(received "$DIR/c" '^SIP/2.0 486')" -ge 1 ] || { msgs "$DIR/c" | tail -n 40 >&2; fail "the caller did not get the 486"; }
n=$(received "$DIR/peer-198.18.1.12" '^INVITE '); [ "$n" -eq 0 ] || fail "486 was retried: the second peer got $n INVITEs"
[ "$(received "$DIR/peer-198.18.1.11" '^ACK ')" -ge 1 ] || fail "the first peer got no ACK for its 486"
echo "ok: 486 relayed, not retried"
