#!/usr/bin/env bash
# SIP proxy, a call already up on a peer that died ends cleanly: a call from the caller is
# answered by 198.18.1.11, then that callee's address disappears from the hosts namespace (no
# ICMP, its datagrams go nowhere). The caller's BYE for the call, routed by sbcd's
# Record-Route toward the dead callee, is answered 408 Request Timeout by sbcd within a second
# (the peer's no-answer timer: learned from its answers, between retry.min_no_response_ms,
# 200 ms, and no_response_ms, here 800 ms) instead of being retransmitted for 32 s; the
# dialog is gone at once (dialogs_active 0) and in_dialog_timeouts counts it. Then a callee
# whose SIPp was killed (ICMP port unreachable): the BYE is answered 408 at once.
SIP_NO_RESPONSE_MS=800
source "$(dirname "$0")/sip_common.sh"
sip_up
peer 198.18.1.11 uas.xml

sipp_uac_start "$DIR/long" 1 1 40 uac.xml -s 1000 -d 20000 -trace_msg -cid_str 'deadpeer-%u@198.18.0.2'
caller1=$SIPP_PID
for _ in $(seq 1 50); do [ "$(sip_stat dialogs_active)" = 1 ] && break; sleep 0.1; done
[ "$(sip_stat dialogs_active)" = 1 ] || fail "the call did not come up"

ip -n "$SIPP_NS_HOSTS" addr del 198.18.1.11/16 dev "$HOSTS_IF"
note "callee 198.18.1.11 removed"

# bye_answer CALL_ID CALLEE: sends the caller's BYE for CALL_ID toward CALLEE once (a UA
# would retransmit at 500 ms; sbcd relays those, answers once) and prints the first answer's
# status line and how long it took, in ms.
bye_answer() {
  ip netns exec "$SIPP_NS_HOSTS" python3 - "$1" "$2" "$SIPP_PROXY_ADDR" <<'PY'
import socket, sys, time
cid, callee, proxy = sys.argv[1:4]
data = ("BYE sip:1000@%s:5060 SIP/2.0\r\n"
        "Via: SIP/2.0/UDP 198.18.0.2:5070;branch=z9hG4bK-bye-%s\r\n"
        "Route: <sip:198.18.0.1:5060;lr;w=00>\r\n"
        "Max-Forwards: 70\r\n"
        "From: <sip:sipp@198.18.0.2:5060>;tag=caller\r\n"
        "To: <sip:1000@198.18.0.1:5060>;tag=callee\r\n"
        "Call-ID: %s\r\n"
        "CSeq: 2 BYE\r\n"
        "Content-Length: 0\r\n\r\n" % (callee, cid, cid)).encode()
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('198.18.0.2', 5070))
t0 = time.monotonic()
s.sendto(data, (proxy, 5060))
s.settimeout(3)
try:
    d, _ = s.recvfrom(65535)
    print(d.split(b'\r\n', 1)[0].decode('latin-1'), int((time.monotonic() - t0) * 1000))
except socket.timeout:
    print('nothing', 3000)
PY
}

out=$(bye_answer deadpeer-1@198.18.0.2 198.18.1.11); note "answer: $out"
status=${out% *}; ms=${out##* }
[[ "$status" == "SIP/2.0 408"* ]] || fail "the BYE to the dead callee got '$status', expected 408"
[ "$ms" -lt 1000 ] || fail "the 408 took ${ms} ms, expected under a second"
[ "$ms" -ge 180 ] || fail "the 408 came after ${ms} ms, before any no-answer timer of the callee (200 ms at least)"
[ "$(need_stat dialogs_active)" -eq 0 ] || fail "dialogs_active=$(sip_stat dialogs_active) after the 408, expected 0"
n=$(need_stat in_dialog_timeouts); note "in_dialog_timeouts=$n"
[ "$n" -eq 1 ] || fail "in_dialog_timeouts=$n, expected 1"

# The first caller's SIPp, still in its pause, leaves the caller's port to the second one.
kill -TERM "$caller1"
for _ in $(seq 1 50); do kill -0 "$caller1" 2>/dev/null || break; sleep 0.1; done

# A callee whose SIPp is gone (its host answers ICMP port unreachable): 408 at once. The call
# goes to 198.18.1.12 (.11, silent, is failed over at its timer).
peer 198.18.1.12 uas.xml
callee12=$SIPP_PID
sipp_uac_start "$DIR/long2" 1 1 40 uac.xml -s 1000 -d 20000 -trace_msg -cid_str 'deadpeer2-%u@198.18.0.2'
for _ in $(seq 1 50); do [ "$(sip_stat dialogs_active)" = 1 ] && break; sleep 0.1; done
[ "$(sip_stat dialogs_active)" = 1 ] || fail "the second call did not come up"
kill -TERM "$callee12"
for _ in $(seq 1 50); do kill -0 "$callee12" 2>/dev/null || break; sleep 0.1; done
out=$(bye_answer deadpeer2-1@198.18.0.2 198.18.1.12); note "answer: $out"
status=${out% *}; ms2=${out##* }
[[ "$status" == "SIP/2.0 408"* ]] || fail "the BYE to the closed callee got '$status', expected 408"
[ "$ms2" -lt 150 ] || fail "the 408 took ${ms2} ms, expected at once on ICMP unreachable"
[ "$(need_stat dialogs_active)" -eq 0 ] || fail "dialogs_active=$(sip_stat dialogs_active) after the 408, expected 0"
n=$(need_stat in_dialog_timeouts)
[ "$n" -eq 2 ] || fail "in_dialog_timeouts=$n, expected 2"
echo "ok: BYEs to dead callees answered 408 by sbcd (silent: ${ms} ms, ICMP: ${ms2} ms), their dialogs ended"
