#!/usr/bin/env bash
# SIP proxy, basic call with Record-Route honoured by caller and callee: two calls from the
# caller (uac.xml) through sbcd to region1's first peer (uas.xml) complete; the callee sees
# our Via (branch z9hG4bKsT...) and Record-Route <sip:198.18.0.1:5060;lr;w=00>; the caller's
# ACK and BYE carry that Route and reach the callee through sbcd. Then a call whose callee
# hangs up: the callee's BYE follows the Record-Route back through sbcd to the caller.
# On two workers (t_sip_basic@2w) the Record-Route names the worker that owns the call:
# w=00 or w=01, by the queue the caller's flow hashes to.
source "$(dirname "$0")/sip_common.sh"
sip_up
W=00
on_two_workers && W='0[01]'
RR="<sip:198.18.0.1:5060;lr;w=$W>"  # a grep pattern

PEER=198.18.1.11; peer $PEER uas.xml
uas_pid=$SIPP_PID
call basic 2
[ "$CALL_OK" -eq 2 ] && [ "$CALL_FAILED" -eq 0 ] || fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected 2, 0); see the messages above"

c=$(msgs "$DIR/basic"); p=$(msgs "$DIR/peer-$PEER")
grep -q "^Record-Route: .*198.18.0.1:5060;lr;w=$W" <<<"$c" || { echo "$c" | head -n 80 >&2; fail "the caller's 200 has no Record-Route $RR"; }
[ "$(grep -c "^Route: $RR" <<<"$c")" -ge 4 ] || { echo "$c" | tail -n 80 >&2; fail "the caller did not send ACK and BYE with Route: $RR (2 calls)"; }
grep -q '^Via: SIP/2.0/UDP 198.18.0.1:5060;.*branch=z9hG4bKsT' <<<"$p" || { echo "$p" | head -n 60 >&2; fail "the callee's INVITE has no Via of ours with branch z9hG4bKsT"; }
grep -q "^Record-Route: $RR" <<<"$p" || { echo "$p" | head -n 60 >&2; fail "the callee's INVITE has no Record-Route $RR"; }
[ "$(received "$DIR/peer-$PEER" '^INVITE ')" -eq 2 ] || fail "callee received $(received "$DIR/peer-$PEER" '^INVITE ') INVITEs, expected 2"
[ "$(received "$DIR/peer-$PEER" '^ACK sip:198.18.1.11')" -ge 2 ] || { echo "$p" | tail -n 80 >&2; fail "the callee did not get the caller's ACKs (Request-URI = its Contact) through sbcd"; }
[ "$(received "$DIR/peer-$PEER" '^BYE sip:198.18.1.11')" -eq 2 ] || { echo "$p" | tail -n 80 >&2; fail "the callee did not get the caller's 2 BYEs through sbcd"; }
# RFC 3261 16.6 step 8: a proxy puts its own Via on every request it forwards, in-dialog
# ones too: the ACK of the 2xx and the BYE reach the callee with sbcd's stateless Via on top.
for m in ACK BYE; do
  v=$(top_vias "$DIR/peer-$PEER" "^$m ")
  if [ -z "$v" ] || grep -qv '^Via: SIP/2.0/UDP 198.18.0.1:5060;branch=z9hG4bKsL' <<<"$v"; then
    echo "$v" >&2; fail "the callee got ${m}s relayed by sbcd without sbcd's stateless Via (z9hG4bKsL) on top"
  fi
done

# The callee hangs up: its BYE goes to the caller's Contact along the Record-Route.
cat >"$DIR/uac_wait_bye.xml" <<'XML'
<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="caller that is hung up on">
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
  <recv response="180" optional="true"/>
  <recv response="200" rrs="true"/>
  <send>
    <![CDATA[

      ACK [next_url] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      [routes]
      From: "caller" <sip:caller@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
      [last_To:]
      Call-ID: [call_id]
      CSeq: 1 ACK
      Max-Forwards: 70
      Content-Length: 0

    ]]>
  </send>
  <recv request="BYE"/>
  <send>
    <![CDATA[

      SIP/2.0 200 OK
      [last_Via:]
      [last_From:]
      [last_To:]
      [last_Call-ID:]
      [last_CSeq:]
      Content-Length: 0

    ]]>
  </send>
</scenario>
XML
cat >"$DIR/uas_hangup.xml" <<'XML'
<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="callee that hangs up">
  <recv request="INVITE" rrs="true">
    <action>
      <!-- The caller's From tag, for the To of our BYE. -->
      <ereg regexp="tag=[A-Za-z0-9._-]+" search_in="hdr" header="From:" assign_to="caller_tag"/>
    </action>
  </recv>
  <send retrans="500">
    <![CDATA[

      SIP/2.0 200 OK
      [last_Via:]
      [last_Record-Route:]
      [last_From:]
      [last_To:];tag=[pid]SIPpTag01[call_number]
      [last_Call-ID:]
      [last_CSeq:]
      Contact: <sip:[local_ip]:[local_port];transport=[transport]>
      Content-Length: 0

    ]]>
  </send>
  <recv request="ACK"/>
  <pause milliseconds="100"/>
  <send retrans="500">
    <![CDATA[

      BYE [next_url] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      [routes]
      From: <sip:callee@[local_ip]:[local_port]>;tag=[pid]SIPpTag01[call_number]
      To: "caller" <sip:caller@198.18.0.2:5060>;[$caller_tag]
      [last_Call-ID:]
      CSeq: 1 BYE
      Max-Forwards: 70
      Content-Length: 0

    ]]>
  </send>
  <recv response="200"/>
</scenario>
XML
sipp_stop "$uas_pid"
PEER=198.18.1.11-hangup; SIPP_PEER_DIR=$DIR/peer-$PEER peer 198.18.1.11 "$DIR/uas_hangup.xml"
call hangup 1 "$DIR/uac_wait_bye.xml"
[ "$CALL_OK" -eq 1 ] || { msgs "$DIR/peer-$PEER" | tail -n 60 >&2; msgs "$DIR/hangup" | tail -n 60 >&2; fail "callee hang-up: the caller did not get the callee's BYE through sbcd ($CALL_OK completed, $CALL_FAILED failed)"; }
grep -q "^Route: $RR" <<<"$(msgs "$DIR/peer-$PEER")" || fail "the callee's BYE did not carry Route: $RR"
[ "$(received "$DIR/peer-$PEER" '^SIP/2.0 200')" -ge 1 ] || fail "the callee's BYE got no 200 back through sbcd"
# When sbcd counts active calls, they must be back to zero.
if [ "$(sip_stat setups_active dialogs_active)" != missing ]; then wait_idle 20; fi
echo "ok: basic calls and both directions of in-dialog routing"
