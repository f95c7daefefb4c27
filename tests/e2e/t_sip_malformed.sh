#!/usr/bin/env bash
# SIP proxy, malformed INVITE -> 400: two INVITEs from the allowed caller with an error a
# proxy can answer (CSeq method BYE on an INVITE; Max-Forwards "many") each get a 400 that
# echoes their Call-ID and Via branch; neither reaches region1's first peer.
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.1.11 uas.xml
bad() { # CALL_ID CSEQ MAX_FORWARDS
  cat <<SIP
INVITE sip:1000@198.18.0.1:5060 SIP/2.0
Via: SIP/2.0/UDP 198.18.0.2:5070;branch=z9hG4bK-bad-$1
From: <sip:caller@198.18.0.2:5070>;tag=t$1
To: <sip:1000@198.18.0.1:5060>
Call-ID: $1@198.18.0.2
CSeq: $2
Contact: <sip:caller@198.18.0.2:5070>
Max-Forwards: $3
Content-Length: 0

SIP
}
check() { # CALL_ID WHAT
  local out
  out=$(udp_exchange 198.18.0.2 "$DIR/$1.sip" 2)
  grep -q '^SIP/2.0 400' <<<"$out" || { echo "sent:" >&2; cat "$DIR/$1.sip" >&2; echo "got:" >&2; echo "${out:-(nothing)}" >&2; fail "$2: no 400"; }
  grep -q "^Call-ID: $1@198.18.0.2" <<<"$out" || { echo "$out" >&2; fail "$2: the 400 does not echo the Call-ID"; }
  grep -q "branch=z9hG4bK-bad-$1" <<<"$out" || { echo "$out" >&2; fail "$2: the 400 does not echo the Via branch"; }
  note "$2: $(grep '^SIP/2.0' <<<"$out" | head -n 1)"
}
bad cseq1 "1 BYE" 70 >"$DIR/cseq1.sip"
check cseq1 "CSeq method BYE on an INVITE"
bad mf1 "1 INVITE" many >"$DIR/mf1.sip"
check mf1 "Max-Forwards: many"
n=$(received "$DIR/peer-198.18.1.11" '^INVITE '); [ "$n" -eq 0 ] || fail "a malformed INVITE reached the peer ($n)"
r=$(sip_stat rejected); note "rejected=$r"
[ "$r" = missing ] || [ "$r" -ge 2 ] || fail "rejected=$r, expected at least 2"
echo "ok: malformed INVITEs answered 400"
