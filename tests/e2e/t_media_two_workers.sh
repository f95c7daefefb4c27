#!/usr/bin/env bash
# Media with two workers (issue 15): sbcd runs two worker lcores on net_af_packet with a queue
# pair each (qpairs=2: the kernel's fanout spreads flows by addresses and ports). Four media
# calls one after another (the caller streams 1 s of G.711, the callee echoes it); each call
# gets new ports on sbcd, so its two RTP flows hash anew and, over the calls, land on both
# queues: RTP reaches a worker that did not set its flow up and is relayed from the flow table
# another worker wrote. Checked: every call completes; every packet the caller sent reached
# the callee and came back (the wire, counted by tcpdump), and sbcd's node-wide relay counters
# match the wire; both workers took in far more UDP than the calls' SIP alone (the RTP was
# split between them); nothing was lost on a handoff ring.
source "$(dirname "$0")/media_common.sh"
SIP_WORKERS=2
SIP_DEVICE_EXTRA=",qpairs=2"
media_up
CALLEE=198.18.1.11
media_callee "$CALLEE"

calls=4
for i in $(seq 1 $calls); do
  media_call "m$i" uac_media.xml 1500
  [ "$CALL_OK" -eq 1 ] && [ "$CALL_FAILED" -eq 0 ] || fail "call $i: $CALL_OK completed, $CALL_FAILED failed (expected 1, 0)"
done
wait_idle 5
media_capture_stop

caller_sent=$(pkts "src host $SIPP_CALLER and src port $MEDIA_EP_PORT and dst host $MEDIA_ADDR")
callee_got=$(pkts "dst host $CALLEE and dst port $MEDIA_EP_PORT and src host $MEDIA_ADDR")
callee_sent=$(pkts "src host $CALLEE and src port $MEDIA_EP_PORT and dst host $MEDIA_ADDR")
caller_got=$(pkts "dst host $SIPP_CALLER and dst port $MEDIA_EP_PORT and src host $MEDIA_ADDR")
note "wire: caller->sbcd $caller_sent, sbcd->callee $callee_got, callee->sbcd $callee_sent, sbcd->caller $caller_got"
[ "$caller_sent" -ge $((40 * calls)) ] || fail "the caller sent $caller_sent RTP packets in $calls calls (expected about $((50 * calls)))"
[ "$callee_got" -eq "$caller_sent" ] || fail "the callee got $callee_got of the caller's $caller_sent packets"
[ "$caller_got" -eq "$callee_sent" ] || fail "the caller got $caller_got of the callee's $callee_sent packets"
[ "$callee_sent" -ge $((callee_got - calls)) ] || fail "the callee echoed $callee_sent of $callee_got packets"
from_a=$(need_stat packets_from_a)
from_b=$(need_stat packets_from_b)
[ "$from_a" -eq "$caller_sent" ] || fail "sbcd counts $from_a packets relayed from the callers, the wire $caller_sent"
[ "$from_b" -eq "$callee_sent" ] || fail "sbcd counts $from_b packets relayed from the callee, the wire $callee_sent"

# Per worker: UDP taken in. The calls' SIP is at most ~10 datagrams a call (plus the warm-up
# OPTIONS); a worker well above that relayed RTP. Both did.
ctl stats --json >"$DIR/stats.json"
python3 - "$DIR/stats.json" $((12 * calls + 20)) <<'PY' || fail "the RTP was not split between the two workers (per-worker UDP above)"
import json, sys
s = json.load(open(sys.argv[1])); sip_bound = int(sys.argv[2])
ws = s["workers"]
for w in ws:
    c = w["counters"]
    print(f"worker {w['id']}: udp={c['stages']['udp']} handed_off={c['sip_handed_off']} handed_in={c['sip_handed_in']} "
          f"handoff_full={c['drops']['sip_handoff_full']}", file=sys.stderr)
ok = len(ws) == 2 and all(w["counters"]["stages"]["udp"] > sip_bound for w in ws)
ok &= sum(w["counters"]["drops"]["sip_handoff_full"] for w in ws) == 0
sys.exit(0 if ok else 1)
PY
echo "ok: media with two workers: $calls calls, $caller_sent packets caller->callee and $callee_sent back, RTP relayed by both workers"
