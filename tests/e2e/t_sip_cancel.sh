#!/usr/bin/env bash
# SIP proxy, CANCEL while ringing: region1's first peer rings for 30 s; the caller cancels
# after the 180 (uac_cancel.xml). The caller gets 200 for the CANCEL and 487 for the INVITE,
# both with its own Via; the callee gets the CANCEL and the ACK of its 487, and afterwards
# sbcd holds no call (sip.setups_active + sip.dialogs_active of `sbcctl stats --json` back
# to 0 within 15 s).
#
# The callee is scripts/sipp/uas_ring.xml with one fix: its 487 carries the INVITE's Via
# headers (RFC 3261 8.2.6.2; through sbcd there are two, sbcd's and the caller's). The file
# in scripts/sipp answers 487 with [last_Via:], the Via of the CANCEL, i.e. only sbcd's:
# t_sip_response_no_via.sh covers that callee.
source "$(dirname "$0")/sip_common.sh"
sip_up
python3 - "$SIPP_SCENARIOS/uas_ring.xml" "$DIR/uas_ring_fixed.xml" <<'PY'
import sys
s = open(sys.argv[1]).read()
inv = '<ereg regexp="[0-9]+" search_in="hdr" header="CSeq:" assign_to="inv_cseq"/>'
assert inv in s
s = s.replace(inv, inv + '\n      <ereg regexp=".*" search_in="hdr" header="Via:" occurrence="1" assign_to="via1"/>'
              '\n      <ereg regexp=".*" search_in="hdr" header="Via:" occurrence="2" assign_to="via2"/>')
head, sep, tail = s.partition('SIP/2.0 487 Request Terminated\n      [last_Via:]')
assert sep
s = head + 'SIP/2.0 487 Request Terminated\n      Via:[$via1]\n      Via:[$via2]' + tail
open(sys.argv[2], 'w').write(s)
PY
peer 198.18.1.11 "$DIR/uas_ring_fixed.xml"
call c 3 uac_cancel.xml
[ "$CALL_OK" -eq 3 ] || { msgs "$DIR/c" | tail -n 60 >&2; fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected 3 cancelled calls: 200 + 487)"; }
[ "$(received "$DIR/c" '^SIP/2.0 487')" -ge 3 ] || fail "the caller did not get 487s"
v=$(top_vias "$DIR/c" '^SIP/2.0 487')
[ "$(grep -c 'branch=z9hG4bK-' <<<"$v")" -ge 3 ] || { echo "$v" >&2; fail "the 487s reached the caller without the caller's Via"; }
[ "$(received "$DIR/peer-198.18.1.11" '^CANCEL ')" -ge 3 ] || fail "the callee did not get the CANCELs"
[ "$(received "$DIR/peer-198.18.1.11" '^ACK ')" -ge 3 ] || fail "the callee did not get the ACKs of its 487s"
wait_idle 15
r=$(sip_stat calls_cancelled); note "calls_cancelled=$r"
[ "$r" -ge 3 ] || fail "calls_cancelled=$r, expected 3"

echo "ok: CANCEL -> 487, no call left"
