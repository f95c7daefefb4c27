#!/usr/bin/env bash
# SIP proxy, malformed INVITE -> 400 or 505 (RFC 3261 8.1.3.5, 8.2): INVITEs from the allowed
# caller with an error a proxy can answer (CSeq method BYE on an INVITE; Max-Forwards "many";
# a broken request line; no Call-ID) each get a 400, one with SIP/3.0 a 505, that echoes the
# Via branch (and the Call-ID it has); none reaches region1's first peer. Two of RFC 4475's
# (section 3.1.2): a top Via with empty parameters (";;,;,,": 400, its Via echoed as sent) and
# a request and Via of SIP/7.0 (505), answered because the Via's sent-by can be read.
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.1.11 uas.xml
bad() { # CALL_ID CSEQ MAX_FORWARDS [REQUEST_LINE]
  cat <<SIP
${4:-INVITE sip:1000@198.18.0.1:5060 SIP/2.0}
Via: ${VIA:-SIP/2.0/UDP 198.18.0.2:5070;branch=z9hG4bK-bad-$1}
From: <sip:caller@198.18.0.2:5070>;tag=t$1
To: <sip:1000@198.18.0.1:5060>
Call-ID: $1@198.18.0.2
CSeq: $2
Contact: <sip:caller@198.18.0.2:5070>
Max-Forwards: $3
Content-Length: 0

SIP
}
check() { # CALL_ID WHAT [CODE] [CALL_ID_ECHOED: yes|no]
  local out code="${3:-400}"
  out=$(udp_exchange 198.18.0.2 "$DIR/$1.sip" 2)
  grep -q "^SIP/2.0 $code" <<<"$out" || { echo "sent:" >&2; cat "$DIR/$1.sip" >&2; echo "got:" >&2; echo "${out:-(nothing)}" >&2; fail "$2: no $code"; }
  if [ "${4:-yes}" = yes ]; then
    grep -q "^Call-ID: $1@198.18.0.2" <<<"$out" || { echo "$out" >&2; fail "$2: the $code does not echo the Call-ID"; }
  fi
  if grep -q "branch=z9hG4bK-bad-$1" "$DIR/$1.sip"; then
    grep -q "branch=z9hG4bK-bad-$1" <<<"$out" || { echo "$out" >&2; fail "$2: the $code does not echo the Via branch"; }
  else  # no branch to match by (RFC 2543 matching): the Via as it came
    grep -qxF "$(grep '^Via:' "$DIR/$1.sip")" <<<"$out" || { echo "$out" >&2; fail "$2: the $code does not echo the Via as sent"; }
  fi
  # The client matches the answer by Via branch and CSeq method (RFC 3261 17.1.3).
  local cseq; cseq=$(grep '^CSeq:' "$DIR/$1.sip" || echo 'CSeq: 0 INVITE')
  grep -qxF "$cseq" <<<"$out" || { echo "$out" >&2; fail "$2: the $code does not carry '$cseq'"; }
  note "$2: $(grep '^SIP/2.0' <<<"$out" | head -n 1)"
}
bad cseq1 "1 BYE" 70 >"$DIR/cseq1.sip"
check cseq1 "CSeq method BYE on an INVITE"
bad mf1 "1 INVITE" many >"$DIR/mf1.sip"
check mf1 "Max-Forwards: many"
bad start1 "1 INVITE" 70 "INVITE  sip:1000@198.18.0.1:5060 SIP/2.0" >"$DIR/start1.sip"
check start1 "a request line with two spaces"
bad start2 "1 INVITE" 70 "INVITE sip:1000@198.18.0.1:5060" >"$DIR/start2.sip"
check start2 "a request line without version"
bad ver1 "1 INVITE" 70 "INVITE sip:1000@198.18.0.1:5060 SIP/3.0" >"$DIR/ver1.sip"
check ver1 "SIP/3.0" 505
bad nocid1 "1 INVITE" 70 | grep -v '^Call-ID:' >"$DIR/nocid1.sip"
check nocid1 "no Call-ID" 400 no
VIA="SIP/2.0/UDP 198.18.0.2:5070;;,;,," bad via1 "1 INVITE" 70 >"$DIR/via1.sip"
check via1 "a top Via with empty parameters"
VIA="SIP/7.0/UDP 198.18.0.2:5070;branch=z9hG4bK-bad-ver7" bad ver7 "1 INVITE" 70 "INVITE sip:1000@198.18.0.1:5060 SIP/7.0" >"$DIR/ver7.sip"
check ver7 "a request and Via of SIP/7.0" 505
n=$(received "$DIR/peer-198.18.1.11" '^INVITE '); [ "$n" -eq 0 ] || fail "a malformed INVITE reached the peer ($n)"
r=$(sip_stat rejected); note "rejected=$r"
[ "$r" = missing ] || [ "$r" -ge 8 ] || fail "rejected=$r, expected at least 8"
echo "ok: malformed INVITEs answered 400, SIP/3.0 and SIP/7.0 answered 505"
