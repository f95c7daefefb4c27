#!/usr/bin/env bash
# Media with two workers (issue 15): sbcd runs two worker lcores on net_af_packet with a queue
# pair each (qpairs=2: the kernel's fanout spreads flows by a hash of addresses and ports,
# seeded at boot). Eight media calls one after another (the caller streams 1 s of G.711, the
# callee echoes it), each from its own caller media port, so the callers' RTP flows hash apart
# and, over the calls, land on both queues (all eight on the callee's queue: one boot in 256):
# RTP reaches a worker that did not set its flow up and is relayed from the flow table another
# worker wrote.
# Checked: every call completes; every packet the caller sent reached the callee and came back
# (the wire, counted by tcpdump), and sbcd's node-wide relay counters match the wire; each
# worker relayed at least a flow's worth of RTP (its UDP less its SIP); nothing was lost on a
# handoff ring.
source "$(dirname "$0")/media_common.sh"
SIP_WORKERS=2
SIP_DEVICE_EXTRA=",qpairs=2"
media_up
CALLEE=198.18.1.11
media_callee "$CALLEE"

calls=8
for i in $(seq 1 $calls); do
  media_file "$DIR/m$i"
  call "m$i" 1 uac_media.xml -d 1500 -mi "$SIPP_CALLER" -mp $((MEDIA_EP_PORT + 100 + 2 * i))
  [ "$CALL_OK" -eq 1 ] && [ "$CALL_FAILED" -eq 0 ] || fail "call $i: $CALL_OK completed, $CALL_FAILED failed (expected 1, 0)"
done
wait_idle 5
media_capture_stop

caller_sent=$(pkts "src host $SIPP_CALLER and dst host $MEDIA_ADDR")
callee_got=$(pkts "dst host $CALLEE and src host $MEDIA_ADDR")
callee_sent=$(pkts "src host $CALLEE and dst host $MEDIA_ADDR")
caller_got=$(pkts "dst host $SIPP_CALLER and src host $MEDIA_ADDR")
note "wire: caller->sbcd $caller_sent, sbcd->callee $callee_got, callee->sbcd $callee_sent, sbcd->caller $caller_got"
[ "$caller_sent" -ge $((40 * calls)) ] || fail "the caller sent $caller_sent RTP packets in $calls calls (expected about $((50 * calls)))"
[ "$callee_got" -eq "$caller_sent" ] || fail "the callee got $callee_got of the caller's $caller_sent packets"
[ "$caller_got" -eq "$callee_sent" ] || fail "the caller got $caller_got of the callee's $callee_sent packets"
[ "$callee_sent" -ge $((callee_got - calls)) ] || fail "the callee echoed $callee_sent of $callee_got packets"
from_a=$(need_stat packets_from_a)
from_b=$(need_stat packets_from_b)
[ "$from_a" -eq "$caller_sent" ] || fail "sbcd counts $from_a packets relayed from the callers, the wire $caller_sent"
[ "$from_b" -eq "$callee_sent" ] || fail "sbcd counts $from_b packets relayed from the callee, the wire $callee_sent"

# Per worker: the RTP it relayed is the UDP it took in less what went to its SIP stage. Each
# relayed at least one flow's worth (a flow carries about 50 packets).
ctl stats --json >"$DIR/stats.json"
python3 - "$DIR/stats.json" <<'PY' || fail "the RTP was not split between the two workers (per-worker counts above)"
import json, sys
s = json.load(open(sys.argv[1]))
ws = s["workers"]
def rtp(w): return w["counters"]["stages"]["udp"] - w["counters"]["stages"]["sip"]
for w in ws:
    c = w["counters"]
    print(f"worker {w['id']}: udp={c['stages']['udp']} sip={c['stages']['sip']} rtp={rtp(w)} handed_off={c['sip_handed_off']} "
          f"handed_in={c['sip_handed_in']} handoff_full={c['drops']['sip_handoff_full']}", file=sys.stderr)
ok = len(ws) == 2 and all(rtp(w) >= 40 for w in ws)
ok &= sum(w["counters"]["drops"]["sip_handoff_full"] for w in ws) == 0
sys.exit(0 if ok else 1)
PY
echo "ok: media with two workers: $calls calls, $caller_sent packets caller->callee and $callee_sent back, RTP relayed by both workers"
