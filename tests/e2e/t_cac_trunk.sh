#!/usr/bin/env bash
# Call admission, per trunk: the trunk "carrier" takes at most 2 calls at once (max_calls = 2).
# Two long calls are up; a third INVITE from SIPp gets 503 "(trunk call limit)" with
# Retry-After (a SIPp scenario that expects exactly that), counted in admission_trunk_calls,
# per trunk in `sbcctl stats` and in /metrics; no INVITE reaches the peer for it. When the
# shorter call ends, a new call completes; a reload that lowers the limit to 1 refuses the
# next call while one is up.
source "$(dirname "$0")/sip_common.sh"
SIP_TRUNK_EXTRA="max_calls = 2"
SIP_EXTRA_CONFIG=$'[admission]\nretry_after_s = 7'
sip_up

PEER=198.18.1.11; peer $PEER uas.xml
# Two long calls, each from its own SIPp (own local port): one of 8 s, one of 25 s.
sipp_uac_start "$DIR/long1" 1 1 40 uac.xml -s 1000 -d 8000
long1=$SIPP_WRAP_PID
sipp_uac_start "$DIR/long2" 1 1 40 uac.xml -s 1000 -d 25000 -p 5062
long2=$SIPP_PID
for _ in $(seq 1 50); do [ "$(sip_stat dialogs_active)" = 2 ] && break; sleep 0.1; done
[ "$(sip_stat dialogs_active)" = 2 ] || fail "the two long calls did not come up ($(sip_stat dialogs_active) dialogs)"
st=$(ctl stats)
grep -Eq 'calls on trunk carrier now \(limit\) +2 \(2\)' <<<"$st" || { echo "$st" | tail -n 20 >&2; fail "sbcctl stats does not show 2 calls on trunk carrier with limit 2"; }

# The third call: SIPp expects 503 with a Retry-After (check_it: the call fails without one).
cat >"$DIR/uac_503.xml" <<'XML'
<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="caller refused by admission">
  <send retrans="500">
    <![CDATA[

      INVITE sip:[service]@[remote_ip]:[remote_port] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: "caller" <sip:caller@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
      To: <sip:[service]@[remote_ip]:[remote_port]>
      Call-ID: [call_id]
      CSeq: 1 INVITE
      Contact: <sip:caller@[local_ip]:[local_port];transport=[transport]>
      Max-Forwards: 70
      Content-Length: 0

    ]]>
  </send>
  <recv response="100" optional="true"/>
  <recv response="503">
    <action>
      <ereg regexp="[0-9]+" search_in="hdr" header="Retry-After:" check_it="true" assign_to="ra"/>
    </action>
  </recv>
  <send>
    <![CDATA[

      ACK sip:[service]@[remote_ip]:[remote_port] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: "caller" <sip:caller@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
      [last_To:]
      Call-ID: [call_id]
      CSeq: 1 ACK
      Max-Forwards: 70
      Content-Length: 0

    ]]>
  </send>
  <Reference variables="ra"/>
</scenario>
XML
call third 1 "$DIR/uac_503.xml" -p 5064
[ "$CALL_OK" -eq 1 ] || { msgs "$DIR/third" | tail -n 40 >&2; fail "the third call did not get 503 with Retry-After ($CALL_OK ok, $CALL_FAILED failed)"; }
t=$(msgs "$DIR/third")
expect_contains "$t" "SIP/2.0 503 Service Unavailable (trunk call limit)" "the refusal names the limit"
expect_contains "$t" "Retry-After: 7" "the refusal carries [admission] retry_after_s"
[ "$(received "$DIR/peer-$PEER" '^INVITE ')" -eq 2 ] || fail "the peer got $(received "$DIR/peer-$PEER" '^INVITE ') INVITEs, expected 2 (none for the refused call)"
[ "$(need_stat admission_trunk_calls)" -eq 1 ] || fail "admission_trunk_calls = $(sip_stat admission_trunk_calls), expected 1"
expect_contains "$(ctl stats)" "calls refused on trunk carrier" "sbcctl stats shows refusals per trunk"
wait_metric '^sbc_trunk_calls_refused_total\{trunk="carrier"\} 1$' || fail "/metrics has no sbc_trunk_calls_refused_total{trunk=\"carrier\"} 1"
wait_metric '^sbc_sip_admission_trunk_calls_total 1$' || fail "/metrics has no sbc_sip_admission_trunk_calls_total 1"

# The 8 s call ends: one call on the trunk, room for a new one.
wait "$long1" || fail "the 8 s call failed ($(sipp_counts "$DIR/long1"))"
for _ in $(seq 1 30); do [ "$(sip_stat dialogs_active)" = 1 ] && break; sleep 0.1; done
call after 1 uac.xml -p 5066
[ "$CALL_OK" -eq 1 ] && [ "$CALL_FAILED" -eq 0 ] || fail "after a call ended, a new call: $CALL_OK ok, $CALL_FAILED failed (expected 1, 0)"
[ "$(need_stat admission_trunk_calls)" -eq 1 ] || fail "a call was refused after room came back"

# A reload lowers the limit to 1 while the 25 s call is up: the counts go on, a new call is
# refused until that call ends.
sed -i 's/^max_calls = 2$/max_calls = 1/' "$CFG"
ctl reload >/dev/null || fail "sbcctl reload failed"
call lowered 1 "$DIR/uac_503.xml" -p 5068
[ "$CALL_OK" -eq 1 ] || fail "after lowering max_calls to 1 with 1 call up, a new call was not refused with 503"
[ "$(need_stat admission_trunk_calls)" -eq 2 ] || fail "admission_trunk_calls = $(sip_stat admission_trunk_calls), expected 2"
sipp_stop "$long2"
echo "ok: a trunk at max_calls refuses the next call with 503 and Retry-After, takes calls again when one ends, and a reload's lower limit applies at once"
