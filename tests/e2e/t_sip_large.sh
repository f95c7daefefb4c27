#!/usr/bin/env bash
# SIP proxy, messages larger than one packet on the real af_packet topology: the caller's
# INVITE with a 4,000-byte SDP (then again with 30,000 bytes) (4,331 bytes: the namespace's kernel sends it as three IPv4
# fragments over the 1500-byte veth) passes through sbcd to the callee, and the callee's
# 200 OK with its own 4,000-byte SDP passes back to the caller; each arrives whole, checked
# byte for byte (the SDP bodies and the caller's own header lines; sbcd adds only its Via and
# Record-Route). Caller and callee are plain UDP sockets in the hosts namespace (the callee on
# region1's first peer address), so what they read is what their kernel reassembled from the
# fragments sbcd sent. No [media]: sbcd leaves the SDP as it is. sbcd counts the fragments it
# sent and nothing of it as a drop (before the fix: ipv4_bad_total_length, the af_packet PMD's
# 2 KiB frame cut the datagram its kernel had reassembled).
source "$(dirname "$0")/sip_common.sh"
sip_up

# one_call SDP_BYTES: prints the JSON result of one call with SDPs of that size both ways.
one_call() {
  ip netns exec "$SIPP_NS_HOSTS" timeout 20 python3 - "$SIPP_CALLER" "$SIPP_PROXY_ADDR" "${SIPP_REGION1[0]}" "$1" <<'PY'
import socket, sys, json
caller, proxy, callee, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def sdp(host, fill):
    s = "v=0\r\no=- 7 7 IN IP4 %s\r\ns=-\r\nc=IN IP4 %s\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0 8\r\n" % (host, host)
    i = 0
    while len(s) + 100 < size:
        s += "a=x-pad-%04d:%s\r\n" % (i, fill * 60); i += 1
    s += "a=x-end:" + fill * (size - len(s) - 10) + "\r\n"
    assert len(s) == size, len(s)
    return s
offer, answer = sdp(caller, "o"), sdp(callee, "a")
caller_lines = ["Via: SIP/2.0/UDP %s:5070;branch=z9hG4bK-large-%d" % (caller, size),
                "Max-Forwards: 70",
                "From: <sip:caller@%s:5070>;tag=lg%d" % (caller, size),
                "To: <sip:1000@%s:5060>" % proxy,
                "Call-ID: large-%d@%s" % (size, caller),
                "CSeq: 1 INVITE",
                "Contact: <sip:caller@%s:5070>" % caller,
                "Content-Type: application/sdp",
                "Content-Length: %d" % len(offer)]
invite = ("INVITE sip:1000@%s:5060 SIP/2.0\r\n" % proxy + "\r\n".join(caller_lines) + "\r\n\r\n" + offer).encode()
r = {"invite_bytes": len(invite)}
a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); a.bind((caller, 5070)); a.settimeout(3)
b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); b.bind((callee, 5060)); b.settimeout(3)
a.sendto(invite, (proxy, 5060))
got = None
try:
    while True:
        d, src = b.recvfrom(65535)
        if d.startswith(b"INVITE "): got = d.decode("latin-1"); break
except socket.timeout:
    pass
if got is None:
    print(json.dumps(dict(r, error="the callee received no INVITE"))); sys.exit(0)
head, _, body = got.partition("\r\n\r\n")
lines = head.split("\r\n")
r["callee_invite_bytes"] = len(got)
r["callee_body_intact"] = body == offer
r["callee_top_via_ours"] = lines[1].startswith("Via: SIP/2.0/UDP %s:5060;branch=z9hG4bK" % proxy)
r["callee_record_route"] = any(l.startswith("Record-Route: <sip:%s:5060" % proxy) for l in lines)
# Every line of the caller's but Max-Forwards (decremented) arrives unchanged.
r["callee_caller_lines_intact"] = all(l in lines for l in caller_lines if not l.startswith("Max-Forwards"))
r["callee_max_forwards"] = "Max-Forwards: 69" in lines
# The callee answers 200 OK with its own 4,000-byte SDP.
keep = [l for l in lines[1:] if l.split(":")[0] in ("Via", "Record-Route", "From", "Call-ID", "CSeq")]
to = [l for l in lines if l.startswith("To:")][0] + ";tag=callee1"
ok_lines = keep[:]
ok_lines.insert(ok_lines.index([l for l in keep if l.startswith("From:")][0]) + 1, to)
ok_lines += ["Contact: <sip:callee@%s:5060>" % callee, "Content-Type: application/sdp", "Content-Length: %d" % len(answer)]
ok = ("SIP/2.0 200 OK\r\n" + "\r\n".join(ok_lines) + "\r\n\r\n" + answer).encode()
r["ok_bytes"] = len(ok)
b.sendto(ok, src)
back = None
try:
    while True:
        d, _ = a.recvfrom(65535)
        if d.startswith(b"SIP/2.0 200 "): back = d.decode("latin-1"); break
except socket.timeout:
    pass
if back is None:
    print(json.dumps(dict(r, error="the caller received no 200 OK"))); sys.exit(0)
bhead, _, bbody = back.partition("\r\n\r\n")
blines = bhead.split("\r\n")
r["caller_ok_bytes"] = len(back)
r["caller_body_intact"] = bbody == answer
r["caller_via_is_its_own"] = caller_lines[0] in blines and sum(l.startswith("Via:") for l in blines) == 1
r["caller_contact_intact"] = "Contact: <sip:callee@%s:5060>" % callee in blines
print(json.dumps(r))
PY
}
check() { python3 -c 'import json,sys; r=json.loads(sys.argv[1]); v=r.get(sys.argv[2]); print(v)' "$res" "$1"; }
# 4,000 bytes (the issue's case: three fragments each way) and 30,000 (about 21 fragments each
# way: a setup's large buffer, the outbox's, and the af_packet frame well past 2 KiB).
for size in 4000 30000; do
  res=$(one_call "$size")
  note "$size-byte SDPs: $res"
  [ -n "$res" ] || fail "the caller/callee script printed nothing"
  err=$(check error); [ "$err" = None ] || fail "$size-byte SDPs: $err"
  [ "$(check invite_bytes)" -gt "$((size + 300))" ] || fail "the INVITE is $(check invite_bytes) bytes, expected over $((size + 300))"
  for k in callee_body_intact callee_top_via_ours callee_record_route callee_caller_lines_intact callee_max_forwards \
           caller_body_intact caller_via_is_its_own caller_contact_intact; do
    [ "$(check $k)" = True ] || fail "$size-byte SDPs: $k is $(check $k)"
  done
done

frags=$(need_stat sip_fragments_sent)
[ "$frags" -ge 48 ] || fail "sip_fragments_sent=$frags, expected at least 3 + 3 and 21 + 21 (the INVITEs and 200 OKs)"
bad=$(need_stat ipv4_bad_total_length); [ "$bad" -eq 0 ] || fail "ipv4_bad_total_length=$bad: a datagram arrived cut"
big=$(need_stat send_failed_too_big); [ "$big" -eq 0 ] || fail "send_failed_too_big=$big"
echo "ok: INVITEs and 200 OKs with 4,000- and 30,000-byte SDPs crossed sbcd as IPv4 fragments, intact byte for byte"
