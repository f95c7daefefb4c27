#!/usr/bin/env bash
# SIP proxy, CANCEL while ringing: region1's first peer rings for 30 s; the caller cancels
# after the 180 (uac_cancel.xml). The caller gets 200 for the CANCEL and 487 for the INVITE,
# the callee gets the CANCEL and the ACK of its 487, and afterwards sbcd holds no call
# (setups_active + dialogs_active in `sbcctl stats --json` back to 0).
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.1.11 uas_ring.xml
call c 3 uac_cancel.xml
[ "$CALL_OK" -eq 3 ] || { msgs "$DIR/c" | tail -n 60 >&2; fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected 3 cancelled calls: 200 + 487)"; }
[ "$(received "$DIR/c" '^SIP/2.0 487')" -ge 3 ] || fail "the caller did not get 487s"
[ "$(received "$DIR/peer-198.18.1.11" '^CANCEL ')" -ge 3 ] || fail "the callee did not get the CANCELs"
[ "$(received "$DIR/peer-198.18.1.11" '^ACK ')" -ge 3 ] || fail "the callee did not get the ACKs of its 487s"
wait_idle 15
r=$(sip_stat calls_cancelled); note "calls_cancelled=$r"
[ "$r" = missing ] || [ "$r" -ge 3 ] || fail "calls_cancelled=$r, expected 3"
echo "ok: CANCEL -> 487, no call left"
