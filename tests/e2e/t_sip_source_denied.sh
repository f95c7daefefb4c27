#!/usr/bin/env bash
# SIP proxy, trunk source check: an INVITE from 198.18.0.3 (not in the trunk's allow list,
# not a peer) gets no answer at all and is counted (source_denied in `sbcctl stats --json`);
# the same INVITE from the allowed 198.18.0.2 is answered (100 Trying), so the silence is
# the source check and not a dead sbcd.
SIP_EXTRA_ADDRS=198.18.0.3
source "$(dirname "$0")/sip_common.sh"
sip_up
invite() { # FROM_IP CALL_ID
  cat <<SIP
INVITE sip:1000@198.18.0.1:5060 SIP/2.0
Via: SIP/2.0/UDP $1:5070;branch=z9hG4bK-denied-$2;rport
From: <sip:caller@$1:5070>;tag=t$2
To: <sip:1000@198.18.0.1:5060>
Call-ID: $2@$1
CSeq: 1 INVITE
Contact: <sip:caller@$1:5070>
Max-Forwards: 70
Content-Length: 0

SIP
}
before=$(need_stat source_denied)
invite 198.18.0.3 denied1 >"$DIR/denied.sip"
out=$(udp_exchange 198.18.0.3 "$DIR/denied.sip" 2)
[ -z "$out" ] || { echo "$out" >&2; fail "an INVITE from 198.18.0.3 (not allowed) was answered"; }
after=$(need_stat source_denied)
[ "$after" -ge $((before + 1)) ] || fail "source_denied went from $before to $after, expected +1"
invite 198.18.0.2 allowed1 >"$DIR/allowed.sip"
out=$(udp_exchange 198.18.0.2 "$DIR/allowed.sip" 2)
grep -q '^SIP/2.0 100' <<<"$out" || { echo "$out" >&2; fail "the same INVITE from the allowed 198.18.0.2 got no 100 Trying"; }
echo "ok: denied source dropped silently and counted ($before -> $after)"
