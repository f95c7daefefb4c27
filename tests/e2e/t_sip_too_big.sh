#!/usr/bin/env bash
# SIP proxy, a large INVITE sbcd has no room for is answered 503 at once and no peer is
# blamed. Messages up to one UDP datagram pass through sbcd (t_sip_large.sh); a setup whose
# INVITE is over 4 KiB keeps it in one of a few large buffers per worker ([limits]
# large_messages_per_worker, 1 here). While the first large call rings at the callee, a
# second large INVITE finds none free: sbcd answers it 503 (Service Unavailable, large
# messages busy, with Retry-After) well within the no-response time, counts large_busy, sends
# it to no peer, and region1's peers stay up with no failure recorded (one blamed failure
# would mark a peer down here: passive_down_after = 1). A small INVITE meanwhile still goes
# to the callee: the common path does not use the large buffers.
SIP_PASSIVE_DOWN_AFTER=1
SIP_EXTRA_CONFIG=$'[limits]\nlarge_messages_per_worker = 1'
source "$(dirname "$0")/sip_common.sh"
sip_up
P1=198.18.1.11; P2=198.18.1.12

# Caller on 5070, callee on P1:5060 answering 180 to every INVITE. Prints one line per event:
# "callee INVITE <call-id>" and "caller <ms since its INVITE> <code> <call-id>".
out=$(ip netns exec "$SIPP_NS_HOSTS" timeout 20 python3 - "$SIPP_CALLER" "$SIPP_PROXY_ADDR" "$P1" <<'PY'
import socket, sys, time, select
src, dst, callee = sys.argv[1], sys.argv[2], sys.argv[3]
def invite(cid, size):
    body = "v=0\r\no=- 1 1 IN IP4 %s\r\ns=-\r\nc=IN IP4 %s\r\nt=0 0\r\nm=audio 6000 RTP/AVP 0\r\n" % (src, src)
    body += "a=x-pad:" + "p" * max(0, size - len(body) - 10) + "\r\n"
    return ("INVITE sip:1000@%s:5060 SIP/2.0\r\nVia: SIP/2.0/UDP %s:5070;branch=z9hG4bK-%s\r\n"
            "From: <sip:caller@%s:5070>;tag=%s\r\nTo: <sip:1000@%s:5060>\r\nCall-ID: %s@%s\r\n"
            "CSeq: 1 INVITE\r\nContact: <sip:caller@%s:5070>\r\nMax-Forwards: 70\r\n"
            "Content-Type: application/sdp\r\nContent-Length: %d\r\n\r\n%s"
            ) % (dst, src, cid, src, cid, dst, cid, src, src, len(body), body)
a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); a.bind((src, 5070))
b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); b.bind((callee, 5060))
sent = {}
def pump(seconds):
    end = time.monotonic() + seconds
    while True:
        left = end - time.monotonic()
        if left <= 0: return
        r, _, _ = select.select([a, b], [], [], left)
        for s in r:
            try:
                d, frm = s.recvfrom(65535)
            except ConnectionRefusedError:
                continue
            t = d.decode("latin-1"); first = t.split("\r\n", 1)[0]
            cid = [l for l in t.split("\r\n") if l.startswith("Call-ID:")][0].split()[1].split("@")[0]
            if s is b and first.startswith("INVITE "):
                print("callee INVITE %s %d" % (cid, len(d)), flush=True)
                head = t.split("\r\n\r\n")[0].split("\r\n")
                keep = [l for l in head[1:] if l.split(":")[0] in ("Via", "Record-Route", "From", "To", "Call-ID", "CSeq")]
                b.sendto(("SIP/2.0 180 Ringing\r\n" + "\r\n".join(keep) + "\r\nContent-Length: 0\r\n\r\n").encode(), frm)
            elif s is a and first.startswith("SIP/2.0 "):
                print("caller %d %s %s" % ((time.monotonic() - sent[cid]) * 1000, first.split(" ")[1], cid), flush=True)
for cid, size in (("large1", 5000), ("large2", 5000), ("small3", 300)):
    sent[cid] = time.monotonic()
    a.sendto(invite(cid, size).encode(), (dst, 5060))
    pump(0.5)
pump(0.7)
PY
)
note "events: $(tr '\n' ';' <<<"$out")"
grep -q '^callee INVITE large1 ' <<<"$out" || fail "the first large INVITE did not reach the callee"
ms=$(awk '$1 == "caller" && $3 == 503 && $4 == "large2" { print $2; exit }' <<<"$out")
[ -n "$ms" ] || { tail -n 20 "$DIR/sbcd.log" >&2; fail "no 503 to the second large INVITE (got: ${out:-nothing})"; }
[ "$ms" -lt 500 ] || fail "the 503 came after $ms ms, expected at once (the no-response time is ${SIP_NO_RESPONSE_MS:-1000} ms)"
! grep -q '^callee INVITE large2 ' <<<"$out" || fail "the refused INVITE reached the callee"
grep -q '^callee INVITE small3 ' <<<"$out" || fail "a small INVITE did not reach the callee while the large buffers were busy"
grep -q '^caller [0-9]* 180 large1$' <<<"$out" || fail "the first large call did not ring at the caller"

# Past the no-response time: had sbcd blamed the peers, .11 and .12 would now be down.
sleep 1.2
for p in $P1 $P2; do
  name="region1/$p:5060"
  read -r state failures consecutive < <(ctl peers --json | python3 -c '
import json, sys
for p in json.load(sys.stdin)["sip"]["peers"]:
    if p["name"] == sys.argv[1]:
        print(p["state"], sum(p["failures"].values()), p["consecutive_failures"]); break
else: print("nopeer 0 0")' "$name")
  note "$name: state=$state failures=$failures consecutive=$consecutive"
  [ "$state" = up ] || fail "$name is $state after an INVITE sbcd refused, expected up"
  [ "$failures" -eq 0 ] && [ "$consecutive" -eq 0 ] || fail "$name has failures recorded ($failures, $consecutive in a row)"
done
c=$(need_stat large_busy); [ "$c" -ge 1 ] || fail "large_busy=$c, expected the refused INVITE counted"
wait_metric 'sbc_sip_large_busy_total(\{[^}]*\})? [1-9]' || fail "/metrics does not show large_busy"
echo "ok: a large INVITE with no large buffer free is answered 503 at once and no peer is blamed"
