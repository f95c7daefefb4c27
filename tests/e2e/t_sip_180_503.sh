#!/usr/bin/env bash
# SIP proxy, no retry after ringing: region1's first peer rings (180) then answers 503.
# The caller gets the 180 and the 503 (no double ringing: the second peer, which would
# answer, never sees the call); sbcd ACKs the 503.
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.1.11 uas_180_503.xml
peer 198.18.1.12 uas.xml
call c 1
[ "$CALL_FAILED" -eq 1 ] || fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected the call to fail with 503)"
[ "$(received "$DIR/c" '^SIP/2.0 180')" -ge 1 ] || fail "the caller did not get the 180"
[ "$(received "$DIR/c" '^SIP/2.0 503')" -ge 1 ] || { msgs "$DIR/c" | tail -n 40 >&2; fail "the caller did not get the 503"; }
n=$(received "$DIR/peer-198.18.1.12" '^INVITE '); [ "$n" -eq 0 ] || fail "503 after 180 was retried: the second peer got $n INVITEs"
[ "$(received "$DIR/peer-198.18.1.11" '^ACK ')" -ge 1 ] || fail "the first peer got no ACK for its 503"
echo "ok: 180 then 503 relayed, not retried"
