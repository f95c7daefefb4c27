#!/usr/bin/env bash
# SIP capture (`sbcctl capture`): a capture on the caller's From, started before a SIPp call
# (uac.xml, with BYE) through sbcd to region1's first peer, writes a pcap that tshark reads:
# INVITE, ACK and BYE from the caller and 180, 200 from the callee as received (in), the same
# relayed by sbcd plus its 100 Trying (out), every message sbcd sent marked DSCP CS3 (24).
# sngrep opens the file as a call flow. Then: a second start while one runs is refused, a
# pattern Hyperscan refuses is refused with its message, a capture whose pattern matches
# nothing writes no SIP message, and --seconds ends a capture by itself, saying why.
source "$(dirname "$0")/sip_common.sh"
command -v tshark >/dev/null || fail "tshark is missing (scripts/setup-deps.sh installs it)"
sip_up

PEER=198.18.1.11; peer $PEER uas.xml
PCAP=$DIR/call.pcap
out=$(ctl capture start --match 'from:<sip:caller@198\.18\.0\.2:' --max-mb 5 "$PCAP") || fail "capture start: $out"
expect_contains "$out" "capture: running" "capture start"
# One capture at a time.
if second=$(ctl capture start "$DIR/other.pcap" 2>&1); then fail "a second capture started while one runs: $second"; fi
expect_contains "$second" "already running" "a second capture start"

call basic 1
[ "$CALL_OK" -eq 1 ] && [ "$CALL_FAILED" -eq 0 ] || fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected 1, 0)"
out=$(ctl capture stop) || fail "capture stop: $out"
expect_contains "$out" "stopped by the operator" "capture stop"
st=$(ctl capture status --json)
python3 - "$st" <<'PY' || fail "capture status after the call: $st"
import json, sys
c = json.loads(sys.argv[1])["capture"]
assert not c["running"] and c["messages"] >= 14, c
assert sum(c["dropped"].values()) == 0, c
PY

# src|dst|dscp|method|status|cseq method, one line per SIP message.
rows=$(tshark -r "$PCAP" -Y sip -T fields -E separator='|' -e ip.src -e ip.dst -e ip.dsfield.dscp \
         -e sip.Method -e sip.Status-Code -e sip.CSeq.method 2>"$DIR/tshark.err") ||
  { cat "$DIR/tshark.err" >&2; fail "tshark cannot read $PCAP"; }
echo "$rows" | sed 's/^/   /' >&2
has() { # SRC DST METHOD STATUS CSEQ WHAT
  awk -F'|' -v s="$1" -v d="$2" -v m="$3" -v c="$4" -v q="$5" \
    '$1 == s && $2 == d && $4 == m && $5 == c && $6 == q { n++ } END { exit n ? 0 : 1 }' <<<"$rows" ||
    fail "the capture has no $6 ($1 -> $2 ${3:-$4} $5)"
}
C=198.18.0.2; S=198.18.0.1
for m in INVITE ACK BYE; do
  has $C $S $m "" $m "$m from the caller (in)"
  has $S $PEER $m "" $m "$m relayed to the callee (out)"
done
has $PEER $S "" 180 INVITE "180 from the callee (in)"
has $PEER $S "" 200 INVITE "200 to the INVITE from the callee (in)"
has $PEER $S "" 200 BYE "200 to the BYE from the callee (in)"
has $S $C "" 100 INVITE "sbcd's 100 Trying to the caller (out)"
has $S $C "" 180 INVITE "180 relayed to the caller (out)"
has $S $C "" 200 INVITE "200 to the INVITE relayed to the caller (out)"
has $S $C "" 200 BYE "200 to the BYE relayed to the caller (out)"
# Everything sbcd sent carries DSCP CS3, as the wire does (tshark checks IP and UDP checksums too).
bad=$(awk -F'|' -v s=$S '$1 == s && $3 != 24' <<<"$rows")
[ -z "$bad" ] || fail "messages sbcd sent without DSCP CS3 (24): $bad"
errs=$(tshark -r "$PCAP" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -Y 'ip.checksum.status == 0 || udp.checksum.status == 0' 2>/dev/null | wc -l)
[ "$errs" -eq 0 ] || fail "$errs captured packets with a bad IP or UDP checksum"
# sngrep (as an operator would open it) finds the call's dialog in the file.
if command -v sngrep >/dev/null; then
  TERM=xterm timeout 10 sngrep -N -I "$PCAP" -O "$DIR/sngrep.pcap" -q >/dev/null 2>&1 ||
    fail "sngrep cannot read $PCAP"
  [ "$(tshark -r "$DIR/sngrep.pcap" -Y sip 2>/dev/null | wc -l)" -ge 14 ] || fail "sngrep found no SIP dialog in $PCAP"
fi

# A pattern Hyperscan refuses: Hyperscan's reason in the answer, nothing started.
if out=$(ctl capture start --match 'callid:(unclosed' "$DIR/bad.pcap" 2>&1); then fail "a bad pattern was accepted: $out"; fi
expect_contains "$out" "does not compile" "a bad pattern"
expect_contains "$out" "parenthes" "Hyperscan's reason for a bad pattern"

# A capture that matches nothing writes a file with no SIP message.
NONE=$DIR/none.pcap
out=$(ctl capture start --match 'callid:^no-such-call$' --match 'source:^10\.' "$NONE") || fail "capture start: $out"
call other 1
[ "$CALL_OK" -eq 1 ] || fail "second call failed"
ctl capture stop >/dev/null || fail "capture stop (second)"
n=$(tshark -r "$NONE" -Y sip 2>/dev/null | wc -l)
[ "$n" -eq 0 ] || fail "a capture matching nothing wrote $n SIP messages"

# --seconds: the capture ends by itself and says why.
out=$(ctl capture start --seconds 1 "$DIR/timed.pcap") || fail "capture start --seconds: $out"
for _ in $(seq 1 40); do
  st=$(ctl capture status) && grep -q "stopped" <<<"$st" && break
  sleep 0.1
done
expect_contains "$st" "--seconds 1 elapsed" "a capture with --seconds 1"
echo "ok: capture of a call in and out with DSCP CS3, refusals, an empty capture, a timed capture"
