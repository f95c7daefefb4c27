#!/usr/bin/env bash
# Media inactivity timeout: with inactivity_timeout_s = 2, a call whose media stops (the caller,
# uac_media_silence.xml, streams 1 s of G.711 that the callee echoes, then neither side sends
# anything and neither hangs up) is ended by sbcd: both the caller and the callee get a BYE
# and answer it, the call is gone from sbcd (no dialog, no media session left), and the call
# lasted the media plus the timeout (about 3 s), not the caller's 60 s wait.
source "$(dirname "$0")/media_common.sh"
MEDIA_TIMEOUT_S=2
media_up
CALLEE=198.18.1.11
media_callee "$CALLEE"

silent0=$(need_stat sessions_silent)
media_call silent uac_media_silence.xml 0
note "the call lasted ${CALL_SECS}s"
[ "$CALL_OK" -eq 1 ] && [ "$CALL_FAILED" -eq 0 ] ||
  { tail -n 20 "$DIR/silent/sipp.out" >&2; fail "caller: $CALL_OK completed, $CALL_FAILED failed: no BYE ended the silent call"; }
[ "$(received "$DIR/silent" '^BYE ')" -eq 1 ] || fail "the caller got $(received "$DIR/silent" '^BYE ') BYEs, expected 1"
for _ in $(seq 1 20); do [ "$(received "$DIR/peer-$CALLEE" '^BYE ')" -ge 1 ] && break; sleep 0.1; done
[ "$(received "$DIR/peer-$CALLEE" '^BYE ')" -eq 1 ] || fail "the callee got $(received "$DIR/peer-$CALLEE" '^BYE ') BYEs, expected 1"
# 1 s of media, 2 s of silence, then the BYE; sbcd looks at a call's media once a second or
# so, and SIPp needs a moment to start: between 2.5 s and 8 s, far below the 60 s wait.
awk -v s="$CALL_SECS" 'BEGIN { exit !(s >= 2.5 && s <= 8) }' ||
  fail "the silent call lasted ${CALL_SECS}s; expected about 1 s of media + 2 s of inactivity"
wait_idle 3
[ "$(need_stat sessions_silent)" -eq $((silent0 + 1)) ] || fail "sbcd counted $(need_stat sessions_silent) calls ended by media inactivity, expected $((silent0 + 1))"
[ "$(need_stat sessions_active)" -eq 0 ] || fail "sbcd still holds $(need_stat sessions_active) media sessions after the BYEs"

# The media did flow before it stopped (the timeout is about silence, not a call without media).
media_capture_stop
sent=$(pkts "src host $SIPP_CALLER and src port $MEDIA_EP_PORT")
got=$(pkts "dst host $CALLEE and dst port $MEDIA_EP_PORT")
[ "$sent" -ge 40 ] && [ "$got" -eq "$sent" ] || fail "before the silence: caller sent $sent, callee got $got RTP packets"
echo "PASS: a call silent for 2 s was ended with a BYE to both sides after ${CALL_SECS}s"
