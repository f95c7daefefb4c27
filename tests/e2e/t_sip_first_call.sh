#!/usr/bin/env bash
# First packets to a new neighbour: no warm-up, and the first call comes from a caller sbcd
# has never heard from (sbcd resolves its configured peers itself at start). The callee's
# 180, relayed a moment after the INVITE, reaches the caller at the MAC the worker saw it use
# (not dropped while the control core learns it): the call rings, and the caller never has
# to resend its INVITE. Then a callee hangs up toward a caller whose Contact is a host sbcd has never
# heard from: the BYE waits in the worker's hold while ARP runs and reaches that host once
# (the callee here never resends it). No packet was dropped for want of a MAC, and what was
# held was released.
source "$(dirname "$0")/sip_common.sh"
SIP_NO_WARM=1
SIP_EXTRA_ADDRS=198.18.0.3
sip_up
peer 198.18.1.11 uas.xml
uas_pid=$SIPP_PID
cat >"$DIR/uac_ring.xml" <<'XML'
<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="caller that must hear ringing">
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
  <recv response="180"/>
  <recv response="200" rrs="true"/>
  <send>
    <![CDATA[

      ACK [next_url] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      [routes]
      From: "caller" <sip:caller@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
      To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
      Call-ID: [call_id]
      CSeq: 1 ACK
      Max-Forwards: 70
      Content-Length: 0

    ]]>
  </send>
  <pause milliseconds="100"/>
  <send retrans="500">
    <![CDATA[

      BYE [next_url] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      [routes]
      From: "caller" <sip:caller@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
      To: <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
      Call-ID: [call_id]
      CSeq: 2 BYE
      Max-Forwards: 70
      Content-Length: 0

    ]]>
  </send>
  <recv response="200"/>
</scenario>
XML
call first 1 "$DIR/uac_ring.xml"
[ "$CALL_OK" -eq 1 ] || fail "the first call did not complete (ok=$CALL_OK failed=$CALL_FAILED): it must ring and be answered"
[ "$(received "$DIR/first" '^SIP/2.0 180')" -ge 1 ] || fail "the caller never heard its 180"
sent_invites=$(msgs "$DIR/first" | awk '/message sent/ { want = 1; next } want && NF { if ($0 ~ /^INVITE /) n++; want = 0 } END { print n + 0 }')
[ "$sent_invites" -eq 1 ] || fail "the caller had to send its INVITE $sent_invites times"
sipp_stop "$uas_pid"
for _ in $(seq 1 50); do ip netns exec "$SIPP_NS_HOSTS" ss -Hunl "src 198.18.1.11:5060" | grep -q . || break; sleep 0.1; done

# The callee hangs up toward the caller's Contact host (198.18.0.3), which sbcd never heard
# from: a Python caller and callee, so that nothing is resent behind sbcd's back.
ip netns exec "$SIPP_NS_HOSTS" python3 - "$SIPP_PROXY_ADDR" >"$DIR/bye.out" 2>&1 <<'PY' || { cat "$DIR/bye.out" >&2; fail "the callee's BYE did not reach the caller's Contact host"; }
import socket, sys, time
sbc = sys.argv[1]
def sock(addr, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((addr, port)); s.settimeout(3); return s
caller, callee, contact = sock("198.18.0.2", 5072), sock("198.18.1.11", 5060), sock("198.18.0.3", 5072)
def recv(s, what):
    try:
        d, src = s.recvfrom(65535)
    except socket.timeout:
        sys.exit("no %s within 3 s" % what)
    return d.decode("latin-1"), src
def headers(msg, name):
    return [l.split(":", 1)[1].strip() for l in msg.split("\r\n") if l.lower().startswith(name.lower() + ":")]
cid = "first-bye-1@198.18.0.2"
inv = ("INVITE sip:1000@%s:5060 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.0.2:5072;branch=z9hG4bK-fb-1\r\n"
       "From: <sip:caller@198.18.0.2>;tag=fb1\r\nTo: <sip:1000@%s>\r\nCall-ID: %s\r\nCSeq: 1 INVITE\r\n"
       "Contact: <sip:caller@198.18.0.3:5072>\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n") % (sbc, sbc, cid)
caller.sendto(inv.encode(), (sbc, 5060))
while True:
    m, src = recv(callee, "INVITE at the callee")
    if m.startswith("INVITE"): break
ok = "SIP/2.0 200 OK\r\n" + "".join("Via: %s\r\n" % v for v in headers(m, "Via")) + \
     "".join("Record-Route: %s\r\n" % v for v in headers(m, "Record-Route")) + \
     "From: %s\r\nTo: %s;tag=callee1\r\nCall-ID: %s\r\nCSeq: 1 INVITE\r\n" % (headers(m, "From")[0], headers(m, "To")[0], cid) + \
     "Contact: <sip:1000@198.18.1.11:5060>\r\nContent-Length: 0\r\n\r\n"
callee.sendto(ok.encode(), src)
while True:
    r, _ = recv(caller, "200 at the caller")
    if r.startswith("SIP/2.0 200"): break
rr = headers(m, "Record-Route")
bye = ("BYE sip:caller@198.18.0.3:5072 SIP/2.0\r\nVia: SIP/2.0/UDP 198.18.1.11:5060;branch=z9hG4bK-fb-bye\r\n" +
       "".join("Route: %s\r\n" % v for v in rr) +
       "From: <sip:1000@%s>;tag=callee1\r\nTo: <sip:caller@198.18.0.2>;tag=fb1\r\nCall-ID: %s\r\n"
       "CSeq: 1 BYE\r\nMax-Forwards: 70\r\nContent-Length: 0\r\n\r\n") % (sbc, cid)
t0 = time.time()
callee.sendto(bye.encode(), (sbc, 5060))
b, src = recv(contact, "BYE at the caller's Contact host (sent once)")
print("BYE reached 198.18.0.3 after %.1f ms" % ((time.time() - t0) * 1000))
if not b.startswith("BYE "): sys.exit("expected the BYE, got: " + b.split("\r\n")[0])
PY
note "$(cat "$DIR/bye.out")"

unknown=$(need_stat neighbour_unknown); full=$(need_stat neighbour_hold_full)
held=$(need_stat neighbour_held); released=$(need_stat neighbour_released)
note "held=$held released=$released neighbour_unknown=$unknown hold_full=$full setup_ms=$(setup_ms "$DIR/first")"
[ "$unknown" -eq 0 ] && [ "$full" -eq 0 ] || fail "packets were dropped for want of a MAC (neighbour_unknown=$unknown, neighbour_hold_full=$full)"
[ "$held" -ge 1 ] || fail "nothing was held: the BYE toward the never-resolved Contact host should have waited for ARP"
[ "$released" -eq "$held" ] || fail "held=$held but released=$released: a held packet never left"
echo "ok: the first call rang, the first BYE to a new host arrived, nothing dropped for want of a MAC ($held packet(s) held, all released)"
