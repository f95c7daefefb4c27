#!/usr/bin/env bash
# Forged sources on an open, untrusted trunk ([flood] untrusted_trunk_rate): the trunk "public"
# (5062) allows 198.19.0.0/16, reached through the gateway 198.18.0.254 (the hosts namespace).
# A raw socket in the hosts namespace sends 32,000 OPTIONS, each from its own forged address
# of 198.19.128.0/17, in four rounds, while SIPp carries 60 calls from the trusted trunk
# "carrier". Every forged source sends once, so no source's own bucket ever runs dry: only
# the trunk's shared bucket (200/s, burst 200: the trunk's own untrusted_trunk_rate and _burst,
# where [flood] has 10,000) stands between the flood and the SIP stage.
# Asserted, as an operator would see it:
#   - every trusted call completes;
#   - sbcd answers at most the trunk's bucket of the flood (answers counted on the wire, to the
#     gateway), and counts the rest as flood_rate_untrusted_trunk, in /metrics by trunk
#     (sbc_trunk_flood_dropped_total{trunk="public"}; the trusted trunk has no such line);
#   - the per-source table is not churned (sbc_flood_table_evictions_total stays 0: 32,000
#     sources would overwrite most of its 8192 entries) and no forged source is reported;
#   - a genuine source of the trunk, 198.19.0.5, is answered again once the flood is over.
# FORGED_TRUNK_RATE=0 runs the same flood with the trunk bucket off (the test then fails: the
# check that it can).
SIP_EXTRA_ADDRS="198.18.0.254 198.19.0.5"
SIP_IFACE_EXTRA='gateway = "198.18.0.254"'
SIP_TRUNK_EXTRA='trusted = true'
SIP_EXTRA_CONFIG="[[trunk]]
name = \"public\"
interface = \"hosts\"
port = 5062
allow = [\"198.19.0.0/16\"]
untrusted_trunk_rate = ${FORGED_TRUNK_RATE:-200}
untrusted_trunk_burst = 200"
source "$(dirname "$0")/sip_common.sh"
sip_up

RATE=200 BURST=200 ROUNDS=4 PER_ROUND=8000
metric_sum() { curl -sf "http://$HTTP/metrics" | awk -v n="$1" '$1 == n || index($1, n "{") == 1 { s += $2 } END { print s + 0 }'; }
[ "$(metric_sum sbc_flood_table_evictions_total)" -eq 0 ] || fail "table evictions before the flood"

# The answers to forged sources leave sbcd for the gateway: count them on the hosts' veth.
ip netns exec "$SIPP_NS_HOSTS" timeout -s INT 60 tcpdump -i "$HOSTS_IF" --immediate-mode -B 32768 -s 96 -U -n \
  -w "$DIR/answers.pcap" "udp and src host 198.18.0.1 and dst net 198.19.128.0/17" >"$DIR/tcpdump.out" 2>&1 &
cap_pid=$!
topo_track "$cap_pid"
for _ in $(seq 50); do grep -q 'listening on' "$DIR/tcpdump.out" && break; sleep 0.1; done
grep -q 'listening on' "$DIR/tcpdump.out" || fail "tcpdump did not start in the hosts namespace"

peer 198.18.1.11 uas.xml 90
sipp_uac_start "$DIR/calls" 20 60 60 uac.xml -s 1000 -d 200
sleep 0.5

sbcd_mac=$(cat "/sys/class/net/$SIPP_PROXY_IF/address")
flood=$(timeout 60 ip netns exec "$SIPP_NS_HOSTS" python3 - "$HOSTS_IF" "$sbcd_mac" "$ROUNDS" "$PER_ROUND" <<'PY'
# Ethernet, IPv4 and UDP written by hand (UDP checksum 0: none, RFC 768), one forged source
# per datagram, in rounds a quarter of a second apart. Prints "SENT SECONDS".
import socket, struct, sys, time
ifname, dmac, rounds, per = sys.argv[1], bytes.fromhex(sys.argv[2].replace(':', '')), int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((ifname, 0))
smac = s.getsockname()[4][:6]
dst = socket.inet_aton("198.18.0.1")
def csum(b):
    t = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while t >> 16: t = (t & 0xffff) + (t >> 16)
    return ~t & 0xffff
frames = []
for n in range(rounds * per):
    a = "198.19.%d.%d" % (128 + (n >> 8), n & 0xff)
    sip = ("OPTIONS sip:198.18.0.1:5062 SIP/2.0\r\nVia: SIP/2.0/UDP %s:5070;branch=z9hG4bK-forged-%d\r\n"
           "Max-Forwards: 70\r\nFrom: <sip:f@%s:5070>;tag=f%d\r\nTo: <sip:198.18.0.1:5062>\r\n"
           "Call-ID: forged-%d\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n" % (a, n, a, n, n)).encode()
    udp = struct.pack("!HHHH", 5070, 5062, 8 + len(sip), 0) + sip
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), n & 0xffff, 0, 64, 17, 0, socket.inet_aton(a), dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    frames.append(dmac + smac + b"\x08\x00" + ip + udp)
t0 = time.time()
for r in range(rounds):
    for f in frames[r * per:(r + 1) * per]:
        s.send(f)
    if r + 1 < rounds: time.sleep(0.25)
print(len(frames), "%.2f" % (time.time() - t0))
PY
) || fail "the forged flood could not be sent"
read -r sent secs <<<"$flood"
note "flood: $sent OPTIONS from $sent forged sources in $secs s"

sipp_uac_wait || true
read -r ok failed < <(sipp_counts "$DIR/calls")
[ "$ok" -eq 60 ] && [ "$failed" -eq 0 ] ||
  { tail -n 30 "$DIR/calls/sipp.out" >&2; fail "the trusted caller completed $ok calls and $failed failed during the flood (expected 60, 0)"; }

sleep 1.2  # the flood is over a second: the trunk's own sources are screened one by one again
cat >"$DIR/opt.sip" <<SIP
OPTIONS sip:198.18.0.1:5062 SIP/2.0
Via: SIP/2.0/UDP 198.19.0.5:5070;branch=z9hG4bK-after-flood
From: <sip:ops@198.19.0.5:5070>;tag=a1
To: <sip:198.18.0.1:5062>
Call-ID: after-flood@198.19.0.5
CSeq: 1 OPTIONS
Max-Forwards: 70
Content-Length: 0

SIP
answer=$(ip netns exec "$SIPP_NS_HOSTS" python3 - "$DIR/opt.sip" <<'PY'
import socket, sys
data = open(sys.argv[1], 'rb').read().replace(b'\n', b'\r\n')
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("198.19.0.5", 5070)); s.settimeout(0.5)
for _ in range(4):  # resent, as a UA would, should one still meet the dry bucket
    s.sendto(data, ("198.18.0.1", 5062))
    try: print(s.recvfrom(65535)[0].decode('latin-1').split('\r\n')[0]); break
    except socket.timeout: pass
PY
)
sleep 0.3
kill -INT "$cap_pid" 2>/dev/null || true
wait "$cap_pid" 2>/dev/null || true
lost=$(sed -n 's/^\([0-9][0-9]*\) packets dropped by kernel$/\1/p' "$DIR/tcpdump.out")
[ "${lost:-0}" -eq 0 ] || fail "the capture lost $lost packets (tcpdump: dropped by kernel); the answer count is short"
answered=$(tcpdump -n -r "$DIR/answers.pcap" 2>/dev/null | wc -l)
dropped=$(ctl stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"]["drops"]["flood_rate_untrusted_trunk"])') ||
  fail "sbcctl stats --json has no total drop count flood_rate_untrusted_trunk"
evicted=$(metric_sum sbc_flood_table_evictions_total)
reported=$(metric_sum sbc_flood_reports_total)
note "forged: $answered answered, $dropped dropped as flood_rate_untrusted_trunk, table evictions $evicted, reports $reported"

cap=$(awk -v b=$BURST -v r=$RATE -v s="$secs" 'BEGIN { printf "%d", b + r * (s + 1) }')
[ "$answered" -le "$cap" ] || fail "sbcd answered $answered of $sent forged OPTIONS (the trunk's bucket lets through at most $cap)"
[ "$dropped" -ge $((sent * 9 / 10 - answered)) ] && [ "$dropped" -le $((sent - answered)) ] ||
  fail "flood_rate_untrusted_trunk counts $dropped of the $((sent - answered)) forged OPTIONS not answered"
[ "$evicted" -eq 0 ] || fail "the forged sources churned the per-source table: $evicted evictions"
[ "$reported" -eq 0 ] || fail "$reported forged sources were reported for denial"
by_trunk=$(curl -sf "http://$HTTP/metrics" | grep '^sbc_trunk_flood_dropped_total' || true)
[ "$by_trunk" = "sbc_trunk_flood_dropped_total{trunk=\"public\"} $dropped" ] ||
  fail "/metrics by trunk: expected only public with $dropped, got: $by_trunk"
[ "$answer" = "SIP/2.0 200 OK" ] || fail "the trunk's genuine source 198.19.0.5 was not answered after the flood (got '$answer')"
echo "ok: $sent forged OPTIONS: $answered answered (at most $cap), $dropped dropped by the trunk's bucket, no table churn; 60 trusted calls completed; the trunk serves again"
