#!/usr/bin/env bash
# A stalled TCP client: the trunk takes ["udp","tcp"] on 5060 and [streams] partial_timeout_ms
# is 1000. A client from 198.18.0.2 sends the first half of an INVITE (no blank line) and
# waits: sbcd closes its connection 1 s later (the client sees EOF or a reset within 0.8..3 s),
# and sbc_stream_closed_total{reason="partial_message"} rises. Meanwhile a SIPp caller over its
# own TCP connection (-t t1) makes 10 calls to the UDP callee at 198.18.1.11 that all complete:
# one stalled connection does not hold up the others.
source "$(dirname "$0")/sip_common.sh"
SIP_EXTRA_CONFIG=$(printf '[streams]\npartial_timeout_ms = 1000\n')
eval "orig_$(declare -f sip_write_config)"
sip_write_config() {
  orig_sip_write_config "$@"
  sed -i '/^name = "carrier"$/a transports = ["udp", "tcp"]' "$1"
}
sip_up
note "sbcd up (${SECONDS} s)"

# closed_partial: the value of sbc_stream_closed_total{reason="partial_message"} (0 if absent).
closed_partial() {
  curl -sf "http://$HTTP/metrics" | awk '/^sbc_stream_closed_total\{.*reason="partial_message"/ { v = $NF } END { print v + 0 }'
}
before=$(closed_partial)

PEER=198.18.1.11; peer $PEER uas.xml
# 10 calls at 5/s held 1 s each: the caller's connection is busy from before the stall
# until after the stalled one is closed.
sipp_uac_start "$DIR/calls" 5 10 40 uac.xml -s 1000 -d 1000 -trace_msg -t t1
wrap=$SIPP_WRAP_PID
sleep 0.5

stall=$(timeout 10 ip netns exec "$SIPP_NS_HOSTS" python3 - "$SIPP_CALLER" "$SIPP_PROXY_ADDR" <<'PY' || echo "python: exit $?"
import socket, sys, time
src, dst = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.bind((src, 0)); s.settimeout(3)
s.connect((dst, 5060))
half = ("INVITE sip:1000@%s:5060 SIP/2.0\r\n"
        "Via: SIP/2.0/TCP %s:5090;branch=z9hG4bK-partial-1\r\n"
        "From: <sip:stall@%s>;tag=p1\r\nTo: <sip:1000@%s>\r\n"
        "Call-ID: partial-1@%s\r\nCSeq: 1 INVITE\r\n") % (dst, src, src, dst, src)
t0 = time.monotonic()
s.sendall(half.encode())
s.settimeout(6)
try:
    d = s.recv(65535)
    how = "eof" if d == b"" else "data:" + d.decode("latin-1").split("\r\n", 1)[0]
except socket.timeout:
    how = "timeout"
except ConnectionResetError:
    how = "reset"
print("%s %.2f" % (how, time.monotonic() - t0))
PY
)
read -r how secs <<<"$stall"
case "$how" in eof|reset) ;; *) fail "the stalled half message: expected its connection closed (eof/reset), got '$stall'";; esac
awk -v s="$secs" 'BEGIN { exit !(s >= 0.8 && s <= 3.0) }' ||
  fail "the stalled connection was closed after ${secs} s, expected 0.8..3 s (partial_timeout_ms = 1000)"
note "stalled connection closed ($how) after ${secs} s (${SECONDS} s)"

rc=0; wait "$wrap" || rc=$?
read -r ok failed < <(sipp_counts "$DIR/calls")
[ "$rc" -eq 0 ] && [ "$ok" -eq 10 ] && [ "$failed" -eq 0 ] ||
  { tail -n 20 "$DIR/calls/sipp.out" >&2; fail "calls over the other TCP connection: SIPp exited $rc, $ok completed, $failed failed (expected 0, 10, 0)"; }
[ "$(received "$DIR/peer-$PEER" '^BYE ')" -eq 10 ] || fail "the callee received $(received "$DIR/peer-$PEER" '^BYE ') BYEs, expected 10"
wait_metric "^sbc_stream_closed_total\{.*reason=\"partial_message\".* [1-9]" ||
  fail "sbc_stream_closed_total{reason=\"partial_message\"} did not rise: $(curl -sf "http://$HTTP/metrics" | grep '^sbc_stream_closed_total' | tr '\n' ' ')"
after=$(closed_partial)
[ "$after" -ge $((before + 1)) ] || fail "sbc_stream_closed_total{reason=\"partial_message\"} went from $before to $after, expected +1"
echo "ok: half a message closed after ${secs} s ($how), partial_message $before -> $after, 10 calls on another TCP connection completed"
