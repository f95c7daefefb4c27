#!/usr/bin/env bash
# The SBC's own OPTIONS answer follows its state, so that upstream load balancers move away
# during a rolling update: 200 while it takes calls, 503 once `sbcctl drain` has started (a call
# still up keeps sbcd running), and sbcd still exits 0 when that call ends.
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.1.11 uas.xml
opt=$DIR/options.txt
ask_options() { # N: one OPTIONS to sbcd, prints the status line of the answer (or nothing)
  cat >"$opt" <<MSG
OPTIONS sip:198.18.0.1:5060 SIP/2.0
Via: SIP/2.0/UDP $SIPP_CALLER:5070;branch=z9hG4bK-opt-$1
Max-Forwards: 70
From: <sip:lb@$SIPP_CALLER:5070>;tag=lb$1
To: <sip:198.18.0.1:5060>
Call-ID: lb-options-$1
CSeq: $1 OPTIONS
Content-Length: 0

MSG
  udp_exchange "$SIPP_CALLER" "$opt" 1 | head -n 1
}
st=$(ask_options 1)
[[ "$st" == "SIP/2.0 200"* ]] || fail "OPTIONS to a running SBC answered '$st', expected 200"

sipp_uac_start "$DIR/long" 1 1 40 uac.xml -s 1000 -d 3000
long_wrap=$SIPP_WRAP_PID
for _ in $(seq 1 50); do [ "$(sip_stat dialogs_active)" = 1 ] && break; sleep 0.1; done
[ "$(sip_stat dialogs_active)" = 1 ] || fail "the long call did not come up"
ctl drain --timeout 60 >/dev/null || fail "drain refused"
st=$(ask_options 2)
[[ "$st" == "SIP/2.0 503"* ]] || fail "OPTIONS to a draining SBC answered '$st', expected 503"
kill -0 "$SBCD_PID" 2>/dev/null || fail "sbcd stopped while a call was still up"

wait "$long_wrap" || true
read -r ok failed < <(sipp_counts "$DIR/long")
[ "$ok" -eq 1 ] || fail "the call up during the drain did not complete ($ok ok, $failed failed)"
for _ in $(seq 1 50); do kill -0 "$SBCD_PID" 2>/dev/null || break; sleep 0.1; done
wait "$SBCD_PID"; src=$?
SBCD_PID=
[ "$src" -eq 0 ] || fail "sbcd exited $src after draining"
echo "ok: OPTIONS to the SBC answered 200, then 503 while draining; sbcd exited 0 after the last call"
