#!/usr/bin/env bash
# SIP proxy, an INVITE too big to send is answered 513 at once and both peers stay up with no
# failure recorded: the caller's INVITE fits one 1500-byte packet, but not once sbcd adds its
# Via and Record-Route. sbcd cannot send it to any peer, so it answers 513 Message Too Large
# well within the no-response time (not after each peer's timer, then 503), no peer receives
# it, and region1's peers stay up with no attempt and no failure against them (one blamed
# failure would mark a peer down here: passive_down_after = 1). A normal call afterwards
# still completes.
SIP_PASSIVE_DOWN_AFTER=1
source "$(dirname "$0")/sip_common.sh"
sip_up
P1=198.18.1.11; P2=198.18.1.12
peer $P1 uas.xml
peer $P2 uas.xml

# Sends an INVITE of about 1440 bytes from the caller (port 5070) and prints the status line
# of each answer with the milliseconds since sending, "elapsed_ms code", for 1.5 s.
out=$(ip netns exec "$SIPP_NS_HOSTS" python3 - "$SIPP_CALLER" "$SIPP_PROXY_ADDR" <<'PY'
import socket, sys, time
src, dst = sys.argv[1], sys.argv[2]
sdp = ("v=0\r\no=- 1 1 IN IP4 %s\r\ns=-\r\nc=IN IP4 %s\r\nt=0 0\r\nm=audio 6000 RTP/AVP 0 8 101\r\n"
       "a=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\na=rtpmap:101 telephone-event/8000\r\n") % (src, src)
def invite(pad):
    return ("INVITE sip:1000@%s:5060 SIP/2.0\r\nVia: SIP/2.0/UDP %s:5070;branch=z9hG4bK-toobig\r\n"
            "From: <sip:caller@%s:5070>;tag=big1\r\nTo: <sip:1000@%s:5060>\r\nCall-ID: too-big@%s\r\n"
            "CSeq: 1 INVITE\r\nContact: <sip:caller@%s:5070>\r\nMax-Forwards: 70\r\n"
            "X-Filler: %s\r\nContent-Type: application/sdp\r\nContent-Length: %d\r\n\r\n%s"
            ) % (dst, src, src, dst, src, src, "f" * pad, len(sdp), sdp)
base = len(invite(0))
msg = invite(1440 - base).encode()
assert len(msg) == 1440, len(msg)  # 1468 bytes of IPv4 and UDP: one packet in, not out
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((src, 5070))
t0 = time.monotonic()
s.sendto(msg, (dst, 5060))
end = t0 + 1.5
while True:
    left = end - time.monotonic()
    if left <= 0: break
    s.settimeout(left)
    try:
        d, _ = s.recvfrom(65535)
    except socket.timeout:
        break
    except ConnectionRefusedError:
        continue
    first = d.decode('latin-1').split('\r\n', 1)[0]
    print("%d %s" % ((time.monotonic() - t0) * 1000, first.split(' ')[1] if first.startswith('SIP/2.0 ') else first))
PY
)
note "answers (ms code): $(tr '\n' ' ' <<<"$out")"
ms=$(awk '$2 == 513 { print $1; exit }' <<<"$out")
[ -n "$ms" ] || { cat "$DIR/sbcd.log" | tail -n 20 >&2; fail "no 513 to the too-big INVITE (got: ${out:-nothing})"; }
# At once: with the 100 Trying (< 300 ms after it; on a loaded machine both can be late
# together), and well before the no-response time after which a peer would be blamed.
trying=$(awk '$2 == 100 { print $1; exit }' <<<"$out")
[ $((ms - ${trying:-0})) -lt 300 ] && [ "$ms" -lt 900 ] ||
  fail "the 513 came after $ms ms (the 100 Trying after ${trying:-none}), expected at once (< 300 ms; the no-response time is ${SIP_NO_RESPONSE_MS:-1000} ms)"
! awk '{ print $2 }' <<<"$out" | grep -qv '^1[0-9][0-9]$\|^513$' || fail "answers other than 1xx and 513: $out"

# Past the no-response time: had sbcd blamed the peers, .11 and .12 would now be down.
sleep 1.2
for p in $P1 $P2; do
  n=$(received "$DIR/peer-$p" '^INVITE '); [ "$n" -eq 0 ] || fail "peer $p received the too-big INVITE ($n)"
  name="region1/$p:5060"
  read -r state attempts failures consecutive < <(ctl peers --json | python3 -c '
import json, sys
for p in json.load(sys.stdin)["sip"]["peers"]:
    if p["name"] == sys.argv[1]:
        print(p["state"], p["attempts"], sum(p["failures"].values()), p["consecutive_failures"]); break
else: print("nopeer 0 0 0")' "$name")
  note "$name: state=$state attempts=$attempts failures=$failures consecutive=$consecutive"
  [ "$state" = up ] || fail "$name is $state after an INVITE sbcd could not send, expected up"
  [ "$failures" -eq 0 ] && [ "$consecutive" -eq 0 ] || fail "$name has failures recorded ($failures, $consecutive in a row)"
  [ "$attempts" -eq 0 ] || fail "$name has $attempts attempts for a call that never left sbcd"
done
c=$(need_stat send_failed_too_big); [ "$c" -ge 1 ] || fail "send_failed_too_big=$c, expected the refused INVITE counted"
t=$(sip_stat retries_timeout); [ "$t" = missing ] || [ "$t" -eq 0 ] || fail "retries_timeout=$t: a peer was blamed"

# The peers still take calls.
call after 1
[ "$CALL_OK" -eq 1 ] && [ "$CALL_FAILED" -eq 0 ] || fail "a normal call after the refused one: $CALL_OK completed, $CALL_FAILED failed"
[ "$(received "$DIR/peer-$P1" '^INVITE ')" -eq 1 ] || fail "the normal call did not go to the first peer $P1"
echo "ok: an INVITE too big to send is answered 513 at once and both peers stay up with no failure recorded"
