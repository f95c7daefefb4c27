#!/usr/bin/env bash
# SIP over IPv6, trunk source check: trunk "carrier" allows only 198.18.0.2/32 and
# 2001:2:0:1::10/128. An INVITE from 2001:2:0:1::99 (same /64, on the caller host, not
# allowed, not a peer) gets no answer at all, is counted (source_denied in sbcctl stats) and
# never reaches the callee; then a SIPp call from the allowed 2001:2:0:1::10 completes, so the
# silence is the source check and not a dead IPv6 path.
SIP6_ALLOW='"198.18.0.2/32", "2001:2:0:1::10/128"'
SIP6_EXTRA_CALLERS=2001:2:0:1::99
source "$(dirname "$0")/sip_common.sh"
sip6_up
BAD=2001:2:0:1::99
PEER=${SIP6_PEERS[0]}
peer6 "$PEER" uas.xml
cat >"$DIR/denied.sip" <<SIP
INVITE sip:1000@[$SIP6_CORE]:5060 SIP/2.0
Via: SIP/2.0/UDP [$BAD]:5070;branch=z9hG4bK-denied6-1;rport
From: <sip:caller@[$BAD]:5070>;tag=t6denied
To: <sip:1000@[$SIP6_CORE]:5060>
Call-ID: denied6-1@caller.test
CSeq: 1 INVITE
Contact: <sip:caller@[$BAD]:5070>
Max-Forwards: 70
Content-Length: 0

SIP
before=$(need_stat source_denied)
out=$(udp6_exchange "$BAD" "$DIR/denied.sip" 2)
[ -z "$out" ] || { echo "$out" >&2; fail "an INVITE from [$BAD] (not in the trunk's allow) was answered"; }
after=$(need_stat source_denied)
[ "$after" -ge $((before + 1)) ] || fail "source_denied went from $before to $after after an INVITE from [$BAD], expected +1"
n=$(received "$DIR/peer-$PEER" '^INVITE ')
[ "$n" -eq 0 ] || fail "the callee received $n INVITEs after the refused one from [$BAD], expected 0"
note "refused [$BAD]: no answer, source_denied $before -> $after"

call6 allowed 1
[ "$CALL_OK" -eq 1 ] ||
  { call_trouble "$DIR/allowed"; fail "a call from the allowed [$SIP6_CALLER] did not complete ($CALL_OK completed, $CALL_FAILED failed)"; }
n=$(received "$DIR/peer-$PEER" '^INVITE ')
[ "$n" -eq 1 ] || fail "the callee received $n INVITEs, expected 1 (the allowed call's)"
echo "ok: IPv6 source outside the trunk's /128 dropped silently and counted ($before -> $after); allowed source called through"
