#!/usr/bin/env bash
# Two workers, calls crossing between them (issue 15): sbcd runs two worker lcores on
# net_af_packet with a queue pair each (qpairs=2: the kernel's fanout spreads flows across the
# queues by their addresses and ports). SIPp's caller sends each call from its own socket
# (-t un), so the callers' flows land on both queues while the callee's one flow lands on one:
# some INVITEs are owned by the worker that does not receive the callee's responses, and some
# ACKs and BYEs land on the worker that does not own their dialog. Every call completes; the
# cross-worker path was taken (sip_handed_off and sip_handed_in, per worker in sbcctl stats and
# /metrics); what one worker handed off the other took in; nothing was lost on a full ring;
# and the node-wide sums equal the per-worker ones.
source "$(dirname "$0")/sip_common.sh"
SIP_WORKERS=2
SIP_DEVICE_EXTRA=",qpairs=2"
sip_up

PEER=198.18.1.11; peer $PEER uas.xml
calls=24
call spread $calls uac.xml "${SPREAD_ARGS[@]}"
[ "$CALL_OK" -eq $calls ] && [ "$CALL_FAILED" -eq 0 ] ||
  { msgs "$DIR/spread" | tail -n 60 >&2; fail "caller: $CALL_OK completed, $CALL_FAILED failed (expected $calls, 0)"; }
[ "$(received "$DIR/peer-$PEER" '^INVITE ')" -eq $calls ] || fail "callee received $(received "$DIR/peer-$PEER" '^INVITE ') INVITEs, expected $calls"
[ "$(received "$DIR/peer-$PEER" '^BYE ')" -eq $calls ] || fail "callee received $(received "$DIR/peer-$PEER" '^BYE ') BYEs, expected $calls"
wait_idle 20

workers_crossed
for w in 0 1; do
  wait_metric "^sbc_rx_packets_total\\{worker=\"$w\"\\} [1-9]" || fail "/metrics: no packets received by worker $w"
done
wait_metric '^sbc_sip_handed_off_total\{worker="[01]"\} [1-9]' || fail "/metrics: no sbc_sip_handed_off_total above 0"
wait_metric '^sbc_sip_handed_in_total\{worker="[01]"\} [1-9]' || fail "/metrics: no sbc_sip_handed_in_total above 0"
[ "$(need_stat calls_answered)" -ge $calls ] || fail "calls_answered = $(sip_stat calls_answered), expected at least $calls"
echo "ok: two workers: $calls calls completed with messages handed between the workers ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["total"]["sip_handed_off"])' "$DIR/stats-crossed.json") handed off)"
