#!/usr/bin/env bash
# Media anchoring, a call with RTP both ways: the caller (uac_media.xml) streams 1 s of G.711
# after the ACK, the callee (uas.xml, -rtp_echo) echoes it. Checked:
# - the SDP each side sees names sbcd (198.18.0.1) and a port of the [media] range, a
#   different one for each side, and sbcd as its originator (o=); nobody sees the other
#   endpoint's address;
# - on the wire, the caller sends to the port its 200 named and the callee receives from the
#   port its INVITE named (sbcd's, not the caller's);
# - every packet the caller sent reached the callee and every echo reached the caller, and
#   sbcd's counters (sbcctl stats --json, /metrics) say the same numbers per direction;
# - while the call is up, sbcctl calls --media shows its ports and far ends;
# - after the BYE, RTP to the call's old port is dropped and counted (flows torn down).
source "$(dirname "$0")/media_common.sh"
media_up
CALLEE=198.18.1.11
media_callee "$CALLEE"

# The call: 1 s of audio, hung up after 3 s; sbcctl calls --media looked at while it is up.
media_call relay uac_media.xml 3000 &
call_job=$!
# Looked at until both far ends show (setup and the first RTP take longer on a loaded
# machine), at most ~2.8 s after the start: the call is up until ~3 s after its answer.
sleep 0.8
for _ in $(seq 1 20); do
  calls_media=$(ctl calls --media 2>&1 || true)
  grep -qF "$SIPP_CALLER:$MEDIA_EP_PORT" <<<"$calls_media" && grep -qF "$CALLEE:$MEDIA_EP_PORT" <<<"$calls_media" && break
  sleep 0.1
done
# SIPp is bounded at 40 s (call); 60 s leaves room for its own end.
wait_job "$call_job" 60 "the media call" || fail "the media call did not run"
read -r CALL_OK CALL_FAILED < <(sipp_counts "$DIR/relay")
[ "$CALL_OK" -eq 1 ] && [ "$CALL_FAILED" -eq 0 ] || fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected 1, 0)"
wait_idle 3

# SDP as each side saw it.
read -r a_addr a_port < <(sdp_endpoint "$DIR/relay" '^SIP/2.0 200') || true
read -r b_addr b_port < <(sdp_endpoint "$DIR/peer-$CALLEE" '^INVITE ') || true
note "caller's 200 SDP: ${a_addr:-none} ${a_port:-none}; callee's INVITE SDP: ${b_addr:-none} ${b_port:-none}"
[ "${a_addr:-}" = "$MEDIA_ADDR" ] || fail "the 200 the caller got names ${a_addr:-no address} in c=, not sbcd's $MEDIA_ADDR"
[ "${b_addr:-}" = "$MEDIA_ADDR" ] || fail "the INVITE the callee got names ${b_addr:-no address} in c=, not sbcd's $MEDIA_ADDR"
for p in "${a_port:-0}" "${b_port:-0}"; do
  [ "$p" -ge "$MEDIA_PORT_MIN" ] && [ "$p" -le "$MEDIA_PORT_MAX" ] || fail "SDP port $p is outside [media] $MEDIA_PORT_MIN..$MEDIA_PORT_MAX"
  [ $((p % 2)) -eq 0 ] || fail "SDP port $p is odd (RTP takes the even port of a pair)"
done
[ "$a_port" != "$b_port" ] || fail "both legs got the same media port $a_port"
if msgs "$DIR/peer-$CALLEE" | grep -q "^c=IN IP4 $SIPP_CALLER" || msgs "$DIR/relay" | grep -q "^c=IN IP4 $CALLEE"; then
  fail "an endpoint saw the other endpoint's media address in SDP"
fi
# The origin too (o=): each leg sees sbcd as the session's originator.
o_callee=$(sdp_origin "$DIR/peer-$CALLEE" '^INVITE ')
o_caller=$(sdp_origin "$DIR/relay" '^SIP/2.0 200')
note "o= address at the callee: ${o_callee:-none}; at the caller: ${o_caller:-none}"
[ "$o_callee" = "$MEDIA_ADDR" ] || fail "the INVITE the callee got has o= ${o_callee:-absent}, not sbcd's $MEDIA_ADDR"
[ "$o_caller" = "$MEDIA_ADDR" ] || fail "the 200 the caller got has o= ${o_caller:-absent}, not sbcd's $MEDIA_ADDR"

# On the wire.
media_capture_stop
caller_sent=$(pkts "src host $SIPP_CALLER and src port $MEDIA_EP_PORT and dst host $MEDIA_ADDR and dst port $a_port")
callee_got=$(pkts "dst host $CALLEE and dst port $MEDIA_EP_PORT and src host $MEDIA_ADDR and src port $b_port")
callee_sent=$(pkts "src host $CALLEE and src port $MEDIA_EP_PORT and dst host $MEDIA_ADDR and dst port $b_port")
caller_got=$(pkts "dst host $SIPP_CALLER and dst port $MEDIA_EP_PORT and src host $MEDIA_ADDR and src port $a_port")
stray=$(pkts "(host $SIPP_CALLER and host $CALLEE) or (udp and not host $MEDIA_ADDR)")
note "wire: caller->sbcd $caller_sent, sbcd->callee $callee_got, callee->sbcd $callee_sent, sbcd->caller $caller_got, other $stray"
# 1 s of 20 ms packets is 50; SIPp 3.6 sends 44 to 50 of them.
[ "$caller_sent" -ge 40 ] || fail "the caller sent $caller_sent RTP packets to sbcd's port $a_port (expected about 50)"
[ "$callee_got" -eq "$caller_sent" ] || fail "the callee got $callee_got of the caller's $caller_sent packets"
[ "$callee_sent" -eq "$callee_got" ] || fail "the callee echoed $callee_sent of $callee_got packets (SIPp -rtp_echo)"
[ "$caller_got" -eq "$callee_sent" ] || fail "the caller got $caller_got of the callee's $callee_sent packets"
[ "$stray" -eq 0 ] || fail "$stray packets went around sbcd or to other addresses"

# sbcd's counters: packets relayed from leg A (caller) and from leg B (callee).
from_a=$(need_stat packets_from_a)
from_b=$(need_stat packets_from_b)
note "sbcd: relayed from A $from_a, from B $from_b"
[ "$from_a" -eq "$caller_sent" ] || fail "sbcd counts $from_a packets relayed from the caller, the wire $caller_sent"
[ "$from_b" -eq "$callee_sent" ] || fail "sbcd counts $from_b packets relayed from the callee, the wire $callee_sent"
wait_metric "^sbc_media_packets_total\{direction=\"a_to_b\"\} $caller_sent\$" ||
  { curl -sf "http://$HTTP/metrics" | grep -i media >&2; fail "/metrics does not show $caller_sent packets relayed a_to_b"; }
wait_metric "^sbc_media_packets_total\{direction=\"b_to_a\"\} $callee_sent\$" ||
  fail "/metrics does not show $callee_sent packets relayed b_to_a"

# sbcctl calls --media while the call was up: both our ports and both far ends.
for want in "$a_port" "$b_port" "$SIPP_CALLER:$MEDIA_EP_PORT" "$CALLEE:$MEDIA_EP_PORT"; do
  expect_contains "$calls_media" "$want" "sbcctl calls --media during the call"
done

# Torn down: RTP to the ended call's caller-facing port is dropped and counted.
unknown0=$(need_stat unknown_port)
ip netns exec "$SIPP_NS_HOSTS" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
for i in range(3): s.sendto(bytes([0x80, 0, 0, i]) + bytes(168), (sys.argv[3], int(sys.argv[4])))' \
  "$SIPP_CALLER" "$MEDIA_EP_PORT" "$MEDIA_ADDR" "$a_port"
for _ in $(seq 1 30); do [ "$(need_stat unknown_port)" -ge $((unknown0 + 3)) ] && break; sleep 0.1; done
[ "$(need_stat unknown_port)" -ge $((unknown0 + 3)) ] || fail "RTP to port $a_port after the BYE was not counted as unknown_port"
[ "$(need_stat packets_from_a)" -eq "$from_a" ] || fail "RTP to port $a_port after the BYE was relayed"
echo "PASS: RTP both ways through sbcd ($caller_sent caller->callee, $callee_sent back), counters match the wire"
