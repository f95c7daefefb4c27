#!/usr/bin/env bash
# SIP proxy, a response with no Via left for the caller: the callee (scripts/sipp/uas_ring.xml
# as it is) answers the INVITE 487 with the Via of the CANCEL, i.e. only sbcd's. Once sbcd
# removes its own Via nothing is left: RFC 3261 16.7 step 3 says such a response is not
# forwarded (or sbcd answers the caller from its server transaction, with the caller's Via).
# Either way the caller must never get a response without its Via, and no call may stay
# active afterwards.
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.1.11 uas_ring.xml
call d 1 uac_cancel.xml
v=$(top_vias "$DIR/d" '^SIP/2.0 487')
n=$(received "$DIR/d" '^SIP/2.0 487')
note "caller got $n 487s; their Via: ${v:-none}"
if [ "$n" -gt 0 ] && ! grep -q 'branch=z9hG4bK-' <<<"$v"; then
  msgs "$DIR/d" | grep -B2 -A8 '^SIP/2.0 487' | head -n 12 >&2
  fail "a 487 whose only Via was sbcd's reached the caller with no Via at all"
fi
wait_idle 15
echo "ok: no Via-less response relayed"
