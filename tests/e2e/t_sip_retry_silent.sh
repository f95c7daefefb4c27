#!/usr/bin/env bash
# SIP proxy, retry on silence: region1's first peer receives INVITEs and never answers;
# the call completes on the second peer after the no-response timer (1000 ms): the setup
# time seen by the caller is at least 1 s and under 3 s.
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.1.11 uas_silent.xml
peer 198.18.1.12 uas.xml
call c 1
[ "$CALL_OK" -eq 1 ] || fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected 1, 0)"
ms=$(setup_ms "$DIR/c"); note "setup ${ms} ms"
[ "$(received "$DIR/peer-198.18.1.11" '^INVITE ')" -ge 1 ] || fail "the silent first peer never got the INVITE"
[ "$(received "$DIR/peer-198.18.1.12" '^INVITE ')" -eq 1 ] || fail "the second peer did not get the call"
awk -v m="$ms" 'BEGIN { exit !(m >= 1000 && m < 3000) }' || fail "setup took $ms ms, expected 1000 <= t < 3000 (no-response timer 1000 ms)"
r=$(sip_stat retries_timeout); note "retries_timeout=$r"
[ "$r" = missing ] || [ "$r" -ge 1 ] || fail "retries_timeout=$r, expected at least 1"
echo "ok: silent peer skipped after ${ms} ms"
